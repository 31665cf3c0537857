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

/* ---- a trace among other bytes ----------------------------------------------------- */

/* A trace whose bytes are in memory among other bytes (a target's
 * capture, source_capture.c): the caller finds its chunks and lists them
 * in order, whole ones and damaged stretches, and the reader decodes them
 * as it decodes a file's (pass two, trace_read.c), to a sink, with
 * offsets in those bytes and NAME in its lines. Their chunks may be out
 * of order (a ring that wrapped): events of a thread earlier than those
 * it had stop the read there (NP_TRACE_ECORRUPT, said). */
struct np_trace_listed;

#define NP_TRACE_LISTED_WHAT 96      /* bytes of a damaged stretch's description */
#define NP_TRACE_LISTED_ON (1u << 0) /* (set by the reader) */
/* A flag: the caller says where the trace stops (np_trace_listed_stop's
 * line) and that it has no END, the reader only counts them. */
#define NP_TRACE_LISTED_QUIET_END (1u << 1)
/* A flag (np_trace_listed_no_trace): the listing holds no trace, a
 * target's reports alone, so no END is missing. */
#define NP_TRACE_LISTED_NO_TRACE (1u << 2)

/* The trace in BYTES (SIZE of them), of format VERSION, whose file header
 * the caller checked; read as options O say (NULL: the defaults). NULL
 * when out of memory. SUMMARY (may be NULL) is added to, as
 * np_trace_read_fd does. */
struct np_trace_listed *np_trace_listed_new(const uint8_t *bytes, uint64_t size, unsigned version, const char *name,
                                            unsigned flags, const struct np_source_options *o,
                                            const struct np_trace_hooks *hooks, struct np_trace_summary *summary);
/* The next chunk: whole at OFF (its header's), its checksum good. 0, or
 * NP_TRACE_ENOMEM. */
int np_trace_listed_chunk(struct np_trace_listed *t, uint64_t off, uint32_t type, uint32_t len);
/* Next, BYTES damaged bytes at OFF: WHAT ("EVENTS chunk (checksum
 * mismatch)") makes the warning "NAME: offset OFF: damaged WHAT: skipped
 * BYTES bytes" when pass two reaches them; they are counted, and the calls
 * open in their thread (every thread's, when they do not read as an
 * EVENTS chunk) end there. 0, or NP_TRACE_ENOMEM. */
int np_trace_listed_damage(struct np_trace_listed *t, uint64_t off, uint64_t bytes, const char *what);
/* The listing stops short at OFF with STATUS (NP_TRACE_ETRUNC: the bytes
 * end inside a chunk); LINE says so after the chunks before it. */
void np_trace_listed_stop(struct np_trace_listed *t, int status, uint64_t off, const char *line);
/* Says the listing holds no trace to end (NP_TRACE_LISTED_NO_TRACE). */
void np_trace_listed_no_trace(struct np_trace_listed *t);
/* Decodes what was listed, to SINK (may be NULL); summary->status. */
int np_trace_listed_read(struct np_trace_listed *t, const struct np_event_sink *sink);
void np_trace_listed_free(struct np_trace_listed *t);

#endif
