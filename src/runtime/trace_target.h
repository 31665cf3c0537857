/* trace_target.h - what the hooks call of the trace recorded on a target
 * (trace_target.c, nanoprof/trace.h). */
#ifndef NP_TRACE_TARGET_H
#define NP_TRACE_TARGET_H

#include <stdint.h>
#include "thread.h"

/* One entry or exit of T (recording: NP_F_REC_ON), under the busy flag.
 * FN: the function's address, or an NP_ENTER name | NP_REC_NAMED. */
void np_tt_event(struct np_thread *t, uint64_t fn, int exit);
/* Events the hooks dropped on a recorded thread because another hook (or
 * the writer) was running on it. */
extern uint32_t np_tt_dropped;

#if !NP_PORT_HOSTED
#include "../common/trace_format.h"
/* The ring trace (np_trace_init_ring): the hooks write one word a record
 * at POS while the clock's bits 12..31 are EPOCH, the last TIME word's;
 * else np_tt_event writes it (the TIME word first, draining the ring when
 * it is nearly full). EPOCH is NP_TT_RING_CLOSED, which no clock matches,
 * while the ring is off, np_tt_event runs, or the clock is not
 * NP_PORT_CYCLES32 (SysTick): then every record goes through np_tt_event.
 * The hooks write at most NP_TT_RING_GUARD words within one value of
 * EPOCH (4096 cycles, at 8 or more cycles a record): np_tt_event opens
 * their path only with that much room left. */
struct np_tt_ring {
    uint32_t *pos;
    uint32_t epoch;
};
extern struct np_tt_ring np_tt_ring;
#define NP_TT_RING_CLOSED 0xffffffffu
#define NP_TT_RING_GUARD ((1 << NP_RING_TIME_BITS) / 8) /* words */

/* The hooks' own path for FN's entry or (EXIT) exit: 1 when written. No
 * busy flag: the word is reserved (POS moved) before it is written, as
 * the log-mode call trace does (an interrupt between the load of POS and
 * its store, a few instructions, has its records overwritten, as there). */
static inline __attribute__((always_inline)) int np_tt_ring_put(uint32_t fn, int exit)
{
#ifdef NP_PORT_CYCLES32
    struct np_tt_ring *r = &np_tt_ring;
    uint32_t *p = r->pos, e = r->epoch;
    uint32_t now = NP_PORT_CYCLES32();
    if (__builtin_expect(e != now >> NP_RING_TIME_BITS, 0))
        return 0;
    r->pos = p + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (exit) {
        *p = now << 2;
    } else {
        /* the function's low 20 bits, the clock's low 12 above them */
        __asm__("bfi %0, %1, #20, #12" : "+r"(fn) : "r"(now));
        *p = fn;
    }
    return 1;
#else
    (void)fn, (void)exit;
    return 0;
#endif
}
#endif

#endif
