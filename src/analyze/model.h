/* model.h - the one model of a profile that every view and exporter reads.
 *
 * Built from events (struct np_event_sink, from any source), it holds:
 *   - processes and threads (np_process, np_thread);
 *   - the flat profile, one np_function per function: calls, total
 *     (inclusive, each recursion counted once: only the outermost open
 *     activation adds), self (exclusive), min, max and sum of the time of
 *     one call (average = sum / calls, so min <= average <= max);
 *   - the call graph, one np_arc per caller -> callee pair;
 *   - the call tree of each thread, one np_node per path of functions from
 *     the thread's root (a synthetic node, function NP_NONE);
 *   - no call by itself: views that walk every call (replay, the Chrome
 *     export) are told of each as it is read (struct np_call_listener),
 *     so their memory grows with the nesting depth, not with the calls;
 *   - basic-block counts (BLOCKS chunks, docs/blocks.md), one np_block per
 *     block, summed over every process: the block's function and its
 *     source line. Include and exclude patterns keep the blocks of matching
 *     functions / drop them (a block has no caller); the other filters
 *     do not apply to blocks. A function with blocks but no calls has
 *     calls == 0.
 *
 * Rules. Per thread an open-call stack follows ENTRY and EXIT; an EXIT
 * with nothing open is ignored; LOST closes every open call at its time
 * (what follows it is unknown); RESYNC closes the N innermost open calls
 * at its time (the source missed their returns: np_thread, np_function,
 * np_node and np_call count or mark them "resynced"); calls still open
 * when a process's events end close at the thread's last event. np_thread
 * counts the calls closed so at a LOST, at a RESYNC, and at the end of a
 * file cut short (no END): their times are not the real ones. Times are
 * wall time, or what the source counts (np_model_time_unit: cycles,
 * instructions); the "_ns" fields hold them whatever their unit. The time
 * a thread was switched out during a call is kept beside it
 * (switched_ns), and options.exclude_switched takes it out of every
 * duration instead. Times of one thread never run backwards: an earlier
 * time counts as the previous one.
 *
 * Filters are applied while building. A call is kept when its thread is
 * selected (tids), it runs inside a call of an included function (include
 * patterns; the function itself counts), not inside an excluded one (exclude
 * patterns: the function and everything it calls are dropped), at a nesting
 * level below max_depth counted over kept calls, and lasts at least
 * min_duration_ns. A dropped call's time stays in its nearest kept
 * caller's self time, so in every case the self times of all functions
 * add up exactly to the threads' totals (the time of their outermost kept
 * calls).
 *
 * Functions are identified by (module, symbol address): one np_function
 * per function across every process of the trace. C++ names are
 * demangled (unless options.no_demangle): a function is shown by its
 * short name ("Parser::parse", common/demangle.h), its signature kept
 * beside it. Two functions of one short name (overloads, a static
 * function in two files, one name in a program and a library) would
 * print as two identical rows: their names get what tells them apart
 * (np_model_finish), so every view and exporter does: their signatures
 * when these differ ("Parser::parse(int)"), then the module (its file
 * name: "helper [libfoo.so]"), the source file ("twin [a.c]", with more
 * of its path when that is not enough), the function's address in the
 * module ("twin [app:0x1139]", without debug information), the module's
 * whole path. The include and exclude globs match a function's short
 * name, its signature or its mangled name (np_function_matches). Arrays are read-only;
 * indices (uint32_t) link them. Functions and nodes whose calls are all
 * dropped stay in the arrays with calls == 0 (nodes unlinked from the
 * tree): views skip them. */
#ifndef NP_ANALYZE_MODEL_H
#define NP_ANALYZE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbols.h"
#include "events.h"
#include "common/trace_format.h"
#include "patterns.h"
#include "source.h"

#define NP_NONE UINT32_MAX
/* Open calls kept per thread; deeper calls are counted in np_thread.dropped. */
#define NP_MODEL_MAX_STACK (1u << 20)

struct np_call_listener;

