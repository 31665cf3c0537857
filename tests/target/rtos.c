/* rtos.c - a preemptive two-thread firmware on a Cortex-M target
 * (run.sh): a scheduler as small as an RTOS's, two threads on their own
 * stacks (PSP), SysTick's handler (the firmware's own, calling the port's
 * np_cm_systick_isr: the port is built with NP_CM_SYSTICK_HANDLER=0)
 * pending PendSV, and PendSV saving r4-r11, switching stacks and calling
 * np_thread_switch(from, to) where FreeRTOS calls traceTASK_SWITCHED_OUT
 * and traceTASK_SWITCHED_IN. Both threads call instrumented functions
 * under function cost, each into its own statistics table, and keep a
 * call trace (log mode) of their own. run.sh's rtos_pg builds it with -pg
 * alone (the runtime's NP_PG_EXITS): the same checks.
 *
 * Checked: each thread's exact calls, and its call trace holding its own
 * calls only; that no stack overflowed; that preemption really came inside
 * the measured calls (so the checks below are not vacuous); and that a
 * thread's cost leaves the other thread's time out. work() runs 2 * NW
 * instructions; its cost, measured in main before the scheduler starts
 * with nothing to preempt it, is B. In a thread, a call preempted once
 * runs its own instructions plus, charged to it, the interrupt entries and
 * the handlers' instructions before np_thread_switch reads the clock and
 * after it (SysTick's handler, the bins tick, PendSV's save and restore):
 * a few hundred instructions, so each call's cost stays within B +
 * OVERHEAD (1000 ns), while the other thread's slice, a whole SysTick
 * period (TICK_NS, 100 us), is left out. The wall time across the same
 * calls (section 1, wall time) holds those slices: at least TICK_NS - OVERHEAD
 * per preemption more than the cost. Then each thread calls tiny(), whose
 * cost is mostly the hooks', thousands of times: ticks land inside the
 * hooks, between their clock read and the thread's switched-out offset,
 * and still each call's cost stays within OVERHEAD of tiny()'s alone. */
#include "check.h"
#include "cortex_m.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_ICSR_PENDSVSET (1u << 28)
#define SCB_SHPR3 REG(0xE000ED20u)

#define TICK_HZ 10000u                   /* SysTick: 100 us, 100000 instructions */
#define TICK_NS (1000000000u / TICK_HZ)
#define OVERHEAD 1000u
#define Q ((1000000000u + TC_CPU_HZ - 1) / TC_CPU_HZ) /* one SysTick count, in ns */
#define NW 10000u                        /* work(): 20000 instructions */
#define CALLS_A 40u
#define CALLS_B 25u
#define SHARED_A 7u
#define SHARED_B 11u
#define BASE_CALLS 4u
#define TINY_CALLS 5000u

/* ---- the scheduler ------------------------------------------------------ */

struct task {
    uint32_t sp;            /* saved stack pointer: r4-r11, then the exception frame */
    np_thread *np;
    volatile int in_work;   /* inside work()'s body */
    volatile uint32_t preempted_in_work;
    volatile int in_tiny;   /* in the loop calling tiny() */
    volatile uint32_t preempted_in_tiny;
    volatile int done;
};

#define STACK_WORDS 384
static uint32_t stacks[2][STACK_WORDS] __attribute__((aligned(8)));
static uint64_t np_mem[2][NP_THREAD_SIZE / 8] __attribute__((aligned(16)));
static struct task tasks[2];
struct task *tc_current; /* read by PendSV_Handler */
static volatile int running;
static volatile uint32_t switches;

/* Called by PendSV_Handler with the current task's stack pointer, its
 * r4-r11 saved below the frame; returns the next task's. The tick pends
 * it and it switches round robin between the two tasks. */
NOPROF uint32_t tc_switch(uint32_t sp);
uint32_t tc_switch(uint32_t sp)
{
    struct task *from = tc_current, *to = from == &tasks[0] ? &tasks[1] : &tasks[0];
    if (from) {
        from->sp = sp;
        if (from->in_work)
            from->preempted_in_work++;
        if (from->in_tiny)
            from->preempted_in_tiny++;
    }
    /* traceTASK_SWITCHED_OUT / traceTASK_SWITCHED_IN: from NULL is the
     * first switch, away from main's own state */
    np_thread_switch(from ? from->np : NULL, to->np);
    tc_current = to;
    switches++;
    return to->sp;
}

