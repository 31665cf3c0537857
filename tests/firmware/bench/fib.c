/* fib.c - a benchmark of calls: fib(27) the recursive way, 635,621 calls
 * of fib. newlib (rdimon), -O2; runs under qemu-arm too. */
#include <stdio.h>

__attribute__((noipa)) static unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    printf("fib(27) = %u\n", fib(27));
    return 0;
}
