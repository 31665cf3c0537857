/* calls_out.h - the call tracker's events (emu/calltrack.h) told to a
 * sink and, when asked, to a trace file: what the sources that rebuild
 * calls from the instructions that ran share (the emulator, a QEMU
 * execution log).
 *
 * Times are the tracker's cycles, made ns at NS_PER_CYCLE when > 0, or
 * its instructions with NP_METRIC_COUNT. The second counter is each
 * thread's own instructions: those other threads ran while it was out are
 * left out (docs/trace-format.md). */
#ifndef NP_ANALYZE_CALLS_OUT_H
#define NP_ANALYZE_CALLS_OUT_H

#include <stdint.h>
#include "events.h"
#include "source.h"
#include "trace_write.h"
#include "emu/calltrack.h"

struct np_calls_out {
    /* set by the source */
    const struct np_event_sink *sink;  /* may be NULL */
    struct np_trace_writer *writer;    /* may be NULL */
    enum np_metric metric;
    double ns_per_cycle;               /* > 0: cycles made ns */
    const uint64_t *insns_now;         /* the run's instruction count (a new thread's starts there) */
    /* kept here */
    int sink_rc;                       /* a sink callback's first non-zero return */
    uint64_t *insns_out;               /* per thread (tid - 1): others' instructions while it was out */
    uint32_t nthreads;
    uint64_t last_cycles;              /* the last event's: the trace's end */
    char writer_error[256];
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
/* RC, the writer's error kept when non-zero. */
int np_calls_out_writer_rc(struct np_calls_out *c, int rc);
/* The end of the run: the sink's end, the writer closed. STATUS, or the
 * status the sink or the writer failed with (SUMMARY's message says the
 * writer's). Frees what C kept. */
int np_calls_out_end(struct np_calls_out *c, int status, struct np_trace_summary *summary);

#endif
