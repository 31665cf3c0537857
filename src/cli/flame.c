/* flame.c - `nanoprof flame`: the call tree of a trace as a self-contained
 * SVG flame graph (src/analyze/flame_svg.c draws it; docs/flame.md).
 *
 * It parses its options, loads the model through view.c and hands it to
 * np_flame_svg. The SVG is written beside the output path under a
 * temporary name and renamed into place, so a failure never leaves half
 * a file. Exit: 0; 1 when the trace is unreadable or damaged (the graph
 * of what was read is still written) or the output cannot be written;
 * 2 for bad usage. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "view.h"
#include "analyze/flame_svg.h"
#include "common/trace_format.h"

#define MAX_WIDTH 100000u

struct flame {
    struct np_view view;
    const char *output;
    struct np_flame_options svg;
};

static void usage(FILE *out)
{
    fputs("usage: nanoprof flame [PATH] -o FILE.svg [options]\n"
          "\n"
          "The call tree of a trace as an SVG flame graph: one box per path of\n"
          "calls, as wide as its inclusive time, callers below callees; \"all\" at\n"
          "the base, then one box per thread (PID/TID NAME). Open it in a browser:\n"
          "hover for the numbers, click to zoom, Search or Ctrl-F to highlight.\n"
          "PATH is a trace directory or one .npt file (default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n"
          "  -o, --output=FILE  write the SVG to FILE (required; - for stdout)\n"
          "  --title=TEXT   the title (default \"Flame Graph\")\n"
          "  --width=PX     the width of the image (default 1200)\n"
          "  --min-width=W  leave out boxes narrower than W pixels, or W% of the\n"
          "                 width with a % sign (default 0.1%)\n"
          "  --inverted     an icicle graph: the base at the top, callees below\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time, or what the trace counts (cycles, instructions),\n"
          "as the subtitle says. A frame some of whose calls were closed by\n"
          "re-synchronisation (their returns missed) has \"(?)\" after its name.\n",
          out);
}

enum { OPT_TITLE = NP_VIEW_OPT_OWN, OPT_WIDTH, OPT_MIN_WIDTH, OPT_INVERTED };

static int parse_min_width(struct flame *f, const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    bool percent = *end == '%';
    if (end == arg || !isfinite(v) || v < 0 || *(end + percent) || (percent && v > 100))
        return np_view_usage_error(&f->view, "bad --min-width '%s' (pixels, or a percentage with %%)", arg);
    f->svg.min_width = v;
    f->svg.min_width_percent = percent;
    return 0;
}

static int option(void *ctx, int c, const char *arg)
{
    struct flame *f = ctx;
    char *end;
    switch (c) {
    case 'o':
        f->output = arg;
        return 0;
    case OPT_TITLE:
        f->svg.title = arg;
        return 0;
    case OPT_WIDTH: {
        unsigned long w = strtoul(arg, &end, 10);
        if (end == arg || *end || *arg == '-' || w < NP_FLAME_MIN_WIDTH || w > MAX_WIDTH)
            return np_view_usage_error(&f->view, "bad --width '%s' (pixels, 100 to 100000)", arg);
        f->svg.width = (unsigned)w;
        return 0;
    }
    case OPT_MIN_WIDTH:
        return parse_min_width(f, arg);
    case OPT_INVERTED:
        f->svg.inverted = true;
        return 0;
    }
    return 2;
}

/* The output is opened first: an unwritable path fails before a long load. */
static int run(struct flame *f)
{
    struct np_view_output out;
    if (np_view_output_open(&f->view, &out, f->output))
        return 1;
    struct np_model *m;
    int rc;
    int failed = np_view_load(&f->view, &m, &rc);
    if (failed) {
        np_view_output_close(&f->view, &out, false);
        return failed;
    }
    char *subtitle, label[NP_ESTIMATE_LABEL_MAX];
    if (asprintf(&subtitle, "%s, %s", f->view.path,
                 np_model_estimated(m) ? np_model_estimate_label(m, label, sizeof label)
                                       : np_view_time_kind(&f->view, m)) < 0)
        subtitle = NULL;
    f->svg.subtitle = subtitle;
    char note[NP_VIEW_NOTE_MAX];
    f->svg.note = np_view_loss_note(&f->view, note, sizeof note);
    struct np_flame_stats stats;
    bool ok = np_flame_svg(out.file, m, &f->svg, &stats) == 0;
    if (!ok)
        fputs("nanoprof flame: out of memory\n", stderr);
    else if (stats.merged[0])
        np_view_diag(&f->view, NP_DIAG_NOTE, stats.merged);
    if (np_view_output_close(&f->view, &out, ok))
        rc = 1;
    free(subtitle);
    np_model_free(m);
    return rc;
}

int np_cmd_flame(int argc, char **argv)
{
    static const struct np_cli_option options[] = {
        { "output", 'o', NP_CLI_VALUE, 'o' },
        { "title", 0, NP_CLI_VALUE, OPT_TITLE },
        { "width", 0, NP_CLI_VALUE, OPT_WIDTH },
        { "min-width", 0, NP_CLI_VALUE, OPT_MIN_WIDTH },
        { "inverted", 0, NP_CLI_NO_VALUE, OPT_INVERTED },
        { NULL, 0, 0, 0 },
    };
    static const struct np_view_spec spec = { options, option, usage, 1 };
    struct flame f = { .svg = { .width = NP_FLAME_WIDTH, .min_width = 0.1, .min_width_percent = true } };
    int rc = np_view_parse(&f.view, &spec, &f, argc, argv);
    if (!rc && !f.output)
        rc = np_view_usage_error(&f.view, "%s", "no output file: -o FILE.svg, or -o - for stdout");
    if (!rc)
        rc = np_view_status(&f.view, run(&f));
    np_view_free(&f.view);
    return rc < 0 ? 0 : rc;
}
