/* ns.h - ticks to nanoseconds in integer arithmetic: the port's rate as a
 * 32.32 fixed-point number (np_port_ns_per_tick_q32), so that a target
 * without a double-precision FPU links no floating-point library for its
 * statistics and dumps. */
#ifndef NP_NS_H
#define NP_NS_H

#include <stdint.h>

/* TICKS * Q / 2^32, rounded: 32-bit products only (a Cortex-M0 has no
 * 64-bit multiply), exact to the nanosecond while the result fits. */
static inline uint64_t np_ticks_ns(uint64_t ticks, uint64_t q)
{
    uint32_t th = (uint32_t)(ticks >> 32), tl = (uint32_t)ticks;
    uint32_t qh = (uint32_t)(q >> 32), ql = (uint32_t)q;
    uint64_t low = (uint64_t)tl * ql;
    return ((uint64_t)th * qh << 32) + (uint64_t)th * ql + (uint64_t)tl * qh + ((low + (1u << 31)) >> 32);
}

#endif
