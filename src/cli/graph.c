/* graph.c - `nanoprof graph`: the call graph of a trace, laid out as the
 * "Call graph" section of GNU gprof.
 *
 * One entry per function, largest total time first, numbered [1], [2]...
 * in that order: the lines of its callers, its primary line (index,
 * percent of the total time, total and self time, calls, name), then the
 * lines of its callees. A caller's line gives the calls it made to the
 * function out of the function's calls and the time of those calls; a
 * callee's line the calls the function made to it out of the callee's
 * calls and their time. Calls from a thread's root show as
 * <spontaneous>; a function calling itself shows the count of those calls
 * alone, as gprof does. Everything comes from the model's functions and
 * arcs. Exit: as report; also 1 when FUNCTION matches nothing. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "view.h"
#include "common/trace_format.h"

static void usage(FILE *out)
{
    fputs("usage: nanoprof graph [PATH] [FUNCTION] [options]\n"
          "\n"
          "The call graph of a trace in the layout of gprof's \"Call graph\": per\n"
          "function, largest total time first, the functions that called it, its\n"
          "own line, and the functions it called, with calls and times of each\n"
          "arc. FUNCTION (a pattern, as -F takes them) shows only the entries of the\n"
          "functions matching it. PATH is a trace directory or one .npt file\n"
          "(default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time, or what the trace counts (cycles, instructions),\n"
          "as the first line says. Recursive calls add to a function's total once.\n"
          "A function some of whose calls were closed by re-synchronisation (their\n"
          "returns missed) has \"(?)\" after its name.\n",
          out);
}

/* Arcs grouped by function: arc indices in [start[f], start[f + 1]). */
struct arc_index {
    uint32_t *start;
    uint32_t *arcs;
};

struct graph {
    struct np_view view;
    const struct np_model *m;
    const struct np_function *fns;
    const struct np_arc *arcs;
    uint32_t *order; /* functions with calls, in entry order */
    size_t count;
    uint32_t *rank;  /* function -> its entry number (1...), 0 without calls */
    struct arc_index in, out; /* by callee, by caller */
    uint64_t total_ns; /* of every thread */
};

/* Largest total first; ties by name, module, address. */
static int fn_cmp(const void *a, const void *b, void *ctx)
{
    const struct np_function *fns = ctx;
    const struct np_function *x = &fns[*(const uint32_t *)a], *y = &fns[*(const uint32_t *)b];
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->module ? x->module : "", y->module ? y->module : "");
    return c ? c : (x->address > y->address) - (x->address < y->address);
}

/* Groups the arcs with calls by KEY (callee when BY_CALLEE, else caller;
 * arcs from a thread's root have no caller and are left out then). */
static int index_arcs(struct arc_index *ix, const struct np_arc *arcs, size_t narcs, size_t nfns, bool by_callee)
{
    ix->start = calloc(nfns + 2, sizeof *ix->start);
    ix->arcs = malloc((narcs ? narcs : 1) * sizeof *ix->arcs);
    if (!ix->start || !ix->arcs)
        return -1;
    for (size_t a = 0; a < narcs; a++) {
        uint32_t key = by_callee ? arcs[a].callee : arcs[a].caller;
        if (arcs[a].calls && key < nfns)
            ix->start[key + 2]++;
    }
    for (size_t f = 2; f < nfns + 2; f++)
        ix->start[f] += ix->start[f - 1];
    for (size_t a = 0; a < narcs; a++) {
        uint32_t key = by_callee ? arcs[a].callee : arcs[a].caller;
        if (arcs[a].calls && key < nfns)
            ix->arcs[ix->start[key + 1]++] = (uint32_t)a;
    }
    return 0;
}

static void free_arcs(struct arc_index *ix)
{
    free(ix->start);
    free(ix->arcs);
}

