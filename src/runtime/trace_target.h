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

/* The ring (trace_target.c) for np_trace_init_ring and, LAPS not NULL, a
 * flight recorder's (trace_flight.c): see there. */
int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end);
/* Whether a trace runs (a target's). */
int np_tt_running(void);

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
    uint32_t base;  /* the code window's start (the RING chunk's base) */
};
extern struct np_tt_ring np_tt_ring;
#define NP_TT_RING_CLOSED 0xffffffffu
#define NP_TT_RING_GUARD ((1 << NP_RING_TIME_BITS) / 8) /* words */

/* The hooks' own path for FN's entry or (EXIT) exit: 1 when written.
 * Interrupts are masked from the clock's read to the word's store, as
 * SystemView's recorder does: an interrupt's or another task's records
 * (which may drain the ring) come wholly before or after, and times never
 * go back. No busy flag. A function outside the window takes
 * np_tt_event's path (FAR words). */
static inline __attribute__((always_inline)) int np_tt_ring_put(uint32_t fn, int exit)
{
#ifdef NP_PORT_CYCLES32
    struct np_tt_ring *r = &np_tt_ring;
    uint32_t d = fn - r->base; /* odd: a Thumb function's (base even) */
    np_port_crit c = np_port_crit_enter(NULL);
    uint32_t *p = r->pos, now = NP_PORT_CYCLES32();
    if (__builtin_expect(((r->epoch ^ now >> NP_RING_TIME_BITS) | (exit ? 0 : d >> NP_RING_FN_BITS)) != 0, 0)) {
        np_port_crit_exit(NULL, c);
        return 0;
    }
    *p = exit ? now << 2 : d | now << NP_RING_FN_BITS; /* (the clock's low 12 bits above) */
    r->pos = p + 1;
    np_port_crit_exit(NULL, c);
    return 1;
#else
    (void)fn, (void)exit;
    return 0;
#endif
}
#endif

#endif
