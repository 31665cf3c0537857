/* report.c - `nanoprof report`: the flat profile of a trace, one row per
 * function, as text, CSV or JSON.
 *
 * It parses its options (the model's through np_model_option, shared with
 * every command), loads the model with np_model_load, sorts the functions
 * and prints them: it computes nothing itself. Problems in the trace go to
 * stderr as one line each as the reader meets them; what was read before
 * is still reported. Exit: 0, also for a trace cut short or without END
 * (a warning says so); 1 when the trace is unreadable or damaged; 2 for
 * bad usage. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/model.h"
#include "analyze/textfmt.h"
#include "cli.h"
#include "common/trace_format.h"

#define PROGRESS_MIN_BYTES (8u << 20)

enum sort_key { SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_NAME };
enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };

static const char *const sort_names[] = { "total", "self", "calls", "avg", "min", "max", "name", NULL };
static const char *const format_names[] = { "text", "csv", "json", NULL };

struct report {
    const char *path;
    enum sort_key sort;
    enum format format;
    struct np_model_options opt;
    struct np_progress progress;
    bool progress_ready;
};

static void usage(FILE *out)
{
    fputs("usage: nanoprof report [PATH] [options]\n"
          "\n"
          "The flat profile of a trace: per function, total (inclusive) time,\n"
          "self (exclusive) time, calls, and the average, minimum and maximum\n"
          "time of one call. PATH is a trace directory or one .npt file\n"
          "(default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n"
          "  --sort=KEY     total (default), self, calls, avg, min, max or name\n"
          "  --format=FMT   text (default), csv or json\n"
          "  --tid=LIST     only these threads (ids separated by commas)\n"
          "  -F GLOB        only calls made inside functions matching GLOB\n"
          "  -N GLOB        leave out functions matching GLOB and what they call\n"
          "  --depth=N      only calls less than N levels deep\n"
          "  --help         print this help and exit\n"
          "\n"
          "Times are wall time. Recursive calls add to a function's total once.\n",
          out);
}

static int usage_error(const char *fmt, const char *what)
{
    fputs("nanoprof report: ", stderr);
    fprintf(stderr, fmt, what);
    fputs(" (see nanoprof report --help)\n", stderr);
    return 2;
}

static int pick(const char *const *names, const char *value, const char *what, int *out)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], value) == 0) {
            *out = i;
            return 0;
        }
    fprintf(stderr, "nanoprof report: unknown %s '%s' (see nanoprof report --help)\n", what, value);
    return 2;
}

/* Parses ARGV into R; returns 0 to run, 2 for a usage error, -1 after --help. */
static int parse_args(int argc, char **argv, struct report *r)
{
    enum { OPT_SORT = 256, OPT_FORMAT, OPT_TID, OPT_DEPTH, OPT_HELP };
    static const struct option longopts[] = {
        { "sort", required_argument, NULL, OPT_SORT },
        { "format", required_argument, NULL, OPT_FORMAT },
        { "tid", required_argument, NULL, OPT_TID },
        { "depth", required_argument, NULL, OPT_DEPTH },
        { "help", no_argument, NULL, OPT_HELP },
        { NULL, 0, NULL, 0 },
    };
    char err[256];
    int c, v;
    optind = 0; /* glibc: start over, whatever ran before */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hF:N:", longopts, NULL)) != -1) {
        int model_opt = -1;
        switch (c) {
        case OPT_SORT:
            if (pick(sort_names, optarg, "sort key", &v))
                return 2;
            r->sort = (enum sort_key)v;
            break;
        case OPT_FORMAT:
            if (pick(format_names, optarg, "format", &v))
                return 2;
            r->format = (enum format)v;
            break;
        case OPT_TID: model_opt = NP_MODEL_OPT_TID; break;
        case OPT_DEPTH: model_opt = NP_MODEL_OPT_DEPTH; break;
        case 'F': model_opt = NP_MODEL_OPT_INCLUDE; break;
        case 'N': model_opt = NP_MODEL_OPT_EXCLUDE; break;
        case 'h':
        case OPT_HELP:
            usage(stdout);
            return -1;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < OPT_SORT) /* a short one, perhaps in a cluster */
                return usage_error("unknown option '%s'", (char[]){ '-', (char)optopt, 0 });
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (model_opt >= 0 && np_model_option(&r->opt, (enum np_model_opt)model_opt, optarg, err, sizeof err))
            return usage_error("%s", err);
    }
    if (optind < argc)
        r->path = argv[optind++];
    if (optind < argc)
        return usage_error("one trace at a time: unexpected '%s'", argv[optind]);
    return 0;
}

/* ---- reading ----------------------------------------------------------------- */

