/* view.h - what every command that reads a trace shares: the model's
 * options (--tid, -F, -N, --depth, --min-duration, --exclude-switched,
 * --no-demangle)
 * and the source's (--clock, --metric), read through options.h with the
 * command's own, positional arguments, one-line diagnostics, the
 * progress bar, the loading of the model (and the line for a -F or -N
 * pattern that matched no function), and what the times are. A view command (report, graph, tree, replay, dump, flame)
 * then only prints the model. */
#ifndef NP_CLI_VIEW_H
#define NP_CLI_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include "options.h"
#include "analyze/model.h"
#include "analyze/textfmt.h"

#define NP_VIEW_MAX_ARGS 2

/* tree and replay draw nesting this many levels deep at most; a deeper
 * call is drawn at that indentation and says its depth ("[depth N] "), so
 * that the output grows with the calls, not with the square of a deep
 * recursion's depth. */
#define NP_VIEW_DRAWN_LEVELS 100

/* The common options, for every command's --help. */
#define NP_VIEW_OPTIONS_HELP                                                          \
    "  --tid=LIST     only these threads (ids separated by commas)\n"                 \
    "  -F, --filter=PATTERN   only calls made inside functions matching PATTERN (a\n" \
    "                 glob, or a regular expression: docs/analysis.md; a C++\n"      \
    "                 function by its name, Parser::parse, signature or mangled\n"    \
    "                 name)\n"                                                        \
    "  -N, --notrace=PATTERN  leave out functions matching PATTERN and what they\n"  \
    "                 call\n"                                                         \
    "  --depth=N      only the outermost N levels of calls (1: a thread's outermost\n" \
    "                 calls only; with -F, levels count from the function it names)\n" \
    "  --min-duration=TIME  only calls lasting at least TIME (250ns, 1.5us, 2ms;\n"   \
    "                 a bare number of cycles or instructions for a trace of them)\n" \
    "  --exclude-switched   take the time threads were switched out off every call\n" \
    "  --samples      the profile estimated from the trace's samples, not its calls\n" \
    "  --clock=HZ     a trace in cycles shown as time, at HZ cycles per second\n"     \
    "                 (48000000, 48MHz, 1.5GHz)\n"                                     \
    "  --metric=WHAT  what the times are: time (default: the trace's clock, ns or\n"  \
    "                 cycles) or count (its second counter: an emulated run's\n"      \
    "                 instructions)\n"                                                \
    "  --elf=FILE     PATH is the captured output of a Cortex-M firmware that\n"       \
    "                 recorded its trace (np_trace_init), FILE its ELF; as\n"           \
    "                 `nanoprof import PATH --elf FILE` reads it. Or PATH is\n"          \
    "                 qemu-system-arm's log (-d exec,nochain) of FILE's run\n"         \
    "  --no-demangle  C++ names as the program's symbols have them (mangled)\n"    \
    "  --strict       exit with status 3 when the trace lost anything (events\n"        \
    "                 dropped, a file cut short, damaged chunks skipped, ...) or a\n"  \
    "                 -F or -N pattern matched no function; the output is still\n"   \
    "                 written\n"                                                        \
    "  --help         print this help and exit\n"

/* The exit status of --strict when something was lost. */
#define NP_VIEW_EXIT_LOSS 3

/* What a trace lost, counted once it is loaded (np_view_count_loss): any
 * of it makes the numbers around it incomplete, which every view says
 * (one warning on stderr, a note in its header or its format's comment)
 * and --strict turns into NP_VIEW_EXIT_LOSS. */
#define NP_VIEW_LOSS_TIDS 8
struct np_view_loss {
    uint64_t events;          /* events dropped (LOST records; END's count when higher) */
    uint64_t closed;          /* kept calls closed at a loss point or where a file was cut */
    uint64_t too_deep;        /* calls deeper than NP_MODEL_MAX_STACK, not counted */
    uint64_t blocks;          /* block executions not counted (the program's table was full) */
    uint64_t resynced;        /* calls closed by re-synchronisation (ends not exact; marked "(?)") */
    unsigned damaged;         /* chunks skipped as damaged (a checksum failed, a count
                                 that cannot be) */
    uint64_t damaged_bytes;   /* the bytes they took */
    unsigned files_cut;       /* trace files cut short or without END */
    unsigned files;           /* trace files found */
    size_t threads;           /* threads affected */
    size_t nthreads;          /* threads in the model */
    uint32_t tids[NP_VIEW_LOSS_TIDS]; /* the first threads affected */
    bool any;
};

