/* fib.c - call-heavy firmware for the emulator's speed (bench/emu.sh):
 * recursive Fibonacci, a call for almost every ten instructions. Built for
 * ARM and Thumb (arm-none-eabi-gcc, rdimon) and for x86-64 (callgrind). */
#include <stdio.h>
#include <stdlib.h>

static int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    printf("fib(%d) = %d\n", n, fib(n));
    return 0;
}
