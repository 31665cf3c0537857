/* export_folded.c - the call tree as folded stacks, the input of
 * flamegraph.pl, speedscope and inferno: one line "a;b;c VALUE" per path
 * of the tree, from the thread's outermost call to the node, VALUE its
 * self time in ns (or its calls).
 *
 * A node is written when its value is not 0, or when it calls nothing
 * (so that every path called appears, with 0 when it took no time): the
 * values then add up to every function's self time and, together, to
 * the threads' totals. Threads follow one another in model order, each
 * tree depth first in order of first call; a path run by several threads
 * has one line per thread, which the tools add up. A ';' in a name is
 * written ':' and control characters '?', so that a line always splits
 * into the same frames. */
#include <inttypes.h>
#include <stdlib.h>
#include "export.h"

static void frame(FILE *out, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        putc(*p == ';' ? ':' : *p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

static void write_line(FILE *out, const struct np_thread *t, const struct np_export_options *o,
                       const struct np_function *fns, const uint32_t *path, size_t depth, uint64_t value)
{
    if (o->per_thread) {
        frame(out, t->name ? t->name : "tid");
        fprintf(out, "-%" PRIu32 ";", t->tid);
    }
    for (size_t i = 0; i < depth; i++) {
        frame(out, fns[path[i]].name);
        putc(i + 1 < depth ? ';' : ' ', out);
    }
    fprintf(out, "%" PRIu64 "\n", value);
}

int np_export_folded(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    size_t nt;
    const struct np_thread *threads = np_model_threads(m, &nt);
    const struct np_node *nodes = np_model_nodes(m, &(size_t){ 0 });
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    uint32_t *path = NULL; /* functions from the outermost call down */
    size_t cap = 0;
    for (size_t ti = 0; ti < nt; ti++) {
        uint32_t root = threads[ti].root;
        for (uint32_t n = nodes[root].first_child; n != NP_NONE;) {
            const struct np_node *node = &nodes[n];
            if (node->depth > cap) {
                size_t c = cap ? 2 * cap : 64;
                while (c < node->depth)
                    c *= 2;
                uint32_t *p = realloc(path, c * sizeof *p);
                if (!p) {
                    free(path);
                    return -1;
                }
                path = p;
                cap = c;
            }
            path[node->depth - 1] = node->function;
            uint64_t value = o->value == NP_EXPORT_CALLS ? node->calls : node->self_ns;
            if (value || node->first_child == NP_NONE)
                write_line(out, &threads[ti], o, fns, path, node->depth, value);
            if (node->first_child != NP_NONE) {
                n = node->first_child;
                continue;
            }
            while (n != root && nodes[n].next_sibling == NP_NONE)
                n = nodes[n].parent;
            n = n == root ? NP_NONE : nodes[n].next_sibling;
        }
    }
    free(path);
    return 0;
}
