/* dump.c - `nanoprof dump --format=FORMAT`: the model written in another
 * tool's format (src/analyze/export.h; one file per format there), to
 * stdout or, with -o FILE, to FILE only once complete. A binary format
 * is never written to a terminal.
 *
 * A format of every call (chrome) is written as the trace is read (its
 * listener, export.h); dump stands between the model and it to notice
 * the write that fails and stops the reading.
 *
 * Exit: 0; 1 when the trace is unreadable or damaged (what was read is
 * still written to stdout, never to -o's file), holds nothing the format
 * can, or writing failed (0, quietly, for a pipe closed while streaming:
 * the reader had what it wanted); 2 for bad usage; 3 with --strict when
 * anything was lost (the output written all the same). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/export.h"
#include "cli.h"
#include "view.h"
#include "common/trace_format.h"

struct dump {
    struct np_view view;
    const struct np_exporter *format;
    struct np_export_options options;
    unsigned options_given;   /* NP_EXPORT_OPT_* on the command line */
    const char *output;       /* -o, or NULL */
    struct np_call_listener format_listener; /* a streaming format's */
};

static const char *const value_names[] = { "self-ns", "calls", NULL };

static void usage(FILE *out)
{
    fputs("usage: nanoprof dump --format=FORMAT [PATH] [options]\n"
          "\n"
          "Writes the profile of a trace in another tool's format. PATH is a\n"
          "trace directory or one .npt file (default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "formats:\n",
          out);
    for (const struct np_exporter *e = np_exporters; e->name; e++)
        fprintf(out, "  %-10s %s\n", e->name, e->description);
    fputs("\n"
          "options:\n"
          "  --format=FORMAT  one of the formats above\n"
          "  -o, --output=FILE  write FILE (replaced only once complete), not stdout\n"
          "  --value=WHAT   folded: each line's number is self-ns (default) or calls\n"
          "  --per-thread   folded: a frame NAME-TID for the thread below each stack\n"
          "  --bucket=BYTES gmon: bytes of code per histogram bin, a power of two\n"
          "                 from 2 to 1048576 (default 4, more for a large program)\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "docs/exporters.md describes each format and how to open it.\n",
          out);
}

enum { OPT_FORMAT = NP_VIEW_OPT_OWN, OPT_VALUE, OPT_PER_THREAD, OPT_BUCKET };

#define MAX_BUCKET (1u << 20)

/* A power of two from 2 to MAX_BUCKET, in decimal; 0 otherwise. */
static uint64_t parse_bucket(const char *arg)
{
    char *end;
    if (arg[0] < '0' || arg[0] > '9')
        return 0;
    unsigned long long v = strtoull(arg, &end, 10);
    return *end || v < 2 || v > MAX_BUCKET || (v & (v - 1)) ? 0 : v;
}

static int option(void *ctx, int c, const char *arg)
{
    struct dump *d = ctx;
    int v;
    switch (c) {
    case OPT_FORMAT:
        if (!(d->format = np_exporter_find(arg)))
            return np_view_usage_error(&d->view, "unknown format '%s'", arg);
        break;
    case 'o':
        d->output = arg;
        break;
    case OPT_VALUE:
        if (np_view_pick(&d->view, value_names, arg, "value", &v))
            return 2;
        d->options.value = (enum np_export_value)v;
        d->options_given |= NP_EXPORT_OPT_VALUE;
        break;
    case OPT_PER_THREAD:
        d->options.per_thread = true;
        d->options_given |= NP_EXPORT_OPT_PER_THREAD;
        break;
    case OPT_BUCKET:
        if (!(d->options.bucket = parse_bucket(arg)))
            return np_view_usage_error(&d->view, "--bucket=%s: not a power of two from 2 to 1048576", arg);
        d->options_given |= NP_EXPORT_OPT_BUCKET;
        break;
    }
    return 0;
}

/* Options the chosen format does not read are mistakes, not no-ops. */
static int check_options(struct dump *d)
{
    if (!d->format)
        return np_view_usage_error(&d->view, "%s", "which format? --format=FORMAT is required");
    unsigned extra = d->options_given & ~d->format->options;
    if (extra & NP_EXPORT_OPT_VALUE)
        return np_view_usage_error(&d->view, "--value does not apply to format %s", d->format->name);
    if (extra & NP_EXPORT_OPT_PER_THREAD)
        return np_view_usage_error(&d->view, "--per-thread does not apply to format %s", d->format->name);
    if (extra & NP_EXPORT_OPT_BUCKET)
        return np_view_usage_error(&d->view, "--bucket does not apply to format %s", d->format->name);
    if (d->view.opt.exclude_switched && !(d->format->options & NP_EXPORT_OPT_EXCLUDE_SWITCHED))
        return np_view_usage_error(&d->view, "--exclude-switched does not apply to format %s (wall time)",
                                   d->format->name);
    return 0;
}

