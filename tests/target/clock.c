/* clock.c - the port's 64-bit clock on SysTick (QEMU's DWT counter does
 * not move: SysTick is the clock on all three boards), over calls that
 * read no time for many SysTick periods, and read back to back across
 * many wraps (run.sh; variants "clock" and "clock_rtos").
 *
 * Each measured function is a leaf that spins with no instrumented call
 * inside: the clock is read at its entry and exit only, and in between by
 * SysTick's interrupt. Its true span is known twice over: tc_spin(n) runs
 * 2n instructions, one nanosecond each under -icount shift=0; and the
 * SysTick interrupts the firmware counts during the call give it within
 * one tick. Function cost's measure must lie within SLACK above the
 * instructions (the hooks' own and the interrupts' handlers, charged to
 * the call), and within one tick of the interrupts counted.
 *
 * "clock" (the port's SysTick_Handler): 12 ms with the default period
 * (2^24 cycles), then with bins at 1 kHz (np_bins_init(16, 1000): a
 * 25,000-cycle reload at 25 MHz, 16,000 at 16 MHz); a call across three
 * changes of the period (bins at 1 kHz, stopped, 3 kHz); and the limit:
 * interrupts masked across two wraps lose exactly one period.
 *
 * "clock_rtos" (TC_RTOS; the port built with NP_CM_SYSTICK_HANDLER=0):
 * SysTick is a kernel's, as FreeRTOS has it: the firmware programs it
 * itself (kernel_tick_setup, vPortSetupTimerInterrupt's writes) and its
 * SysTick_Handler is its own, calling np_cm_systick_isr() after its own
 * work. The kernel programs it inside a measured call, right after a
 * clock read (FreeRTOS's traceTASK_SWITCHED_IN: np_thread_switch), and
 * again with the same reload and no read just before (at most one period
 * lost); then 12 ms at its 1 kHz.
 *
 * Both then read the clock back to back over many short periods (1,000
 * cycles), with interrupts taken and masked, so that wraps land inside
 * reads at every point: no read goes back (a wrap missed) or jumps by a
 * period (a wrap counted twice). */
#include "check.h"
#include "cortex_m.h"
#include "port/port.h" /* np_port_counter: the clock the hooks read */

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

#define MS 1000000u                         /* ns, and instructions */
#define TICK_HZ 1000u
#define TICK_NS (1000000000u / TICK_HZ)     /* one SysTick period at TICK_HZ */
#define PERIOD (TC_CPU_HZ / TICK_HZ)        /* its cycles: 25,000 on mps2 */
#define SPIN_12MS (12u * MS / 2)            /* tc_spin's turns for 12 ms */
/* What a call's cost holds beyond its body's instructions: the hooks'
 * instructions after the entry's clock read and before the exit's, and
 * each interrupt's entry, handler and return (bins' tick included). */
#define SLACK_CALL 1000u
#define SLACK_TICK 500u
#define SLACK(ticks) (SLACK_CALL + (uint64_t)(ticks)*SLACK_TICK)
/* The back-to-back reads: a 1,000-cycle period (640 at 16 MHz), read over
 * READ_PERIODS of them; a read follows the one before by the loop's few
 * instructions, or an interrupt's SLACK_TICK more: below READ_GAP cycles
 * (40 ns each at 25 MHz, 62.5 at 16 MHz). */
#define READ_HZ 25000u
#define READ_PERIOD (TC_CPU_HZ / READ_HZ)
#define READ_PERIODS 60u
#define READ_GAP (2u + SLACK_TICK / (1000000000u / TC_CPU_HZ))

/* ---- the measured leaves: instrumented, no instrumented call inside ---- */

__attribute__((noinline)) void spin_default(void)
{
    tc_spin(SPIN_12MS);
}

__attribute__((noinline)) void spin_tick(void)
{
    tc_spin(SPIN_12MS);
}

#ifndef TC_RTOS
static int bins_on;

/* bins ticked at HZ from now (0: stopped) */
static NOPROF void bins_at(unsigned hz)
{
    if (bins_on)
        tc_check(np_bins_shutdown() == NP_OK, "bins shutdown");
    bins_on = hz != 0;
    if (hz)
        tc_check(np_bins_init(16, hz) == NP_OK, "bins init");
}

/* 4 ms at 1 kHz, 4 ms at the clock's own period, 4 ms at 3 kHz */
__attribute__((noinline)) void spin_across_changes(void)
{
    tc_spin(SPIN_12MS / 3);
    bins_at(0);
    tc_spin(SPIN_12MS / 3);
    bins_at(3000);
    tc_spin(SPIN_12MS / 3);
}

