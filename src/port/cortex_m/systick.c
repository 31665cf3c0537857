/* systick.c - the Cortex-M port's clock set-up and SysTick (port.h): the
 * clock itself where the core has no DWT counter that moves, and
 * SysTick's interrupt, which also calls bins' tick and gprof's samples
 * (tick.c starts them: an object apart, which only a firmware that uses
 * them links). SysTick's handler (NP_CM_SYSTICK_HANDLER) is here: it comes
 * into a firmware with what starts SysTick, and a firmware that never
 * reads the time links neither (clock.c has the read).
 *
 * Clock: CPU cycles, 64 bits. The DWT cycle counter where the core has one
 * and it moves (QEMU's boards do not run it: it reads 0), else SysTick on
 * the processor clock, counting down from its reload value. Either
 * hardware counter is narrower than 64 bits. SysTick's wraps are counted
 * by COUNTFLAG, read by its interrupt each period and by every read
 * (clock.c): a call of any length is measured whole. The DWT counter is
 * the clock's low word and a read below the previous one counts a wrap
 * (port_hot.h), so its reads must come less than 2^32 cycles apart (a
 * minute at 72 MHz): SysTick's interrupt reads it too, and where the
 * port's handler takes SysTick it keeps SysTick running for that, at
 * 2^24 cycles a period when nothing else asks for a rate. */
#include "../port.h"
#include "cortex_m.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* the processor clock */
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25)
#define DEMCR REG(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)

static uint32_t cpu_hz = NP_CM_CPU_HZ;
static int clock_ready;
void (*np_cm_tick_fn)(uint32_t late);
void (*np_cm_pc_fn)(uintptr_t pc);

void np_cm_set_cpu_hz(uint32_t hz)
{
    if (hz)
        cpu_hz = hz;
}

uint32_t np_cm_cpu_hz(void)
{
    return cpu_hz;
}

/* ---- clock ------------------------------------------------------------------ */

/* SysTick counts PERIOD cycles per interrupt from now on (0: stopped). When
 * it is the clock, the clock goes on from what it counted so far: the
 * counter restarts from 0 (which clears COUNTFLAG), as if it had just
 * wrapped at the clock's last read. */
void np_cm_systick_set(uint32_t period)
{
    np_port_crit m = np_port_crit_enter(0);
    if (!np_cm_clock.dwt)
        np_cm_clock.base = np_cm_systick_read();
    SYST_CSR = 0;
    np_cm_clock.period = period;
    if (period) {
        SYST_RVR = period - 1;
        NP_CM_SYST_CVR = 0; /* reloads at the next cycle */
        SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    }
    np_port_crit_exit(0, m);
}

/* SysTick's period when no tick asks for a rate: the clock's own when
 * SysTick is the clock; with the DWT counter, the same where the port's
 * handler reads it every period (below 2^32 cycles), else left to the
 * firmware's tick. */
uint32_t np_cm_systick_idle_period(void)
{
    return !np_cm_clock.dwt || NP_CM_SYSTICK_HANDLER ? NP_CM_SYST_PERIOD_MAX : 0;
}

#if NP_CM_HAS_DWT
/* The DWT counter, enabled, when it is there and moves. */
static int dwt_start(void)
{
    DEMCR |= DEMCR_TRCENA;
    if (DWT_CTRL & DWT_CTRL_NOCYCCNT)
        return 0;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
    uint32_t a = NP_CM_DWT_CYCCNT;
    for (volatile int i = 0; i < 8; i++)
        ;
    if (NP_CM_DWT_CYCCNT == a)
        return 0;
    np_cm_clock.now = NP_CM_DWT_CYCCNT; /* the low word is the counter (port_hot.h) */
    return 1;
}
#endif

void np_port_clock_init(void)
{
    if (clock_ready)
        return;
    clock_ready = 1;
#if NP_CM_HAS_DWT
    if (dwt_start())
        np_cm_clock.dwt = 1;
#endif
    if (np_cm_systick_idle_period())
        np_cm_systick_set(np_cm_systick_idle_period());
}

void np_port_clock_thread(void)
{
    np_port_clock_init();
}

uint64_t np_port_resync(uint64_t *switched)
{
    *switched = 0;
    return np_port_counter();
}

uint64_t np_port_ns_per_tick_q32(void)
{
    /* 10^9 * 2^32 / cpu_hz, the fraction bit by bit: no 64-bit division */
    uint32_t hz = cpu_hz, whole = 1000000000u / hz, frac = 0;
    uint64_t r = 1000000000u % hz;
    for (int i = 0; i < 32; i++) {
        r <<= 1;
        frac <<= 1;
        if (r >= hz) {
            r -= hz;
            frac |= 1;
        }
    }
    return (uint64_t)whole << 32 | frac;
}

const char *np_port_clock_name(void)
{
    return "cycles";
}

const char *np_port_wall_clock_name(void)
{
    return "cycles";
}

void np_cm_systick_isr(void)
{
    (void)np_port_counter(); /* counts SysTick's wrap, or the DWT counter's */
    void (*fn)(uint32_t) = __atomic_load_n(&np_cm_tick_fn, __ATOMIC_RELAXED);
    if (fn)
        fn(0);
}

void np_cm_systick_isr_frame(const uint32_t *frame)
{
    np_cm_systick_isr();
    void (*fn)(uintptr_t) = __atomic_load_n(&np_cm_pc_fn, __ATOMIC_RELAXED);
    if (fn)
        fn(frame[6]); /* the stacked PC: r0-r3, r12, lr, pc, xpsr */
}

#if NP_CM_SYSTICK_HANDLER
/* The exception frame is on the stack the interrupted code used: the
 * process stack when EXC_RETURN (lr on entry) has bit 2 set, else the
 * main stack, where nothing was pushed since (this handler pushes nothing
 * before it looks).
 * Thumb-1 only, for ARMv6-M too. */
__asm__(".pushsection .text.SysTick_Handler,\"ax\",%progbits\n"
        ".syntax unified\n"
        ".global SysTick_Handler\n"
        ".thumb_func\n"
        ".type SysTick_Handler, %function\n"
        "SysTick_Handler:\n"
        "  mov r0, lr\n"
        "  movs r1, #4\n"
        "  tst r0, r1\n"
        "  bne 1f\n"
        "  mrs r0, msp\n"
        "  b 2f\n"
        "1: mrs r0, psp\n"
        "2: ldr r1, 3f\n"
        "  bx r1\n"
        "  .align 2\n"
        "3: .word np_cm_systick_isr_frame\n"
        ".size SysTick_Handler, . - SysTick_Handler\n"
        ".popsection\n");
#endif
