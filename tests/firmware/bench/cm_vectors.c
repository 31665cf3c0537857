/* cm_vectors.c - a vector table for the bench firmware built for a
 * Cortex-M with newlib (bench/CMakeLists.txt links it at address 0): the
 * reset handler gives the code the FPU (CPACR resets with it off, and
 * newlib's start-up does not turn it on) and goes on to newlib's _start,
 * which takes its stack and heap from semihosting; the initial stack at
 * 3 MiB lies in QEMU's mps2 boards' first RAM and in the RAM
 * `nanoprof emu` maps after the image. */
#include <stdint.h>

void _start(void);

static void reset(void)
{
    *(volatile uint32_t *)0xe000ed88u |= 0xfu << 20; /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    _start();
}

static void hang(void)
{
    for (;;)
        ;
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))0x00300000u, reset, hang, hang, hang, hang, hang, 0, 0, 0, 0, hang, hang, 0, hang, hang,
};
