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

#include "common/name_match.h"
#include "common/trace_format.h"
#include "common/value_spec.h"
#include "containers.h"

struct np_symbols;

/* Arguments and return values of the functions some spec names
 * (`nanoprof emu --args`, `--retval`): read from the CPU's registers as
 * the tracker tells a call (r0-r3: arguments 1 to 4) and its return
 * (r0), and told to the sink (its values callback) after the call's
 * enter and before its exit. */
struct np_calls_open {
    uint8_t *v;                /* each open call's -R spec + 1, or 0 */
    size_t n, cap;
};
struct np_calls_values {
    struct np_value_spec spec[NP_VALUE_SPECS_MAX];
    struct np_name_pattern pat[NP_VALUE_SPECS_MAX];
    bool retval[NP_VALUE_SPECS_MAX];
    unsigned n;
    const uint32_t *regs;      /* the CPU's r0.. (a return value: r0 as the return found it) */
    const struct np_calltrack *trk; /* the arguments: np_calltrack_entry_args (keep_args) */
    void *as;                  /* the functions' names: np_calls_name_of's */
    struct np_hmap cache;      /* address -> -A spec + 1 | -R spec + 1 << 8 */
    struct np_calls_open *open; /* per thread (tid - 1) */
    size_t nopen;
};
/* Compiles the N specs of TEXT (RETVAL[i]: an -R spec) into V, for a
 * CPU whose arguments 1 to 4 are in registers, checking that each names
 * a function of AS (FUNCS: every function's name): 0, or -1 with one
 * line in ERR. */
int np_calls_values_init(struct np_calls_values *v, const char *const *text, const bool *retval, unsigned n,
                         struct np_symbols *syms, void *as, const uint32_t *regs, char *err, size_t errsize);
void np_calls_values_free(struct np_calls_values *v);

/* Events told to the sink at once. */
#define NP_CALLS_OUT_BATCH 256

struct np_calls_out {
    /* set by the source */
    const struct np_event_sink *sink;  /* may be NULL */
    struct np_calls_values *values;    /* arguments and return values to tell, or NULL */
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
