/* report.c - `nanoprof report`: the flat profile of a trace, one row per
 * function, as text, CSV or JSON.
 *
 * It parses its options (the model's through np_model_option, shared with
 * every command), loads the model with np_model_load, sorts the functions
 * and prints them: it computes nothing itself. Problems in the trace go to
 * stderr as one line each as the reader meets them; what was read before
 * is still reported. Exit: 0, also for a trace cut short or without END
 * (a warning says so); 1 when the trace is unreadable or damaged; 2 for
 * bad usage; 3 with --strict when anything was lost (view.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "view.h"
#include "common/trace_format.h"

enum sort_key { SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_NAME };
enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };

static const char *const sort_names[] = { "total", "self", "calls", "avg", "min", "max", "name", NULL };
static const char *const format_names[] = { "text", "csv", "json", NULL };

struct report {
    struct np_view view;
    enum sort_key sort;
    enum format format;
    FILE *out;               /* stdout; stderr for `emu --report` */
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
          "  --format=FMT   text (default), csv or json\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time, or what the trace counts (cycles, instructions),\n"
          "as the first line says. Recursive calls add to a function's total once.\n"
          "A function some of whose calls were closed by re-synchronisation (their\n"
          "returns missed, their ends not exact) has \"(?)\" after its name, and a\n"
          "Resync column counts them.\n"
          "With --samples (and for a trace with samples but no calls), times are\n"
          "estimated from the samples, labelled so; the calls column counts the\n"
          "samples a function appears in, and min, max and average are '-'.\n",
          out);
}

enum { OPT_SORT = NP_VIEW_OPT_OWN, OPT_FORMAT };

static int option(void *ctx, int c, const char *arg)
{
    struct report *r = ctx;
    int v;
    if (c == OPT_SORT) {
        if (np_view_pick(&r->view, sort_names, arg, "sort key", &v))
            return 2;
        r->sort = (enum sort_key)v;
    } else if (c == OPT_FORMAT) {
        if (np_view_pick(&r->view, format_names, arg, "format", &v))
            return 2;
        r->format = (enum format)v;
    }
    return 0;
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

/* A duration, or "-" where an estimated profile has none (per call). */
static const char *per_call(char *buf, size_t size, const struct np_model *m, bool estimated, uint64_t ns)
{
    return estimated ? "-" : np_view_time(buf, size, m, ns);
}

/* Whether some of the functions in ORDER had calls closed by
 * re-synchronisation: the text then has a column for them. */
static bool any_resynced(const struct np_function *fns, const uint32_t *order, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (fns[order[i]].resynced)
            return true;
    return false;
}

static void print_text(FILE *out, const struct report *r, const struct np_model *m, const uint32_t *order, size_t count)
{
    size_t nproc;
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    const struct np_model_sampling *sampling = np_model_sampling(m);
    bool est = np_model_estimated(m);
    char threads[96];
    np_model_processes(m, &nproc);
    fputs("# ", out);
    np_text_field(out, r->view.path);
    fprintf(out, ": %zu process%s, %s, %" PRIu64 " %s of %zu functions, %s\n", nproc, nproc == 1 ? "" : "es",
           np_view_threads(&r->view, m, threads, sizeof threads), total_calls(m), est ? "samples" : "calls", count,
           np_view_time_kind(&r->view, m));
    np_view_print_estimate(out, m, "# ");
    np_view_print_loss(&r->view, out, "# ");
    if (!est && sampling->samples)
        fprintf(out, "# the trace also holds %" PRIu64 " samples: --samples shows the profile estimated from them\n",
               sampling->samples);
    bool resync = any_resynced(fns, order, count);
    fprintf(out, "%12s %12s %10s %12s %12s %12s  ", "Total", "Self", np_view_calls_heading(m, "Calls"), "Average", "Min",
           "Max");
    if (resync)
        fprintf(out, "%8s  ", "Resync");
    fprintf(out, "%s\n", "Function");
    fprintf(out, "%12s %12s %10s %12s %12s %12s  ", "==========", "==========", "========", "==========", "==========",
           "==========");
    if (resync)
        fprintf(out, "%8s  ", "======");
    fprintf(out, "%s\n", "========");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        char t[6][NP_DURATION_MAX];
        fprintf(out, "%12s %12s %10" PRIu64 " %12s %12s %12s  ", np_view_time(t[0], sizeof t[0], m, f->total_ns),
               np_view_time(t[1], sizeof t[1], m, f->self_ns), f->calls,
               per_call(t[2], sizeof t[2], m, est, np_function_avg_ns(f)),
               per_call(t[3], sizeof t[3], m, est, f->min_ns), per_call(t[4], sizeof t[4], m, est, f->max_ns));
        if (resync)
            fprintf(out, "%8" PRIu64 "  ", f->resynced);
        np_text_field(out, f->name);
        fprintf(out, "%s\n", np_view_resync_mark(f->resynced));
    }
}