/* The streaming format's listener, through which a failed write is
 * noticed (errno is still the write's). */
static int stream_begin(void *ctx, const struct np_model *m, const struct np_call *c)
{
    struct dump *d = ctx;
    int rc = d->format_listener.begin(d->format_listener.ctx, m, c);
    if (rc)
        np_view_write_failed(&d->view);
    return rc;
}

static int stream_end(void *ctx, const struct np_model *m, const struct np_call *c)
{
    struct dump *d = ctx;
    int rc = d->format_listener.end(d->format_listener.ctx, m, c);
    if (rc)
        np_view_write_failed(&d->view);
    return rc;
}

static int run(struct dump *d)
{
    struct np_view_output out;
    if (np_view_output_open(&d->view, &out, d->output ? d->output : "-"))
        return 1;
    if ((d->format->options & NP_EXPORT_BINARY) && isatty(fileno(out.file))) {
        np_view_output_close(&d->view, &out, false);
        return np_view_usage_error(&d->view, "format %s is binary data: not written to a terminal (use -o FILE)",
                                   d->format->name);
    }
    d->options.diag = np_view_diag;
    d->options.diag_ctx = &d->view;
    const struct np_call_listener listener = { d, stream_begin, stream_end, NULL };
    if (d->format->listen) {
        if (d->format->listen(&d->options, out.file, &d->format_listener)) {
            fputs("nanoprof dump: out of memory\n", stderr);
            np_view_output_close(&d->view, &out, false);
            return 1;
        }
        d->view.opt.listener = &listener;
        if (isatty(fileno(out.file))) /* the events show the progress */
            np_view_no_progress(&d->view);
    }
    struct np_model *m;
    int rc;
    int failed = np_view_load(&d->view, &m, &rc);
    if (failed) {
        if (d->format->finish)
            d->format->finish(NULL, d->format_listener.ctx);
        np_view_output_close(&d->view, &out, false);
        return failed;
    }
    char label[NP_ESTIMATE_LABEL_MAX];
    if (np_model_estimated(m) && !d->format->labels_estimate)
        fprintf(stderr, "nanoprof dump: %s: %s\n", d->format->name, np_model_estimate_label(m, label, sizeof label));
    char note[NP_VIEW_NOTE_MAX];
    d->options.note = np_view_loss_note(&d->view, note, sizeof note);
    d->options.diag = np_view_diag;
    d->options.diag_ctx = &d->view;
    int written = d->format->finish ? d->format->finish(m, d->format_listener.ctx)
                                    : d->format->write(m, &d->options, out.file);
    int broken = np_view_write_status(&d->view, "the output");
    if (broken >= 0) { /* the reading was stopped: the output is incomplete */
        if (out.file != stdout) /* stdout: said, or a closed pipe, with nothing more to say */
            np_view_output_close(&d->view, &out, false);
        np_model_free(m);
        return broken;
    }
    if (written == NP_EXPORT_ENOMEM)
        fputs("nanoprof dump: out of memory\n", stderr);
    if (written)
        rc = 1;
    if (np_view_output_close(&d->view, &out, rc == 0))
        rc = 1;
    np_model_free(m);
    return rc;
}

int np_cmd_dump(int argc, char **argv)
{
    static const struct np_cli_option options[] = {
        { "format", 0, NP_CLI_VALUE, OPT_FORMAT },
        { "output", 'o', NP_CLI_VALUE, 'o' },
        { "value", 0, NP_CLI_VALUE, OPT_VALUE },
        { "per-thread", 0, NP_CLI_NO_VALUE, OPT_PER_THREAD },
        { "bucket", 0, NP_CLI_VALUE, OPT_BUCKET },
        { NULL, 0, 0, 0 },
    };
    static const struct np_view_spec spec = { options, option, usage, 1 };
    struct dump d = { .options = { .value = NP_EXPORT_SELF_NS } };
    int rc = np_view_parse(&d.view, &spec, &d, argc, argv);
    if (!rc)
        rc = check_options(&d);
    if (!rc)
        rc = np_view_status(&d.view, run(&d));
    np_view_free(&d.view);
    return rc < 0 ? 0 : rc;
}