/* Interrupts masked for 2.5 periods from just after a wrap: two wraps
 * while masked, one COUNTFLAG, one period lost (the documented limit). */
__attribute__((noinline)) void spin_masked(void)
{
    __asm__ __volatile__("cpsid i" : : : "memory");
    tc_spin(5 * TICK_NS / 4);
    __asm__ __volatile__("cpsie i" : : : "memory");
}
#else
/* What FreeRTOS's vPortSetupTimerInterrupt writes: stop and clear
 * SysTick, the reload, start it with its interrupt. */
static NOPROF void kernel_tick_setup(uint32_t period)
{
    SYST_CSR = 0;
    SYST_CVR = 0;
    SYST_RVR = period - 1;
    SYST_CSR = 7;
}

/* The kernel's first programming of SysTick (from the clock's own 2^24
 * cycles), right after a clock read as in FreeRTOS's start */
__attribute__((noinline)) void spin_across_kernel_setup(void)
{
    tc_spin(SPIN_12MS / 2);
    __asm__ __volatile__("cpsid i" : : : "memory");
    np_thread_switch(NULL, NULL); /* reads the clock, switches nothing */
    kernel_tick_setup(PERIOD);
    __asm__ __volatile__("cpsie i" : : : "memory");
    tc_spin(SPIN_12MS / 2);
}

/* The kernel programs it again, the same reload, long after the last read */
__attribute__((noinline)) void spin_across_kernel_again(void)
{
    tc_spin(SPIN_12MS / 2);
    kernel_tick_setup(PERIOD);
    tc_spin(SPIN_12MS / 2);
}

static volatile uint32_t ticks; /* SysTick interrupts: the firmware's count */
static volatile uint32_t kernel_work;

/* The kernel's tick handler: its own work, then the runtime's */
NOPROF void SysTick_Handler(void);
void SysTick_Handler(void)
{
    ticks++;
    for (int i = 0; i < 20; i++)
        kernel_work++;
    np_cm_systick_isr();
}
#endif

/* ---- the checks ---------------------------------------------------------------- */

static uint64_t cost_buf[1024 / 8];
static uint64_t stats[1024 / 8];

/* SysTick's interrupts so far: the bins' ticks in bin 1 (the port's
 * handler), or the firmware's handler's count */
static NOPROF uint32_t ticks_now(void)
{
#ifndef TC_RTOS
    return np_bins_count(1);
#else
    return ticks;
#endif
}

/* Calls FN and returns the SysTick interrupts during the call. */
static NOPROF uint32_t call(void (*fn)(void))
{
    NP_BIN(1);
    uint32_t t0 = ticks_now();
    fn();
    uint32_t t = ticks_now() - t0;
    NP_BIN(2);
    return t;
}

/* FN's one call: its INSNS instructions, less LOST_LO to LOST_HI ns the
 * clock cannot see, plus up to SLACK; and, when TICK_NS is given, within
 * a tick of the N interrupts counted during the call, TICK_NS each */
static NOPROF void check_call(void (*fn)(void), uint64_t insns, uint64_t lost_lo, uint64_t lost_hi, uint32_t n,
                              uint64_t tick_ns, const char *what)
{
    np_func_stats s = { 0 };
    np_stats_find(stats, (const void *)fn, &s);
    tc_put(what);
    tc_put(": ");
    tc_put_u64(s.total_ns);
    tc_put(" ns over ");
    tc_put_u64(insns);
    tc_put(" instructions, ");
    tc_put_u64(n);
    tc_put(" SysTick interrupts\n");
    tc_check_range(s.calls, 1, 1, what);
    tc_check_range(s.total_ns, insns - lost_hi, insns - lost_lo + SLACK(n), what);
    if (tick_ns)
        tc_check_range(s.total_ns, (n ? n - 1 : 0) * tick_ns, (n + 1) * tick_ns, what);
}

/* Reads the clock back to back for READ_PERIODS periods of SysTick (at
 * READ_PERIOD cycles), interrupts taken or MASKED (then the reads count
 * every wrap themselves). Each read is at or after the one before it, by
 * less than READ_GAP cycles; and the wraps came (SysTick's interrupts
 * counted, when taken). */
