/* events.h - the one interface between sources and the model: what a
 * source (the trace-file reader, an emulator, ...) tells, as calls of a
 * sink (struct np_event_sink), and how it reports problems and progress.
 *
 * Per file (one recorded process) a sink sees begin(), then modules,
 * thread names and each thread's events in order, then end() - always,
 * even when the input is damaged, so the consumer can close what is open.
 * Times are nanoseconds of Unix time as a rule (struct np_trace_process
 * says when they are not). Errors are codes plus one line naming the
 * input and the problem, given to the diag callback; everything before
 * the damage has been delivered by then, and the caller decides whether
 * to report it. */
#ifndef NP_ANALYZE_EVENTS_H
#define NP_ANALYZE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Status codes, from least to most severe (a directory's status is the
 * most severe of its files'). */
enum np_trace_status {
    NP_TRACE_OK = 0,
    NP_TRACE_ETRUNC,    /* the file ends in a partial chunk (or header): cut short */
    NP_TRACE_ECORRUPT,  /* a malformed chunk, string, varint, zstd frame or event */
    NP_TRACE_EVERSION,  /* a format version this reader does not know */
    NP_TRACE_ENOTTRACE, /* not a trace: bad magic, not a regular file, an empty file */
    NP_TRACE_EEMPTY,    /* a directory without any .npt file */
    NP_TRACE_ENOENT,    /* the path cannot be opened */
    NP_TRACE_EIO,       /* a read failed */
    NP_TRACE_ENOMEM,    /* out of memory */
    NP_TRACE_ESTOP,     /* a sink callback returned non-zero */
    NP_TRACE_EOPTION    /* an option the input cannot take (a clock rate for a
                           trace in ns, the second counter of a trace without
                           one): a usage error, nothing read */
};

/* NOTE: not a problem, something the user should know (an exporter
 * merged deep recursion, a trace of a version without checksums). A
 * damaged chunk skipped is a WARNING: the read goes on, the summary
 * counts it. */
enum np_diag_level { NP_DIAG_WARNING, NP_DIAG_ERROR, NP_DIAG_NOTE };

#define NP_TRACE_MSG_MAX 512

/* What a source's times count. A trace's clock counts nanoseconds, or
 * cycles (an emulator's, a cycle counter's); an emulator also counts
 * instructions, which a source gives as the times instead when asked
 * (NP_METRIC_COUNT, source.h). */
enum np_time_unit {
    NP_UNIT_NS,     /* nanoseconds */
    NP_UNIT_CYCLES, /* processor cycles */
    NP_UNIT_INSNS   /* instructions executed */
};
/* Its name as traces and reports write it: "ns", "cycles", "instructions". */
const char *np_time_unit_name(enum np_time_unit u);
/* The unit NAME names (as np_time_unit_name gives it) in *OUT; false when
 * it names none. */
bool np_time_unit_parse(const char *name, enum np_time_unit *out);

/* One recorded process: INFO, plus what END says when the file has one. */
struct np_trace_process {
    const char *file;          /* the .npt file */
    uint32_t pid, ppid;
    double ns_per_tick;        /* the one used for this file's times */
    double info_ns_per_tick;   /* INFO's (the one used when there is no END) */
    uint64_t start_tick;
    uint64_t start_ns;         /* Unix time of start_tick */
    const char *clock;         /* the recording clock's name */
    unsigned argc;
    const char *const *argv;   /* the command line */
    bool has_end;              /* false: the program did not exit normally */
    uint64_t end_ns;           /* END's end tick as Unix ns (has_end) */
    uint64_t events_lost;      /* END's count (has_end) */
    /* What every time of this process counts (and switch_out's
     * durations): NP_UNIT_NS, Unix ns as above; otherwise cycles or
     * instructions, counted from 0 at the start (start_ns 0; end_ns 0
     * when the source does not know the count at the end). A trace's
     * ticks in cycles then have ns_per_tick 1. */
    enum np_time_unit time_unit;
    /* A second counter beside the times, in each event's count: the
     * emulator's instructions beside its cycles (a trace file keeps both,
     * COUNT records: docs/trace-format.md). False: counts are 0. */
    bool counted;
    enum np_time_unit count_unit;
};

/* A MODULE chunk: an ELF file mapped into the process. */
struct np_trace_module {
    uint64_t bias;             /* run-time address = ELF address + bias */
    uint64_t start, end;       /* run-time range of the text */
    const uint8_t *build_id;
    size_t build_id_len;
    const char *path;
};

/* One entry of a BLOCKS chunk: a basic block, named by a run-time address
 * inside it, and the times it ran (docs/blocks.md). */
struct np_trace_block {
    uint64_t address;
    uint64_t count;
};

/* A SAMPLING chunk: how the samples taken from TIME_NS on were taken. It
 * comes before those samples in the file, but samples taken before it may
 * follow it: a sample's setting is the last one at or before its time
 * (with hz > 0). */
struct np_trace_sampling {
    uint64_t time_ns;      /* from when it holds: samples at or after it (a stop: samples
                              already under way may still follow) */
    uint32_t hz;           /* samples per second of a thread's CPU time; 0: sampling stopped */
    unsigned unwinder;     /* NP_UNWIND_PC (0), NP_UNWIND_FP (1) (trace_format.h) */
    uint32_t flags;        /* NP_SAMPLING_CPU_TIME, NP_SAMPLING_RETURN_ADDRS */
    uint64_t period_ns;    /* one period: the time one sample stands for */
    unsigned max_frames;   /* deeper stacks were cut to their innermost frames */
};

/* One event of a batch (np_event_sink.events). The values are the trace
 * format's event kinds (4 is a sample, which comes by itself). */
