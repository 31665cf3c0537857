/* fib.c - call-heavy Cortex-M firmware for the speed of `nanoprof emu
 * --qemu` (bench/emu.sh): recursive fib(24), a call and a return every
 * few instructions. */
#include "cm.h"

NOIPA unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
    put_uint("fib(24) ", fib(24));
    return 0;
}
