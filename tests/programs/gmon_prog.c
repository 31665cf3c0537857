/* gmon_prog.c - a program with a known split of CPU time and known call
 * counts, for the gmon.out exporter's test (tests/test_gmon_cli.sh), built
 * with -finstrument-functions -fno-omit-frame-pointer -g.
 *
 *   gmon_prog [UNITS]   (default 20; each unit is 2^20 loop iterations)
 *
 * main calls gp_heavy 4 times, gp_medium 6 times and gp_light 40 times;
 * each gp_light call calls gp_tiny 10 times (400 calls). The iterations,
 * and so the CPU time, are split 50% gp_heavy, 30% gp_medium, 10%
 * gp_light's own loop and 10% gp_tiny; main's own is negligible. */
#include <stdlib.h>

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

__attribute__((noinline)) void gp_light(unsigned long n)
{
    spin(n);
    for (int i = 0; i < 10; i++)
        gp_tiny(n / 10);
}

int main(int argc, char **argv)
{
    unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 20;
    unsigned long total = units * UNIT;
    for (int i = 0; i < 4; i++)
        gp_heavy(total / 2 / 4);
    for (int i = 0; i < 6; i++)
        gp_medium(total * 3 / 10 / 6);
    for (int i = 0; i < 40; i++)
        gp_light(total / 10 / 40);
    return 0;
}
