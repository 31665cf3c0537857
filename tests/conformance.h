/* conformance.h - what tests of a source share to show that it is one
 * more source of the same pipeline: a model built from the events the
 * source gives a sink straight, and the model read back from the trace
 * file written of the same run (trace_write.h) through the source table,
 * must be the same model, field for field.
 *
 * Two parts. A generic one, for any source: cf_model_from builds a model
 * from a function that feeds a sink (a source's read, a script),
 * cf_model_load one from a path through the source table, and
 * cf_compare compares two models - processes, threads, functions, arcs,
 * nodes, blocks, every field (but the file a process was read from: each
 * source names its own input), and the calls a listener was told, thread
 * by thread - with indices matched by identity (a thread by pid and tid,
 * a function by name, module and address, a node by its path), since two
 * sources may meet threads and functions in another order. And a
 * scripted one: a list of events (cf_event) of several threads, each
 * with its ticks and second counter, that cf_write_script writes with
 * the trace writer and cf_feed_script gives a sink as the trace reader
 * would deliver them under the source options: times from ticks (ns, or
 * cycles, or ns at a clock rate) or the count. cf_check_script does both
 * and compares.
 *
 * Test code: out of memory aborts. Comparisons are quadratic in the
 * nodes, for models of a test's size. */
#ifndef NP_TEST_CONFORMANCE_H
#define NP_TEST_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyze/model.h"
#include "analyze/trace_write.h"
#include "timeline.h"

/* A model and the calls its listener was told. */
struct cf_model {
    struct np_model *m;
    struct timeline tl;
    struct np_trace_summary sum;
    int status;              /* the read's (np_trace_status) */
};

/* Builds OUT->m with options MO (NULL: none; its listener is replaced by
 * the timeline), names resolved from the modules the events name, from
 * what FEED gives the sink (FEED returns an np_trace_status). */
int cf_model_from(int (*feed)(void *ctx, const struct np_event_sink *sink), void *ctx,
                  const struct np_model_options *mo, struct cf_model *out);
/* The same from PATH through the source table (np_model_load, with
 * MO->source). */
int cf_model_load(const char *path, const struct np_model_options *mo, struct cf_model *out);
void cf_model_free(struct cf_model *c);

/* 0 when A and B are the same model and told the same calls; -1 with the
 * first difference in MSG. */
int cf_compare(const struct cf_model *a, const struct cf_model *b, char *msg, size_t size);

/* ---- scripts ------------------------------------------------------------------ */

enum cf_kind {
    CF_ENTER,                /* arg: the address */
    CF_EXIT,
    CF_LOST,                 /* arg: events lost */
    CF_SWITCH,               /* arg: ticks switched out, ending at ticks */
    CF_RESYNC,               /* arg: calls closed */
    CF_THREAD                /* name: the thread's name */
};

struct cf_event {
    enum cf_kind kind;
    uint32_t tid;
    uint64_t ticks;          /* of the clock (INFO's) */
    uint64_t count;          /* the second counter (with a count unit) */
    uint64_t arg;
    const char *name;
};

struct cf_script {
    struct np_trace_writer_process process; /* INFO and UNITS */
    const struct np_trace_module *modules;
    size_t nmodules;
    const struct cf_event *events;
    size_t nevents;
    uint64_t end_tick, events_lost;          /* END */
};

/* Writes S to PATH; 0, or -1 with the writer's line in ERR. */
int cf_write_script(const struct cf_script *s, const char *path, char *err, size_t errsize);
/* Gives S to SINK as the trace source reads the file of it, FILE, with
 * options O (NULL: the defaults): NP_TRACE_OK, NP_TRACE_EOPTION when the
 * options do not fit S (nothing is given then), or a sink's stop. */
int cf_feed_script(const struct cf_script *s, const char *file, const struct np_source_options *o,
                   const struct np_event_sink *sink);
/* Writes S to PATH, builds the model of the file and that of S fed
 * straight, both with MO (its source options included), and compares
 * them; both must also give the same status. 0, or -1 with why in MSG. */
int cf_check_script(const struct cf_script *s, const char *path, const struct np_model_options *mo, char *msg,
                    size_t size);

#endif