static int build(struct graph *g)
{
    size_t nfns, narcs, nthreads;
    g->fns = np_model_functions(g->m, &nfns);
    g->arcs = np_model_arcs(g->m, &narcs);
    const struct np_thread *t = np_model_threads(g->m, &nthreads);
    for (size_t i = 0; i < nthreads; i++)
        g->total_ns += t[i].total_ns;
    g->order = malloc((nfns ? nfns : 1) * sizeof *g->order);
    g->rank = calloc(nfns ? nfns : 1, sizeof *g->rank);
    if (!g->order || !g->rank || index_arcs(&g->in, g->arcs, narcs, nfns, true) ||
        index_arcs(&g->out, g->arcs, narcs, nfns, false))
        return -1;
    for (size_t i = 0; i < nfns; i++)
        if (g->fns[i].calls)
            g->order[g->count++] = (uint32_t)i;
    qsort_r(g->order, g->count, sizeof *g->order, fn_cmp, (void *)g->fns);
    for (size_t i = 0; i < g->count; i++)
        g->rank[g->order[i]] = (uint32_t)(i + 1);
    return 0;
}

/* ---- one entry ------------------------------------------------------------------ */

struct arc_sort {
    const struct graph *g;
    bool callers;
};

static uint32_t arc_rank(const struct graph *g, const struct np_arc *a, bool caller)
{
    uint32_t f = caller ? a->caller : a->callee;
    return f == NP_NONE ? 0 : g->rank[f];
}

/* Largest time nearest the primary line (callers ascending, callees
 * descending), ties by entry number. */
static int arc_cmp(const void *a, const void *b, void *ctx)
{
    const struct arc_sort *s = ctx;
    const struct np_arc *x = &s->g->arcs[*(const uint32_t *)a], *y = &s->g->arcs[*(const uint32_t *)b];
    if (x->total_ns != y->total_ns)
        return (x->total_ns < y->total_ns) == s->callers ? -1 : 1;
    uint32_t rx = arc_rank(s->g, x, s->callers), ry = arc_rank(s->g, y, s->callers);
    return (rx > ry) - (rx < ry);
}

#define ROW "%-6s %6s %12s %12s %13s  "

/* A caller's or callee's line for arc A, the other end being OTHER. */
static void print_arc(const struct graph *g, const struct np_arc *a, uint32_t other)
{
    char t[NP_DURATION_MAX], calls[48];
    if (a->caller == a->callee) /* recursion: its count alone */
        snprintf(calls, sizeof calls, "%" PRIu64, a->calls);
    else
        snprintf(calls, sizeof calls, "%" PRIu64 "/%" PRIu64, a->calls, g->fns[a->callee].calls);
    printf(ROW "    ", "", "", np_view_time(t, sizeof t, g->m, a->total_ns), "", calls);
    if (other == NP_NONE) {
        puts("<spontaneous>");
        return;
    }
    np_text_field(stdout, g->fns[other].name);
    printf("%s [%" PRIu32 "]\n", np_view_resync_mark(g->fns[other].resynced), g->rank[other]);
}

/* The arcs of F in IX, sorted into SCRATCH, each printed. */
static void print_arcs(const struct graph *g, const struct arc_index *ix, uint32_t f, bool callers, uint32_t *scratch)
{
    uint32_t n = ix->start[f + 1] - ix->start[f];
    memcpy(scratch, &ix->arcs[ix->start[f]], n * sizeof *scratch);
    struct arc_sort s = { g, callers };
    qsort_r(scratch, n, sizeof *scratch, arc_cmp, &s);
    for (uint32_t i = 0; i < n; i++) {
        const struct np_arc *a = &g->arcs[scratch[i]];
        print_arc(g, a, callers ? a->caller : a->callee);
    }
}

