/* fib.c - the call-heavy workload: naive recursive Fibonacci, a function
 * that does almost nothing but call itself. fib(N) makes
 * 2 * F(N + 1) - 1 calls (F(29) -> 1,664,079), so the hook's cost is
 * nearly all of what changes between the variants.
 *
 * noipa (noinline with GCC's interprocedural tricks off) and the empty asm
 * keep the two recursive calls real calls in every variant: without them
 * the uninstrumented build may turn one of them into a loop and make fewer
 * calls than the instrumented ones. */
#define WORK_NAME "fib"
#include "harness.h"

#ifndef FIB_N
#define FIB_N 29
#endif

static volatile unsigned fib_n = FIB_N;

BENCH_NOIPA static unsigned fib(unsigned n)
{
    if (n < 2)
        return n;
    unsigned r = fib(n - 1);
    r += fib(n - 2);
    __asm__ __volatile__("" : "+r"(r)); /* not a tail: no accumulator loop */
    return r;
}

BENCH_NOPROF static void work_setup(void)
{
}

BENCH_NOPROF static uint64_t work_run(void)
{
    return fib(fib_n);
}
