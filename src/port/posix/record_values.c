/* record_values.c - the arguments and return values `nanoprof record -A`
 * and `-R` ask for (NANOPROF_ARGS, NANOPROF_RETVAL: specs separated by
 * ';', common/value_spec.h), of code built with -pg: its hooks
 * (mcount.c) hand over the argument registers after a call's entry event
 * and the return value before its exit event, and the values of a
 * function some spec names go into the thread's buffer as one group of
 * raw records (NP_RAW_VALUES), which the writer encodes as a VALUES
 * record (docs/trace-format.md).
 *
 * Which spec a function takes is found once per address (its name
 * matched as -F matches it) and kept in a table the hooks read without a
 * lock; the thread is busy meanwhile, so that a signal handler's hooks
 * leave the symbolizer's lock alone. A string is copied with
 * process_vm_readv, which fails on a bad pointer instead of faulting. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../common/trace_format.h"
#include "../../common/value_spec.h"
#include "../port.h"
#include "mcount.h"
#include "posix.h"
#include "record_hot.h"

static struct np_value_spec specs[NP_VALUE_SPECS_MAX];
static struct np_name_pattern pats[NP_VALUE_SPECS_MAX];
static int spec_retval[NP_VALUE_SPECS_MAX];
struct np_rec_packed np_rec_packed[NP_VALUE_SPECS_MAX];
static unsigned nspecs;

const struct np_rec_packed *np_rec_packed_spec(unsigned i) { return &np_rec_packed[i]; }

/* Spec I's packed plan, when it has no string (else 0 words). */
static void plan(unsigned i, int retval)
{
    const struct np_value_spec *s = &specs[i];
    struct np_rec_packed *k = &np_rec_packed[i];
    unsigned words = 1;
    k->whole = 1;
    for (unsigned j = 0; j < s->n; j++) {
        const struct np_value_item *it = &s->item[j];
        unsigned bits = it->bits && it->format != NP_VAL_PTR ? it->bits : 64;
        if (it->format == NP_VAL_STR)
            words = 0;
        k->index[j] = it->index;
        k->format[j] = it->format;
        k->word[j] = (uint8_t)(retval ? 0 : it->index - 1);
        k->shift[j] = (uint8_t)(64 - bits);
        k->sign[j] = it->format == NP_VAL_INT;
        k->whole &= !k->shift[j];
        if (words && k->word[j] >= words)
            words = k->word[j] + 1u;
        k->n = j + 1;
    }
    k->words = words;
    k->slots = (words + 1) / 2;
    k->head = (uint64_t)NP_RAW_VALUES << NP_RAW_SHIFT | (uint64_t)i << 40 | NP_RAW_VALUES_PACKED |
              (uint64_t)retval << 32 | (uint64_t)k->slots << 8 | k->n;
}

/* address -> specs (record.h) */
#define CACHE_SIZE (1u << NP_REC_VCACHE_BITS)
uint64_t np_rec_vcache[CACHE_SIZE];
static unsigned ncached;

static int add_specs(const char *var, int retval)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return 1;
    char *copy = strdup(v);
    if (!copy)
        return 0;
    for (char *save = NULL, *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        char err[256];
        if (nspecs == NP_VALUE_SPECS_MAX) {
            np_rec_say(var, "at most 64 specs");
            free(copy);
            return 0;
        }
        struct np_value_spec *s = &specs[nspecs];
        if (np_value_spec_parse(p, retval, s, err, sizeof err) < 0 ||
            np_name_pattern_init(&pats[nspecs], s->func, err, sizeof err) < 0) {
            np_rec_say(var, err);
            free(copy);
            return 0;
        }
        /* integers only: the registers go as they are, the writer cuts
         * and formats them (48 bytes for four, not 80; no loop in the hook) */
        plan(nspecs, retval);
        spec_retval[nspecs++] = retval;
    }
    free(copy);
    return 1;
}

/* The first -A and -R spec whose pattern NAME matches, each + 1 (0: none). */
static void match(const char *name, unsigned *a, unsigned *r)
{
    for (unsigned i = 0; i < nspecs; i++) {
        unsigned *k = spec_retval[i] ? r : a;
        if (!*k && np_name_pattern_match(&pats[i], name))
            *k = i + 1;
    }
}

/* The specs of the function at ADDR (its name, signature or short name
 * for C++), as a cache word. */
