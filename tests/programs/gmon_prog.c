/* gmon_prog.c - a program with a known split of CPU time and known call
 * counts, for the gmon.out exporter's test (tests/test_gmon_cli.sh), built
 * with -finstrument-functions -fno-omit-frame-pointer -g.
 *
 *   gmon_prog [UNITS]   (default 20; each unit is 2^20 loop iterations)
 *
 * main calls gp_heavy 4 times, gp_medium 6 times and gp_light 40 times;
 * each gp_light call calls gp_tiny 100 times (4000 calls). The iterations,
 * and so the CPU time, are split 50% gp_heavy, 30% gp_medium, 10%
 * gp_light's own loops and 10% gp_tiny; main's own is negligible.
 *
 * gp_light and gp_tiny alternate in short runs of irregular lengths: the
 * kernel checks CPU-time timers at its tick (often every 4 ms), and a
 * pattern that repeats at a period near the tick's would be sampled at the
 * same phase every time, giving one of the two all the samples.
 *
 * The split is the iterations'; the CPU time each takes is the machine's
 * (a loop's speed depends on where it lies and what runs beside it), so
 * main measures it around its calls and prints it, the truth the test
 * compares the samples with: "cpu gp_heavy MS", "cpu gp_medium MS" and
 * "cpu gp_light MS" (gp_tiny's time with it: timing each of its short
 * calls would take more than it measures). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT (1u << 20)

static volatile unsigned long sink;

/* The loop every function spins in: inlined and never instrumented, so
 * its time is its caller's own. */
static inline __attribute__((always_inline, no_instrument_function)) void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i;
}

/* noinline: each is a function of its own, with its own calls */
__attribute__((noinline)) void gp_heavy(unsigned long n)
{
    spin(n);
}

__attribute__((noinline)) void gp_medium(unsigned long n)
{
    spin(n);
}

__attribute__((noinline)) void gp_tiny(unsigned long n)
{
    spin(n);
}

/* Relative lengths of ten consecutive runs (they add up to 100). */
static const unsigned long runs[10] = { 3, 17, 8, 12, 5, 14, 9, 11, 6, 15 };

__attribute__((noinline)) void gp_light(unsigned long n)
{
    unsigned long base = n / 1000; /* 100 runs of each: 10 times 100 * base */
    for (int k = 0; k < 100; k++) {
        spin(base * runs[k % 10]);
        gp_tiny(base * runs[(k + 3) % 10]);
    }
}

/* This thread's CPU time, in ms. */
static inline __attribute__((always_inline, no_instrument_function)) double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* COUNT calls FN(N), and the CPU time they took printed as NAME's: the
 * clock read around them all, not between two calls (a system call,
 * where a busy machine preempts the thread: the preemption's cost would
 * be measured with the calls, and not sampled in them). */
#define TIMED(name, fn, count, n)                                  \
    do {                                                           \
        double t0 = cpu_ms();                                      \
        for (int i = 0; i < (count); i++)                          \
            fn(n);                                                 \
        printf("cpu %s %.3f\n", name, cpu_ms() - t0);              \
    } while (0)

int main(int argc, char **argv)
{
    unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 20;
    unsigned long total = units * UNIT;
    TIMED("gp_heavy", gp_heavy, 4, total / 2 / 4);
    TIMED("gp_medium", gp_medium, 6, total * 3 / 10 / 6);
    TIMED("gp_light", gp_light, 40, total / 10 / 40);
    return 0;
}
