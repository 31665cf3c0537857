/* support.h - helpers for the tests: capture the runtime's output sink. */
#ifndef NP_TEST_SUPPORT_H
#define NP_TEST_SUPPORT_H

#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "nanoprof/nanoprof.h"

struct capture {
    char text[65536];
    size_t len;
};

static void capture_write(void *ctx, const char *bytes, size_t len)
{
    struct capture *c = ctx;
    if (c->len + len >= sizeof c->text)
        len = sizeof c->text - 1 - c->len;
    memcpy(c->text + c->len, bytes, len);
    c->len += len;
    c->text[c->len] = 0;
}

static inline void capture_start(struct capture *c)
{
    c->len = 0;
    c->text[0] = 0;
    np_output_set(capture_write, c);
}

static inline void capture_stop(void)
{
    np_output_set(NULL, NULL);
}

static void discard_write(void *ctx, const char *bytes, size_t len)
{
    (void)ctx, (void)bytes, (void)len;
}

/* Shuts both mechanisms down without the "not initialised" lines. */
static inline void quiet_shutdown(void)
{
    np_output_set(discard_write, NULL);
    np_calltrace_shutdown();
    np_cost_shutdown();
    np_output_set(NULL, NULL);
}

/* Line N (0-based) of TEXT copied into OUT. */
static inline int line_of(const char *text, int n, char *out, size_t size)
{
    const char *p = text;
    while (n-- > 0) {
        p = strchr(p, '\n');
        if (!p)
            return 0;
        p++;
    }
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (!*p || len >= size)
        return 0;
    memcpy(out, p, len);
    out[len] = 0;
    return 1;
}

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* This thread's CPU time. */
static inline uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* WHAT's cost (ns) against what the CALLS calls must have taken: at least
 * LEAST, the CPU time their work burnt by its own clock (spin_thread_cpu_ns
 * reads it), and at most CPU, the CPU time the thread measured around
 * them. Function cost leaves out the time the thread was switched out
 * (docs/cost.md): with the thread-cputime clock it is that CPU time; with
 * the counter, the counter less the time out, estimated at the first
 * timestamp after each switch from the thread's CPU clock, read a system
 * call apart from the counter, and clipped at zero (so skews do not
 * cancel): some us a switch. Either way 1% of the CPU time, which allows
 * one switch every 4 ms kernel tick at 40 us (0.2% at most seen on a busy
 * machine), and per call: below, 10 us (what the estimate may take off
 * beyond the time out: the 5% of a 200 us call test_cost has always
 * allowed); above, 50 us (36 us seen once in some 1,000 calls beside
 * other work, 8 at most in 600 more). CPU takes in more than the calls (a
 * clock read, the hooks, and on a busy machine the cost of a preemption
 * where a system call returns: up to 300 us seen), so it bounds the cost
 * from above only. OFF: the time the thread was off its CPU over the span
 * of the calls, begun by a sleep (which makes its first timestamp re-base
 * the estimate): time lost without a switch (a virtual machine's host
 * running something else, interrupts) is out of the thread's CPU clock,
 * and the estimate takes it off the call open at the next switch
 * (docs/cost.md), at most all of it. Above too: under load, coroutines
 * switched by np_thread_switch have been seen to keep up to that much of
 * it (test_scheduler: not yet explained), which this allows for. */
static inline void cost_within(const char *what, uint64_t cost_ns, uint64_t least, uint64_t cpu, unsigned calls,
                               uint64_t off)
{
    uint64_t below = cpu / 100 + 10000u * calls + off, above = cpu / 100 + 50000u * calls + off;
    print_message("%s: cost %.1f us, %.1f - %.1f to %.1f + %.1f us from the CPU time burnt and measured\n", what,
                  (double)cost_ns / 1e3, (double)least / 1e3, (double)below / 1e3, (double)cpu / 1e3,
                  (double)above / 1e3);
    if (cost_ns + below < least || cost_ns > cpu + above)
        fail_msg("%s: cost %.1f us, expected %.1f - %.1f to %.1f + %.1f us from the CPU time burnt and measured "
                 "around its calls",
                 what, (double)cost_ns / 1e3, (double)least / 1e3, (double)below / 1e3, (double)cpu / 1e3,
                 (double)above / 1e3);
}

/* The statistics of FN in STATS, calls 0 when it has none. */
static inline np_func_stats stats_of(void *stats, const void *fn)
{
    np_func_stats s;
    memset(&s, 0, sizeof s);
    if (np_stats_find(stats, fn, &s) != NP_OK)
        s.calls = 0;
    return s;
}

/* Section ID's values now (sections.h). */
static inline np_section_stats section_of(unsigned id)
{
    np_section_stats s;
    assert_int_equal(np_sections_get(id, &s), NP_OK);
    return s;
}

/* Fails unless LINE matches the extended regular expression PATTERN. */
static inline void match_line(const char *line, const char *pattern)
{
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    int ok = regexec(&re, line, 0, NULL, 0) == 0;
    regfree(&re);
    if (!ok)
        fail_msg("line '%s' does not match '%s'", line, pattern);
}

#endif
