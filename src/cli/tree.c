/* tree.c - `nanoprof tree`: the call tree of each thread.
 *
 * One root line per thread (its outermost calls and their time), then one
 * line per node of the model's tree (np_node: a path of calls from the
 * thread's root), drawn with box-drawing characters: calls, inclusive and
 * self time, and the share of the thread's total. A node's children come
 * largest inclusive time first, ties in order of first call. Nodes and
 * threads without calls (all filtered out) are left out; the title
 * counts them (np_view_threads). Deep trees are walked without recursion,
 * so any depth prints. Exit: as report. */
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
    fputs("usage: nanoprof tree [PATH] [options]\n"
          "\n"
          "The call tree of each thread of a trace: a root line per thread, then\n"
          "every path of calls, children under their caller, largest inclusive\n"
          "time first: calls, total (inclusive) time, self (exclusive) time and\n"
          "the percentage of the thread's total time. PATH is a trace directory\n"
          "or one .npt file (default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n"
          "  --ascii        draw the tree with ASCII characters\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time, or what the trace counts (cycles, instructions),\n"
          "as the first line says. A path some of whose calls were closed by\n"
          "re-synchronisation (their returns missed) has \"(?)\" after its name.\n",
          out);
}

enum { OPT_ASCII = NP_VIEW_OPT_OWN };

/* Tree drawing: before a node that has a next sibling / is the last one,
 * and below them. */
struct glyphs {
    const char *branch, *last, *through, *blank;
};
static const struct glyphs unicode_glyphs = { "\u251c\u2500 ", "\u2514\u2500 ", "\u2502  ", "   " };
static const struct glyphs ascii_glyphs = { "|- ", "`- ", "|  ", "   " };

struct tree {
    struct np_view view;
    const struct np_model *m;
    const struct glyphs *glyphs;
    const struct np_node *nodes;
    const struct np_function *fns;
    uint32_t *kids;  /* children with calls, grouped by parent, sorted */
    uint32_t *first; /* node -> its first child in kids */
    uint32_t *nkids; /* node -> how many */
    char *prefix;    /* the drawing before the current depth's nodes */
    size_t prefix_len, prefix_cap;
};

static int option(void *ctx, int c, const char *arg)
{
    (void)arg;
    struct tree *t = ctx;
    if (c == OPT_ASCII)
        t->glyphs = &ascii_glyphs;
    return 0;
}

/* Largest inclusive time first; ties in order of first call, which is
 * the order the model created the nodes in. */
static int node_cmp(const void *a, const void *b, void *ctx)
{
    const struct np_node *nodes = ctx;
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (nodes[x].total_ns != nodes[y].total_ns)
        return nodes[x].total_ns > nodes[y].total_ns ? -1 : 1;
    return (x > y) - (x < y);
}

/* Each node's children with calls, sorted. */
static int sort_children(struct tree *t, size_t n)
{
    t->kids = malloc((n ? n : 1) * sizeof *t->kids);
    t->first = calloc(n ? n : 1, sizeof *t->first);
    t->nkids = calloc(n ? n : 1, sizeof *t->nkids);
    if (!t->kids || !t->first || !t->nkids)
        return -1;
    uint32_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        t->first[i] = pos;
        for (uint32_t c = t->nodes[i].first_child; c != NP_NONE && c < n && pos < n; c = t->nodes[c].next_sibling)
            if (t->nodes[c].calls)
                t->kids[pos++] = c;
        t->nkids[i] = pos - t->first[i];
        qsort_r(&t->kids[t->first[i]], t->nkids[i], sizeof *t->kids, node_cmp, (void *)t->nodes);
    }
    return 0;
}

static int push_prefix(struct tree *t, const char *s)
{
    size_t len = strlen(s);
    if (t->prefix_len + len + 1 > t->prefix_cap) {
        size_t cap = t->prefix_cap ? t->prefix_cap * 2 : 256;
        while (cap < t->prefix_len + len + 1)
            cap *= 2;
        char *p = realloc(t->prefix, cap);
        if (!p)
            return -1;
        t->prefix = p;
        t->prefix_cap = cap;
    }
    memcpy(t->prefix + t->prefix_len, s, len + 1);
    t->prefix_len += len;
    return 0;
}

#define ROW "%10s %12s %12s %7s  "

static void print_row(const struct tree *t, const char *calls, uint64_t total, const char *self, uint64_t thread_ns)
{
    char tt[NP_DURATION_MAX], pct[16];
    snprintf(pct, sizeof pct, "%.1f%%", thread_ns ? 100.0 * (double)total / (double)thread_ns : 0.0);
    printf(ROW, calls, np_view_time(tt, sizeof tt, t->m, total), self, pct);
    fputs(t->prefix ? t->prefix : "", stdout);
}

