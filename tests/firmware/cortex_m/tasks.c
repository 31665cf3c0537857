/* tasks.c - two tasks that a SysTick-driven PendSV switches between, as
 * a preemptive RTOS does (tests/test_qemu_log.sh): each task's calls are
 * its own thread, found from the log with no instrumentation. Counts are
 * known by construction: task_a calls work_a 40 times, task_b work_b 60
 * times; the ticks are counted and printed. The tasks live in a
 * FreeRTOS-shaped kernel structure, TCB_t and pxCurrentTCB, which
 * switch.S keeps as FreeRTOS's port does: `nanoprof emu --rtos freertos`
 * names the threads "Blinky" and "Logger" from it (test_emu_cortex_m.sh),
 * names no function has. */
#include <stdint.h>
#include "cm.h"

#define SCB_ICSR (*(volatile uint32_t *)0xe000ed04)
#define SCB_SHPR3 (*(volatile uint32_t *)0xe000ed20)

volatile uint32_t ticks, done_a, done_b, sink;

/* SysTick's reload: 100 ticks of QEMU's 25 MHz are 4,000 instructions;
 * `nanoprof emu` counts the CPU's cycles, where a tick and a switch take
 * some 230: its build (cm_tasks_emu) ticks every 1,000 (cm.c says more). */
#ifndef CM_TICK_RELOAD
#define CM_TICK_RELOAD 99
#endif
static uint32_t stack_a[256], stack_b[256];

/* FreeRTOS's TCB as its tasks.c declares it (the members before the name
 * sized as on a 32-bit port, so that the name is not at a guessable
 * offset); the stack pointer first, where switch.S saves it */
#define configMAX_TASK_NAME_LEN 16
typedef struct tskTaskControlBlock {
    volatile uint32_t *pxTopOfStack;
    uint32_t xStateListItem[5], xEventListItem[5];
    uint32_t uxPriority;
    uint32_t *pxStack;
    char pcTaskName[configMAX_TASK_NAME_LEN];
} TCB_t;
static TCB_t tcb_a = { .pxStack = stack_a, .pcTaskName = "Blinky" };
static TCB_t tcb_b = { .pxStack = stack_b, .pcTaskName = "Logger" };
TCB_t *task_tcb[2] = { &tcb_a, &tcb_b }; /* by index (switch.S) */
TCB_t *volatile pxCurrentTCB;            /* the running task's (switch.S) */
uint32_t task_current;                   /* the running task's index */

NOIPA void work_a(int i) { sink += (uint32_t)spin(40 + i); }
NOIPA void work_b(int i) { sink ^= (uint32_t)spin(30 + i); }

void task_a(void)
{
    for (int i = 0; i < 40; i++)
        work_a(i);
    done_a = 1;
    while (!done_b)
        ;
    SYST_CSR = 0;
    put_uint("ticks=", ticks);
    cm_exit(0);
}

void task_b(void)
{
    for (int i = 0; i < 60; i++)
        work_b(i);
    done_b = 1;
    for (;;)
        ;
}

NOIPA void tick_work(void) { ticks++; }

void systick_handler(void)
{
    tick_work();
    SCB_ICSR = 1u << 28; /* PENDSVSET: switch at the end */
}

/* a task's first frame, as an exception return pops it: r0-r3, r12, lr,
 * pc, xPSR, below the eight registers switch.S restores */
static uint32_t *first_frame(uint32_t *top, void (*entry)(void))
{
    uint32_t *sp = top - 16;
    for (int i = 0; i < 16; i++)
        sp[i] = 0;
    sp[8 + 5] = 0xfffffffd;           /* lr: not returned to */
    sp[8 + 6] = (uint32_t)entry & ~1u; /* pc */
    sp[8 + 7] = 1u << 24;             /* xPSR: Thumb */
    return sp;
}

int main(void)
{
    tcb_a.pxTopOfStack = first_frame(stack_a + 256, task_a);
    tcb_b.pxTopOfStack = first_frame(stack_b + 256, task_b);
    task_current = 1;                  /* the first switch goes to task_a */
    SCB_SHPR3 |= 0xffu << 16;          /* PendSV at the lowest priority */
    SYST_RVR = CM_TICK_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 7;
    __asm__ volatile("svc 0");         /* the first task (switch.S) */
    return 1;                          /* never */
}
