/* export_callgrind.c - the flat profile and call graph in the callgrind
 * profile format (version 1), which KCachegrind and callgrind_annotate
 * read. One event: "ns" (wall time), or for a trace that counts cycles or
 * instructions "Cycles" or "Ir" (callgrind's own names, which its tools
 * label); positions are source lines (0 when DWARF gave none). Each
 * function is one block: its self time on its line, then one call line
 * per callee (np_arc): the calls and their inclusive time.
 *
 * Both tools take a function's inclusive time as the sum of the costs of
 * the calls to it (a function nothing calls: its self time plus its
 * calls' costs). So that this equals report's total:
 *   - the outermost calls of every thread are calls from one function
 *     "(root)", whose inclusive time is then the threads' total;
 *   - a call line costs the time of the calls that opened while the
 *     callee was not running already (np_arc.outer_ns): calls made in a
 *     recursion, direct (f -> f) or through others (f -> g -> f), cost 0,
 *     their time being in the outermost call's. Counted once per nesting
 *     level instead, a 100,000-deep recursion through two functions
 *     wrote call costs 50,000 times the program's time.
 * With that, every function's inclusive time is report's total. A
 * comment in the header says when calls were written so.
 * The tools merge functions by name: the model's names already tell
 * apart functions of one symbol (model.h); two that still share a name
 * get " [MODULE:0xADDRESS]" after it. A function some of whose calls were
 * closed by re-synchronisation has " (?)" after its name, and a desc:
 * line counts them (the loss note). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export.h"
#include "nanoprof/nanoprof.h"
#include "textfmt.h"

#define ROOT_NAME "(root)"

struct callgrind {
    FILE *out;
    const struct np_function *fns;
    const bool *same_name;   /* per function: another one has its name */
};

static int by_name(const void *a, const void *b, void *ctx)
{
    const struct np_function *fns = ctx;
    return strcmp(fns[*(const uint32_t *)a].name, fns[*(const uint32_t *)b].name);
}

/* Marks the functions with calls whose name another one has too. */
static bool *same_names(const struct np_function *fns, size_t n)
{
    bool *same = calloc(n ? n : 1, sizeof *same);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!same || !order) {
        free(same);
        free(order);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (fns[i].calls)
            order[k++] = (uint32_t)i;
    qsort_r(order, k, sizeof *order, by_name, (void *)fns);
    for (size_t i = 1; i < k; i++)
        if (strcmp(fns[order[i - 1]].name, fns[order[i]].name) == 0)
            same[order[i - 1]] = same[order[i]] = true;
    free(order);
    return same;
}

/* The object, file and function lines for F ("c" before each for a callee). */
static void position(const struct callgrind *c, const char *prefix, uint32_t f)
{
    FILE *out = c->out;
    if (f == NP_NONE) {
        fprintf(out, "%sob=???\n%sfl=???\n%sfn=" ROOT_NAME "\n", prefix, prefix, prefix);
        return;
    }
    const struct np_function *fn = &c->fns[f];
    fprintf(out, "%sob=", prefix);
    np_text_field(out, fn->module ? fn->module : "???");
    fprintf(out, "\n%sfl=", prefix);
    np_text_field(out, fn->file ? fn->file : "???");
    fprintf(out, "\n%sfn=", prefix);
    np_text_field(out, fn->name);
    if (c->same_name[f]) {
        const char *module = fn->module ? strrchr(fn->module, '/') : NULL;
        fputs(" [", out);
        np_text_field(out, module ? module + 1 : fn->module ? fn->module : "?");
        fprintf(out, ":0x%" PRIx64 "]", fn->address);
    }
    fputs(fn->resynced ? " (?)\n" : "\n", out);
}

static unsigned line_of(const struct callgrind *c, uint32_t f)
{
    return f == NP_NONE ? 0 : c->fns[f].line;
}

/* Calls made while their function was running already (recursion), by
 * the arcs: those whose time is not all outer, and calls of oneself. */
static uint64_t recursive_calls(const struct np_model *m)
{
    size_t na;
    const struct np_arc *a = np_model_arcs(m, &na);
    uint64_t n = 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].calls && (a[i].caller == a[i].callee || a[i].outer_ns < a[i].total_ns))
            n++;
    return n;
}

