/* replay.c - `nanoprof replay`: every call of a trace in the order it was
 * made, thread by thread.
 *
 * The model keeps the timeline (options.timeline), sorted by thread,
 * start and depth, so a caller's line comes before its callees'. Each
 * call is one line: its start in seconds since its process started (to
 * the nanosecond, so that lines order as the calls did), its duration and
 * its name indented two spaces per nesting level. One line per call with
 * the duration on it, rather than separate entry and exit lines, keeps a
 * call and its time together and the output half as long. Exit: as
 * report. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "view.h"
#include "common/trace_format.h"

static void usage(FILE *out)
{
    fputs("usage: nanoprof replay [PATH] [options]\n"
          "\n"
          "Every call of a trace in the order it was made, thread by thread: a\n"
          "line per thread, then a line per call with its start (seconds since\n"
          "its process started), its duration, and its name indented two spaces\n"
          "per nesting level. PATH is a trace directory or one .npt file\n"
          "(default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time.\n",
          out);
}

/* NS after BASE as seconds with nine decimals ("-" before, should a clock
 * disagree with the process's start). */
static void print_start(uint64_t ns, uint64_t base)
{
    char text[48];
    uint64_t d = ns >= base ? ns - base : base - ns;
    snprintf(text, sizeof text, "%s%" PRIu64 ".%09" PRIu64, ns >= base ? "" : "-", d / 1000000000u,
             d % 1000000000u);
    printf("%14s", text);
}

static void print_timeline(const struct np_view *v, const struct np_model *m)
{
    size_t ncalls, nthreads;
    const struct np_call *calls = np_model_calls(m, &ncalls);
    const struct np_thread *th = np_model_threads(m, &nthreads);
    const struct np_process *procs = np_model_processes(m, &(size_t){ 0 });
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    char threads[96];
    fputs("# ", stdout);
    np_text_field(stdout, v->path);
    printf(": %zu calls in %s, %s\n", ncalls, np_view_threads(v, m, threads, sizeof threads), np_view_time_kind(v, m));
    np_view_print_loss(v, stdout, "# ");
    if (np_model_estimated(m))
        puts("# each call spans the successive samples its frame was on the stack in");
    np_view_print_estimate(stdout, m, "# ");
    printf("%14s %12s  %s\n", "Start", "Duration", "Function");
    uint32_t thread = NP_NONE;
    uint64_t base = 0;
    for (size_t i = 0; i < ncalls; i++) {
        const struct np_call *c = &calls[i];
        if (c->thread != thread) {
            char t[NP_DURATION_MAX];
            thread = c->thread;
            base = procs[th[thread].process].start_ns;
            fputs("# ", stdout);
            np_view_print_thread(stdout, &th[thread]);
            printf(": %" PRIu64 " call%s, %s\n", th[thread].calls, th[thread].calls == 1 ? "" : "s",
                   np_format_duration(t, sizeof t, th[thread].total_ns));
        }
        char d[NP_DURATION_MAX];
        print_start(c->start_ns, base);
        bool cut = c->depth > NP_VIEW_DRAWN_LEVELS;
        printf(" %12s  %*s", np_format_duration(d, sizeof d, c->duration_ns),
               (int)(2 * (cut ? NP_VIEW_DRAWN_LEVELS : c->depth)), "");
        if (cut)
            printf("[depth %" PRIu32 "] ", c->depth + 1);
        np_text_field(stdout, fns[c->function].name);
        putchar('\n');
    }
}

static int run(struct np_view *v)
{
    struct np_model *m;
    int rc;
    v->opt.timeline = true;
    if (np_view_load(v, &m, &rc))
        return 1;
    print_timeline(v, m);
    if (np_view_flush(v, stdout, "the timeline"))
        rc = 1;
    np_model_free(m);
    return rc;
}

int np_cmd_replay(int argc, char **argv)
{
    static const struct np_view_spec spec = { NULL, NULL, NULL, usage, 1 };
    struct np_view v = { .cmd = NULL };
    int rc = np_view_parse(&v, &spec, NULL, argc, argv);
    if (!rc)
        rc = np_view_status(&v, run(&v));
    np_view_free(&v);
    return rc < 0 ? 0 : rc;
}
