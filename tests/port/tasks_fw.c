/* tasks_fw.c - a firmware of three named tasks under a preemptive
 * round-robin scheduler of its own, recording its trace
 * (tests/port/task_names.sh imports it). The scheduler is an RTOS's in
 * small: each task on its own stack (PSP), SysTick's handler (the
 * firmware's, calling the port's np_cm_systick_isr: the runtime is built
 * with NP_CM_SYSTICK_HANDLER=0) pends PendSV, and PendSV, in assembly,
 * saves r4-r11 and calls the scheduler's C code: sched_pick, which
 * chooses the next task, built with -finstrument-functions like the
 * tasks' work, then sched_switched, where FreeRTOS's
 * traceTASK_SWITCHED_IN would be, which tells the runtime
 * (np_thread_switch) and is not instrumented.
 *
 * The rule it shows (docs/porting.md): the function that calls
 * np_thread_switch is not instrumented, since its entry would be recorded
 * in the thread going out and its exit in the one coming in; the
 * scheduler's other C code may be: sched_pick's entry and exit are both
 * the outgoing task's, and it is called, exactly, once per switch.
 * Built with -DSWITCH_INSIDE, sched_pick calls np_thread_switch itself
 * (as FreeRTOS's vTaskSwitchContext holds the trace macro): the views then
 * show the calls that a switch cut in two. Built with -DNAKED_PENDSV=N,
 * PendSV is a naked C function as in FreeRTOS's ports, instrumented when
 * N is 2: the firmware then faults (below).
 *
 * Tasks are named as FreeRTOS's traceTASK_CREATE would (np_thread_name
 * at creation), but "logger", which names itself once it runs (a
 * second THREAD chunk); main's own state is "main". The firmware prints
 * what the host must find: "picks N", "out TASK N" (how often each was
 * switched out: its sched_pick calls), and checks that nothing was lost. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "cortex_m.h"
#include "../target/check.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_ICSR_PENDSVSET (1u << 28)
#define SCB_SHPR3 REG(0xE000ED20u)

#define TICK_HZ 10000u /* SysTick: 100 us, 100000 instructions under -icount shift=0 */
#define NTASKS 3
#define SPIN 60000u    /* a work call: 120000 instructions, preempted in most calls */

/* ---- the scheduler ------------------------------------------------------------ */

struct task {
    uint32_t sp;           /* saved stack pointer: r4-r11, then the exception frame */
    np_thread *np;
    const char *name;
    volatile uint32_t out; /* times switched out */
    volatile int done;
};

#define STACK_WORDS 320
static uint32_t stacks[NTASKS][STACK_WORDS] __attribute__((aligned(8)));
static uint64_t np_mem[NTASKS][NP_THREAD_SIZE / 8] __attribute__((aligned(16)));
static struct task tasks[NTASKS];
struct task *sched_current; /* read by PendSV_Handler; NULL: main's own state */
static struct task *sched_next;
static volatile int running;
static volatile uint32_t picks;

/* The scheduler's choice, from PendSV with the current task's stack
 * pointer (r4-r11 saved below its frame): round robin. Instrumented. */
__attribute__((noinline)) uint32_t sched_pick(uint32_t sp)
{
    struct task *from = sched_current;
    if (from) {
        from->sp = sp;
        from->out++;
    }
    sched_next = !from || from == &tasks[NTASKS - 1] ? &tasks[0] : from + 1;
    picks++;
#ifdef SWITCH_INSIDE
    np_thread_switch(from ? from->np : NULL, sched_next->np);
    sched_current = sched_next;
#endif
    return sched_next->sp;
}

/* traceTASK_SWITCHED_IN's place: after the choice, not instrumented. */
NOPROF void sched_switched(void);
void sched_switched(void)
{
#ifndef SWITCH_INSIDE
    /* from NULL is the first switch, away from main's own state */
    np_thread_switch(sched_current ? sched_current->np : NULL, sched_next->np);
    sched_current = sched_next;
#endif
}