static void print_csv(FILE *out, const struct np_model *m, const uint32_t *order, size_t count)
{
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    bool est = np_model_estimated(m);
    /* estimated: calls are samples, and a sample has no duration of its own */
    const char *unit = np_time_unit_name(np_model_time_unit(m));
    /* the columns keep their names whatever the unit: time_unit says it */
    fprintf(out, "%s\n", "function,calls,total_ns,self_ns,min_ns,max_ns,avg_ns,module,file,line,source,time_unit,resynced");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        np_csv_field(out, f->name);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", f->calls, f->total_ns, f->self_ns);
        if (est)
            fputs(",,,", out);
        else
            fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", f->min_ns, f->max_ns, np_function_avg_ns(f));
        np_csv_field(out, f->module);
        fputc(',', out);
        np_csv_field(out, f->file);
        if (f->line)
            fprintf(out, ",%u", f->line);
        else
            fputc(',', out);
        fprintf(out, "%s,%s,%" PRIu64 "\n", est ? ",samples" : ",calls", unit, f->resynced);
    }
}

static void json_key(FILE *out, const char *key)
{
    np_json_string(out, key);
    fputc(':', out);
}

static void json_u64(FILE *out, const char *key, uint64_t v, const char *sep)
{
    json_key(out, key);
    fprintf(out, "%" PRIu64 "%s", v, sep);
}

static void print_json_processes(FILE *out, const struct np_model *m)
{
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    fprintf(out, "%s\n", "  \"processes\": [");
    for (size_t i = 0; i < n; i++) {
        fputs("    {", out);
        json_key(out, "file");
        np_json_string(out, p[i].file);
        fputc(',', out);
        json_u64(out, "pid", p[i].pid, ",");
        json_u64(out, "ppid", p[i].ppid, ",");
        json_key(out, "command");
        fputc('[', out);
        for (unsigned a = 0; a < p[i].argc; a++) {
            np_json_string(out, p[i].argv[a]);
            fputs(a + 1 < p[i].argc ? "," : "", out);
        }
        fputs("],", out);
        json_key(out, "clock");
        np_json_string(out, p[i].clock);
        fprintf(out, ",\"ns_per_tick\":%.17g,", p[i].ns_per_tick);
        json_u64(out, "start_ns", p[i].start_ns, ",");
        json_u64(out, "end_ns", p[i].end_ns, ",");
        fprintf(out, "\"complete\":%s,", p[i].complete ? "true" : "false");
        json_u64(out, "events_lost", p[i].events_lost, ",");
        json_key(out, "time_unit");
        np_json_string(out, np_time_unit_name(p[i].time_unit));
        fputc('}', out);
        fprintf(out, "%s\n", i + 1 < n ? "," : "");
    }
    fprintf(out, "%s\n", "  ],");
}

static void print_json_threads(FILE *out, const struct np_model *m)
{
    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    fprintf(out, "%s\n", "  \"threads\": [");
    for (size_t i = 0; i < n; i++) {
        fputs("    {", out);
        json_u64(out, "pid", t[i].pid, ",");
        json_u64(out, "tid", t[i].tid, ",");
        json_key(out, "name");
        np_json_string(out, t[i].name);
        fputc(',', out);
        json_u64(out, "calls", t[i].calls, ",");
        json_u64(out, "total_ns", t[i].total_ns, ",");
        json_u64(out, "switched_ns", t[i].switched_ns, ",");
        json_u64(out, "lost", t[i].lost, ",");
        json_u64(out, "closed_at_loss", t[i].closed_at_loss, ",");
        json_u64(out, "closed_at_cut", t[i].closed_at_cut, ",");
        json_u64(out, "closed_at_resync", t[i].closed_at_resync, ",");
        json_u64(out, "unmatched_exits", t[i].unmatched_exits, "}");
        fprintf(out, "%s\n", i + 1 < n ? "," : "");
    }
    fprintf(out, "%s\n", "  ],");
}