struct np_view {
    const char *cmd;          /* "report": starts every message */
    const char *path;         /* the trace */
    struct np_model_options opt;
    const char *args[NP_VIEW_MAX_ARGS]; /* positional arguments, PATH included */
    int nargs;
    struct np_progress progress;
    bool progress_ready;
    struct np_trace_summary summary;
    int write_error;          /* errno of a write that failed while reading (np_view_write_failed) */
    bool strict;              /* --strict */
    struct np_view_loss loss; /* what the trace lost */
    bool min_duration_unit;   /* --min-duration gave a unit of time (ns, us, ...) */
    char clock_kind[2][96];   /* what the times are with --clock (and switched time taken out) */
    const char *elf;          /* --elf: PATH is a target's capture or a QEMU log, named from this ELF */
    size_t unmatched;         /* -F and -N patterns that matched no function (said) */
};

/* A command's own options (options.h: ids from NP_VIEW_OPT_OWN up, or
 * their letter), handled by OPTION (returns 0, or 2 after a usage error
 * it printed); USAGE prints --help. */
enum { NP_VIEW_OPT_OWN = 1000 };
struct np_view_spec {
    const struct np_cli_option *options; /* may be NULL */
    int (*option)(void *ctx, int c, const char *arg);
    void (*usage)(FILE *out);
    int max_args;             /* positional arguments taken, PATH included */
};

/* Parses ARGV (argv[0] the command name) into V and the command's CTX.
 * Returns 0 to run, 2 after a usage error (message printed), -1 after
 * --help. V->path is the first positional argument, or nanoprof.data. */
int np_view_parse(struct np_view *v, const struct np_view_spec *spec, void *ctx, int argc, char **argv);

/* "nanoprof CMD: <FMT with WHAT> (see nanoprof CMD --help)" on stderr; 2. */
int np_view_usage_error(const struct np_view *v, const char *fmt, const char *what);

/* Picks VALUE from NAMES (NULL-terminated) into *OUT; 2 with a message
 * naming WHAT when it is not one of them. */
int np_view_pick(const struct np_view *v, const char *const *names, const char *value, const char *what, int *out);

/* For commands taking [PATH] [FUNCTION]: with two arguments, the first is
 * the trace; with one, it is the trace when such a file or directory
 * exists or it holds a '/', otherwise the function. Sets v->path; returns the function or
 * NULL. */
const char *np_view_path_and_name(struct np_view *v);

/* Loads the trace into *M, reporting problems on stderr one line each,
 * then what was lost (np_view_count_loss, np_view_warn_loss) and each -F
 * or -N pattern that matched no function (np_view_warn_patterns). Returns 0
 * with *M to print (possibly from a damaged trace, with a warning already
 * out), or the exit status with *M NULL: 1, or 2 when the trace cannot
 * take an option (--clock on a trace in ns, --metric=count on a trace
 * without a second counter, a --min-duration in seconds on one in cycles). *RC is the status to exit
 * with once printed: 1 when the trace was damaged (not merely cut short),
 * else 0 (np_view_status adds --strict's). */
int np_view_load(struct np_view *v, struct np_model **m, int *rc);

/* No progress bar while loading: for a command whose output, on the
 * terminal too, comes while the trace is read. */
void np_view_no_progress(struct np_view *v);

/* ---- losses: one place for every view ---------------------------------------
 *
 * A view that loads through np_view_load has them counted and the warning
 * out; it puts np_view_print_loss in its header (or np_view_loss_note in
 * its format's comment) and returns np_view_status(v, rc). A view that
 * reads otherwise fills v->loss and calls np_view_warn_loss itself. */

/* Counts what M (and v->summary) say was lost into v->loss. With --tid,
 * only the selected threads' LOST records count. */
void np_view_count_loss(struct np_view *v, const struct np_model *m);
/* When anything was lost, one line on stderr: "nanoprof CMD: warning: 7
 * events lost in 1 of 2 threads (tid 100); calls around the losses are
 * closed at the loss points". */
void np_view_warn_loss(struct np_view *v);
/* Returns of calls the trace never saw begin (np_thread.unmatched_exits):
 * one note on stderr, not a loss (--strict lets it pass): nothing was
 * dropped, the calls began before recording. */
