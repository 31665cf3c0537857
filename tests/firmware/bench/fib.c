/* fib.c - a benchmark of calls: fib(27) the recursive way, 635,621 calls
 * of fib. newlib (rdimon), -O2; runs under qemu-arm too. */
#include <stdio.h>

/* make bench builds it with a larger N (bench/CMakeLists.txt) */
#ifndef FIB_N
#define FIB_N 27
#endif

__attribute__((noipa)) static unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    printf("fib(%d) = %u\n", FIB_N, fib(FIB_N));
    return 0;
}
