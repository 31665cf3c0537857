/* cm.h - what the Cortex-M test firmware shares (cm_lib.c): semihosting
 * output and exit, a spin loop, SysTick's registers. */
#ifndef CM_H
#define CM_H
#include <stdint.h>

#define NOIPA __attribute__((noipa))
#define SYST_CSR (*(volatile uint32_t *)0xe000e010)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018)

void put_str(const char *s);
/* "NAME" and V in decimal, a line */
void put_uint(const char *name, uint32_t v);
__attribute__((noreturn)) void cm_exit(int code);
/* N turns of a loop: long enough for ticks to land in it */
int spin(int n);

#endif