static void header(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    size_t np, nt;
    const struct np_process *p = np_model_processes(m, &np);
    const struct np_thread *t = np_model_threads(m, &nt);
    uint64_t total = 0;
    for (size_t i = 0; i < nt; i++)
        total += t[i].total_ns;
    fputs("# callgrind format\n", out);
    if (recursive_calls(m))
        fputs("# recursion: calls made while their function was already running cost 0 on their\n"
              "# call lines (their time is in the outermost call's), so inclusive times are exact\n",
              out);
    fputs("version: 1\ncreator: nanoprof " NP_VERSION_STRING "\n", out);
    if (np_model_estimated(m)) { /* calls= then count samples */
        char label[NP_ESTIMATE_LABEL_MAX];
        fprintf(out, "desc: Estimate: %s, calls are samples\n", np_model_estimate_label(m, label, sizeof label));
    }
    if (o->note) { /* callgrind_annotate prints desc: lines */
        fputs("desc: Loss: ", out);
        np_text_field(out, o->note);
        putc('\n', out);
    }
    if (np) { /* the first process: its children's costs are added in */
        fprintf(out, "pid: %" PRIu32 "\ncmd:", p[0].pid);
        for (unsigned a = 0; a < p[0].argc; a++) {
            putc(' ', out);
            np_text_field(out, p[0].argv[a]);
        }
        putc('\n', out);
    }
    switch (np_model_time_unit(m)) {
    case NP_UNIT_CYCLES:
        fprintf(out, "positions: line\nevent: Cycles : CPU cycles\nevents: Cycles\nsummary: %" PRIu64 "\n", total);
        break;
    case NP_UNIT_INSNS:
        fprintf(out, "positions: line\nevent: Ir : Instructions executed\nevents: Ir\nsummary: %" PRIu64 "\n",
                total);
        break;
    case NP_UNIT_NS:
        fprintf(out, "positions: line\nevents: ns\nsummary: %" PRIu64 "\n", total);
        break;
    }
}

/* The header, the roots' block, then one block per function called, in
 * model order; the arcs of caller f (nf for the roots) are
 * by_caller[first[f] .. first[f + 1]). */
static void write_blocks(const struct callgrind *c, const struct np_model *m, const struct np_export_options *o,
                         const struct np_arc *arcs, const size_t *first, const uint32_t *by_caller)
{
    size_t nf;
    const struct np_function *fns = np_model_functions(m, &nf);
    FILE *out = c->out;
    header(m, o, out);
    /* the roots first, then every function called, in model order */
    for (size_t k = 0; k <= nf; k++) {
        size_t f = k == 0 ? nf : k - 1;
        uint32_t id = f == nf ? NP_NONE : (uint32_t)f;
        if (id != NP_NONE && !fns[f].calls)
            continue;
        putc('\n', out);
        position(c, "", id);
        fprintf(out, "%u %" PRIu64 "\n", line_of(c, id), id == NP_NONE ? 0 : fns[f].self_ns);
        for (size_t i = first[f]; i < first[f + 1]; i++) {
            const struct np_arc *a = &arcs[by_caller[i]];
            position(c, "c", a->callee);
            fprintf(out, "calls=%" PRIu64 " %u\n%u %" PRIu64 "\n", a->calls, line_of(c, a->callee),
                    line_of(c, id), a->outer_ns);
        }
    }
}

int np_export_callgrind(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    size_t nf, na;
    const struct np_function *fns = np_model_functions(m, &nf);
    const struct np_arc *arcs = np_model_arcs(m, &na);
    /* arcs by caller: those of function f are by_caller[first[f] .. first[f + 1]),
     * the thread roots' (caller NP_NONE) come last, as function nf */
    size_t *first = calloc(nf + 2, sizeof *first), *next = calloc(nf + 1, sizeof *next);
    uint32_t *by_caller = malloc((na ? na : 1) * sizeof *by_caller);
    bool *same = same_names(fns, nf);
    int rc = first && next && by_caller && same ? 0 : -1;
    if (!rc) {
        for (size_t i = 0; i < na; i++)
            first[(arcs[i].caller == NP_NONE ? nf : arcs[i].caller) + 1]++;
        for (size_t f = 0; f <= nf; f++)
            first[f + 1] += first[f];
        for (size_t i = 0; i < na; i++) {
            size_t f = arcs[i].caller == NP_NONE ? nf : arcs[i].caller;
            by_caller[first[f] + next[f]++] = (uint32_t)i;
        }
        write_blocks(&(struct callgrind){ out, fns, same }, m, o, arcs, first, by_caller);
    }
    free(first);
    free(next);
    free(by_caller);
    free(same);
    return rc;
}
