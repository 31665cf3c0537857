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

#endif