/* PendSV: saves r4-r11 on the current task's stack (none the first time:
 * main is left for good), lets tc_switch choose, restores the next one's
 * r4-r11 and returns to it on PSP. ARMv6-M moves r8-r11 through r4-r7. */
__asm__(".syntax unified\n"
        ".thumb\n"
        ".global PendSV_Handler\n"
        ".type PendSV_Handler, %function\n"
        ".thumb_func\n"
        "PendSV_Handler:\n"
        "    mrs r0, psp\n"
        "    ldr r1, =tc_current\n"
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
        "1:  bl tc_switch\n"
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
        "1:  bl tc_switch\n"
        "    ldmia r0!, {r4-r11}\n"
#endif
        "    msr psp, r0\n"
        "    ldr r0, =0xFFFFFFFD\n" /* thread mode, PSP, no FP state */
        "    bx r0\n"
        ".pool\n"
        ".size PendSV_Handler, .-PendSV_Handler\n");

/* The firmware's SysTick handler, as an RTOS's tick: the port's work,
 * then the scheduler's. */
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
#define STACK_FILL 0x5a5aa5a5u

static NOPROF void task_init(struct task *t, uint32_t *stack, void (*fn)(void), np_thread *np)
{
    for (int i = 0; i < STACK_WORDS; i++)
        stack[i] = STACK_FILL; /* what the deepest use leaves shows */
    uint32_t *sp = stack + STACK_WORDS - 16;
    for (int i = 0; i < 16; i++)
        sp[i] = 0;
    sp[8 + 5] = (uint32_t)(uintptr_t)task_exit;
    sp[8 + 6] = (uint32_t)(uintptr_t)fn & ~1u;
    sp[8 + 7] = 1u << 24;
    t->sp = (uint32_t)(uintptr_t)sp;
    t->np = np;
}

/* ---- what the threads run: instrumented ------------------------------------ */

__attribute__((noinline)) void work(void)
{
    tc_current->in_work = 1;
    tc_spin(NW);
    tc_current->in_work = 0;
}

volatile uint32_t sink;

/* A call that is mostly the hooks: the ticks land inside them often.
 * Thread B calls its twin, so that each thread's call trace shows whose
 * calls it holds. */
__attribute__((noinline)) void tiny(void)
{
    sink++;
}

__attribute__((noinline)) void tiny_b(void)
{
    sink += 2;
}

__attribute__((noinline)) void shared(void)
{
    sink++;
}

/* ---- the threads ------------------------------------------------------------ */

static uint64_t cost_buf[2][1024 / 8];
#define CT_ENTRIES 16
static uint64_t ct_buf[3][2 * CT_ENTRIES]; /* A, B, main: the last 16 calls each */
static uint64_t stats[3][640 / 8]; /* A, B, main's baseline (the microbit has 16 KiB of RAM) */

static NOPROF void checks(void);
static np_calltrace_entry trace[2][CT_ENTRIES];
static int ntrace[2];

/* Each thread measures itself into its own buffer, merges into its own
 * table, and the last one to finish checks both. */
static NOPROF void thread_body(int me, uint32_t calls, uint32_t shared_calls)
{
    struct task *t = &tasks[me];
    tc_check(np_cost_init(cost_buf[me], sizeof cost_buf[me]) == NP_OK &&
                 np_calltrace_init(ct_buf[me], sizeof ct_buf[me], NP_CALLTRACE_LOG) == NP_OK,
             me ? "thread B: cost and call trace init" : "thread A: cost and call trace init");
    for (uint32_t i = 0; i < calls; i++) {
        if (me == 0)
            NP_SECTION_BEGIN(1); /* wall time across A's calls */
        work();
        if (me == 0)
            NP_SECTION_END(1);
        if (i < shared_calls)
            shared();
    }
    for (uint32_t i = calls; i < shared_calls; i++)
        shared();
    t->in_tiny = 1;
    for (uint32_t i = 0; i < TINY_CALLS; i++)
        me ? tiny_b() : tiny();
    t->in_tiny = 0;
    np_cost_disable();
    np_calltrace_disable();
    np_calltrace_entry *e = trace[me];
    ntrace[me] = np_calltrace_read(e, CT_ENTRIES);
    np_stats_calc(stats[me]);
    t->done = 1;
    while (!tasks[!me].done)
        ;
    /* no more switches: whichever thread gets here first checks */
    __asm__ __volatile__("cpsid i" : : : "memory");
    running = 0;
    np_bins_shutdown();
    checks();
    tc_exit(tc_finish());
}

