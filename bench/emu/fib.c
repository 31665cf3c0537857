/* fib.c - emu_speed firmware: call-heavy code, a recursive Fibonacci. */
#include <stdio.h>

__attribute__((noinline)) unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    printf("fib(32) = %u\n", fib(32));
    return 0;
}
