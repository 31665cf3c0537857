/* trace_read.h - reads nanoprof traces (docs/trace-format.md) and feeds
 * what they hold, as events, to a sink (events.h): the trace-file source.
 *
 * Times are nanoseconds of Unix time: INFO's start time plus ticks since
 * INFO's start tick times ns_per_tick (END's refined value when the file
 * has one). Error lines name the file and the byte offset.
 * Hostile input never crashes the reader, never makes it loop without
 * consuming bytes, and never makes it allocate more than a small multiple
 * of the bytes in the file (counts are checked against the bytes left). */
#ifndef NP_ANALYZE_TRACE_READ_H
#define NP_ANALYZE_TRACE_READ_H

#include "events.h"
#include "source.h"

/* Reads PATH: a directory (every *.npt file in it, by pid then exec
 * number) or one file, as options O say (NULL: the defaults). Returns
 * summary->status. HOOKS and SUMMARY may be NULL. The trace source of
 * the table (source.h). */
int np_trace_read_with(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary);
/* The same with the default options. */
int np_trace_read(const char *path, const struct np_event_sink *sink,
                  const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

/* Reads one trace file from FD (positioned reads: the offset is not
 * used); NAME is how messages call it. Adds to SUMMARY (which the caller
 * zeroes first). */
int np_trace_read_fd(int fd, const char *name, const struct np_event_sink *sink,
                     const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

#endif
