/* thunks.c - x86-64: the exit of a -pg -mfentry call found with every call
 * and return paired, so that the CPU's return-address predictor stays
 * right (docs/instrumenting.md).
 *
 * The first call a module makes to __fentry__ (mcount.c) has its
 * functions' `call __fentry__` rewritten, each into a `jmp` to a thunk of
 * the function's own, placed within a jump's reach:
 *
 *   t+0   call *enter     np_thunk_enter: the caller's return address on
 *                         the return stack, this call's in its place
 *   t+6   call body       the function's code after its hook, from the
 *                         caller's slot: the stack as the caller left it
 *   t+11  jmp exit        np_thunk_exit: the exit, then `ret` to the
 *                         caller with its address pushed back
 *   t+16  .quad body      (unhooked, the enter jumps there)
 *   t+24  .quad fn
 *
 * The functions are those the module's unwind table (.eh_frame_hdr, in
 * memory) starts, whose first instruction (after an endbr64) calls
 * __fentry__: directly, through the PLT, or through the GOT. Patched
 * entries (patch.c) take thunks too. A function that has none (no unwind
 * entry, no room near the module) keeps its call to __fentry__, whose
 * exit is the return-address trampoline's: both kinds meet on the one
 * return stack.
 *
 * A site is rewritten as patchable entries are (the same three steps, each
 * followed by every CPU serialised): a thread that meets the int3 meanwhile
 * is sent to the thunk, where the finished jump sends it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../runtime/np_config.h"
#include "mcount.h"
#include "posix.h"

#if defined(__x86_64__) && defined(__linux__)

#define THUNK NP_THUNK_BYTES
#define AREA_HEAD 32  /* the enter's and exit's addresses, the jump to the exit */

void __fentry__(void);

struct pair {
    uintptr_t site, thunk;
};

/* Every area of thunks, and the sites each module's batch switched (the
 * SIGTRAP handler reads them without a lock: entries are written before
 * they are counted, and never change). */
static struct area {
    uintptr_t base, end;
} areas[NP_THUNK_AREAS];
static int nareas;
static struct batch {
    const struct pair *v;
    size_t n;
} batches[NP_THUNK_AREAS];
static int nbatches;
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

void np_posix_code_lock(void) { pthread_mutex_lock(&code_lock); }
void np_posix_code_unlock(void) { pthread_mutex_unlock(&code_lock); }

static int reach(uintptr_t from, uintptr_t to)
{
    int64_t d = (int64_t)(to - from);
    return d > (int64_t)INT32_MIN + 4096 && d < (int64_t)INT32_MAX - 4096;
}

void *np_posix_map_near(uintptr_t lo, uintptr_t hi, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size = (size + (size_t)page - 1) & ~(size_t)(page - 1);
    uintptr_t base = lo & ~(uintptr_t)(page - 1);
    /* a free range near LO..HI: below first (the executable's code is low,
     * the heap grows above it), then above */
    for (int dir = -1; dir <= 1; dir += 2)
        for (uintptr_t step = 1u << 20; step < (1u << 30); step += 1u << 20) {
            uintptr_t cand = dir < 0 ? base - step - size : ((hi + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1)) + step;
            if (dir < 0 && cand > base)
                break;
            if (!reach(lo, cand) || !reach(hi, cand + size) || !reach(cand, lo) || !reach(cand + size, hi))
                continue;
            void *p = mmap((void *)cand, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                           -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p != cand) { /* (a kernel before 4.17 takes the flag as a hint) */
                munmap(p, size);
                continue;
            }
            return p;
        }
    return NULL;
}

static void put_rel(uint8_t *at, uint8_t op, uintptr_t to)
{
    int32_t rel = (int32_t)(int64_t)(to - ((uintptr_t)at + 5));
    at[0] = op;
    memcpy(at + 1, &rel, 4);
}

static void put_riprel(uint8_t *at, uint8_t op2, uintptr_t slot)
{
    int32_t rel = (int32_t)(int64_t)(slot - ((uintptr_t)at + 6));
    at[0] = 0xff;
    at[1] = op2;
    memcpy(at + 2, &rel, 4);
}

/* An area within reach of LO..HI of N thunks, the Ith for FN[I] whose
 * body is at BODY[I], made executable: its first thunk, or 0. */