#ifdef NAKED_PENDSV
/* PendSV as FreeRTOS's Cortex-M3/M4 ports write it: a naked C function
 * of assembly that returns through the EXC_RETURN value in lr (ARMv7-M
 * only). NAKED_PENDSV=1: not instrumented, it switches as the other
 * does. NAKED_PENDSV=2: instrumented, GCC puts a hook call before the
 * assembly, with no prologue: the call changes lr and r4, r5 before
 * anything is saved, and the last bx lr is no exception return. */
#if NAKED_PENDSV == 1
NOPROF
#endif
__attribute__((naked)) void PendSV_Handler(void);
void PendSV_Handler(void)
{
    __asm__ volatile("    mrs r0, psp\n"
                     "    ldr r1, =sched_current\n"
                     "    ldr r1, [r1]\n"
                     "    cmp r1, #0\n"
                     "    beq 1f\n"
                     "    stmdb r0!, {r4-r11}\n"
                     "1:  push {r3, lr}\n"
                     "    bl sched_pick\n"
                     "    push {r0, r1}\n"
                     "    bl sched_switched\n"
                     "    pop {r0, r1}\n"
                     "    pop {r3, lr}\n"
                     "    ldmia r0!, {r4-r11}\n"
                     "    msr psp, r0\n"
                     "    orr lr, lr, #0xd\n" /* thread mode, PSP (the first time, lr says MSP) */
                     "    bx lr\n"
                     "    .ltorg\n");
}
#else
/* PendSV: saves r4-r11 on the current task's stack (none the first
 * time: main is left for good), calls sched_pick and sched_switched,
 * restores the next task's r4-r11 and returns to it on PSP. ARMv6-M
 * moves r8-r11 through r4-r7. Assembly at file scope: no hook is ever
 * put in it (an instrumented naked C function would have one, before
 * the registers are saved). */
__asm__(".syntax unified\n"
        ".thumb\n"
        ".global PendSV_Handler\n"
        ".type PendSV_Handler, %function\n"
        ".thumb_func\n"
        "PendSV_Handler:\n"
        "    mrs r0, psp\n"
        "    ldr r1, =sched_current\n"
        "    ldr r1, [r1]\n"
        "    cmp r1, #0\n"
        "    beq 1f\n"
#if defined(__ARM_ARCH_6M__)
        "    subs r0, #32\n"
        "    stmia r0!, {r4-r7}\n"
        "    mov r4, r8\n"
        "    mov r5, r9\n"
        "    mov r6, r10\n"
        "    mov r7, r11\n"
        "    stmia r0!, {r4-r7}\n"
        "    subs r0, #32\n"
        "1:  bl sched_pick\n"
        "    push {r0, r1}\n"
        "    bl sched_switched\n"
        "    pop {r0, r1}\n"
        "    adds r0, #16\n"
        "    ldmia r0!, {r4-r7}\n"
        "    mov r8, r4\n"
        "    mov r9, r5\n"
        "    mov r10, r6\n"
        "    mov r11, r7\n"
        "    subs r0, #32\n"
        "    ldmia r0!, {r4-r7}\n"
        "    adds r0, #16\n"
#else
        "    stmdb r0!, {r4-r11}\n"
        "1:  bl sched_pick\n"
        "    push {r0, r1}\n"
        "    bl sched_switched\n"
        "    pop {r0, r1}\n"
        "    ldmia r0!, {r4-r11}\n"
#endif
        "    msr psp, r0\n"
        "    ldr r0, =0xFFFFFFFD\n" /* thread mode, PSP, no FP state */
        "    bx r0\n"
        ".pool\n"
        ".size PendSV_Handler, .-PendSV_Handler\n");
#endif

/* The firmware's SysTick handler, as an RTOS's tick: the port's work
 * (the clock's period), then the scheduler's. */
NOPROF void SysTick_Handler(void);
void SysTick_Handler(void)
{
    np_cm_systick_isr();
    if (running)
        SCB_ICSR = SCB_ICSR_PENDSVSET;
}

static NOPROF void task_exit(void)
{
    tc_check(0, "a task returned");
    tc_exit(98);
}

