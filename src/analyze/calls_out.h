/* calls_out.h - the call tracker's events (emu/calltrack.h) told to a
 * sink: what the sources that rebuild calls from the instructions that
 * ran share (the emulator, a QEMU execution log).
 *
 * The events are the run's own: times in the tracker's cycles, and each
 * event's count the thread's own instructions (those other threads ran
 * while it was out are left out: docs/trace-format.md), as a trace file
 * keeps them. A view that wants other times gets them through the metric
 * sink below; a source that also writes the run as a trace tells both
 * through a tee (sinks.h). */
#ifndef NP_ANALYZE_CALLS_OUT_H
#define NP_ANALYZE_CALLS_OUT_H

#include <stdint.h>
#include "events.h"
#include "source.h"
#include "emu/calltrack.h"

/* Events told to the sink at once. */
#define NP_CALLS_OUT_BATCH 256

struct np_calls_out {
    /* set by the source */
    const struct np_event_sink *sink;  /* may be NULL */
    const uint64_t *insns_now;         /* the run's instruction count (a new thread's starts there) */
    /* kept here */
    int sink_rc;                       /* a sink callback's first non-zero return */
    uint64_t *insns_out;               /* per thread (tid - 1): others' instructions while it was out */
    uint32_t nthreads;
    /* events not yet told, all of thread batch_tid: told as one batch (a
     * call costs the sink's dispatch once per batch, not per event) */
    struct np_event batch[NP_CALLS_OUT_BATCH];
    uint32_t nbatch, batch_tid;
};

struct np_addrspace;
/* What the tracker needs of the firmware's functions, from AS (its
 * ELF mapped): the start of the function holding an address, its name. */
struct np_calltrack_funcs np_calls_funcs(struct np_addrspace *as);
uint32_t np_calls_func_of(void *as, uint32_t addr);
const char *np_calls_name_of(void *as, uint32_t addr);

/* The tracker's output callbacks, their context C. */
struct np_calltrack_out np_calls_out_hooks(struct np_calls_out *c);
/* RC, kept as the sink's first failure when non-zero. */
int np_calls_out_sink_rc(struct np_calls_out *c, int rc);
/* The end of the run: the sink's end. STATUS, or the status the sink
 * failed with. Frees what C kept. */
int np_calls_out_end(struct np_calls_out *c, int status);

/* A sink that tells NEXT (may be NULL) the events of a calls_out sink
 * with times of METRIC: cycles (NP_METRIC_TIME), made ns at NS_PER_CYCLE
 * when > 0, or the count (NP_METRIC_COUNT: instructions; time switched
 * out is then 0, the others' instructions not being the thread's); the
 * process's unit said so, its counts dropped. M is its context, kept by
 * the caller. */
struct np_calls_metric {
    const struct np_event_sink *next;
    enum np_metric metric;
    double ns_per_cycle;
};
struct np_event_sink np_calls_metric_sink(struct np_calls_metric *m);

#endif
