/* ns_double.c - the clock's rate as a double (port.h), which only the
 * hosted recorder asks for: an object of its own, so that a firmware,
 * whose runtime converts in fixed point (np_port_ns_per_tick_q32), links
 * no floating-point division. */
#include "../port.h"
#include "cortex_m.h"

double np_port_ns_per_tick(void)
{
    return 1e9 / (double)np_cm_cpu_hz();
}

double np_port_ns_per_tick_soon(void)
{
    return np_port_ns_per_tick();
}
