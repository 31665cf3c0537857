/* clock.c - the Cortex-M port's 64-bit clock on SysTick, read (port_hot.h
 * has the DWT counter's read; systick.c starts the clock and takes its
 * interrupt).
 *
 * SysTick counts down from its reload value R to 0, then reloads: a
 * period of R + 1 cycles, and on reaching 0 it sets COUNTFLAG (cleared by
 * the read of the control register that sees it) and pends its interrupt.
 * The clock is the time it last reached 0 (BASE) plus what it counted
 * since. Each wrap is counted exactly once, by whoever reads COUNTFLAG
 * set: SysTick's interrupt (np_cm_systick_isr, from the port's handler or
 * an RTOS's tick), or a read that comes before it, or, when no interrupt
 * is taken (masked, or SysTick's disabled), the next read. So a gap of
 * any length between reads is whole as long as the interrupt runs once a
 * period; interrupts masked across two wraps lose a period per wrap beyond
 * the first. At the boundary: the count first, then COUNTFLAG, then, when
 * it was set, the count again: the count read before the flag may be
 * before the wrap, the one after it is after.
 *
 * A reload other than the one last seen means SysTick was programmed again
 * (an RTOS's tick set-up: stopped, cleared, a reload, started): the clock
 * goes on from its last read, exact when the set-up follows a read (as
 * FreeRTOS's start follows traceTASK_SWITCHED_IN); a set-up with the same
 * reload is not seen and loses what the counter had counted in its
 * period. */
#include "../port.h"
#include "cortex_m.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CSR_COUNTFLAG (1u << 16)

struct np_cm_clock np_cm_clock;

uint64_t np_cm_systick_read(void)
{
    np_port_crit m = np_port_crit_enter(0);
    struct np_cm_clock *c = &np_cm_clock;
    uint64_t now = c->now;
    if (c->period) {
        uint32_t v = NP_CM_SYST_CVR, p = (SYST_RVR & 0xffffffu) + 1;
        if (p != c->period) { /* programmed again since the last read */
            c->base = now;
            c->period = p;
        }
        if (SYST_CSR & SYST_CSR_COUNTFLAG) {
            c->base += p;
            v = NP_CM_SYST_CVR; /* after the wrap */
        }
        now = c->base + (v ? p - v : 0);
        c->now = now;
    }
    np_port_crit_exit(0, m);
    return now;
}