static void print_json(FILE *out, const struct report *r, const struct np_model *m, const struct np_trace_summary *sum,
                       const uint32_t *order, size_t count)
{
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    fprintf(out, "%s\n", "{");
    fputs("  ", out);
    json_key(out, "trace");
    np_json_string(out, r->view.path);
    fprintf(out, "%s\n", ",");
    fputs("  ", out);
    json_key(out, "status");
    np_json_string(out, sum->status ? np_trace_strerror(sum->status) : "ok");
    fprintf(out, "%s\n", ",");
    const struct np_model_sampling *s = np_model_sampling(m);
    bool est = np_model_estimated(m);
    fprintf(out, "  \"sort\":\"%s\",\n  \"time\":\"%s\",\n  \"time_unit\":\"%s\",\n  \"source\":\"%s\",\n",
           sort_names[r->sort], est && s->cpu_time ? "cpu" : "wall", np_time_unit_name(np_model_time_unit(m)),
           est ? "samples" : "calls");
    if (est) {
        char label[NP_ESTIMATE_LABEL_MAX];
        fputs("  \"estimate\":", out);
        np_json_string(out, np_model_estimate_label(m, label, sizeof label));
        fprintf(out, "%s\n", ",");
    }
    fprintf(out, "  \"sampling\":{\"hz\":%" PRIu32 ",\"period_ns\":%" PRIu64 ",\"cpu_time\":%s,\"samples\":%" PRIu64
           ",\"periods\":%" PRIu64 ",\"skipped\":%" PRIu64 "},\n",
           s->hz, s->period_ns, s->cpu_time ? "true" : "false", s->samples, s->periods, s->skipped);
    const struct np_view_loss *l = &r->view.loss;
    char note[NP_VIEW_NOTE_MAX];
    fprintf(out, "  \"loss\":{\"events\":%" PRIu64 ",\"threads\":%zu,\"closed_calls\":%" PRIu64 ",\"files_cut\":%u,"
           "\"too_deep\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"resynced\":%" PRIu64 ",\"damaged_chunks\":%u,"
           "\"damaged_bytes\":%" PRIu64 ",\"note\":",
           l->events, l->threads, l->closed, l->files_cut, l->too_deep, l->blocks, l->resynced, l->damaged,
           l->damaged_bytes);
    np_json_string(out, np_view_loss_note(&r->view, note, sizeof note));
    fprintf(out, "%s\n", "},");
    print_json_processes(out, m);
    print_json_threads(out, m);
    fprintf(out, "%s\n", "  \"functions\": [");
    for (size_t i = 0; i < count; i++) {
        const struct np_function *f = &fns[order[i]];
        fputs("    {", out);
        json_key(out, "name");
        np_json_string(out, f->name);
        fputc(',', out);
        json_key(out, "symbol");
        np_json_string(out, f->symbol);
        fputc(',', out);
        json_key(out, "signature");
        np_json_string(out, f->signature);
        fputc(',', out);
        json_key(out, "mangled");
        np_json_string(out, f->mangled);
        fputc(',', out);
        json_u64(out, "calls", f->calls, ",");
        json_u64(out, "total_ns", f->total_ns, ",");
        json_u64(out, "self_ns", f->self_ns, ",");
        json_u64(out, "resynced", f->resynced, ",");
        if (est) {
            fputs("\"min_ns\":null,\"max_ns\":null,\"avg_ns\":null,", out);
        } else {
            json_u64(out, "min_ns", f->min_ns, ",");
            json_u64(out, "max_ns", f->max_ns, ",");
            json_u64(out, "avg_ns", np_function_avg_ns(f), ",");
        }
        json_key(out, "module");
        np_json_string(out, f->module);
        fputc(',', out);
        json_key(out, "file");
        np_json_string(out, f->file);
        fputc(',', out);
        json_key(out, "line");
        fprintf(out, f->line ? "%u}" : "null}", f->line);
        fprintf(out, "%s\n", i + 1 < count ? "," : "");
    }
    fprintf(out, "%s\n", "  ]");
    fprintf(out, "%s\n", "}");
}

/* ---- the command ------------------------------------------------------------------ */

static int run(struct report *r)
{
    struct np_model *m;
    int rc;
    int failed = np_view_load(&r->view, &m, &rc);
    if (failed)
        return failed;
    size_t count;
    uint32_t *order = sorted_functions(m, r->sort, &count);
    if (!order) {
        fputs("nanoprof report: out of memory\n", stderr);
        np_model_free(m);
        return 1;
    }
    if (r->format == FORMAT_TEXT)
        print_text(r->out, r, m, order, count);
    else if (r->format == FORMAT_CSV)
        print_csv(r->out, m, order, count);
    else
        print_json(r->out, r, m, &r->view.summary, order, count);
    free(order);
    if (np_view_flush(&r->view, r->out, "the report"))
        rc = 1;
    np_model_free(m);
    return rc;
}

int np_cmd_report_to(FILE *out, int argc, char **argv)
{
    static const struct np_cli_option options[] = {
        { "sort", 0, NP_CLI_VALUE, OPT_SORT },
        { "format", 0, NP_CLI_VALUE, OPT_FORMAT },
        { NULL, 0, 0, 0 },
    };
    static const struct np_view_spec spec = { options, option, usage, 1 };
    struct report r = { .sort = SORT_TOTAL, .format = FORMAT_TEXT, .out = out };
    int rc = np_view_parse(&r.view, &spec, &r, argc, argv);
    if (!rc)
        rc = np_view_status(&r.view, run(&r));
    np_view_free(&r.view);
    return rc < 0 ? 0 : rc;
}

int np_cmd_report(int argc, char **argv)
{
    return np_cmd_report_to(stdout, argc, argv);
}