static void on_diag(void *ctx, enum np_diag_level level, const char *line)
{
    struct report *r = ctx;
    np_progress_done(&r->progress);
    fprintf(stderr, "nanoprof report: %s", level == NP_DIAG_WARNING ? "warning: " : "");
    np_text_field(stderr, line); /* one line, whatever a source says */
    putc('\n', stderr);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct report *r = ctx;
    if (!r->progress_ready) {
        np_progress_init(&r->progress, stderr, total, PROGRESS_MIN_BYTES);
        r->progress_ready = true;
    }
    np_progress_update(&r->progress, done, total);
}

/* ---- sorting -------------------------------------------------------------------- */

struct sort_ctx {
    const struct np_function *fns;
    enum sort_key key;
};

static uint64_t sort_value(const struct np_function *f, enum sort_key key)
{
    switch (key) {
    case SORT_TOTAL: return f->total_ns;
    case SORT_SELF: return f->self_ns;
    case SORT_CALLS: return f->calls;
    case SORT_AVG: return np_function_avg_ns(f);
    case SORT_MIN: return f->min_ns;
    case SORT_MAX: return f->max_ns;
    case SORT_NAME: return 0;
    }
    return 0;
}

/* Largest first; ties (and --sort=name) by name, module, address. */
static int fn_cmp(const void *a, const void *b, void *ctx)
{
    const struct sort_ctx *s = ctx;
    const struct np_function *x = &s->fns[*(const uint32_t *)a], *y = &s->fns[*(const uint32_t *)b];
    uint64_t vx = sort_value(x, s->key), vy = sort_value(y, s->key);
    if (vx != vy)
        return vx > vy ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->module ? x->module : "", y->module ? y->module : "");
    return c ? c : (x->address > y->address) - (x->address < y->address);
}

/* The functions with calls, in report order; NULL when out of memory. */
static uint32_t *sorted_functions(const struct np_model *m, enum sort_key key, size_t *count)
{
    size_t n;
    const struct np_function *fns = np_model_functions(m, &n);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (fns[i].calls)
            order[(*count)++] = (uint32_t)i;
    struct sort_ctx ctx = { fns, key };
    qsort_r(order, *count, sizeof *order, fn_cmp, &ctx);
    return order;
}

/* ---- output ----------------------------------------------------------------------- */

static uint64_t total_calls(const struct np_model *m)
{
    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    uint64_t calls = 0;
    for (size_t i = 0; i < n; i++)
        calls += t[i].calls;
    return calls;
}

static void print_text(const struct report *r, const struct np_model *m, const uint32_t *order, size_t count)
{
    size_t nproc, nthreads;
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    np_model_processes(m, &nproc);
    np_model_threads(m, &nthreads);
    fputs("# ", stdout);
    np_text_field(stdout, r->path);
    printf(": %zu process%s, %zu thread%s, %" PRIu64 " calls of %zu functions, wall time\n", nproc,
           nproc == 1 ? "" : "es", nthreads, nthreads == 1 ? "" : "s", total_calls(m), count);
    printf("%12s %12s %10s %12s %12s %12s  %s\n", "Total", "Self", "Calls", "Average", "Min", "Max", "Function");
    printf("%12s %12s %10s %12s %12s %12s  %s\n", "==========", "==========", "========", "==========",
           "==========", "==========", "========");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        char t[6][NP_DURATION_MAX];
        printf("%12s %12s %10" PRIu64 " %12s %12s %12s  ", np_format_duration(t[0], sizeof t[0], f->total_ns),
               np_format_duration(t[1], sizeof t[1], f->self_ns), f->calls,
               np_format_duration(t[2], sizeof t[2], np_function_avg_ns(f)),
               np_format_duration(t[3], sizeof t[3], f->min_ns), np_format_duration(t[4], sizeof t[4], f->max_ns));
        np_text_field(stdout, f->name);
        putchar('\n');
    }
}

static void print_csv(const struct np_model *m, const uint32_t *order, size_t count)
{
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    puts("function,calls,total_ns,self_ns,min_ns,max_ns,avg_ns,module,file,line");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        np_csv_field(stdout, f->name);
        printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", f->calls, f->total_ns,
               f->self_ns, f->min_ns, f->max_ns, np_function_avg_ns(f));
        np_csv_field(stdout, f->module);
        putchar(',');
        np_csv_field(stdout, f->file);
        if (f->line)
            printf(",%u\n", f->line);
        else
            puts(",");
    }
}

static void json_key(const char *key)
{
    np_json_string(stdout, key);
    putchar(':');
}

static void json_u64(const char *key, uint64_t v, const char *sep)
{
    json_key(key);
    printf("%" PRIu64 "%s", v, sep);
}

