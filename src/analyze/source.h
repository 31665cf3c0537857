/* source.h - the sources of events, one line per source in the table of
 * source.c: the trace-file reader, an emulator's run of firmware, and a
 * target's capture (its output holding the trace it recorded).
 *
 * A source reads a path and tells what it finds to a sink (events.h):
 * the model, and so every view and exporter, work alike on any of them.
 * np_source_for picks the source for a path: the first whose probe
 * recognises it, else the trace reader (which then says what is wrong
 * with the path). What a source takes from the command line is in struct
 * np_source_options; each source reads the part it knows. */
#ifndef NP_ANALYZE_SOURCE_H
#define NP_ANALYZE_SOURCE_H

#include <stdbool.h>
#include "events.h"

/* What the times a source delivers are: its clock's (ns or cycles), or
 * its second counter's (an emulator's instructions), when it has one. */
enum np_metric { NP_METRIC_TIME, NP_METRIC_COUNT };

struct np_source_options {
    /* > 0: the rate of a clock in cycles, which then gives nanoseconds
     * (ns = cycles * 1e9 / clock_hz); a source whose times are not cycles
     * fails with NP_TRACE_EOPTION. 0: times as the source counts them. */
    double clock_hz;
    enum np_metric metric;   /* NP_METRIC_COUNT: the second counter; a source
                                without one fails with NP_TRACE_EOPTION */
    const char *const *args; /* source-specific settings ("name=value"),
                                NULL-terminated; NULL: none */
    const char *source;      /* the source's name: the path is read with it,
                                whatever it looks like (a capture is any
                                bytes); NULL: np_source_for's choice */
};

struct np_source {
    const char *name;        /* "trace" */
    const char *description; /* one line, for --help */
    /* Whether PATH is this source's input; NULL: never asked (the
     * fallback). */
    bool (*probe)(const char *path);
    /* Reads PATH into SINK as events.h says; O, HOOKS and SUMMARY may be
     * NULL (SUMMARY is zeroed first). Returns summary->status. */
    int (*read)(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                const struct np_trace_hooks *hooks, struct np_trace_summary *summary);
};

/* Every source, ending with a NULL name. */
extern const struct np_source np_sources[];
/* The source for PATH: the first whose probe says yes, else the trace
 * reader. Never NULL. */
const struct np_source *np_source_for(const char *path);
/* The source called NAME, or NULL. */
const struct np_source *np_source_find(const char *name);
/* The source O names (O->source), else np_source_for(PATH); its read(...).
 * A name no source has: NP_TRACE_EOPTION. */
int np_source_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                   const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

/* Whether PATH is a trace: a directory, or a file that starts with the
 * trace magic. */
bool np_probe_trace(const char *path);
/* Whether PATH is a 32-bit little-endian ARM ELF file (firmware for the
 * emulator). */
bool np_probe_arm_elf(const char *path);

#endif