static uintptr_t make_thunks(uintptr_t lo, uintptr_t hi, size_t n, const uintptr_t *fn, const uintptr_t *body)
{
    if (nareas == NP_THUNK_AREAS)
        return 0;
    size_t size = AREA_HEAD + n * THUNK;
    uint8_t *a = np_posix_map_near(lo, hi, size);
    if (!a)
        return 0;
    uintptr_t enter = (uintptr_t)np_thunk_enter, exit = (uintptr_t)np_thunk_exit;
    memcpy(a, &enter, 8);
    memcpy(a + 8, &exit, 8);
    put_riprel(a + 16, 0x25, (uintptr_t)a + 8);
    for (size_t i = 0; i < n; i++) {
        uint8_t *t = a + AREA_HEAD + i * THUNK;
        put_riprel(t, 0x15, (uintptr_t)a);
        put_rel(t + 6, 0xe8, body[i]);
        put_rel(t + 11, 0xe9, (uintptr_t)a + 16);
        memcpy(t + 16, &body[i], 8);
        memcpy(t + 24, &fn[i], 8);
    }
    long page = sysconf(_SC_PAGESIZE);
    if (mprotect(a, (size + (size_t)page - 1) & ~(size_t)(page - 1), PROT_READ | PROT_EXEC) != 0) {
        munmap(a, size);
        return 0;
    }
    areas[nareas].base = (uintptr_t)a;
    areas[nareas].end = (uintptr_t)a + size;
    __atomic_store_n(&nareas, nareas + 1, __ATOMIC_RELEASE);
    return (uintptr_t)a + AREA_HEAD;
}

uintptr_t np_posix_thunks(size_t n, const uintptr_t *fn, const uintptr_t *body)
{
    static pthread_mutex_t areas_lock = PTHREAD_MUTEX_INITIALIZER; /* (modules' and patch.c's) */
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fn[i] < lo ? fn[i] : lo;
        hi = body[i] > hi ? body[i] : hi;
    }
    if (!n || !reach(lo, hi))
        return 0;
    pthread_mutex_lock(&areas_lock);
    uintptr_t t = make_thunks(lo, hi, n, fn, body);
    pthread_mutex_unlock(&areas_lock);
    return t;
}

int np_posix_thunks_wanted(void)
{
    static int wanted = -1;
    if (wanted < 0) {
        const char *e = getenv("NANOPROF_PG_THUNKS");
        wanted = !(e && !strcmp(e, "0"));
    }
    return wanted;
}

int np_thunk_return_point(uintptr_t a)
{
    int n = __atomic_load_n(&nareas, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (a - areas[i].base - AREA_HEAD < areas[i].end - areas[i].base - AREA_HEAD)
            return (a - areas[i].base - AREA_HEAD) % THUNK == 11;
    return 0;
}

uintptr_t np_thunk_trapped(uintptr_t site)
{
    int n = __atomic_load_n(&nbatches, __ATOMIC_ACQUIRE);
    for (int b = 0; b < n; b++) {
        size_t lo = 0, hi = batches[b].n;
        const struct pair *v = batches[b].v;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].site < site)
                lo = mid + 1;
            else if (v[mid].site > site)
                hi = mid;
            else
                return v[mid].thunk;
        }
    }
    return 0;
}

/* ---- a module's calls of __fentry__ ------------------------------------ */

struct scan {
    uintptr_t lo, hi;         /* the module's code */
    uintptr_t mod_lo, mod_hi; /* all of it (its GOT) */
    uintptr_t plt;            /* the call target found to reach __fentry__ */
    size_t n;
    uintptr_t *site, *body; /* NULL: counting */
};

/* Whether the GOT slot at GOT, in the module, holds __fentry__'s address
 * (the module's first call of the hook bound it). */
static int got_fentry(const struct scan *s, uintptr_t got)
{
    return got - s->mod_lo < s->mod_hi - s->mod_lo && s->mod_hi - got >= sizeof(uintptr_t) &&
           *(const uintptr_t *)got == (uintptr_t)__fentry__;
}

/* Whether a call to T reaches __fentry__: directly, or through a PLT entry
 * (endbr64, bnd, jmp *GOT). */
static int reaches_fentry(const struct scan *s, uintptr_t t)
{
    if (t == (uintptr_t)__fentry__)
        return 1;
    if (t - s->lo >= s->hi - s->lo || s->hi - t < 16)
        return 0;
    const uint8_t *p = (const uint8_t *)t;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4;
    if (p[0] == 0xf2)
        p++;
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    int32_t d;
    memcpy(&d, p + 2, 4);
    return got_fentry(s, (uintptr_t)p + 6 + (uintptr_t)(intptr_t)d);
}

/* The call of __fentry__ a function starting at FN begins with: its length
 * (5 or 6), *SITE where it is; 0: none. */
static int fentry_call(struct scan *s, uintptr_t fn, uintptr_t *site)
{
    if (fn - s->lo >= s->hi - s->lo || s->hi - fn < 16)
        return 0;
    const uint8_t *p = (const uint8_t *)fn;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) /* endbr64 */
        p += 4;
    *site = (uintptr_t)p;
    int32_t d;
    if (p[0] == 0xff && p[1] == 0x15) { /* call *GOT(%rip) */
        memcpy(&d, p + 2, 4);
        return got_fentry(s, (uintptr_t)p + 6 + (uintptr_t)(intptr_t)d) ? 6 : 0;
    }
    int len = p[0] == 0xe8 ? 5 : p[0] == 0x67 && p[1] == 0xe8 ? 6 : 0;
    if (!len)
        return 0;
    memcpy(&d, p + len - 4, 4);
    uintptr_t t = (uintptr_t)p + (uintptr_t)len + (uintptr_t)(intptr_t)d;
    if (t == s->plt)
        return len;
    if (!reaches_fentry(s, t))
        return 0;
    s->plt = t;
    return len;
}

