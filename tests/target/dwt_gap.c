/* dwt_gap.c - the DWT cycle counter as the clock over calls far longer
 * than its 32-bit wrap (run.sh "dwt_gap"). QEMU does not run the counter:
 * this runs on a Cortex-M4 under Unicorn (m4_unicorn.c), where the counter
 * moves TC_DWT_SCALE cycles an instruction, so its 2^32 cycles pass in
 * 2^32 / TC_DWT_SCALE instructions, and SysTick's interrupt comes every
 * (reload + 1) / TC_DWT_SCALE instructions while it runs.
 *
 * A leaf spins with no instrumented call inside for several wraps of the
 * counter: only SysTick's interrupt reads the clock meanwhile, so the
 * port keeps SysTick running (2^24 cycles a period) while the DWT counter
 * is the clock and its handler takes SysTick. The leaf's cost must be its
 * instructions' cycles, plus at most 1/16 for the interrupts' handlers
 * and the hooks (a lost wrap is 1/6 of it): once with the port's
 * SysTick_Handler ("dwt_gap") and once with the firmware's own handler as
 * an RTOS's tick, the kernel programming SysTick itself
 * (TC_RTOS, "dwt_gap_rtos"; NP_CM_SYSTICK_HANDLER=0). */
#include "check.h"
#include "cortex_m.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

#define WRAP_INSNS (1ull << 32) / TC_DWT_SCALE        /* instructions a wrap of the counter takes */
#define SPIN (uint32_t)(3 * WRAP_INSNS)                 /* tc_spin's turns: 6 wraps */
#define NS_PER_CYCLE (1000000000u / TC_CPU_HZ)

__attribute__((noinline)) void spin_wraps(void)
{
    tc_spin(SPIN);
}

#ifdef TC_RTOS
static volatile uint32_t ticks;

/* The kernel's tick handler: its own work, then the runtime's */
NOPROF void SysTick_Handler(void);
void SysTick_Handler(void)
{
    ticks++;
    np_cm_systick_isr();
}
#endif

static uint64_t cost_buf[512 / 8];
static uint64_t stats[512 / 8];

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    tc_check(np_stats_init(stats, sizeof stats) == NP_OK && np_cost_init(cost_buf, sizeof cost_buf) == NP_OK,
             "cost init");
#ifndef TC_RTOS
    tc_check_range(SYST_CSR & 3u, 3, 3, "SysTick runs with its interrupt beside the DWT clock");
    tc_check_range(SYST_RVR + 1, 1u << 24, 1u << 24, "SysTick's period beside the DWT clock, in cycles");
#else
    tc_check_range(SYST_CSR & 3u, 0, 0, "SysTick left to the kernel");
    /* the kernel's set-up (vPortSetupTimerInterrupt's writes), at a slow
     * tick (8,000,000 cycles) so that its handler's share stays small when
     * a cycle is TC_DWT_SCALE of them */
    SYST_CSR = 0;
    SYST_CVR = 0;
    SYST_RVR = 8000000u - 1;
    SYST_CSR = 7;
#endif
    spin_wraps();
    np_cost_disable();
    tc_check(np_stats_calc(stats) == NP_OK, "calc");
    np_func_stats s = { 0 };
    np_stats_find(stats, (const void *)spin_wraps, &s);
    uint64_t want = 2ull * SPIN * TC_DWT_SCALE * NS_PER_CYCLE;
    tc_put("6 wraps of the DWT counter in one call: ");
    tc_put_u64(s.total_ns);
    tc_put(" ns, its instructions ");
    tc_put_u64(want);
    tc_put(" ns\n");
    tc_check_range(s.calls, 1, 1, "calls");
    tc_check_range(s.total_ns, want, want + want / 16, "6 wraps of the DWT counter in one call, in ns");
#ifdef TC_RTOS
    tc_check(ticks > 0, "the kernel's ticks came");
#endif
    return tc_finish();
}
