/* sleep.c - a Cortex-M firmware that ends asleep (tests/test_emu_cortex_m.sh):
 * after a few calls it waits for an interrupt with none enabled, as a
 * low-power firmware's idle loop does when nothing is left to wake it.
 * The run ends there, status 0, saying so. */
#include "cm.h"

int main(void)
{
    spin(100);
    for (;;)
        __asm__ volatile("wfi");
}