static NOPROF void check_reads(int masked, const char *what)
{
    uint64_t first, prev, gap_max = 0, reads = 0;
    int64_t gap_min = INT64_MAX;
    NP_BIN(1);
    uint32_t t0 = ticks_now();
    if (masked)
        __asm__ __volatile__("cpsid i" : : : "memory");
    first = prev = np_port_counter();
    while (prev - first < (uint64_t)READ_PERIODS * READ_PERIOD && reads < 4000000u) {
        uint64_t now = np_port_counter();
        int64_t gap = (int64_t)(now - prev);
        if (gap < gap_min)
            gap_min = gap;
        if (gap > 0 && (uint64_t)gap > gap_max)
            gap_max = (uint64_t)gap;
        prev = now;
        reads++;
    }
    if (masked)
        __asm__ __volatile__("cpsie i" : : : "memory");
    uint32_t n = ticks_now() - t0;
    NP_BIN(2);
    tc_put(what);
    tc_put(": ");
    tc_put_u64(reads);
    tc_put(" reads over ");
    tc_put_u64(prev - first);
    tc_put(" cycles, ");
    tc_put_u64(n);
    tc_put(" SysTick interrupts, the largest step ");
    tc_put_u64(gap_max);
    tc_put(" cycles\n");
    tc_check_range(prev - first, (uint64_t)READ_PERIODS * READ_PERIOD, (uint64_t)READ_PERIODS * READ_PERIOD + READ_GAP,
                   what);
    tc_check(gap_min >= 0, "no read before the one before it (no wrap missed)");
    tc_check_range(gap_max, 0, READ_GAP, "no step of a period (no wrap counted twice)");
    if (!masked)
        tc_check_range(n, READ_PERIODS - 1, READ_PERIODS + 1, "SysTick's interrupts came between the reads");
}

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    tc_check(np_stats_init(stats, sizeof stats) == NP_OK && np_cost_init(cost_buf, sizeof cost_buf) == NP_OK,
             "cost init");
#ifndef TC_RTOS
    tc_check(np_bins_init(16, 0) == NP_OK, "bins init, no tick"); /* NP_BIN counts nothing yet */
    bins_on = 1;
    uint32_t n_default = call(spin_default);
    bins_at(TICK_HZ);
    tc_check_range(SYST_RVR + 1, PERIOD, PERIOD, "bins at 1 kHz: SysTick's period, in cycles");
    uint32_t n_tick = call(spin_tick);
    /* spin_masked from just after a wrap (CVR only: COUNTFLAG is the clock's) */
    while (SYST_CVR < PERIOD - PERIOD / 8)
        ;
    uint32_t n_masked = call(spin_masked);
    bins_at(TICK_HZ);
    (void)call(spin_across_changes); /* bins restart inside: their counts are not its ticks */
    np_cost_disable();
    bins_at(0);
    tc_check(np_stats_calc(stats) == NP_OK, "calc");
    check_call(spin_default, 12u * MS, 0, 0, n_default + 1, 0, "12 ms, the clock's own period (2^24 cycles)");
    check_call(spin_tick, 12u * MS, 0, 0, n_tick, TICK_NS, "12 ms, bins at 1 kHz");
    check_call(spin_masked, 5u * TICK_NS / 2, TICK_NS, TICK_NS, n_masked, 0,
               "2.5 periods with interrupts masked: one period lost, no more");
    check_call(spin_across_changes, 12u * MS, 0, 0, 4 + 12 + 2, 0, "12 ms across three changes of the period");
    bins_at(READ_HZ);
    check_reads(0, "reads back to back, bins at 25 kHz");
    check_reads(1, "reads back to back, bins at 25 kHz, interrupts masked");
    bins_at(0);
#else
    uint32_t n_setup = call(spin_across_kernel_setup);
    tc_check_range(SYST_RVR + 1, PERIOD, PERIOD, "the kernel's SysTick period, in cycles");
    uint32_t n_tick = call(spin_tick);
    uint32_t n_again = call(spin_across_kernel_again);
    np_cost_disable();
    tc_check(np_stats_calc(stats) == NP_OK, "calc");
    check_call(spin_across_kernel_setup, 12u * MS, 0, 0, n_setup + 1, 0, "12 ms across the kernel's setting of SysTick");
    check_call(spin_tick, 12u * MS, 0, 0, n_tick, TICK_NS, "12 ms on the kernel's 1 kHz SysTick");
    check_call(spin_across_kernel_again, 12u * MS, 0, TICK_NS, n_again, 0,
               "12 ms across the kernel's same setting again: at most one period lost");
    (void)np_port_counter();
    kernel_tick_setup(READ_PERIOD);
    check_reads(0, "reads back to back, the kernel's SysTick at 25 kHz");
    check_reads(1, "reads back to back, the kernel's SysTick at 25 kHz, interrupts masked");
#endif
    return tc_finish();
}
