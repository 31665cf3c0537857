/* sinks.h - what a source does with sinks (events.h) besides telling
 * them: a batch of events told to any sink, through its batch callback
 * or one callback an event; and a tee, one sink that tells two (a source
 * that writes a trace of what it tells a view). */
#ifndef NP_ANALYZE_SINKS_H
#define NP_ANALYZE_SINKS_H

#include <stddef.h>
#include <stdint.h>
#include "events.h"

/* EV[0..N) of thread TID told to S: its `events` when it has one, else
 * enter, exit, lost, resync or switch_out for each. 0, or the first
 * non-zero return with *DONE the events told before it. */
int np_sink_events(const struct np_event_sink *s, uint32_t tid, const struct np_event *ev, size_t n, size_t *done);

/* A sink telling A, then B, everything (either may be NULL): each
 * callback returns A's first non-zero return, else B's (B is not told
 * what A stopped at). T is the sink's context, kept by the caller. */
struct np_sink_tee {
    const struct np_event_sink *a, *b;
};
struct np_event_sink np_sink_tee(struct np_sink_tee *t);

#endif