void np_view_note_unmatched_exits(struct np_view *v, const struct np_model *m);
/* The note for a header or a comment ("7 events lost in 1 thread: counts
 * and times around the losses are incomplete") in BUF; NULL when nothing
 * was lost. */
#define NP_VIEW_NOTE_MAX 512
const char *np_view_loss_note(const struct np_view *v, char *buf, size_t size);
/* "PREFIX<note>\n" on OUT when anything was lost; nothing otherwise. */
void np_view_print_loss(const struct np_view *v, FILE *out, const char *prefix);
/* One warning line per -F or -N pattern that matched no function of the
 * trace (np_cli_say_unmatched): none of the functions it holds, nor any of
 * its ELF files' symbol tables; or only functions of those files that
 * the trace has no call of. Counted in v->unmatched. */
void np_view_warn_patterns(struct np_view *v, const struct np_model *m);
/* The status to exit with: RC, or NP_VIEW_EXIT_LOSS when RC is 0, --strict
 * was given and something was lost or a pattern matched nothing. */
int np_view_status(const struct np_view *v, int rc);

/* The threads of M as every view counts them, in BUF: "2 threads", or
 * "301 threads (262 with no calls recorded)" when some have none ("kept"
 * when filters dropped calls, "samples" in an estimated profile). */
const char *np_view_threads(const struct np_view *v, const struct np_model *m, char *buf, size_t size);

/* A diagnostic LINE for V (CTX), as the loading reports them:
 * "nanoprof CMD: [warning: |note: ]LINE" on stderr, control characters
 * shown; none once a write failed (np_view_write_failed). */
void np_view_diag(void *ctx, enum np_diag_level level, const char *line);

/* For a command that writes as it reads (a listener, model.h): a write
 * failed, with errno telling why, and the listener stops the read. The
 * reading then says nothing more, and np_view_write_status tells the
 * exit status. */
void np_view_write_failed(struct np_view *v);
/* After such a failure: 0 quietly for a closed pipe (a reader such as
 * `head` had what it wanted), otherwise 1 with "writing WHAT failed: ..."
 * on stderr. -1 when no write failed. */
int np_view_write_status(const struct np_view *v, const char *what);

/* T as `thread TID "NAME" (pid PID)` (no name when it has none), on one
 * line without its end: the label tree and replay give each thread. */
void np_view_print_thread(FILE *out, const struct np_thread *t);

/* For a profile estimated from samples (np_model_estimated), the line
 * "PREFIXtimes estimated from N samples at H Hz (CPU time)\n" on OUT;
 * nothing otherwise. */
void np_view_print_estimate(FILE *out, const struct np_model *m, const char *prefix);
/* What the times are: "wall time", "cycles", "instructions", "time from
 * cycles at 48 MHz" (--clock), or "CPU time (estimated)" from samples. */
const char *np_view_time_kind(const struct np_view *v, const struct np_model *m);
/* A time of M (its unit: np_model_time_unit) into BUF (NP_DURATION_MAX
 * bytes), as np_format_time writes it. */
char *np_view_time(char *buf, size_t size, const struct np_model *m, uint64_t value);
/* The mark of a function or node some of whose calls were closed by
 * re-synchronisation: " (?)" when RESYNCED, else "". */
const char *np_view_resync_mark(uint64_t resynced);
/* The heading of the calls column: "Samples" for an estimated profile. */
const char *np_view_calls_heading(const struct np_model *m, const char *calls);

/* Flushes OUT; 0, or 1 with a message when writing failed. */
int np_view_flush(const struct np_view *v, FILE *out, const char *what);

/* An output file that appears whole or not at all: written beside PATH
 * under a temporary name, renamed over PATH once complete (over the file
 * a symbolic link names). PATH "-" is stdout; a device or a pipe is
 * written directly. */
struct np_view_output {
    FILE *file;
    const char *path;
    char *tmp;                /* the temporary file, or NULL */
    char *resolved;           /* PATH with links resolved, or NULL */
};
/* Opens O on PATH; 0, or 1 with a message ("cannot write PATH: ..."). */
int np_view_output_open(const struct np_view *v, struct np_view_output *o, const char *path);
/* Closes O: with OK and nothing failed, the file takes PATH's place;
 * otherwise the temporary file goes. 0, or 1 (with a message when the
 * failure was in writing). */
int np_view_output_close(const struct np_view *v, struct np_view_output *o, bool ok);

void np_view_free(struct np_view *v);

#endif
