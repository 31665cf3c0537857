/* fault.c - a firmware that faults (tests/test_qemu_log.sh): it calls
 * where there is no memory, and its HardFault handler loops for good, as
 * firmware's default handlers do. The run must end there, saying so.
 * Built with -DDOUBLE_FAULT, the handler faults the same way: the CPU
 * locks up, which QEMU ends by aborting. */
#include "cm.h"

NOIPA void jump_to(uint32_t addr)
{
    ((void (*)(void))addr)();
}

void hardfault_handler(void)
{
#ifdef DOUBLE_FAULT
    jump_to(0x30000000u);
#endif
    for (;;)
        ;
}

int main(void)
{
    spin(2000);
    jump_to(0x30000000u); /* nothing there on the boards */
    return 0;
}
