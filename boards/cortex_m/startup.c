/* startup.c - the least start-up a firmware needs on QEMU's Cortex-M
 * boards: a vector table, RAM set up (.data copied, .bss cleared), main,
 * what the runtime asked to run at the end (np_cm_run_at_exit: gprof's
 * gmon.out), and main's return value back to the host by semihosting's
 * exit. A fault exits with status 99. The layout's symbols come from
 * sections.ld. Its functions stay out of -pg and -finstrument-functions:
 * they run before RAM is set up, or after the program. */
#include <stdint.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _stack_top;
int main(void);
/* weak: there when the runtime's port is linked */
void np_cm_run_at_exit(void) __attribute__((weak));
void SVC_Handler(void);
void PendSV_Handler(void);

#define NOT_PROFILED __attribute__((no_instrument_function))

NOT_PROFILED static void semihost_exit(int status)
{
    uint32_t block[2] = { 0x20026, (uint32_t)status }; /* ADP_Stopped_ApplicationExit */
    register uint32_t r0 __asm__("r0") = 0x20;             /* SYS_EXIT_EXTENDED */
    register uint32_t *r1 __asm__("r1") = block;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    for (;;)
        ;
}

__attribute__((noreturn)) void Reset_Handler(void);
NOT_PROFILED void Reset_Handler(void)
{
    for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;)
        *d++ = *s++;
    for (uint32_t *d = &_sbss; d < &_ebss;)
        *d++ = 0;
    int status = main();
    if (np_cm_run_at_exit)
        np_cm_run_at_exit();
    semihost_exit(status);
    for (;;)
        ;
}

NOT_PROFILED static void fault(void)
{
    semihost_exit(99);
}

/* An RTOS brings its own (its context switch): until then, a fault. */
void SVC_Handler(void) __attribute__((weak, alias("fault")));
void PendSV_Handler(void) __attribute__((weak, alias("fault")));
/* The runtime's port brings SysTick's handler with its clock and tick
 * (clock.c), or the firmware its own; a SysTick with neither, a fault. */
void SysTick_Handler(void) __attribute__((weak, alias("fault")));

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&_stack_top, Reset_Handler, fault, fault, fault, fault, fault, 0, 0, 0, 0, SVC_Handler, fault, 0,
    PendSV_Handler, SysTick_Handler,
};
