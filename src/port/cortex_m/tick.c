/* tick.c - the Cortex-M port's periodic work on SysTick (port.h): bins'
 * tick and gprof's samples, which share it at one rate, and a busy wait.
 * SysTick's interrupt, which calls them, and the clock are systick.c's. */
#include "../port.h"
#include "cortex_m.h"

/* ---- periodic tick: SysTick -------------------------------------------------------- */

/* SysTick at HZ for bins' tick or gprof's samples (np_port_pc_sample_start):
 * they share it, at one rate. 1, or 0 with *REASON. */
static int systick_rate(unsigned hz, const char **reason)
{
    np_port_clock_init();
    uint32_t period = hz ? np_cm_cpu_hz() / hz : 0;
    if (period < 64 || period > NP_CM_SYST_PERIOD_MAX) {
        *reason = NP_MSG("the tick rate does not fit SysTick at this core clock (np_cm_set_cpu_hz)");
        return 0;
    }
    if ((np_cm_tick_fn || np_cm_pc_fn) && period != np_cm_clock.period) {
        *reason = NP_MSG("SysTick ticks for bins or gprof at another rate: give both the same");
        return 0;
    }
    if (period != np_cm_clock.period)
        np_cm_systick_set(period);
    return 1;
}

int np_port_tick_start(unsigned hz, void (*fn)(uint32_t late), const char **reason)
{
    if (!systick_rate(hz, reason))
        return 0;
    __atomic_store_n(&np_cm_tick_fn, fn, __ATOMIC_RELAXED);
    return 1;
}

/* SysTick back to the clock's period (or off) when no one ticks. */
static void systick_idle(void)
{
    if (!np_cm_tick_fn && !np_cm_pc_fn)
        np_cm_systick_set(np_cm_systick_idle_period());
}

void np_port_tick_stop(void)
{
    __atomic_store_n(&np_cm_tick_fn, NULL, __ATOMIC_RELAXED);
    systick_idle();
}

void np_port_delay_us(uint32_t us)
{
    np_port_clock_init();
    /* in ms and µs, by 32-bit divisions (no 64-bit division linked) */
    uint32_t per_ms = np_cm_cpu_hz() / 1000u;
    uint64_t end = np_port_counter() + (uint64_t)(us / 1000u) * per_ms + (us % 1000u) * per_ms / 1000u;
    while ((int64_t)(np_port_counter() - end) < 0)
        ;
}

int np_port_periodic_start(unsigned seconds, void (*fn)(void))
{
    (void)seconds, (void)fn;
    return 0; /* no thread to run it: the program dumps when it wants */
}

void np_port_periodic_stop(void)
{
}

/* ---- the GNU profiler's samples (gprof.c) ------------------------------------- */

int np_port_pc_sample_start(unsigned hz, void (*fn)(uintptr_t pc), const char **reason)
{
    if (!systick_rate(hz, reason))
        return 0;
    __atomic_store_n(&np_cm_pc_fn, fn, __ATOMIC_RELAXED);
    return 1;
}

void np_port_pc_sample_stop(void)
{
    __atomic_store_n(&np_cm_pc_fn, NULL, __ATOMIC_RELAXED);
    systick_idle();
}
