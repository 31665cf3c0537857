/* clock.c - the Cortex-M port's 64-bit clock, read (port_hot.h has the
 * DWT counter's read; systick.c starts the clock). */
#include "../port.h"
#include "cortex_m.h"

struct np_cm_clock np_cm_clock;

uint64_t np_cm_systick_read(void)
{
    np_port_crit m = np_port_crit_enter(0);
    uint64_t now = np_cm_clock.now;
    if (np_cm_clock.period) {
        uint32_t v = NP_CM_SYST_CVR, last = np_cm_clock.last;
        now += last >= v ? last - v : last + np_cm_clock.period - v; /* it counts down */
        np_cm_clock.now = now;
        np_cm_clock.last = v;
    }
    np_port_crit_exit(0, m);
    return now;
}
