/* fault.c - a firmware that faults (tests/test_qemu_log.sh): it calls
 * where there is no memory, and its HardFault handler loops for good, as
 * firmware's default handlers do. The run must end there, saying so. */
#include "cm.h"

NOIPA void jump_to(uint32_t addr)
{
    ((void (*)(void))addr)();
}

void hardfault_handler(void)
{
    for (;;)
        ;
}

int main(void)
{
    spin(2000);
    jump_to(0x30000000u); /* nothing there on the boards */
    return 0;
}
