/* test_port_posix.c - the pieces the POSIX port and the analysis once had
 * twice, now once each, on what the two copies did differently:
 *   - the symbolizer (common/elf_symtab.h): the runtime named a function
 *     by whichever alias its table happened to list last (a weak one), the
 *     analysis by the global one; both must name it alike, versioned
 *     names without their version;
 *   - the module walk (port/posix/modules.h): the symbolizer took any
 *     loaded segment and "/proc/self/exe" for the program, the recorder
 *     code only and the program's real path;
 *   - the write loop (port/posix/posix.h): all bytes, through signals and
 *     short writes;
 *   - the wall clock (np_port_wall_ticks, once np_rec_ticks too): wall
 *     time whatever clock function cost uses, its name the recording
 *     clock's;
 *   - the chunk walk (trace_format.h's np_trace_chunk_check), which the
 *     reader and `nanoprof record`'s summary share;
 *   - np_parse_size, now freestanding: what strtoull read, it reads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "analyze/symbols.h"
#include "common/debug_file.h"
#include "common/parse_size.h"
#include "common/trace_format.h"
#include "port/port.h"
#include "port/posix/modules.h"
#include "port/posix/posix.h"

/* ---- symbols --------------------------------------------------------------- */

/* The analysis's name for ADDR, in the module the runtime's walk finds. */
static void host_name(const void *addr, char *out, size_t size, uint64_t *elf_addr)
{
    struct np_posix_module m;
    char path[PATH_MAX];
    assert_true(np_posix_module_of((uintptr_t)addr, &m, path));
    struct np_trace_module tm = { m.bias, m.start, m.end, m.build_id, m.build_id_len, path };
    struct np_symbols *s = np_symbols_new(NULL, NULL);
    struct np_addrspace *a = np_addrspace_new(s);
    assert_int_equal(np_addrspace_map(a, &tm), 0);
    struct np_symbol sym;
    np_addrspace_lookup(a, (uint64_t)(uintptr_t)addr, &sym);
    snprintf(out, size, "%s", sym.name ? sym.name : "(none)");
    *elf_addr = sym.elf_addr + m.bias;
    np_addrspace_free(a);
    np_symbols_free(s);
}

static void names_agree(const char *lib, const char *symbol, const char *want)
{
    void *h = dlopen(lib, RTLD_NOW);
    assert_non_null(h);
    const char *fn = dlsym(h, symbol);
    assert_non_null(fn);
    for (int off = 0; off < 3; off += 2) { /* the entry, and inside */
        char rt[256], host[256];
        uint64_t rt_off = 99, host_start = 0;
        assert_int_equal(np_port_symbolize_at(fn + off, rt, sizeof rt, &rt_off), 1);
        host_name(fn + off, host, sizeof host, &host_start);
        assert_string_equal(rt, want);
        assert_string_equal(host, want);
        assert_int_equal(rt_off, (uint64_t)off);
        assert_int_equal(host_start, (uint64_t)(uintptr_t)fn);
    }
    /* a buffer too short for the name: cut, terminated */
    char tiny[4];
    assert_int_equal(np_port_symbolize(fn, tiny, sizeof tiny), 1);
    assert_int_equal(strncmp(tiny, want, 3), 0);
    assert_int_equal(tiny[3], 0);
    dlclose(h);
}

static void symbolizers_agree_on_aliases(void **state)
{
    (void)state;
    names_agree(NP_ALIASES_LIB, "aliased_weak", "aliased_fn"); /* the global name, not the weak one */
    names_agree(NP_VERSIONED_LIB, "versioned_fn", "versioned_fn");
}

/* ---- modules --------------------------------------------------------------- */

int np_test_global_data = 42;

static int count_vdso(struct np_posix_module *m, void *ctx)
{
    char buf[PATH_MAX];
    const char *p = np_posix_module_path(m, buf);
    if (p && strcmp(p, NP_TRACE_VDSO) == 0)
        ++*(int *)ctx;
    return 0;
}

static int count_all(struct np_posix_module *m, void *ctx)
{
    (void)m;
    ++*(int *)ctx;
    return 0;
}

