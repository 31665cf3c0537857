/* instr.c - a small program built with -finstrument-functions, whose
 * hooks (instr_hooks.c) count the calls of each function; it prints the
 * counts, so that a test can set them beside the calls the emulator
 * finds by itself. Direct and indirect calls, recursion, and a callback
 * from the C library (qsort's comparator). newlib (rdimon).
 *
 * Built -O2 -fno-inline and without IPA cloning: every call in the source
 * stays one call of its own function, which the hooks see too (an
 * inlined function would still run its hooks, with no call for the
 * emulator to find). */
#include <stdlib.h>
#include "instr_hooks.h"

static int values[64];

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static unsigned square(unsigned x)
{
    return x * x;
}

static unsigned cube(unsigned x)
{
    return square(x) * x;
}

static unsigned (*const powers[2])(unsigned) = { square, cube };

static unsigned ackermann(unsigned m, unsigned n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static void fill(void)
{
    for (unsigned i = 0; i < 64; i++)
        values[i] = (int)((i * 2654435761u) >> 20);
}

int main(void)
{
    unsigned sum = 0;
    fill();
    qsort(values, 64, sizeof values[0], cmp_int);
    for (unsigned i = 0; i < 10; i++)
        sum += powers[i & 1](i);
    sum += ackermann(2, 3);
    for (unsigned i = 0; i < 64; i++)
        sum += (unsigned)values[i];
    np_instr_report(sum);
    return 0;
}
