/* fib.c - recursive Fibonacci: deep calls and returns (lockstep firmware). */
#include <stdio.h>

static int __attribute__((noinline)) fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    for (int n = 0; n <= 20; n += 4)
        printf("fib(%d) = %d\n", n, fib(n));
    return 0;
}
