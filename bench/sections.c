/* sections.c - what a measured section costs: one NP_SECTION_BEGIN /
 * NP_SECTION_END pair against its floor, two reads of the CPU counter (the
 * very reads the sections make, as in hooks_clock.c). Built without
 * instrumentation, linked with libnanoprof.a.
 *
 * Each figure is the fastest of --rounds=R rounds of --pairs=N pairs (noise
 * only ever adds time). Output, one line on stdout (bench/run.sh parses it):
 *   bench=sections pairs=<n> rounds=<r> pair_ns=<x> clock2_ns=<y> ratio=<x/y> clock=<c> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nanoprof/nanoprof.h>
#include "../src/port/port.h"

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) uint64_t time_pairs(long n)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        NP_SECTION_BEGIN(1);
        NP_SECTION_END(1);
    }
    return now_ns() - t0;
}

static __attribute__((noinline)) uint64_t time_clock2(long n)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        sink = np_port_counter();
        sink = np_port_counter();
    }
    return now_ns() - t0;
}

int main(int argc, char **argv)
{
    long pairs = 200000;
    int rounds = 15;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--pairs=", 8) == 0)
            pairs = atol(argv[i] + 8);
        else if (strncmp(argv[i], "--rounds=", 9) == 0)
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: %s [--pairs=N] [--rounds=R]\n", argv[0]);
            return 2;
        }
    }
    if (pairs < 1 || rounds < 1) {
        fprintf(stderr, "%s: --pairs and --rounds must be positive\n", argv[0]);
        return 2;
    }
    if (np_sections_init(0) != NP_OK)
        return 1;
    uint64_t best_pair = UINT64_MAX, best_clock = UINT64_MAX;
    for (int r = 0; r < rounds; r++) {
        uint64_t p = time_pairs(pairs), c = time_clock2(pairs);
        if (p < best_pair)
            best_pair = p;
        if (c < best_clock)
            best_clock = c;
    }
    np_section_stats s;
    np_sections_get(1, &s);
    if (s.count != (uint32_t)((uint64_t)pairs * (uint64_t)rounds)) {
        fprintf(stderr, "%s: section counted %u pairs, expected %ld\n", argv[0], s.count, pairs * rounds);
        return 1;
    }
    double pair = (double)best_pair / (double)pairs, clock2 = (double)best_clock / (double)pairs;
    printf("bench=sections pairs=%ld rounds=%d pair_ns=%.2f clock2_ns=%.2f ratio=%.2f clock=%s\n", pairs, rounds,
           pair, clock2, pair / clock2, np_cost_clock_name());
    return 0;
}
