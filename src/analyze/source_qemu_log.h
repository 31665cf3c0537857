/* source_qemu_log.h - QEMU's execution log as a source of events: a
 * firmware run by qemu-system-arm (any of its boards, peripherals and
 * all) with `-d exec,nochain` (and `-singlestep`, or `-accel
 * tcg,one-insn-per-tb=on`, for a block per instruction), its calls
 * rebuilt from the blocks it logs and the firmware's ELF by the
 * emulator's call tracker (emu/calltrack.h), as `nanoprof emu` rebuilds
 * them (docs/emulator.md, "QEMU execution logs").
 *
 * Times are instructions (QEMU counts no cycles); the process is pid 1,
 * its threads found as the tracker finds them. With `-d cpu` too, the
 * stack pointer and the exception number of each block's start make
 * threads and exceptions exact. */
#ifndef NP_ANALYZE_SOURCE_QEMU_LOG_H
#define NP_ANALYZE_SOURCE_QEMU_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "events.h"
#include "source.h"
#include "emu/calltrack.h"

/* What a log held, and what could not be told exactly. */
struct np_qemu_log_stats {
    uint64_t blocks;             /* blocks logged */
    uint64_t insns;              /* instructions they ran */
    uint64_t exceptions;         /* exceptions entered */
    uint64_t tail_chains;        /* of those, taken as another's return */
    uint64_t resumes_deferred;   /* exceptions whose interrupted address was found at their return */
    uint64_t outside;            /* blocks where the ELF has no code (counted as one instruction) */
    uint64_t unexplained;        /* block ends the code does not explain (nothing told) */
    uint64_t bad_lines;          /* Trace lines that could not be read */
    bool no_capstone;
    /* how the log ended when not at its end: a handler looping in `b .`
     * (halted: END_EXCEPTION's, QLOG numbers, at END_PC, having
     * interrupted END_RESUME, 0xfffffffe when not known), or the
     * instruction limit reached (limited, at END_PC) */
    bool halted, limited;
    bool threads_full;           /* stopped at a new thread beyond NP_CALLTRACK_MAX_THREADS */
    bool cut;                    /* the log ends elsewhere than at a semihosting call (or
                                    in a line): QEMU was stopped, or the file cut */
    uint32_t end_pc, end_resume, end_block;
    uint16_t end_exception;
    char ending[512];            /* the line that says it, or "" */
    struct np_calltrack_stats calls;
};

/* Whether PATH starts like a QEMU log with blocks in it ("Trace N: ..."
 * among its first lines). */
bool np_probe_qemu_log(const char *path);
/* Reads the log PATH of the firmware ELF into SINK (may be NULL).
 * Returns an np_trace_status (SUMMARY's message says why); STATS says
 * what was found. */
int np_qemu_log_read(const char *path, const char *elf, enum np_metric metric, const struct np_event_sink *sink,
                     struct np_trace_summary *summary, struct np_qemu_log_stats *stats);
/* The same from F, read to its end (a pipe QEMU writes), named PATH in
 * messages; CHECK: refuse a log whose blocks QEMU named as the ELF does
 * not (F is read twice: a file); MAX_INSNS > 0: stop there. */
int np_qemu_log_read_stream(FILE *f, const char *path, const char *elf, bool check, uint64_t max_insns,
                            enum np_metric metric, const struct np_event_sink *sink, struct np_trace_summary *summary,
                            struct np_qemu_log_stats *stats);
/* STATS' inexact parts in one line; "" when it has none. */
void np_qemu_log_say(const struct np_qemu_log_stats *stats, char *buf, size_t size);
/* The source table's reader: O->args holds "elf=FILE". */
int np_source_qemu_log_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                            const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

#endif
