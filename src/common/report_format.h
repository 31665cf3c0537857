/* report_format.h - the records of the runtime's reports: its dumps, its
 * notes and its error lines, defined once. The runtime makes them
 * (runtime/report.c); a target sends each as a REPORT chunk of the trace
 * format (docs/trace-format.md) and formats nothing, and report_text.c
 * turns a record into the lines the host runtime prints, on the host
 * (the runtime's own dumps, and `nanoprof import` of a target's capture,
 * naming from the ELF) or, opted into, on a target (-lnanoprof-text).
 *
 * A record is a type and up to NP_REPORT_VALUES_MAX 64-bit values, as
 * listed below. A REPORT chunk's payload is the type (u16), then the
 * values (u64 each, little-endian); a reader takes the values it knows
 * and ignores more, so that a record may grow at its end.
 *
 * Values marked MSG are the runtime's own messages: on a target built
 * for records, the offset of the text in the ELF's non-loaded section
 * .np_msg (NP_MSG below: the text costs no ROM); elsewhere a pointer to
 * it. Values marked STR are the program's strings (a section's, a bin's,
 * an NP_ENTER region's name): their address, read from the ELF on the
 * host. Header-only and freestanding: a target's runtime includes it. */
#ifndef NP_REPORT_FORMAT_H
#define NP_REPORT_FORMAT_H

enum np_report_type {
    NP_REP_ERROR = 1,          /* status, where (MSG), what (MSG) */
    NP_REP_COST_FN = 2,        /* fn, named (fn is a STR), calls, total ns, self ns, min ns, max ns */
    NP_REP_COST_LOST = 3,      /* records lost */
    NP_REP_COST_FULL = 4,      /* calls not counted (statistics table full) */
    NP_REP_CALLTRACE_HEAD = 5, /* stack mode (0 log, 1 stack), thread id, lr, records, lost */
    NP_REP_CALLTRACE_CALL = 6, /* depth, fn, named (fn is a STR), call site,
                                * [1, the first four arguments: NP_CALLTRACE_ARGS] */
    NP_REP_SECTION = 7,        /* id, name (STR, 0: none), count, time ns, global's time ns,
                                * counter 0's name (MSG, 0: no counters), its count,
                                * counter 1's name (MSG), its count */
    NP_REP_SECTIONS_HW_MISSING = 8, /* threads whose counters could not be opened */
    NP_REP_SECTIONS_HW_OFF = 9,     /* why (MSG) */
    NP_REP_BIN = 10,           /* bin, name (STR, 0: none), count, saturated */
    NP_REP_BINS_OUT_OF_RANGE = 11, /* ticks */
    NP_REP_BINS_LATE = 12,     /* ticks */
    NP_REP_BLOCKS_HEAD = 13,   /* blocks, executions, lost, slots */
    NP_REP_BLOCK = 14,         /* pc, count */
    NP_REP_GPROF_HIST_SMALL = 15, /* bins the histogram needs */
    NP_REP_GPROF_OUTSIDE = 16, /* samples outside the text */
    NP_REP_GPROF_ARCS_LOST = 17, /* calls lost (arc table full) */
    NP_REP_GPROF_SAMPLES_LOST = 18 /* samples lost (a bin at 65535) */
};
#define NP_REPORT_TYPE_LAST NP_REP_GPROF_SAMPLES_LOST
#define NP_REPORT_VALUES_MAX 9

/* The values each type has (at least), indexed by type. */
#define NP_REPORT_VALUES { 0, 3, 7, 1, 1, 5, 4, 9, 1, 1, 4, 1, 1, 4, 2, 1, 1, 1, 1 }

/* The ELF section of a target's messages. */
#define NP_MSG_SECTION ".np_msg"

/* NP_MSG("text"): a message of the runtime as a report's MSG value
 * carries it. Built for records on a target (NP_REPORT_RECORDS), the
 * text is placed in .np_msg, a section the linker keeps in the ELF but
 * never loads ("" flags; the '@' starts an ARM assembler comment that
 * hides the flags GCC appends), so that the value is its offset there
 * and the firmware holds no text. Elsewhere it is the text. */
#if defined(NP_REPORT_RECORDS) && NP_REPORT_RECORDS
#define NP_MSG(s)                                                                                        \
    (__extension__({                                                                                     \
        static const char np_msg_[] __attribute__((section(NP_MSG_SECTION ",\"\",%progbits @"), used)) = \
            s;                                                                                           \
        np_msg_;                                                                                         \
    }))
#else
#define NP_MSG(s) (s)
#endif

#endif