static NOPROF void thread_a(void)
{
    thread_body(0, CALLS_A, SHARED_A);
}

static NOPROF void thread_b(void)
{
    thread_body(1, CALLS_B, SHARED_B);
}

static NOPROF np_func_stats find(int table, const void *fn)
{
    np_func_stats s = { 0 };
    np_stats_find(stats[table], fn, &s);
    return s;
}

/* Whether a record's GOT is FN: its address, or built with -pg alone
 * (TC_PG, run.sh's rtos_pg) its hook's return address, a few bytes in. */
static NOPROF int is_fn(const void *got, const void *fn)
{
#if defined(TC_PG)
    return (uintptr_t)got - ((uintptr_t)fn & ~(uintptr_t)1) < 16;
#else
    return got == fn;
#endif
}

static NOPROF void checks(void)
{
    np_func_stats base = find(2, (const void *)work);
    np_func_stats wa = find(0, (const void *)work), wb = find(1, (const void *)work);
    np_func_stats sa = find(0, (const void *)shared), sb = find(1, (const void *)shared);
    tc_put("switches ");
    tc_put_u64(switches);
    tc_put(", preempted in work: A ");
    tc_put_u64(tasks[0].preempted_in_work);
    tc_put(", B ");
    tc_put_u64(tasks[1].preempted_in_work);
    tc_put("; work() alone ");
    tc_put_u64(base.min_ns);
    tc_put(" .. ");
    tc_put_u64(base.max_ns);
    tc_put(" ns\n");
    tc_check(base.calls == BASE_CALLS, "main: work() 4 calls before the scheduler");
    int untouched = 1;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 32; i++)
            untouched &= stacks[k][i] == STACK_FILL;
    tc_check(untouched, "each thread's stack: its last 128 bytes never used");
    /* the same instructions every call: one SysTick count apart at most */
    tc_check_range(base.max_ns - base.min_ns, 0, Q, "main: work() the same each call");
    tc_check_range(wa.calls, CALLS_A, CALLS_A, "thread A: work() calls");
    tc_check_range(wb.calls, CALLS_B, CALLS_B, "thread B: work() calls");
    tc_check_range(sa.calls, SHARED_A, SHARED_A, "thread A: shared() calls, in A's table");
    tc_check_range(sb.calls, SHARED_B, SHARED_B, "thread B: shared() calls, in B's table");
    tc_check_range((uint64_t)np_stats_count(stats[0]) * 10 + (uint64_t)np_stats_count(stats[1]), 33, 33,
                   "each table: its thread's three functions");
    np_func_stats tb = find(2, (const void *)tiny), ta = find(0, (const void *)tiny), tbb = find(1, (const void *)tiny_b);
    tc_check_range(ta.calls, TINY_CALLS, TINY_CALLS, "thread A: tiny() calls");
    tc_check_range(tbb.calls, TINY_CALLS, TINY_CALLS, "thread B: tiny_b() calls");
    tc_check(find(1, (const void *)tiny).calls == 0 && find(0, (const void *)tiny_b).calls == 0,
             "neither thread's table holds the other's function");
    /* each thread's call trace: its own last 16 calls, at depth 0 */
    for (int me = 0; me < 2; me++) {
        int ok = ntrace[me] == CT_ENTRIES;
        for (int i = 0; ok && i < CT_ENTRIES; i++)
            ok = is_fn(trace[me][i].fn, me ? (const void *)tiny_b : (const void *)tiny) && trace[me][i].depth == 0;
        tc_check(ok, me ? "thread B: its call trace, its own last 16 calls" : "thread A: its call trace, its own last 16 calls");
    }
    tc_check_range(ta.max_ns, tb.min_ns - Q, tb.max_ns + OVERHEAD, "thread A: tiny()'s most cost");
    tc_check_range(tbb.max_ns, tb.min_ns - Q, tb.max_ns + OVERHEAD, "thread B: tiny_b()'s most cost");
    tc_check_range(ta.min_ns, tb.min_ns - Q, tb.max_ns + OVERHEAD, "thread A: tiny()'s least cost");
    tc_check_range(tbb.min_ns, tb.min_ns - Q, tb.max_ns + OVERHEAD, "thread B: tiny_b()'s least cost");
    /* not vacuous: the threads were preempted inside work(), several
     * times. Where SysTick meets work() is a phase of the instructions
     * each board's build runs (-icount): 4 of B's 25 calls on the M0 once
     * the SysTick handler counts its wraps, 8 to 20 elsewhere */
    tc_check_range(tasks[0].preempted_in_work, 3, CALLS_A, "thread A: preempted inside work()");
    tc_check_range(tasks[1].preempted_in_work, 3, CALLS_B, "thread B: preempted inside work()");
    tc_check_range(tasks[0].preempted_in_tiny, 5, TINY_CALLS, "thread A: preempted while calling tiny()");
    tc_check_range(tasks[1].preempted_in_tiny, 5, TINY_CALLS, "thread B: preempted while calling tiny()");
    uint64_t b = base.max_ns;
    tc_check_range(wa.min_ns, base.min_ns - Q, b + OVERHEAD, "thread A: work()'s least cost, as alone");
    tc_check_range(wa.max_ns, base.min_ns - Q, b + OVERHEAD, "thread A: work()'s most cost: B's time left out");
    tc_check_range(wb.max_ns, base.min_ns - Q, b + OVERHEAD, "thread B: work()'s most cost: A's time left out");
    tc_check_range(wa.total_ns, CALLS_A * (base.min_ns - Q), CALLS_A * b + tasks[0].preempted_in_work * OVERHEAD,
                   "thread A: work()'s total cost");
    tc_check_range(wb.total_ns, CALLS_B * (base.min_ns - Q), CALLS_B * b + tasks[1].preempted_in_work * OVERHEAD,
                   "thread B: work()'s total cost");
    np_section_stats wall = { 0 };
    np_sections_get(1, &wall);
    tc_check(wall.count == CALLS_A, "thread A: 40 calls timed in wall time");
    tc_check_range(wall.time_ns, wa.total_ns + tasks[0].preempted_in_work * (TICK_NS - OVERHEAD),
                   wa.total_ns + (tasks[0].preempted_in_work + 1) * (TICK_NS + OVERHEAD) + CALLS_A * OVERHEAD,
                   "thread A: wall time across work() holds B's slices");
}

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    np_sections_init(0);
    /* PendSV below every other exception: it switches once the tick is done */
    SCB_SHPR3 = (SCB_SHPR3 & 0xff00ffffu) | 0x00ff0000u;
    for (int i = 0; i < 3; i++)
        tc_check(np_stats_init(stats[i], sizeof stats[i]) == NP_OK, "stats init");
    /* The baseline: work() with nothing to preempt it, in main's state */
    static uint64_t main_cost[1024 / 8];
    tc_check(np_cost_init(main_cost, sizeof main_cost) == NP_OK &&
                 np_calltrace_init(ct_buf[2], sizeof ct_buf[2], NP_CALLTRACE_LOG) == NP_OK,
             "main: cost and call trace init (the threads' hooks do the same)");
    for (unsigned i = 0; i < BASE_CALLS; i++) {
        work();
        tiny();
    }
    np_cost_disable();
    np_stats_calc(stats[2]);

    np_thread *a = np_thread_init(np_mem[0], sizeof np_mem[0]), *b = np_thread_init(np_mem[1], sizeof np_mem[1]);
    tc_check(a && b, "threads init");
    task_init(&tasks[0], stacks[0], thread_a, a);
    task_init(&tasks[1], stacks[1], thread_b, b);
    /* The tick: SysTick at TICK_HZ, through the bins (the port programs
     * SysTick; nanoprof's clock stays whole across the change) */
    tc_check(np_bins_init(3, TICK_HZ) == NP_OK, "SysTick at 10 kHz");
    running = 1;
    SCB_ICSR = SCB_ICSR_PENDSVSET; /* to thread A, for good */
    for (;;)
        ;
}