static void one_module_walk(void **state)
{
    (void)state;
    struct np_posix_module m;
    char path[PATH_MAX], real[PATH_MAX];
    /* the program: its real path, its code range holding its functions */
    assert_true(np_posix_module_of((uintptr_t)one_module_walk, &m, path));
    assert_non_null(realpath("/proc/self/exe", real));
    assert_string_equal(path, real);
    assert_true(m.start <= (uint64_t)(uintptr_t)one_module_walk && (uint64_t)(uintptr_t)one_module_walk < m.end);
    assert_non_null(m.build_id);
    assert_int_equal(m.build_id_len, 20);
    /* data is nobody's code */
    assert_false(np_posix_module_of((uintptr_t)&np_test_global_data, &m, path));
    /* the vDSO by the name readers know it by */
    int vdso = 0;
    np_posix_modules(count_vdso, &vdso, NULL);
    assert_int_equal(vdso, 1);
    /* with the loader's count: a second look walks nothing new */
    unsigned long long adds = ~0ull;
    int first = 0, second = 0;
    np_posix_modules(count_all, &first, &adds);
    np_posix_modules(count_all, &second, &adds);
    assert_true(first >= 3);
    assert_int_equal(second, 0);
}

/* ---- the write loop ------------------------------------------------------------ */

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

struct reader {
    int fd;
    size_t got;
    int in_order;
};

