/* blocks.c - `nanoprof blocks`: the basic-block counts of a trace
 * (docs/blocks.md), per function and, below each, per source line, as
 * text or CSV.
 *
 * The model holds one np_block per block (its function, its line, its
 * count summed over every process); this file only groups them: a
 * function's row sums its blocks, a line's row sums the blocks on that
 * line. Exit: 0; 1 when the trace is unreadable, damaged or holds no
 * block counts; 2 for bad usage; 3 with --strict when anything was lost. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "view.h"
#include "common/trace_format.h"

enum sort_key { SORT_COUNT, SORT_BLOCKS, SORT_NAME };
enum format { FORMAT_TEXT, FORMAT_CSV };

static const char *const sort_names[] = { "count", "blocks", "name", NULL };
static const char *const format_names[] = { "text", "csv", NULL };

struct blocks_cmd {
    struct np_view view;
    enum sort_key sort;
    enum format format;
    bool functions_only;
};

static void usage(FILE *out)
{
    fputs("usage: nanoprof blocks [PATH] [options]\n"
          "\n"
          "Basic-block execution counts of a program built with\n"
          "-fsanitize-coverage=trace-pc and linked with libnanoprof: per function,\n"
          "the executions of its blocks summed and the number of blocks that ran,\n"
          "then per source line of the function, the executions of the blocks on\n"
          "that line. PATH is a trace directory or one .npt file (default\n" NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n"
          "  --sort=KEY     functions by count (default), blocks or name\n"
          "  --format=FMT   text (default) or csv\n"
          "  --functions    functions only, without their lines\n"
          "  --lines        functions and their lines (the default)\n"
          "  -F, --filter=PATTERN   only the blocks of functions matching PATTERN (a\n"
          "                 glob, or a regular expression: docs/analysis.md)\n"
          "  -N, --notrace=PATTERN  not the blocks of functions matching PATTERN\n"
          "  --no-demangle  C++ names as the program's symbols have them (mangled)\n"
          "  --strict       exit with status 3 when the trace lost anything (block\n"
          "                 executions not counted, ...) or a pattern matched no\n"
          "                 function; the output is still written\n"
          "  --help         print this help and exit\n"
          "\n"
          "The other options of the view commands (--tid, --depth, ...) are\n"
          "accepted and do not apply to blocks. A line is the one of the address\n"
          "the program recorded for the block, right after the coverage call.\n",
          out);
}

enum { OPT_SORT = NP_VIEW_OPT_OWN, OPT_FORMAT, OPT_FUNCTIONS, OPT_LINES };

static int option(void *ctx, int c, const char *arg)
{
    struct blocks_cmd *b = ctx;
    int v;
    if (c == OPT_SORT) {
        if (np_view_pick(&b->view, sort_names, arg, "sort key", &v))
            return 2;
        b->sort = (enum sort_key)v;
    } else if (c == OPT_FORMAT) {
        if (np_view_pick(&b->view, format_names, arg, "format", &v))
            return 2;
        b->format = (enum format)v;
    } else if (c == OPT_FUNCTIONS) {
        b->functions_only = true;
    } else if (c == OPT_LINES) {
        b->functions_only = false;
    }
    return 0;
}

/* ---- grouping ------------------------------------------------------------------ */

/* A function's or a line's row. */
struct row {
    uint32_t function;
    const char *file;   /* line rows: the line's file (NULL: unknown) */
    unsigned line;
    uint64_t address;   /* line rows: its lowest block address */
    uint64_t count;
    uint64_t blocks;
};

struct table {
    struct row *fns;    /* one per function with blocks */
    size_t nfns;
    struct row *lines;  /* grouped by function, in source order */
    size_t nlines;
    uint64_t total, nblocks;
};

struct sort_ctx {
    const struct np_function *fns;
    enum sort_key key;
};

