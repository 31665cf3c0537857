/* cortex_m.h - what the Cortex-M port offers a firmware beyond port.h:
 * the core clock's rate, the SysTick interrupt's work and the program's
 * end. */
#ifndef NP_CORTEX_M_H
#define NP_CORTEX_M_H

#include <stdint.h>

/* The core clock in Hz (NP_CM_CPU_HZ until set): times in ns and bins'
 * tick rate follow it. Set it before np_bins_init. */
void np_cm_set_cpu_hz(uint32_t hz);
uint32_t np_cm_cpu_hz(void);

/* What SysTick's interrupt does for the runtime: counts SysTick's wrap
 * for the clock (or reads the DWT counter, less than 2^32 cycles apart)
 * and ticks the bins. The port's SysTick_Handler calls
 * np_cm_systick_isr_frame (NP_CM_SYSTICK_HANDLER 1); a board whose
 * handler is its own (an RTOS's tick) calls one of them each period.
 * Calls beyond one a period are harmless to the clock. */
void np_cm_systick_isr(void);
/* The same, and gprof's PC sample (gprof.h): FRAME is the exception frame
 * of the code the interrupt interrupted (on the process stack when the
 * handler's EXC_RETURN has bit 2 set, else on the main stack). */
void np_cm_systick_isr_frame(const uint32_t *frame);

/* What the runtime asked to run at the program's end (gprof.h writes
 * gmon.out): the boards' startup.c calls it when main returns, before
 * leaving by semihosting. */
void np_cm_run_at_exit(void);

/* Semihosting: operation OP with its parameter block ARG (bkpt 0xab);
 * returns r0. Only with a debugger or QEMU attached: on a bare board the
 * breakpoint faults. */
long np_cm_semihost(int op, void *arg);

#endif
