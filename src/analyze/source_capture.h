/* source_capture.h - a target's capture as a source of events: the bytes
 * a Cortex-M firmware's output writer sent (semihosting's stdout, a
 * UART's capture), holding the trace it recorded (nanoprof/trace.h)
 * among its own output, named from the firmware's ELF.
 *
 * The trace is found by its file header; its chunks among the firmware's
 * text by their headers and checksums (docs/porting.md, "Recording a
 * trace on the target"). Bytes between chunks holding a NUL, which no
 * text has, are damage: said with their offset, counted, skipped, and the
 * calls open in their thread end there; the walk goes on at the next
 * whole chunk. A capture that ends inside a chunk is read up to its last
 * whole chunk, and said. The trace reader decodes the chunks found
 * (np_trace_listed, trace_read.h), so a capture's chunks read exactly as
 * a file's. The MODULE's build-id must be the ELF's; the module told has
 * the ELF's path; an ENTRY address that is in no function of the ELF but
 * holds a C string there is an NP_ENTER region, told as a NAME before its
 * first call.
 *
 * The firmware's reports (REPORT chunks: its dumps and error lines as
 * records, common/report_format.h) are told to the sink's report
 * callback in order, those after the trace's END too (a firmware that
 * stops its trace, then dumps); one of a type this nanoprof does not
 * know is said with its offset and skipped. A capture may hold reports
 * only: no THREAD, EVENTS or END, and then no line on a missing END. */
#ifndef NP_ANALYZE_SOURCE_CAPTURE_H
#define NP_ANALYZE_SOURCE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/report_text.h"
#include "events.h"
#include "source.h"

struct np_capture;

/* A flag of np_capture_open: the lines on how the trace ends (cut, no
 * END, another trace after it) are kept for np_capture_ending, not told
 * to the diag hook. */
#define NP_CAPTURE_KEEP_ENDING (1u << 0)

/* Reads CAPTURE, finds its trace, lists its chunks and checks the ELF
 * (ELF may be NULL: no names, nothing checked; the build-id is not
 * checked when the firmware recorded none, and a warning says so). NULL
 * when nothing can be read: its one line went to HOOKS' diag and into
 * SUMMARY (status and message). SUMMARY is zeroed first. */
struct np_capture *np_capture_open(const char *capture, const char *elf, unsigned flags,
                                   const struct np_source_options *o, const struct np_trace_hooks *hooks,
                                   struct np_trace_summary *summary);
/* Tells what the trace holds to SINK (may be NULL); summary->status. */
int np_capture_read(struct np_capture *c, const struct np_event_sink *sink);

/* What np_capture_read found, for a summary line. */
struct np_capture_found {
    uint32_t threads;        /* the distinct thread ids of THREAD chunks */
    bool has_end;
    uint64_t lost;           /* END's count (has_end) */
    uint64_t reports;        /* REPORT records told */
    uint64_t reports_unknown; /* REPORT records of a type this nanoprof does not know: said, skipped */
};
const struct np_capture_found *np_capture_found(const struct np_capture *c);
/* Whether the capture holds the firmware's reports and no trace (REPORT
 * chunks, no THREAD or EVENTS chunk): known once open. */
bool np_capture_reports_only(const struct np_capture *c);
/* What the reports' values name, from the ELF (report_names.h), as long
 * as C lives; without an ELF, nothing (the formatter shows addresses). */
struct np_report_names np_capture_report_names(struct np_capture *c);
/* With NP_CAPTURE_KEEP_ENDING: the lines on how the trace ends, each
 * ending in a newline ("" when none). */
const char *np_capture_ending(const struct np_capture *c);
void np_capture_free(struct np_capture *c);

/* The source table's entry (source.h): the ELF is O->args' "elf=FILE". */
int np_source_capture_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                           const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

#endif
