/* harness.h - the main() every benchmark workload shares.
 *
 * A workload file defines WORK_NAME, includes this file and defines
 *   static void work_setup(void);      prepares its input, not timed
 *   static uint64_t work_run(void);    the timed work; returns a checksum
 * The same source builds every variant (see
 * bench/CMakeLists.txt); the variant decides what the compiler's hooks do:
 *
 *   BENCH_NANOPROF  the program links a nanoprof runtime library and
 *                   --mode=stack|log|cost turns a mechanism on;
 *   otherwise       --mode=none only: the hooks are whatever the variant
 *                   links (none, empty, two clock reads, a call counter, or
 *                   glibc's no-ops that uftrace replaces).
 *
 * Stack placement: where the stack sits in its page is random per process
 * (ASLR), and code this call-heavy can be sensitive to it (alignment of the
 * frames against the hooks' per-thread state and buffers). So that no one
 * placement decides a figure, each process runs the work at --offsets=K
 * stack offsets spread over a 4 KiB page (alloca before the timed call),
 * --reps=R times at each. --verbose prints every run's time to stderr.
 *
 * Output, one line on stdout (bench/run.sh parses it):
 *   bench=<name> mode=<m> offsets=<k> reps=<r> ns_typ=<n> ns_min=<n>
 *   calls=<n> setup_calls=<n> result=<hex> [calc_ns=<n> setup_ns=<n> stats_calls=<n>
 *   lost=<n> clock=<c>] [trace_lost=<n>] [patched=<n> patch_ns=<n>]
 * Times are the wall time (CLOCK_MONOTONIC) of one work_run(): ns_typ is
 * the median over the offsets of the fastest rep at each offset (the
 * typical placement), ns_min the fastest rep of all (the best placement).
 * calls is the number of hook entries during one work_run() when the
 * counting hooks (hooks_count.c) are linked, else 0; setup_calls those
 * during work_setup() (SQLite's initialisation). For --mode=cost the
 * run ends with np_stats_calc, inside the timed region (a user's run
 * ends so: function cost's whole price), and the measurement buffer is
 * the README's, 1 MiB (--cost-lines=65536), so whatever merges it needs
 * are timed too; calc_ns is that np_stats_calc's time (the fastest),
 * setup_ns the time of np_stats_init and np_cost_init, once per process
 * (the buffers touched before), stats_calls the number of calls the
 * table gained per rep (must equal calls). --trace-on (a build with
 * patchable entries) switches every function on before the runs:
 * patched says how many, patch_ns what np_trace_on took, once.
 *
 * Everything here is kept out of the instrumentation, so only the
 * workload's own calls reach the hooks. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef BENCH_NANOPROF
#include <nanoprof/nanoprof.h>
#endif

/* kept out of every hook: -finstrument-functions and -pg, and patchable
 * entries (the bench's -fpatchable-function-entry builds) */
#define BENCH_NOPROF __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#if defined(__clang__)
#define BENCH_NOIPA __attribute__((noinline))
#else
#define BENCH_NOIPA __attribute__((noinline, noipa))
#endif

static void work_setup(void);
static uint64_t work_run(void);

/* Defined only by hooks_count.c: hook entries so far. */
extern volatile unsigned long long bench_hook_calls __attribute__((weak));

#define BENCH_MAX_REPS 64
#define BENCH_MAX_OFFSETS 64

BENCH_NOPROF static uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

BENCH_NOPROF static int bench_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

BENCH_NOPROF static void bench_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--mode=none"
#ifdef BENCH_NANOPROF
            "|stack|log|cost"
#endif
            "] [--offsets=K] [--reps=N] [--verbose]"
#ifdef BENCH_NANOPROF
            " [--trace-lines=N] [--cost-lines=N] [--dump] [--trace-on]"
#endif
            "\n", argv0);
    exit(2);
}

/* What ends a timed run (np_stats_calc in cost mode), with its own time
 * stored in bench_end_ns. */
static void (*bench_end)(void);
static uint64_t bench_end_ns;

/* Runs the work once with the stack moved down by SHIFT bytes; returns its
 * time and stores the checksum in *RES. */
