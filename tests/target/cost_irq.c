/* cost_irq.c - function cost with an instrumented interrupt (run.sh
 * "cost_irq"): SysTick's handler, the firmware's own (the port built with
 * NP_CM_SYSTICK_HANDLER=0, as under an RTOS), calls an instrumented
 * function every TICK cycles of SysTick, a period prime to the loop's, so that it
 * lands everywhere in the hooks: in their leaf path, which masks
 * interrupts over its update (the interrupt's call then comes after it,
 * counted), and in their full path and the API's, where the thread is
 * busy (the call is then dropped, and counted lost: its two records). The
 * loop merges the table now and then (np_stats_calc), which empties it:
 * the calls after a merge make their slots again on the full path.
 *
 * Checked: the loop's calls exactly; every interrupt's call either
 * counted or lost (calls + lost / 2 = interrupts); some of each. */
#include "check.h"
#include "cortex_m.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

/* cycles a period: under QEMU's -icount shift=0 a cycle of SysTick is 40
 * instructions on the mps2 boards (25 MHz), 62.5 on the microbit */
#define TICK 29u
#define CALLS 3000u /* of mid(): two leaf() each */
#define MERGE 100u  /* a merge each MERGE calls */

volatile unsigned sink;
static volatile uint32_t ticks;

__attribute__((noinline)) void tick(void)
{
    sink++;
}

__attribute__((noinline)) void leaf(void)
{
    sink++;
}

__attribute__((noinline)) void mid(void)
{
    leaf();
    leaf();
}

NOPROF void SysTick_Handler(void);
void SysTick_Handler(void)
{
    ticks++;
    tick();
    np_cm_systick_isr();
}

static uint64_t cost_buf[1024 / 8];
static uint64_t stats[1024 / 8];

static NOPROF uint64_t calls_of(const void *fn)
{
    np_func_stats s = { 0 };
    return np_stats_find(stats, fn, &s) == NP_OK ? s.calls : 0;
}

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    tc_check(np_stats_init(stats, sizeof stats) == NP_OK && np_cost_init(cost_buf, sizeof cost_buf) == NP_OK,
             "cost init");
    SYST_CSR = 0;
    SYST_CVR = 0;
    SYST_RVR = TICK - 1;
    SYST_CSR = 7;
    for (unsigned i = 0; i < CALLS; i++) {
        mid();
        if (i % MERGE == MERGE - 1)
            np_stats_calc(stats);
    }
    SYST_CSR = 0;
    np_cost_disable();
    tc_check(np_stats_calc(stats) == NP_OK, "calc");
    uint64_t lost = np_stats_lost(stats), n = calls_of((const void *)tick);
    tc_put("interrupts ");
    tc_put_u64(ticks);
    tc_put(", their calls counted ");
    tc_put_u64(n);
    tc_put(", records lost ");
    tc_put_u64(lost);
    tc_put("\n");
    tc_check_range(calls_of((const void *)mid), CALLS, CALLS, "mid's calls");
    tc_check_range(calls_of((const void *)leaf), 2 * CALLS, 2 * CALLS, "leaf's calls");
    tc_check_range(n + lost / 2, ticks, ticks, "every interrupt's call counted or lost");
    tc_check_range(lost % 2, 0, 0, "lost records in pairs");
    tc_check(ticks > 100 && n > 0 && lost > 0, "interrupts came, in the leaf path and in busy code");
    return tc_finish();
}