static int str_cmp(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* Blocks by function, then known lines by file and line, then address. */
static int block_cmp(const void *a, const void *b)
{
    const struct np_block *x = a, *y = b;
    if (x->function != y->function)
        return x->function < y->function ? -1 : 1;
    if (!x->line != !y->line)
        return !x->line ? 1 : -1;
    int c = str_cmp(x->file, y->file);
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return (x->address > y->address) - (x->address < y->address);
}

/* Largest first; ties (and --sort=name) by name, module, address. */
static int fn_row_cmp(const void *a, const void *b, void *ctx)
{
    const struct sort_ctx *s = ctx;
    const struct row *rx = a, *ry = b;
    const struct np_function *x = &s->fns[rx->function], *y = &s->fns[ry->function];
    uint64_t vx = s->key == SORT_COUNT ? rx->count : s->key == SORT_BLOCKS ? rx->blocks : 0;
    uint64_t vy = s->key == SORT_COUNT ? ry->count : s->key == SORT_BLOCKS ? ry->blocks : 0;
    if (vx != vy)
        return vx > vy ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = str_cmp(x->module, y->module);
    return c ? c : (x->address > y->address) - (x->address < y->address);
}

/* Fills T from M's blocks; 0, or -1 when out of memory. */
static int group(const struct np_model *m, enum sort_key key, struct table *t)
{
    size_t nb, nf;
    const struct np_block *src = np_model_blocks(m, &nb);
    const struct np_function *fns = np_model_functions(m, &nf);
    memset(t, 0, sizeof *t);
    struct np_block *b = malloc((nb ? nb : 1) * sizeof *b);
    t->fns = malloc((nb ? nb : 1) * sizeof *t->fns);
    t->lines = malloc((nb ? nb : 1) * sizeof *t->lines);
    if (!b || !t->fns || !t->lines) {
        free(b);
        return -1;
    }
    if (nb) {
        memcpy(b, src, nb * sizeof *b);
        qsort(b, nb, sizeof *b, block_cmp);
    }
    for (size_t i = 0; i < nb; i++) {
        if (!b[i].count)
            continue;
        t->total += b[i].count;
        t->nblocks++;
        if (!t->nfns || t->fns[t->nfns - 1].function != b[i].function)
            t->fns[t->nfns++] = (struct row){ .function = b[i].function };
        t->fns[t->nfns - 1].count += b[i].count;
        t->fns[t->nfns - 1].blocks++;
        /* the copies' file names are the model's strings: rows point at them */
        struct row *last = t->nlines ? &t->lines[t->nlines - 1] : NULL;
        if (!last || last->function != b[i].function || !last->line || last->line != b[i].line ||
            str_cmp(last->file, b[i].file)) {
            t->lines[t->nlines++] = (struct row){ b[i].function, b[i].file, b[i].line, b[i].address, 0, 0 };
            last = &t->lines[t->nlines - 1];
        }
        last->count += b[i].count;
        last->blocks++;
    }
    free(b);
    struct sort_ctx ctx = { fns, key };
    qsort_r(t->fns, t->nfns, sizeof *t->fns, fn_row_cmp, &ctx);
    return 0;
}

static void table_free(struct table *t)
{
    free(t->fns);
    free(t->lines);
}

/* ---- output ------------------------------------------------------------------------ */

/* The line rows of function F: [*FIRST, *FIRST + return). */
static size_t lines_of(const struct table *t, uint32_t f, size_t *first)
{
    size_t lo = 0, hi = t->nlines;
    while (lo < hi) { /* the first line row of F or after */
        size_t mid = lo + (hi - lo) / 2;
        if (t->lines[mid].function < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < t->nlines && t->lines[lo + n].function == f)
        n++;
    *first = lo;
    return n;
}

static void print_text(const struct blocks_cmd *b, const struct np_model *m, const struct table *t)
{
    size_t nproc;
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    np_model_processes(m, &nproc);
    fputs("# ", stdout);
    np_text_field(stdout, b->view.path);
    printf(": %zu process%s, %" PRIu64 " blocks in %zu functions, %" PRIu64 " executions\n", nproc,
           nproc == 1 ? "" : "es", t->nblocks, t->nfns, t->total);
    np_view_print_loss(&b->view, stdout, "# ");
    printf("%14s %8s  %s\n", "Count", "Blocks", b->functions_only ? "Function" : "Function / source line");
    printf("%14s %8s  %s\n", "============", "======", "========");
    for (size_t i = 0; i < t->nfns; i++) {
        const struct row *r = &t->fns[i];
        printf("%14" PRIu64 " %8" PRIu64 "  ", r->count, r->blocks);
        np_text_field(stdout, fns[r->function].name);
        putchar('\n');
        size_t first, n = b->functions_only ? 0 : lines_of(t, r->function, &first);
        for (size_t k = 0; k < n; k++) {
            const struct row *l = &t->lines[first + k];
            printf("%14" PRIu64 " %8" PRIu64 "    ", l->count, l->blocks);
            if (l->line) {
                np_text_field(stdout, l->file);
                printf(":%u\n", l->line);
            } else {
                printf("0x%" PRIx64 "\n", l->address);
            }
        }
    }
}

static void csv_row(const char *kind, const char *name, const struct row *r, const char *file, unsigned line,
                    uint64_t address)
{
    printf("%s,", kind);
    np_csv_field(stdout, name);
    printf(",%" PRIu64 ",%" PRIu64 ",", r->count, r->blocks);
    np_csv_field(stdout, file);
    if (line)
        printf(",%u", line);
    else
        putchar(',');
    printf(",0x%" PRIx64 "\n", address);
}

static void print_csv(const struct blocks_cmd *b, const struct np_model *m, const struct table *t)
{
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    puts("kind,function,count,blocks,file,line,address");
    for (size_t i = 0; i < t->nfns; i++) {
        const struct row *r = &t->fns[i];
        const struct np_function *f = &fns[r->function];
        csv_row("function", f->name, r, f->file, f->line, f->address);
        size_t first, n = b->functions_only ? 0 : lines_of(t, r->function, &first);
        for (size_t k = 0; k < n; k++) {
            const struct row *l = &t->lines[first + k];
            csv_row("line", f->name, l, l->file, l->line, l->address);
        }
    }
}

/* ---- the command ------------------------------------------------------------------ */

static uint64_t blocks_lost(const struct np_model *m)
{
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    uint64_t lost = 0;
    for (size_t i = 0; i < n; i++)
        lost += p[i].blocks_lost;
    return lost;
}

static int run(struct blocks_cmd *b)
{
    struct np_model *m;
    int rc;
    int failed = np_view_load(&b->view, &m, &rc);
    if (failed)
        return failed;
    struct table t;
    if (group(m, b->sort, &t)) {
        fputs("nanoprof blocks: out of memory\n", stderr);
        table_free(&t);
        np_model_free(m);
        return 1;
    }
    uint64_t lost = blocks_lost(m);
    if (!t.nblocks && !lost) {
        if (!rc) /* a damaged trace: its error is out already, and is the reason */
            fputs("nanoprof blocks: no basic-block counts in the trace (build the program with "
                  "-fsanitize-coverage=trace-pc)\n", stderr);
        rc = 1;
    } else {
        if (b->format == FORMAT_TEXT)
            print_text(b, m, &t);
        else
            print_csv(b, m, &t);
        if (np_view_flush(&b->view, stdout, "the counts"))
            rc = 1;
    }
    table_free(&t);
    np_model_free(m);
    return rc;
}

int np_cmd_blocks(int argc, char **argv)
{
    static const struct np_cli_option options[] = {
        { "sort", 0, NP_CLI_VALUE, OPT_SORT },
        { "format", 0, NP_CLI_VALUE, OPT_FORMAT },
        { "functions", 0, NP_CLI_NO_VALUE, OPT_FUNCTIONS },
        { "lines", 0, NP_CLI_NO_VALUE, OPT_LINES },
        { NULL, 0, 0, 0 },
    };
    static const struct np_view_spec spec = { options, option, usage, 1 };
    struct blocks_cmd b = { .sort = SORT_COUNT, .format = FORMAT_TEXT };
    int rc = np_view_parse(&b.view, &spec, &b, argc, argv);
    if (!rc)
        rc = np_view_status(&b.view, run(&b));
    np_view_free(&b.view);
    return rc < 0 ? 0 : rc;
}