BENCH_NOPROF __attribute__((noinline)) static uint64_t bench_timed(size_t shift, uint64_t *res)
{
    char *pad = __builtin_alloca(shift + 16);
    __asm__ __volatile__("" : : "r"(pad) : "memory");
    uint64_t t0 = bench_now_ns();
    *res = work_run();
    if (bench_end) {
        uint64_t e0 = bench_now_ns();
        bench_end();
        bench_end_ns = bench_now_ns() - e0;
    }
    uint64_t t1 = bench_now_ns();
    __asm__ __volatile__("" : : "r"(pad) : "memory");
    return t1 - t0;
}

#ifdef BENCH_NANOPROF
static void *bench_stats;

BENCH_NOPROF static void bench_calc(void)
{
    np_stats_calc(bench_stats);
}

/* Sum of the call counts in a statistics table. */
BENCH_NOPROF static uint64_t bench_stats_calls(void *stats)
{
    uint64_t sum = 0;
    int n = np_stats_count(stats);
    for (int i = 0; i < n; i++) {
        np_func_stats s;
        if (np_stats_get(stats, i, &s) == NP_OK)
            sum += s.calls;
    }
    return sum;
}
#endif

BENCH_NOPROF int main(int argc, char **argv)
{
    const char *mode = "none";
    int reps = 2, offsets = 16;
    long cost_lines = 65536;    /* 1 MiB: the README's */
    long trace_lines = 4096;    /* 64 KiB */
    int dump = 0, verbose = 0, trace_on = 0;

    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--mode=", 7) == 0)
            mode = argv[i] + 7;
        else if (strncmp(argv[i], "--reps=", 7) == 0)
            reps = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "--offsets=", 10) == 0)
            offsets = atoi(argv[i] + 10);
        else if (strncmp(argv[i], "--cost-lines=", 13) == 0)
            cost_lines = atol(argv[i] + 13);
        else if (strncmp(argv[i], "--trace-lines=", 14) == 0)
            trace_lines = atol(argv[i] + 14);
        else if (strcmp(argv[i], "--dump") == 0)
            dump = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--trace-on") == 0)
            trace_on = 1;
        else
            bench_usage(argv[0]);
    }
    if (reps < 1 || reps > BENCH_MAX_REPS || offsets < 1 || offsets > BENCH_MAX_OFFSETS ||
        cost_lines < 2 || trace_lines < 1 || trace_lines > (1L << 24))
        bench_usage(argv[0]);

    int m_stack = strcmp(mode, "stack") == 0, m_log = strcmp(mode, "log") == 0;
    int m_cost = strcmp(mode, "cost") == 0;
    if (!m_stack && !m_log && !m_cost && strcmp(mode, "none") != 0)
        bench_usage(argv[0]);
#ifndef BENCH_NANOPROF
    if (m_stack || m_log || m_cost) {
        fprintf(stderr, "%s: built without nanoprof: only --mode=none\n", argv[0]);
        return 2;
    }
    (void)dump;
    if (trace_on)
        bench_usage(argv[0]);
#endif

    unsigned long long setup_c0 = &bench_hook_calls ? bench_hook_calls : 0;
    work_setup();
    unsigned long long setup_calls = (&bench_hook_calls ? bench_hook_calls : 0) - setup_c0;