static uint64_t lookup_slow(uint64_t addr)
{
    struct np_posix_names n;
    unsigned a = 0, r = 0;
    if (np_posix_names_of(addr, &n))
        for (int k = 0; k < 3 && n.v[k]; k++)
            match(n.v[k], &a, &r);
    return addr << 16 | a << 8 | r;
}

/* A function not in the table yet, whose probe ended at slot I: its specs,
 * kept while the table is less than 3/4 full (then looked up each time). */
static __attribute__((noinline)) uint64_t lookup_miss(uint64_t addr, unsigned i)
{
    uint64_t c = lookup_slow(addr);
    if (__atomic_load_n(&ncached, __ATOMIC_RELAXED) < CACHE_SIZE / 4 * 3) {
        for (unsigned k = 0; k < CACHE_SIZE; k++, i = (i + 1) & (CACHE_SIZE - 1)) {
            uint64_t zero = 0;
            if (__atomic_compare_exchange_n(&np_rec_vcache[i], &zero, c, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
                __atomic_fetch_add(&ncached, 1, __ATOMIC_RELAXED);
                break;
            }
            if (zero >> 16 == addr)
                break; /* another thread's */
        }
    }
    return c;
}

static inline uint64_t lookup(uint64_t addr)
{
    unsigned i;
    uint64_t c = np_rec_vcache_find(addr, &i);
    return c ? c : lookup_miss(addr, i);
}

/* The same copy through a pipe, where process_vm_readv is missing
 * (qemu-user) or forbidden (a seccomp filter): the kernel checks the
 * addresses write(2) reads as it does process_vm_readv's. FIRST bytes to
 * the end of P's page first, then the rest while no NUL came. */
static ssize_t read_by_pipe(uint64_t p, size_t first, char *out)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    size_t got = 0, want[2] = { first, NP_VALUE_STR_MAX - first };
    for (int i = 0; i < 2 && want[i]; i++) {
        ssize_t w = write(fd[1], (const void *)(uintptr_t)(p + got), want[i]);
        if (w <= 0 || read(fd[0], out + got, (size_t)w) != w)
            break;
        got += (size_t)w;
        if ((size_t)w < want[i] || memchr(out + got - (size_t)w, 0, (size_t)w))
            break;
    }
    close(fd[0]);
    close(fd[1]);
    return got ? (ssize_t)got : -1;
}

/* Up to NP_VALUE_STR_MAX bytes of the C string at P into OUT; its length
 * (the bytes before a NUL, or all those read). A bad pointer reads none. */
static size_t read_string(uint64_t p, char *out)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t first = page - (size_t)(p % page);
    if (first > NP_VALUE_STR_MAX)
        first = NP_VALUE_STR_MAX;
    struct iovec local = { out, NP_VALUE_STR_MAX };
    struct iovec remote[2] = { { (void *)(uintptr_t)p, first },
                               { (void *)(uintptr_t)(p + first), NP_VALUE_STR_MAX - first } };
    ssize_t got = process_vm_readv(getpid(), &local, 1, remote, first < NP_VALUE_STR_MAX ? 2 : 1, 0);
    if (got < 0 && (errno == ENOSYS || errno == EPERM))
        got = read_by_pipe(p, first, out);
    if (got <= 0)
        return 0;
    const char *nul = memchr(out, 0, (size_t)got);
    return nul ? (size_t)(nul - out) : (size_t)got;
}

#define GROUP_MAX (1 + NP_VALUE_ARGS_MAX * (1 + (NP_VALUE_STR_MAX + 15) / 16))

/* The values of spec K (from 0) of FN that the hook could not put in place
 * (another buffer, a loss or a sample in between; a return value, before
 * the exit) or that hold a string, as a group in its own right. Busy. */