static void print_json_processes(const struct np_model *m)
{
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    puts("  \"processes\": [");
    for (size_t i = 0; i < n; i++) {
        fputs("    {", stdout);
        json_key("file");
        np_json_string(stdout, p[i].file);
        putchar(',');
        json_u64("pid", p[i].pid, ",");
        json_u64("ppid", p[i].ppid, ",");
        json_key("command");
        putchar('[');
        for (unsigned a = 0; a < p[i].argc; a++) {
            np_json_string(stdout, p[i].argv[a]);
            fputs(a + 1 < p[i].argc ? "," : "", stdout);
        }
        fputs("],", stdout);
        json_key("clock");
        np_json_string(stdout, p[i].clock);
        printf(",\"ns_per_tick\":%.17g,", p[i].ns_per_tick);
        json_u64("start_ns", p[i].start_ns, ",");
        json_u64("end_ns", p[i].end_ns, ",");
        printf("\"complete\":%s,", p[i].complete ? "true" : "false");
        json_u64("events_lost", p[i].events_lost, "}");
        puts(i + 1 < n ? "," : "");
    }
    puts("  ],");
}

static void print_json_threads(const struct np_model *m)
{
    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    puts("  \"threads\": [");
    for (size_t i = 0; i < n; i++) {
        fputs("    {", stdout);
        json_u64("pid", t[i].pid, ",");
        json_u64("tid", t[i].tid, ",");
        json_key("name");
        np_json_string(stdout, t[i].name);
        putchar(',');
        json_u64("calls", t[i].calls, ",");
        json_u64("total_ns", t[i].total_ns, ",");
        json_u64("switched_ns", t[i].switched_ns, ",");
        json_u64("lost", t[i].lost, "}");
        puts(i + 1 < n ? "," : "");
    }
    puts("  ],");
}

static void print_json(const struct report *r, const struct np_model *m, const struct np_trace_summary *sum,
                       const uint32_t *order, size_t count)
{
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    puts("{");
    fputs("  ", stdout);
    json_key("trace");
    np_json_string(stdout, r->path);
    puts(",");
    fputs("  ", stdout);
    json_key("status");
    np_json_string(stdout, sum->status ? np_trace_strerror(sum->status) : "ok");
    puts(",");
    printf("  \"sort\":\"%s\",\n  \"time\":\"wall\",\n", sort_names[r->sort]);
    print_json_processes(m);
    print_json_threads(m);
    puts("  \"functions\": [");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        fputs("    {", stdout);
        json_key("name");
        np_json_string(stdout, f->name);
        putchar(',');
        json_u64("calls", f->calls, ",");
        json_u64("total_ns", f->total_ns, ",");
        json_u64("self_ns", f->self_ns, ",");
        json_u64("min_ns", f->min_ns, ",");
        json_u64("max_ns", f->max_ns, ",");
        json_u64("avg_ns", np_function_avg_ns(f), ",");
        json_key("module");
        np_json_string(stdout, f->module);
        putchar(',');
        json_key("file");
        np_json_string(stdout, f->file);
        putchar(',');
        json_key("line");
        printf(f->line ? "%u}" : "null}", f->line);
        puts(i + 1 < count ? "," : "");
    }
    puts("  ]");
    puts("}");
}

/* ---- the command ------------------------------------------------------------------ */

static int run(struct report *r)
{
    struct np_trace_hooks hooks = { r, on_diag, on_progress };
    struct np_trace_summary sum;
    struct np_model *m;
    int status = np_model_load(r->path, &r->opt, &hooks, &m, &sum);
    np_progress_done(&r->progress);
    if (!m) {
        fprintf(stderr, "nanoprof report: %s\n", sum.message);
        return 1;
    }
    /* a trace cut short is reported with its warning; other damage fails,
     * after reporting whatever could be read */
    int rc = status > NP_TRACE_ETRUNC ? 1 : 0;
    if (sum.files_read) {
        size_t count;
        uint32_t *order = sorted_functions(m, r->sort, &count);
        if (!order) {
            fputs("nanoprof report: out of memory\n", stderr);
            np_model_free(m);
            return 1;
        }
        if (r->format == FORMAT_TEXT)
            print_text(r, m, order, count);
        else if (r->format == FORMAT_CSV)
            print_csv(m, order, count);
        else
            print_json(r, m, &sum, order, count);
        free(order);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("nanoprof report: writing the report");
            rc = 1;
        }
    } else if (!rc) {
        rc = 1; /* nothing readable at all (its line is out already) */
    }
    np_model_free(m);
    return rc;
}

int np_cmd_report(int argc, char **argv)
{
    struct report r = { .path = NP_TRACE_DEFAULT_PATH, .sort = SORT_TOTAL, .format = FORMAT_TEXT };
    int rc = parse_args(argc, argv, &r);
    if (!rc)
        rc = run(&r);
    np_model_options_free(&r.opt);
    return rc < 0 ? 0 : rc;
}