enum np_sink_event { NP_EVENT_ENTER, NP_EVENT_EXIT, NP_EVENT_LOST, NP_EVENT_SWITCH, NP_EVENT_RESYNC = 5 };
struct np_event {
    uint64_t time_ns;
    uint64_t arg;              /* ENTER: the address; LOST: how many; SWITCH: ns switched out;
                                  RESYNC: how many calls it closes; EXIT: 0 */
    uint32_t kind;             /* enum np_sink_event */
    uint64_t count;            /* the second counter at the event, when the
                                  process is counted (np_trace_process) */
};

/* One value of a VALUES record (docs/trace-format.md): an argument of a
 * call, or its return value. */
struct np_value {
    unsigned index;            /* the argument's number from 1; 0: the return value */
    unsigned format;           /* enum np_value_format (common/trace_format.h) */
    uint64_t v;                /* the value (NP_VAL_INT, NP_VAL_AUTO: as int64_t) */
    const char *str;           /* NP_VAL_STR: LEN bytes, not NUL-terminated */
    size_t len;
};

/* The consumer of events. Strings and structs passed in are valid only
 * during the call. Every callback may be NULL; each returns 0 to go on or
 * non-zero to stop reading (the reader then returns NP_TRACE_ESTOP, or the
 * np_trace_status the callback returned, e.g. NP_TRACE_ENOMEM). */
struct np_event_sink {
    void *ctx;
    int (*begin)(void *ctx, const struct np_trace_process *p);
    int (*module)(void *ctx, const struct np_trace_module *m);
    int (*thread)(void *ctx, uint32_t tid, const char *name);
    int (*enter)(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t address);
    int (*exit)(void *ctx, uint32_t tid, uint64_t time_ns);
    int (*lost)(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n);
    /* switched out for DURATION_NS, ending at TIME_NS */
    int (*switch_out)(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t duration_ns);
    /* The N innermost open calls end at TIME_NS, closed by
     * re-synchronisation: the source missed their returns and found out
     * at a return to a caller further up (their ends are not exact). */
    int (*resync)(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n);
    int (*end)(void *ctx);
    /* A BLOCKS chunk: N basic-block counts and LOST executions the
     * program could not count; a process may have several (counts add). */
    int (*blocks)(void *ctx, const struct np_trace_block *blocks, size_t n, uint64_t lost);
    /* A sample of thread TID: FRAMES[0] is the interrupted PC, FRAMES[1] to
     * FRAMES[N-1] the return addresses of its callers, innermost first
     * (N <= NP_SAMPLE_MAX_FRAMES). PERIODS: timer periods it stands for
     * (1 + the timer's overruns: a period is the last SAMPLING's period_ns);
     * SKIPPED: periods of this thread before it that were not sampled (the
     * thread was in a hook, or had no buffer). N = 0: no sample, PERIODS 0:
     * the SKIPPED periods alone, those after the thread's last sample. */
    int (*sample)(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                  uint64_t periods, uint64_t skipped);
    int (*sampling)(void *ctx, const struct np_trace_sampling *s);
    /* A NAME chunk: ENTRY records at ADDRESS are calls of the region an
     * NP_ENTER(NAME) marks, not of a function at that address. */
    int (*name)(void *ctx, uint64_t address, const char *name);
    /* Optional: when set, the reader gives a thread's events in runs
     * through it in place of enter, exit, lost, switch_out and resync: N
     * events of thread TID, in order, each as that callback would get it.
     * Returns 0, or non-zero with *DONE the events handled before the one
     * that stopped. */
    int (*events)(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done);
    /* Optional, for a sink that writes a trace: N bytes of the input that
     * a source holding them in memory skipped as damage (said, counted),
     * so that it keeps them where they were and a reader of what it
     * writes finds them. A sink with it gets them in place of the loss
     * points they make (that reader makes them). */
    int (*damaged)(void *ctx, const uint8_t *bytes, size_t n);
    /* Optional: a REPORT chunk's record (common/report_format.h), in
     * stream order: its TYPE and its N values (for a type this nanoprof
     * knows, at least as many as the type has: the reader fails a
     * record with fewer; a type it does not know comes as written).
     * NULL: reports are ignored. */
    int (*report)(void *ctx, unsigned type, const uint64_t *values, unsigned n);
    /* Optional: values of thread TID's innermost open call: its arguments
     * (after its enter), or its return value (RETVAL: before its exit).
     * NULL: values are ignored. */
    int (*values)(void *ctx, uint32_t tid, uint64_t time_ns, bool retval, const struct np_value *v, unsigned n);
};

/* How the caller hears about problems and progress; any member may be
 * NULL (the whole struct too). DIAG gets one line, no newline, no prefix. */
struct np_trace_hooks {
    void *ctx;
    void (*diag)(void *ctx, enum np_diag_level level, const char *line);
    /* bytes consumed so far out of TOTAL, over all files; called per chunk */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
};

/* What a read found. */
struct np_trace_summary {
    int status;                     /* the most severe np_trace_status */
    char message[NP_TRACE_MSG_MAX]; /* the line that gave that status ("" if OK) */
    unsigned files;                 /* trace files found */
    unsigned files_read;            /* files whose INFO reached the sink */
    unsigned files_unfinished;      /* files without END (a warning each) */
    unsigned files_unchecked;       /* files of format version 1, without checksums (a note each) */
    unsigned chunks_damaged;        /* chunks skipped as damaged (a warning each) */
    uint64_t bytes_damaged;         /* the bytes skipped with them */
    uint64_t bytes;                 /* their total size */
    uint64_t events;                /* events delivered */
};

/* A short description of a status ("truncated", "not a trace", ...). */
const char *np_trace_strerror(int status);

#endif