/* The functions .eh_frame_hdr's table starts (sorted), each to EACH. */
static size_t each_function(const uint8_t *hdr, void (*each)(uintptr_t fn, void *ctx), void *ctx)
{
    if (!hdr || hdr[0] != 1 || hdr[3] != 0x3b) /* version 1; table: datarel sdata4 */
        return 0;
    int ptr = hdr[1] & 0x0f, cnt = hdr[2] & 0x0f;
    const uint8_t *p = hdr + 4;
    if (ptr == 0x03 || ptr == 0x0b)
        p += 4;
    else if (ptr == 0x04 || ptr == 0x0c)
        p += 8;
    else
        return 0;
    uint64_t n;
    if (cnt == 0x03 || cnt == 0x0b) {
        uint32_t v;
        memcpy(&v, p, 4);
        n = v, p += 4;
    } else {
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        int32_t loc;
        memcpy(&loc, p + i * 8, 4);
        each((uintptr_t)hdr + (uintptr_t)(intptr_t)loc, ctx);
    }
    return (size_t)n;
}

static void scan_one(uintptr_t fn, void *ctx)
{
    struct scan *s = ctx;
    uintptr_t site;
    int len = fentry_call(s, fn, &site);
    if (!len)
        return;
    if (s->site) {
        if (s->n && s->site[s->n - 1] == site)
            return; /* (two entries of one function) */
        s->site[s->n] = site;
        s->body[s->n] = site + (uintptr_t)len;
    }
    s->n++;
}

static void put(uintptr_t at, const uint8_t *b, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        __atomic_store_n((uint8_t *)at + i, b[i], __ATOMIC_RELAXED);
}

static int protect(const struct pair *v, size_t n, int prot)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t last = 0;
    for (size_t i = 0; i < n; i++)
        for (uintptr_t p = v[i].site & ~(uintptr_t)(page - 1); p < v[i].site + 5; p += (uintptr_t)page) {
            if (p == last)
                continue;
            if (mprotect((void *)p, (size_t)page, prot) != 0)
                return -1;
            last = p;
        }
    return 0;
}

int np_posix_thunks_module(const uint8_t *eh_frame_hdr, uintptr_t lo, uintptr_t hi, uintptr_t mod_lo,
                           uintptr_t mod_hi)
{
    struct scan s = { lo, hi, mod_lo, mod_hi, 0, 0, NULL, NULL };
    if (!each_function(eh_frame_hdr, scan_one, &s) || !s.n)
        return 0;
    if (nbatches == NP_THUNK_AREAS || np_posix_trap_ready() != 0)
        return -1;
    size_t want = s.n, bytes = want * (2 * sizeof(uintptr_t) + sizeof(struct pair));
    uintptr_t *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    s.site = mem, s.body = mem + want, s.n = 0;
    each_function(eh_frame_hdr, scan_one, &s);
    if (s.n > want)
        s.n = want; /* (the code changed between the two walks: never) */
    uintptr_t first = np_posix_thunks(s.n, s.site, s.body);
    struct pair *v = (struct pair *)(mem + 2 * want);
    if (!first) {
        munmap(mem, bytes);
        return -1;
    }
    for (size_t i = 0; i < s.n; i++) {
        v[i].site = s.site[i];
        v[i].thunk = first + i * THUNK;
    }
    /* no signal handler of the program's runs while the code is written
     * (its calls may want this lock, or the module table's) */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGTRAP), sigdelset(&all, SIGSEGV), sigdelset(&all, SIGBUS);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    np_posix_code_lock();
    int rc = -1;
    batches[nbatches].v = v;
    batches[nbatches].n = s.n;
    __atomic_store_n(&nbatches, nbatches + 1, __ATOMIC_RELEASE);
    if (np_posix_sync_cores() == 0 && protect(v, s.n, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
        static const uint8_t int3 = 0xcc;
        uint8_t b[5];
        for (size_t i = 0; i < s.n; i++)
            put(v[i].site, &int3, 0, 1);
        np_posix_sync_cores();
        for (size_t i = 0; i < s.n; i++) {
            int32_t rel = (int32_t)(int64_t)(v[i].thunk - (v[i].site + 5));
            memcpy(b + 1, &rel, 4);
            put(v[i].site, b, 1, 5);
        }
        np_posix_sync_cores();
        for (size_t i = 0; i < s.n; i++) {
            b[0] = 0xe9;
            put(v[i].site, b, 0, 1);
        }
        np_posix_sync_cores();
        rc = (int)s.n;
    }
    protect(v, s.n, PROT_READ | PROT_EXEC);
    np_posix_code_unlock();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

#else

int np_thunk_return_point(uintptr_t a)
{
    (void)a;
    return 0;
}

#endif