/* LEVEL: the node's depth when its drawing is cut (view.h), else 0. */
static void print_node(struct tree *t, uint32_t n, bool last, uint64_t thread_ns, size_t level)
{
    const struct np_node *node = &t->nodes[n];
    char calls[24], self[NP_DURATION_MAX];
    snprintf(calls, sizeof calls, "%" PRIu64, node->calls);
    print_row(t, calls, node->total_ns, np_view_time(self, sizeof self, t->m, node->self_ns), thread_ns);
    if (level)
        printf("[depth %zu] ", level);
    fputs(last ? t->glyphs->last : t->glyphs->branch, stdout);
    np_text_field(stdout, node->function != NP_NONE ? t->fns[node->function].name : "?");
    puts(np_view_resync_mark(node->resynced));
}

/* A walk frame: a node whose children are being printed. */
struct frame {
    uint32_t node, next; /* next: index of the next child among its children */
    size_t prefix_len;   /* the prefix before this node's children */
};

/* Prints the tree below ROOT, depth first, with an explicit stack. */
static int print_subtree(struct tree *t, uint32_t root, uint64_t thread_ns)
{
    size_t cap = 64, depth = 0;
    struct frame *stack = malloc(cap * sizeof *stack);
    if (!stack)
        return -1;
    t->prefix_len = 0;
    if (push_prefix(t, ""))
        goto oom;
    stack[depth++] = (struct frame){ root, 0, 0 };
    while (depth) {
        struct frame *f = &stack[depth - 1];
        if (f->next == t->nkids[f->node]) {
            depth--;
            continue;
        }
        uint32_t child = t->kids[t->first[f->node] + f->next++];
        bool last = f->next == t->nkids[f->node];
        t->prefix_len = f->prefix_len;
        t->prefix[t->prefix_len] = '\0';
        /* the child is DEPTH deep, below DEPTH - 1 levels of drawing */
        print_node(t, child, last, thread_ns, depth - 1 > NP_VIEW_DRAWN_LEVELS ? depth : 0);
        if (!t->nkids[child])
            continue;
        if (depth <= NP_VIEW_DRAWN_LEVELS && push_prefix(t, last ? t->glyphs->blank : t->glyphs->through))
            goto oom;
        if (depth == cap) {
            struct frame *s = realloc(stack, 2 * cap * sizeof *stack);
            if (!s)
                goto oom;
            stack = s;
            cap *= 2;
        }
        stack[depth++] = (struct frame){ child, 0, t->prefix_len };
    }
    free(stack);
    return 0;
oom:
    free(stack);
    return -1;
}

static int print_tree(struct tree *t, const struct np_model *m)
{
    size_t nthreads;
    const struct np_thread *th = np_model_threads(m, &nthreads);
    char threads[96];
    fputs("# ", stdout);
    np_text_field(stdout, t->view.path);
    printf(": call tree of %s, %s\n", np_view_threads(&t->view, m, threads, sizeof threads),
           np_view_time_kind(&t->view, m));
    np_view_print_estimate(stdout, m, "# ");
    np_view_print_loss(&t->view, stdout, "# ");
    printf(ROW "%s\n", np_view_calls_heading(m, "Calls"), "Total", "Self", "Total%", "Function");
    for (size_t i = 0; i < nthreads; i++) {
        if (!th[i].calls || th[i].root == NP_NONE)
            continue;
        char calls[24];
        snprintf(calls, sizeof calls, "%" PRIu64, t->nodes[th[i].root].calls);
        t->prefix_len = 0;
        if (t->prefix)
            t->prefix[0] = '\0';
        print_row(t, calls, th[i].total_ns, "", th[i].total_ns);
        np_view_print_thread(stdout, &th[i]);
        putchar('\n');
        if (print_subtree(t, th[i].root, th[i].total_ns))
            return -1;
    }
    return 0;
}

static int run(struct tree *t)
{
    struct np_model *m;
    int rc;
    int failed = np_view_load(&t->view, &m, &rc);
    if (failed)
        return failed;
    size_t n;
    t->m = m;
    t->nodes = np_model_nodes(m, &n);
    t->fns = np_model_functions(m, &(size_t){ 0 });
    if (sort_children(t, n) || print_tree(t, m)) {
        fputs("nanoprof tree: out of memory\n", stderr);
        rc = 1;
    } else if (np_view_flush(&t->view, stdout, "the call tree")) {
        rc = 1;
    }
    free(t->kids);
    free(t->first);
    free(t->nkids);
    free(t->prefix);
    np_model_free(m);
    return rc;
}

int np_cmd_tree(int argc, char **argv)
{
    static const struct np_cli_option options[] = {
        { "ascii", 0, NP_CLI_NO_VALUE, OPT_ASCII },
        { NULL, 0, 0, 0 },
    };
    static const struct np_view_spec spec = { options, option, usage, 1 };
    struct tree t = { .glyphs = &unicode_glyphs };
    int rc = np_view_parse(&t.view, &spec, &t, argc, argv);
    if (!rc)
        rc = np_view_status(&t.view, run(&t));
    np_view_free(&t.view);
    return rc < 0 ? 0 : rc;
}