/* A stack for FN as PendSV leaves it: r4-r11, then the frame the core
 * pops (r0-r3, r12, lr, pc, xPSR with the Thumb bit). */
static NOPROF void task_create(struct task *t, uint32_t *stack, void (*fn)(void), void *mem, const char *name)
{
    uint32_t *sp = stack + STACK_WORDS - 16;
    for (int i = 0; i < 16; i++)
        sp[i] = 0;
    sp[8 + 5] = (uint32_t)(uintptr_t)task_exit;
    sp[8 + 6] = (uint32_t)(uintptr_t)fn & ~1u;
    sp[8 + 7] = 1u << 24;
    t->sp = (uint32_t)(uintptr_t)sp;
    t->np = np_thread_init(mem, NP_THREAD_SIZE);
    t->name = name;
    /* traceTASK_CREATE: the task's np_thread, and its name, once */
    if (name)
        np_thread_name(t->np, name);
}

/* ---- what the tasks run: instrumented ------------------------------------------ */

volatile uint32_t sink;

__attribute__((noinline)) void sample(void)
{
    tc_spin(SPIN);
    sink++;
}

__attribute__((noinline)) void smooth(void)
{
    tc_spin(SPIN);
    sink += 2;
}

__attribute__((noinline)) void log_line(void)
{
    tc_spin(SPIN);
    sink += 3;
}

/* ---- the tasks: not instrumented (their body never returns) ---------------------- */

static volatile uint32_t ndone;

static NOPROF void finish(void)
{
    /* no more switches: the last task ends the trace and the run */
    running = 0;
    __asm__ __volatile__("dsb\n\tisb" : : : "memory");
    tc_check(np_trace_stop() == NP_OK, "trace stopped");
    uint64_t lost = np_trace_lost();
    tc_check(lost == 0, "no event lost (a tick inside a hook would lose them)");
    tc_put("picks ");
    tc_put_u64(picks);
    tc_put("\n");
    for (int i = 0; i < NTASKS; i++) {
        tc_put("out ");
        tc_put(tasks[i].name);
        tc_put(" ");
        tc_put_u64(tasks[i].out);
        tc_put("\n");
        tc_check(tasks[i].out >= 3, "each task preempted a few times");
    }
    tc_exit(tc_finish());
}

static NOPROF void task_body(int me, void (*fn)(void), uint32_t calls)
{
    for (uint32_t i = 0; i < calls; i++)
        fn();
    tasks[me].done = 1;
    if (__atomic_add_fetch(&ndone, 1, __ATOMIC_SEQ_CST) == NTASKS)
        finish();
    for (;;) /* preempted until the last one finishes */
        ;
}

static NOPROF void sensor_task(void)
{
    task_body(0, sample, 6);
}

static NOPROF void filter_task(void)
{
    task_body(1, smooth, 4);
}

static NOPROF void logger_task(void)
{
    /* a name given once the task has recorded: its THREAD chunk again */
    np_thread_name(NULL, "logger");
    task_body(2, log_line, 3);
}

static uint8_t trace_buf[512];

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    /* PendSV below every other exception: it switches once the tick is done */
    SCB_SHPR3 = (SCB_SHPR3 & 0xff00ffffu) | 0x00ff0000u;
    np_thread_name(NULL, "main");
    task_create(&tasks[0], stacks[0], sensor_task, np_mem[0], "sensor");
    task_create(&tasks[1], stacks[1], filter_task, np_mem[1], "filter");
    task_create(&tasks[2], stacks[2], logger_task, np_mem[2], NULL);
    tasks[2].name = "logger";
    tc_check(np_trace_init(trace_buf, sizeof trace_buf) == NP_OK, "trace started");
    /* The tick: SysTick at TICK_HZ, through the bins (the port programs
     * SysTick; its clock stays whole across the change) */
    tc_check(np_bins_init(3, TICK_HZ) == NP_OK, "SysTick at 10 kHz");
    running = 1;
    SCB_ICSR = SCB_ICSR_PENDSVSET; /* to the first task, for good */
    for (;;)
        ;
}