struct np_model_options {
    uint32_t *tids;          /* only these threads; none: all */
    size_t ntids;
    char **include;          /* -F: only calls inside matching functions */
    size_t ninclude;
    char **exclude;          /* -N: not matching functions nor their callees */
    size_t nexclude;
    unsigned max_depth;      /* keep nesting levels 0 .. max_depth-1; 0: all */
    uint64_t min_duration_ns;
    bool exclude_switched;   /* durations without the switched-out time */
    bool no_demangle;        /* C++ names as the ELF files have them (mangled) */
    const struct np_call_listener *listener; /* told of every kept call as it is read; NULL: none */
    bool from_samples;       /* build the profile from the samples (below), not the calls */
    struct np_source_options source; /* what np_model_load reads with */
};

enum np_model_opt {
    NP_MODEL_OPT_TID,          /* "12,345": adds threads */
    NP_MODEL_OPT_INCLUDE,      /* a pattern: a glob or a regular expression (common/name_match.h) */
    NP_MODEL_OPT_EXCLUDE,      /* a pattern */
    NP_MODEL_OPT_DEPTH,        /* a positive integer */
    NP_MODEL_OPT_MIN_DURATION  /* "250", "1.5us", "2ms", "1s" */
};

/* Sets one option from command-line text, for every command alike.
 * Returns 0, or -1 with a one-line reason in ERR. */
int np_model_option(struct np_model_options *o, enum np_model_opt opt, const char *value, char *err,
                    size_t errsize);
/* Frees what np_model_option allocated. */
void np_model_options_free(struct np_model_options *o);

struct np_process {
    char *file;              /* the trace file it came from */
    uint32_t pid, ppid;
    char *clock;
    unsigned argc;
    char **argv;
    double ns_per_tick;
    uint64_t start_ns;       /* Unix ns (0 when its times are not ns) */
    uint64_t end_ns;         /* END's time, or its threads' last event's when later
                                (without END, or when the source knows no end) */
    bool complete;           /* the file has END: the program exited normally */
    uint64_t events_lost;    /* as END says */
    uint64_t blocks_lost;    /* block executions not counted (the program's table was full) */
    enum np_time_unit time_unit; /* what its times count */
};

struct np_thread {
    uint32_t process;        /* index into np_model_processes() */
    uint32_t pid, tid;
    char *name;              /* from a THREAD chunk, or NULL */
    uint64_t first_ns, last_ns; /* its first and last event */
    uint64_t calls;          /* calls kept */
    uint64_t total_ns;       /* time of its outermost kept calls */
    uint64_t switched_ns;    /* time switched out */
    uint64_t lost;           /* events lost (LOST records) */
    uint64_t dropped;        /* calls deeper than NP_MODEL_MAX_STACK */
    uint32_t root;           /* its call tree's root node */
    uint64_t closed_at_loss; /* kept calls open at a LOST record, closed there */
    uint64_t closed_at_cut;  /* kept calls open when a file without END ended,
                                closed at the thread's last event */
    uint64_t closed_at_resync; /* kept calls closed by a RESYNC */
    uint64_t unmatched_exits; /* returns with no call open, before any LOST or
                                 RESYNC on the thread: calls that began before
                                 its recording did (at a fork, a task's first
                                 switch, np_trace_init), left out */
};

struct np_function {
    char *name;              /* what views show: the symbol (or the address in hex),
                                with what tells it apart when another function has
                                the same symbol: "helper [libfoo.so]" (np_model_finish) */
    char *symbol;            /* the symbol alone (name itself when not ambiguous):
                                a C++ function's short name */
    char *signature;         /* a C++ function's demangled signature; else symbol itself */
    char *mangled;           /* the name in the ELF file; symbol itself when not demangled */
    char *module;            /* the ELF file, or NULL */
    char *file;              /* source file (DWARF), or NULL */
    unsigned line;
    uint64_t address;        /* ELF address of the symbol (or of the address) */
    uint64_t calls;
    uint64_t total_ns;       /* inclusive; recursive activations counted once */
    uint64_t self_ns;        /* exclusive */
    uint64_t sum_ns;         /* inclusive time summed over every call */
    uint64_t min_ns, max_ns; /* inclusive time of one call */
    uint64_t switched_ns;    /* switched-out time within total_ns */
    uint64_t self_switched_ns; /* switched-out time within self_ns */
    uint64_t resynced;       /* calls of it closed by a RESYNC (among calls) */
};

struct np_arc {
    uint32_t caller;         /* NP_NONE: called from a thread's root */
    uint32_t callee;
    uint64_t calls;
    uint64_t total_ns;       /* inclusive time of these calls */
    uint64_t switched_ns;
    uint64_t outer_ns;       /* of those calls that opened when the callee was not
                                open already (recursion counted once, as in the
                                callee's total_ns): summed over the arcs into a
                                function, its total_ns */
};