static void *read_slowly(void *arg)
{
    struct reader *r = arg;
    unsigned char buf[4096];
    ssize_t n;
    r->in_order = 1;
    while ((n = read(r->fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != (unsigned char)((r->got + (size_t)i) * 7))
                r->in_order = 0;
        r->got += (size_t)n;
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void write_all_through_signals(void **state)
{
    (void)state;
    enum { SIZE = 8 << 20 };
    unsigned char *data = malloc(SIZE);
    assert_non_null(data);
    for (size_t i = 0; i < SIZE; i++)
        data[i] = (unsigned char)(i * 7);
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct reader r = { p[0], 0, 0 };
    pthread_t th;
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &old); /* the signals go to the writer */
    assert_int_equal(pthread_create(&th, NULL, read_slowly, &r), 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    struct sigaction sa = { 0 };
    sa.sa_handler = on_alarm; /* no SA_RESTART: write() sees EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 500 }, { 0, 500 } };
    setitimer(ITIMER_REAL, &it, NULL);
    int rc = np_posix_write_all(p[1], data, SIZE);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    signal(SIGALRM, SIG_DFL);
    free(data);
    assert_int_equal(rc, 0);
    assert_true(alarms > 0);
    assert_int_equal(r.got, SIZE);
    assert_true(r.in_order);
    /* a closed pipe: -1, not a loop (SIGPIPE ignored meanwhile) */
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(np_posix_write_all(p[1], "x", 1), -1);
    signal(SIGPIPE, SIG_DFL);
    close(p[1]);
}

/* ---- the wall clock ---------------------------------------------------------------- */

/* Sections and the recorder read np_port_wall_ticks: wall time, a sleep
 * included, whichever clock function cost uses (NANOPROF_CLOCK: the
 * ctest runs this with thread-cputime too, whose own ticks leave a
 * sleep out), named as the recording clock. */
static void wall_clock_counts_sleep(void **state)
{
    (void)state;
    np_port_clock_init();
    const char *force = getenv("NANOPROF_CLOCK");
    const char *name = np_port_wall_clock_name();
    if (force && strcmp(force, "thread-cputime") == 0)
        assert_string_equal(name, "monotonic");
    else
        assert_true(strcmp(name, np_port_clock_name()) == 0 || strcmp(name, "monotonic") == 0);
    double npt = np_port_ns_per_tick();
    uint64_t t0 = np_port_wall_ticks();
    struct timespec ts = { 0, 30000000 };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    double slept_ns = (double)(np_port_wall_ticks() - t0) * npt;
    assert_true(slept_ns >= 29e6);
    assert_true(slept_ns < 5e9);
}

/* ---- the chunk walk ------------------------------------------------------------------ */

static void chunk_check(void **state)
{
    (void)state;
    uint8_t h[NP_TRACE_CHUNK_HEADER];
    const unsigned hs = NP_TRACE_CHUNK_HEADER;
    uint32_t type = 0, len = 0;
    np_trace_chunk_header(h, NP_CHUNK_EVENTS, 100);
    assert_int_equal(np_trace_chunk_check(h, hs, 112, &type, &len), NP_CHUNK_WHOLE);
    assert_int_equal(type, NP_CHUNK_EVENTS);
    assert_int_equal(len, 100);
    assert_int_equal(np_trace_chunk_check(h, hs, 200, &type, &len), NP_CHUNK_WHOLE);
    assert_int_equal(np_trace_chunk_check(h, hs, 111, &type, &len), NP_CHUNK_CUT); /* a byte short */
    assert_int_equal(np_trace_chunk_check(h, hs, 11, &type, &len), NP_CHUNK_CUT_HEADER);
    assert_int_equal(np_trace_chunk_check(NULL, hs, 100, &type, &len), NP_CHUNK_CUT_HEADER);
    /* version 1's 8-byte headers */
    assert_int_equal(np_trace_chunk_header_size(1), 8);
    assert_int_equal(np_trace_chunk_header_size(2), 12);
    assert_int_equal(np_trace_chunk_check(h, 8, 108, &type, &len), NP_CHUNK_WHOLE);
    assert_int_equal(np_trace_chunk_check(h, 8, 107, &type, &len), NP_CHUNK_CUT);
    np_trace_chunk_header(h, NP_CHUNK_END, NP_TRACE_CHUNK_MAX + 1);
    assert_int_equal(np_trace_chunk_check(h, hs, UINT64_MAX, &type, &len), NP_CHUNK_TOO_LONG);
    np_trace_chunk_header(h, NP_CHUNK_END, 0);
    assert_int_equal(np_trace_chunk_check(h, hs, 12, &type, &len), NP_CHUNK_WHOLE);

    /* in memory, with the checksum: a flip anywhere is damage */
    uint8_t c[NP_TRACE_CHUNK_HEADER + 5] = { 0 };
    np_trace_chunk_header(c, NP_CHUNK_THREAD, 5);
    memcpy(c + NP_TRACE_CHUNK_HEADER, "\7\0\0\0x", 5);
    np_trace_chunk_seal(c);
    assert_int_equal(np_trace_chunk_at(c, sizeof c, NP_TRACE_VERSION, &type, &len), NP_CHUNK_WHOLE);
    assert_true(np_trace_chunk_plausible(c, sizeof c));
    for (size_t bit = 0; bit < 8 * sizeof c; bit++) {
        c[bit / 8] ^= (uint8_t)(1u << bit % 8);
        enum np_chunk_check k = np_trace_chunk_at(c, sizeof c, NP_TRACE_VERSION, &type, &len);
        assert_true(k != NP_CHUNK_WHOLE);
        c[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    /* version 1 has no checksum to fail */
    c[NP_TRACE_CHUNK_HEADER] ^= 1;
    assert_int_equal(np_trace_chunk_at(c, sizeof c, NP_TRACE_VERSION, &type, &len), NP_CHUNK_DAMAGED);
    np_put_u32(c + 4, 1); /* as version 1: type, length 1, one byte */
    assert_int_equal(np_trace_chunk_at(c, 9, 1, &type, &len), NP_CHUNK_WHOLE);
    /* a type no reader knows is no place to resynchronise */
    np_trace_chunk_header(c, 77, 5);
    np_trace_chunk_seal(c);
    assert_false(np_trace_chunk_plausible(c, sizeof c));
}

/* ---- sizes ------------------------------------------------------------------------------ */

/* The parser as it was, on strtoull. */
static uint64_t size_by_strtoull(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end || v > (~0ull >> shift))
        return 0;
    return (uint64_t)v << shift;
}

static void parse_size_as_strtoull(void **state)
{
    (void)state;
    static const char *const in[] = {
        "0", "1", "64k", "64K", "1m", "1M", "3g", "3G", "4096", " 42", "\t42k", "+7", "+7m", "-5", " -5",
        " -5k", "", "k", "12x", "12kk", "12 ", "18446744073709551615", "18446744073709551616",
        "17179869183g", "17179869184g", "99999999999999999999999", "0x10", "007", " +0", "+", "-", " ",
    };
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        uint64_t want = size_by_strtoull(in[i]);
        if (np_parse_size(in[i]) != want)
            fail_msg("\"%s\": %llu, strtoull's reading %llu", in[i], (unsigned long long)np_parse_size(in[i]),
                     (unsigned long long)want);
    }
    assert_int_equal(np_parse_size("64k"), 65536);
    assert_int_equal(np_parse_size(" 3M"), 3 << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(symbolizers_agree_on_aliases),
        cmocka_unit_test(one_module_walk),
        cmocka_unit_test(write_all_through_signals),
        cmocka_unit_test(wall_clock_counts_sleep),
        cmocka_unit_test(chunk_check),
        cmocka_unit_test(parse_size_as_strtoull),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