static void print_entry(const struct graph *g, uint32_t f, uint32_t *scratch)
{
    const struct np_function *fn = &g->fns[f];
    char index[16], pct[16], calls[24], t[2][NP_DURATION_MAX];
    print_arcs(g, &g->in, f, true, scratch);
    snprintf(index, sizeof index, "[%" PRIu32 "]", g->rank[f]);
    snprintf(pct, sizeof pct, "%.1f", g->total_ns ? 100.0 * (double)fn->total_ns / (double)g->total_ns : 0.0);
    snprintf(calls, sizeof calls, "%" PRIu64, fn->calls);
    printf(ROW, index, pct, np_view_time(t[0], sizeof t[0], g->m, fn->total_ns),
           np_view_time(t[1], sizeof t[1], g->m, fn->self_ns), calls);
    np_text_field(stdout, fn->name);
    printf("%s [%" PRIu32 "]\n", np_view_resync_mark(fn->resynced), g->rank[f]);
    print_arcs(g, &g->out, f, false, scratch);
    puts("-----------------------------------------------");
}

/* ---- the command ------------------------------------------------------------------ */

/* Prints the entries of the functions matching GLOB (NULL: all), a
 * pattern as -F takes them; 1 with a message when none does, 2 when it is
 * no pattern. */
static int print_graph(struct graph *g, const char *glob)
{
    struct np_name_pattern pat;
    char err[300];
    if (glob && np_name_pattern_init(&pat, glob, err, sizeof err)) {
        np_name_pattern_free(&pat);
        return np_view_usage_error(&g->view, "FUNCTION %s", err);
    }
    size_t narcs;
    np_model_arcs(g->m, &narcs);
    uint32_t *scratch = malloc((narcs ? narcs : 1) * sizeof *scratch);
    if (!scratch) {
        if (glob)
            np_name_pattern_free(&pat);
        return -1;
    }
    size_t shown = 0;
    for (size_t i = 0; i < g->count; i++) {
        const struct np_function *fn = &g->fns[g->order[i]];
        /* the symbol, signature, mangled name or the name shown (model.h) */
        if (glob && !np_function_matches_pattern(fn, &pat))
            continue;
        if (!shown++) {
            char t[NP_DURATION_MAX];
            fputs("# ", stdout);
            np_text_field(stdout, g->view.path);
            printf(": call graph of %zu function%s, total time %s, %s\n", g->count, g->count == 1 ? "" : "s",
                   np_view_time(t, sizeof t, g->m, g->total_ns), np_view_time_kind(&g->view, g->m));
            np_view_print_estimate(stdout, g->m, "# ");
            np_view_print_loss(&g->view, stdout, "# ");
            printf(ROW "%s\n", "index", "% time", "total", "self",
                   np_model_estimated(g->m) ? "samples" : "called", "name");
        }
        print_entry(g, g->order[i], scratch);
    }
    free(scratch);
    if (glob)
        np_name_pattern_free(&pat);
    if (glob && !shown) {
        fprintf(stderr, "nanoprof graph: no function matches '");
        np_text_field(stderr, glob);
        fputs("'\n", stderr);
        return 1;
    }
    return 0;
}

static int run(struct graph *g)
{
    const char *glob = np_view_path_and_name(&g->view);
    struct np_model *m;
    int rc;
    int failed = np_view_load(&g->view, &m, &rc);
    if (failed)
        return failed;
    g->m = m;
    int status = build(g);
    if (!status)
        status = print_graph(g, glob);
    if (status < 0) {
        fputs("nanoprof graph: out of memory\n", stderr);
        rc = 1;
    } else if (status) {
        rc = status;
    } else if (np_view_flush(&g->view, stdout, "the call graph")) {
        rc = 1;
    }
    free(g->order);
    free(g->rank);
    free_arcs(&g->in);
    free_arcs(&g->out);
    np_model_free(m);
    return rc;
}

int np_cmd_graph(int argc, char **argv)
{
    static const struct np_view_spec spec = { NULL, NULL, usage, 2 };
    struct graph g = { .m = NULL };
    int rc = np_view_parse(&g.view, &spec, &g, argc, argv);
    if (!rc)
        rc = np_view_status(&g.view, run(&g));
    np_view_free(&g.view);
    return rc < 0 ? 0 : rc;
}