struct np_node {
    uint32_t parent;         /* NP_NONE for a thread's root */
    uint32_t function;       /* NP_NONE for a thread's root */
    uint32_t thread;
    uint32_t depth;          /* 0: the root; 1: outermost calls */
    uint32_t first_child, next_sibling, last_child; /* NP_NONE-terminated, in order of first call */
    uint64_t calls;          /* root: its outermost calls */
    uint64_t total_ns;       /* inclusive */
    uint64_t self_ns;        /* exclusive (0 for a root) */
    uint64_t switched_ns;
    uint64_t resynced;       /* its calls closed by a RESYNC */
};

/* One call kept, as a listener is told of it. */
/* The values a call's VALUES records gave (`nanoprof record -A`, `-R`). */
struct np_call_values {
    unsigned nargs;
    struct np_value args[NP_VALUES_MAX];
    bool has_ret;
    struct np_value ret;
    char bytes[NP_VALUES_MAX + 1][NP_VALUE_STR_MAX]; /* the strings' */
};

struct np_call {
    uint32_t thread;
    uint32_t function;
    uint32_t node;
    uint32_t depth;          /* 0: outermost (over kept calls) */
    uint64_t start_ns;
    uint64_t duration_ns;    /* 0 at its begin */
    uint64_t switched_ns;    /* 0 at its begin */
    bool resynced;           /* at its end: closed by a RESYNC (false at its begin) */
    const struct np_call_values *values; /* its arguments and return value, or NULL */
};

struct np_model;

/* The timeline, call by call, while the model reads the trace: what
 * replay and the Chrome export walk, in memory bounded by the nesting
 * depth (the model keeps the open calls only).
 *
 * Every call the model keeps (the filters and rules above) is told once
 * by begin, then by end with its duration. Per thread they nest: a call
 * begins after its callers and ends before them, and a thread's calls
 * come in time order. Threads interleave as the trace's chunks do, the
 * processes one after another. A call begins at its entry; with a
 * minimum duration, once its thread's time has run that long past its
 * start (before its end at the latest), so a call shorter than that,
 * and the calls it made, are never told. The timeline estimated from
 * samples (np_model_estimated) is told at np_model_finish, thread after
 * thread (it is built from the samples, which the model keeps until then).
 *
 * M gives the names, threads and processes known so far (C's indices
 * stay valid). A non-zero return stops the reading: the model tells
 * nothing more and the read ends with NP_TRACE_ESTOP. */
struct np_call_listener {
    void *ctx;
    int (*begin)(void *ctx, const struct np_model *m, const struct np_call *c);
    int (*end)(void *ctx, const struct np_model *m, const struct np_call *c);
    /* Optional: the arguments of call C, begun and not ended, the
     * innermost of its thread, came (C->values). End tells them again,
     * with the return value. */
    int (*values)(void *ctx, const struct np_model *m, const struct np_call *c);
};

struct np_block {
    uint32_t function;       /* its function: index into np_model_functions() */
    char *file;              /* the source file of its line (DWARF), or NULL */
    unsigned line;           /* its line, 0 if unknown */
    uint64_t address;        /* the recorded address, as an ELF address of the function's module */
    uint64_t count;          /* executions */
};

/* A model to build with OPT (copied; the strings and arrays it points to
 * must live until np_model_finish) resolving addresses with SYMS (NULL:
 * every function in hex). NULL when out of memory. */
struct np_model *np_model_new(const struct np_model_options *opt, struct np_symbols *syms);
/* The sink that feeds it. */
struct np_event_sink np_model_sink(struct np_model *m);
/* After the last event: closes open calls, links the tree, tells the
 * listener the timeline estimated from samples. 0, NP_TRACE_ENOMEM, or
 * NP_TRACE_ESTOP when the listener stopped it. */
int np_model_finish(struct np_model *m);
void np_model_free(struct np_model *m);

/* Reads PATH through its source (np_source_for, with options.source) into
 * a finished model, names resolved from the ELF files the source names.
 * Returns the read's status; *OUT is the model (even when the input was
 * damaged: what was read), NULL only when out of memory. SUMMARY and HOOKS may be NULL; symbol warnings go to
 * HOOKS->diag. */