#ifdef BENCH_NANOPROF
    /* Buffers are touched before the timed region, so no rep pays page
     * faults a real program would have paid once at start-up. */
    size_t tracesize = np_calltrace_buffer_size((int)trace_lines);
    void *trace = aligned_alloc(64, tracesize);
    size_t statssize = np_stats_buffer_size(4096);
    void *stats = aligned_alloc(64, (statssize + 63) & ~(size_t)63);
    void *costbuf = NULL;
    size_t costsize = 0;
    uint64_t setup_ns = 0;
    if (m_stack || m_log) {
        if (!trace)
            return 1;
        memset(trace, 0xff, tracesize);
        if (np_calltrace_init(trace, tracesize, m_stack ? NP_CALLTRACE_STACK : NP_CALLTRACE_LOG) != NP_OK)
            return 1;
    } else if (m_cost) {
        costsize = np_cost_buffer_size((int)cost_lines);
        costbuf = aligned_alloc(64, costsize);
        if (!costbuf)
            return 1;
        memset(costbuf, 0xff, costsize);
        if (!stats)
            return 1;
        memset(stats, 0, statssize);
        uint64_t s0 = bench_now_ns();
        if (np_stats_init(stats, statssize) != NP_OK || np_cost_init(costbuf, costsize) != NP_OK)
            return 1;
        setup_ns = bench_now_ns() - s0;
        bench_stats = stats;
        bench_end = bench_calc;
    }
    uint64_t calc_min = UINT64_MAX, stats_before = 0, stats_per_rep = 0;
    /* a patchable build's functions switched on, once, its time kept */
    uint64_t patch_ns = 0;
    int patched = 0;
    if (trace_on) {
        uint64_t p0 = bench_now_ns();
        patched = np_trace_on(NULL);
        patch_ns = bench_now_ns() - p0;
        if (patched <= 0) {
            fprintf(stderr, "%s: np_trace_on: %d (%s)\n", argv[0], patched, np_trace_error());
            return 1;
        }
    }
#endif

    /* offsets k * 4096 / K, plus k * 16 mod 256 so that the offsets also
     * differ in their low bits */
    uint64_t best[BENCH_MAX_OFFSETS], all_min = UINT64_MAX, result = 0, calls = 0;
    int runs = 0;
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < offsets; k++) {
            size_t shift = (size_t)k * 4096 / (size_t)offsets + (size_t)(k * 16 % 256);
            unsigned long long c0 = &bench_hook_calls ? bench_hook_calls : 0;
            uint64_t res;
            uint64_t t = bench_timed(shift, &res);
            unsigned long long c1 = &bench_hook_calls ? bench_hook_calls : 0;
            if (runs > 0 && (res != result || c1 - c0 != calls)) {
                fprintf(stderr, "%s: run %d differs: result %llx calls %llu\n", argv[0], runs,
                        (unsigned long long)res, c1 - c0);
                return 1;
            }
            result = res;
            calls = c1 - c0;
            runs++;
            if (verbose)
                fprintf(stderr, "rep %d offset %4zu: %llu ns\n", r, shift, (unsigned long long)t);
            if (r == 0 || t < best[k])
                best[k] = t;
            if (t < all_min)
                all_min = t;
#ifdef BENCH_NANOPROF
            if (m_cost) {
                if (bench_end_ns < calc_min)
                    calc_min = bench_end_ns;
                uint64_t now = bench_stats_calls(stats);
                if (runs > 1 && now - stats_before != stats_per_rep)
                    stats_per_rep = 0; /* not the same every rep: run.sh says so */
                else
                    stats_per_rep = now - stats_before;
                stats_before = now;
            }
#endif
        }
    }
    qsort(best, (size_t)offsets, sizeof best[0], bench_cmp_u64);
    uint64_t typ = offsets % 2 ? best[offsets / 2] : (best[offsets / 2 - 1] + best[offsets / 2]) / 2;

    printf("bench=%s mode=%s offsets=%d reps=%d ns_typ=%llu ns_min=%llu calls=%llu setup_calls=%llu result=%llx",
           WORK_NAME, mode, offsets, reps, (unsigned long long)typ,
           (unsigned long long)all_min, (unsigned long long)calls, setup_calls,
           (unsigned long long)result);
#ifdef BENCH_NANOPROF
    if (m_cost)
        printf(" calc_ns=%llu setup_ns=%llu stats_calls=%llu lost=%llu clock=%s",
               (unsigned long long)calc_min, (unsigned long long)setup_ns, (unsigned long long)stats_per_rep,
               (unsigned long long)np_stats_lost(stats), np_cost_clock_name());
    if (m_stack || m_log)
        printf(" trace_lost=%llu", (unsigned long long)np_calltrace_lost());
    if (trace_on)
        printf(" patched=%d patch_ns=%llu", patched, (unsigned long long)patch_ns);
    printf("\n");
    fflush(stdout);
    if (dump && (m_stack || m_log))
        np_calltrace_dump();
    if (dump && m_cost)
        np_stats_dump(stats);
    free(costbuf);
    free(stats);
    free(trace);
#else
    printf("\n");
#endif
    return 0;
}

#endif