static __attribute__((noinline)) void values_slow(struct np_thread *t, unsigned k, uintptr_t fn,
                                                  const uint64_t *regs, int retval)
{
    const struct np_rec_packed *pk = &np_rec_packed[k];
    if (pk->words) {
        np_raw g[1 + (NP_VALUE_ARGS_MAX + 1) / 2];
        size_t n = 1 + pk->slots;
        g[0].w0 = pk->head;
        g[0].w1 = 0;
        for (unsigned i = 0; i < pk->words; i += 2) {
            g[1 + i / 2].w0 = regs[i];
            g[1 + i / 2].w1 = i + 1 < pk->words ? regs[i + 1] : 0;
        }
        np_rec_put_group(t, g, n);
        return;
    }
    const struct np_value_spec *s = &specs[k];
    np_raw g[GROUP_MAX];
    size_t n = 1;
    for (unsigned i = 0; i < s->n; i++) {
        const struct np_value_item *it = &s->item[i];
        uint64_t v = np_value_cut(it, retval ? regs[0] : regs[it->index - 1], 64);
        unsigned format = it->format;
        size_t len = 0;
        char str[NP_VALUE_STR_MAX];
        if (format == NP_VAL_STR) {
            if (v)
                len = read_string(v, str);
            else
                format = NP_VAL_PTR; /* NULL */
        }
        g[n].w0 = it->index | (uint64_t)format << 8 | (uint64_t)len << 16;
        g[n++].w1 = v;
        for (size_t b = 0; b < len; b += 16) {
            uint64_t w[2] = { 0, 0 };
            memcpy(w, str + b, len - b < 16 ? len - b : 16);
            g[n].w0 = w[0];
            g[n++].w1 = w[1];
        }
    }
    g[0].w0 = (uint64_t)NP_RAW_VALUES << NP_RAW_SHIFT | (uint64_t)retval << 32 | (uint64_t)(n - 1) << 8 | s->n;
    g[0].w1 = 0;
    if (retval)
        np_rec_put_group(t, g, n);
    else
        np_rec_put_values(t, g, n, fn); /* (the entry's raw word: the address, kind 0) */
}

/* mcount.c's hooks: FN's arguments (REGS, after its entry), and its
 * return value (REGS[0], before its exit), when a spec names FN. Each runs
 * with the thread busy, when it records and is not busy already (the
 * unattached state is always busy): hook_begin's thread, or NULL. The
 * usual case, integers straight after the entry, is a few stores. */
static inline __attribute__((always_inline)) struct np_thread *hook_begin(void)
{
    struct np_thread *t = np_cur;
    if ((t->flags & (NP_F_REC_ON | NP_F_BUSY)) != NP_F_REC_ON)
        return NULL;
    t->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return t;
}

static inline __attribute__((always_inline)) void hook_end(struct np_thread *t)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
}

static void arguments(uintptr_t fn, const uint64_t *regs)
{
    struct np_thread *t = hook_begin();
    if (!t)
        return;
    unsigned k = (unsigned)(lookup(fn) >> 8 & 0xff);
    if (k) {
        const struct np_rec_packed *pk = &np_rec_packed[k - 1];
        if (!pk->words || !np_rec_put_packed(t, pk->head, regs, pk->slots, fn))
            values_slow(t, k - 1, fn, regs, 0);
    }
    hook_end(t);
}

static void return_value(uintptr_t fn, const uint64_t *regs)
{
    struct np_thread *t = hook_begin();
    if (!t)
        return;
    unsigned k = (unsigned)(lookup(fn) & 0xff);
    if (k)
        values_slow(t, k - 1, fn, regs, 1);
    hook_end(t);
}

int np_rec_values_configure(void)
{
#if defined(__aarch64__)
    const char *a = getenv("NANOPROF_ARGS");
    if (a && *a) {
        np_rec_say("NANOPROF_ARGS", "AArch64's -pg hook (_mcount) runs after the prologue, with x0 overwritten: "
                                    "it sees no arguments (return values: NANOPROF_RETVAL)");
        return 0;
    }
#endif
    if (!add_specs("NANOPROF_ARGS", 0) || !add_specs("NANOPROF_RETVAL", 1))
        return 0;
#if defined(__arm__)
    for (unsigned i = 0; i < nspecs; i++)
        for (unsigned k = 0; k < specs[i].n; k++)
            if (!spec_retval[i] && specs[i].item[k].index > 4) {
                np_rec_say("NANOPROF_ARGS", "32-bit ARM passes arguments past the fourth on the stack: arg1 to "
                                            "arg4 only");
                return 0;
            }
#endif
    if (!nspecs)
        return 1;
    if (np_rec_cfg.min_ns) {
        np_rec_say("NANOPROF_ARGS/NANOPROF_RETVAL", "not with NANOPROF_MIN_NS (a time filter)");
        return 0;
    }
    /* each hook only where a spec asks for its values */
    for (unsigned i = 0; i < nspecs; i++)
        np_mcount_values_set(spec_retval[i] ? NULL : arguments, spec_retval[i] ? return_value : NULL);
    return 1;
}