int np_model_load(const char *path, const struct np_model_options *opt, const struct np_trace_hooks *hooks,
                  struct np_model **out, struct np_trace_summary *summary);

const struct np_process *np_model_processes(const struct np_model *m, size_t *n);
const struct np_thread *np_model_threads(const struct np_model *m, size_t *n);
const struct np_function *np_model_functions(const struct np_model *m, size_t *n);
const struct np_arc *np_model_arcs(const struct np_model *m, size_t *n);
const struct np_node *np_model_nodes(const struct np_model *m, size_t *n);
const struct np_block *np_model_blocks(const struct np_model *m, size_t *n);
/* The earliest time read so far (Unix ns): the processes' starts, the
 * threads' first events, and once it is told, the start of the timeline
 * estimated from samples (a sample stands for the period before it).
 * What a timeline taken at its first call can start from: a later
 * process started earlier only if its pid came round again (the files
 * are read by pid). 0 when nothing was read. */
uint64_t np_model_first_ns(const struct np_model *m);
/* What the times count (the first process's unit: a source gives one
 * unit to all; NP_UNIT_NS when nothing was read). */
enum np_time_unit np_model_time_unit(const struct np_model *m);
/* What each include pattern, then each exclude pattern, matched
 * (patterns.h): the functions of the trace it names, and for one that
 * named none, the functions of the trace's ELF files; *FILES (may be
 * NULL): how many files were searched (0 without symbols). */
const struct np_pattern_use *np_model_patterns(const struct np_model *m, size_t *n, unsigned *files);

/* ---- samples (SAMPLE events, docs/sampling.md) ----------------------------
 *
 * Samples of the selected threads (tids) count when their stack is inside
 * an included function (include patterns; any frame) and not inside an
 * excluded one (any frame), as calls do; the other filters do not apply
 * to them. A sample stands for periods * period_ns of its thread's CPU
 * time, period_ns being that of the SAMPLING in force at its time. */

/* Sampled program counters: one row per distinct (module, address) of the
 * interrupted PC (a sample's frames[0]), over every process and thread kept. */
struct np_sample_pc {
    uint32_t function;     /* the function holding it, NP_NONE when none */
    const char *module;    /* its ELF file, NULL when in no module */
    uint64_t address;      /* ELF address (run-time minus the module's bias); run-time when no module */
    uint64_t samples;      /* samples taken there */
    uint64_t periods;      /* timer periods they stand for (each sample: 1 + overruns) */
};
const struct np_sample_pc *np_model_sample_pcs(const struct np_model *m, size_t *n);
/* What the samples were: zeros when the trace has none. */
struct np_model_sampling {
    uint32_t hz;           /* of the first SAMPLING with hz > 0 */
    uint64_t period_ns;
    bool cpu_time;         /* periods of thread CPU time */
    unsigned unwinder;
    uint64_t samples, periods, skipped;
};
const struct np_model_sampling *np_model_sampling(const struct np_model *m);
/* Whether the profile (functions, arcs, nodes, thread totals) was built
 * from the samples (options.from_samples, or a trace whose selected
 * threads have samples but no calls): then times are estimates (samples
 * times their period), a function's, arc's or node's calls are the samples
 * it appears in, min, max and sum are 0, and the listener's timeline has
 * a call per stretch of successive samples that have a frame on their
 * stacks (model_samples.c). Known from the first call told. */
bool np_model_estimated(const struct np_model *m);
/* What every view says of an estimated profile, in BUF: "times estimated
 * from N samples at H Hz (CPU time)", then, when the sampler skipped
 * periods, how many. */
const char *np_model_estimate_label(const struct np_model *m, char *buf, size_t size);
#define NP_ESTIMATE_LABEL_MAX 224

/* Whether F is a function pattern P names (common/name_match.h: a glob
 * or a regular expression): by its symbol, its signature, its mangled
 * name or the name shown. */
bool np_function_matches_pattern(const struct np_function *f, const struct np_name_pattern *p);
/* The same for the pattern PATTERN, prepared for this one question (a
 * pattern that is not valid names nothing). */
bool np_function_matches(const struct np_function *f, const char *pattern);

static inline uint64_t np_function_avg_ns(const struct np_function *f)
{
    return f->calls ? f->sum_ns / f->calls : 0;
}

#endif
