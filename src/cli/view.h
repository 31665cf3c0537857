/* view.h - what every command that reads a trace shares: the model's
 * options (--tid, -F, -N, --depth, --min-duration, --exclude-switched),
 * positional arguments, one-line diagnostics, the progress bar and the
 * loading of the model. A view command (report, graph, tree, replay,
 * dump, flame) then only prints the model. */
#ifndef NP_CLI_VIEW_H
#define NP_CLI_VIEW_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
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
    "  -F GLOB        only calls made inside functions matching GLOB\n"               \
    "  -N GLOB        leave out functions matching GLOB and what they call\n"         \
    "  --depth=N      only the outermost N levels of calls (1: a thread's outermost\n" \
    "                 calls only; with -F, levels count from the function it names)\n" \
    "  --min-duration=TIME  only calls lasting at least TIME (250ns, 1.5us, 2ms)\n"   \
    "  --exclude-switched   take the time threads were switched out off every call\n" \
    "  --samples      the profile estimated from the trace's samples, not its calls\n" \
    "  --help         print this help and exit\n"

struct np_view {
    const char *cmd;          /* "report": starts every message */
    const char *path;         /* the trace */
    struct np_model_options opt;
    const char *args[NP_VIEW_MAX_ARGS]; /* positional arguments, PATH included */
    int nargs;
    struct np_progress progress;
    bool progress_ready;
    struct np_trace_summary summary;
};

/* A command's own options: getopt's short string (without the common
 * ones) and long options (NULL-terminated, values from NP_VIEW_OPT_OWN
 * up or single characters), handled by OPTION (returns 0, or 2 after a
 * usage error it printed); USAGE prints --help. */
enum { NP_VIEW_OPT_OWN = 1000 };
struct np_view_spec {
    const char *shortopts;
    const struct option *longopts;
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

/* Loads the trace into *M, reporting problems on stderr one line each.
 * Returns 0 with *M to print (possibly from a damaged trace, with a
 * warning already out), or the exit status (1) with *M NULL. *RC is the
 * status to exit with once printed: 1 when the trace was damaged
 * (not merely cut short), else 0. */
int np_view_load(struct np_view *v, struct np_model **m, int *rc);

/* A diagnostic LINE for V (CTX), as the loading reports them:
 * "nanoprof CMD: [warning: ]LINE" on stderr, control characters shown. */
void np_view_diag(void *ctx, enum np_diag_level level, const char *line);

/* T as `thread TID "NAME" (pid PID)` (no name when it has none), on one
 * line without its end: the label tree and replay give each thread. */
void np_view_print_thread(FILE *out, const struct np_thread *t);

/* For a profile estimated from samples (np_model_estimated), the line
 * "PREFIXtimes estimated from N samples at H Hz (CPU time)\n" on OUT;
 * nothing otherwise. */
void np_view_print_estimate(FILE *out, const struct np_model *m, const char *prefix);
/* What the times are: "wall time", or "CPU time (estimated)" from samples. */
const char *np_view_time_kind(const struct np_view *v, const struct np_model *m);
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
