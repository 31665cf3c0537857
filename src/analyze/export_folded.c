/* export_folded.c - the call tree as folded stacks, the input of
 * flamegraph.pl, speedscope and inferno: one line "a;b;c VALUE" per path
 * of the tree, from the thread's outermost call to the frame, VALUE its
 * self time in ns (or its calls).
 *
 * The paths are those of np_stacks (stacks.h): the model's tree with deep
 * recursion merged ("fib [recursion x99999]", "[99500 levels merged]"),
 * so that the output grows with the calls, not with the square of a
 * recursion's depth; a note through o->diag says when that happened.
 * A frame is written when its value is not 0, or when it calls nothing
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
#include "stacks.h"

static void frame(FILE *out, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        putc(*p == ';' ? ':' : *p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

static void write_line(FILE *out, const struct np_thread *t, const struct np_export_options *o,
                       const struct np_stacks *s, const struct np_model *m, const uint32_t *path, size_t depth,
                       uint64_t value)
{
    char name[NP_STACK_NAME_MAX];
    if (o->per_thread) {
        frame(out, t->name ? t->name : "tid");
        fprintf(out, "-%" PRIu32 ";", t->tid);
    }
    for (size_t i = 0; i < depth; i++) {
        frame(out, np_stack_name(s, m, path[i], name, sizeof name));
        putc(i + 1 < depth ? ';' : ' ', out);
    }
    fprintf(out, "%" PRIu64 "\n", value);
}

int np_export_folded(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    size_t nt;
    const struct np_thread *threads = np_model_threads(m, &nt);
    struct np_stacks s;
    if (np_stacks_build(&s, m))
        return NP_EXPORT_ENOMEM;
    const struct np_stack_frame *fr = s.frames;
    uint32_t *path = NULL; /* frames from the outermost call down */
    size_t cap = 0;
    for (size_t ti = 0; ti < nt; ti++) {
        uint32_t root = s.roots[ti];
        for (uint32_t n = fr[root].first_child; n != NP_NONE;) {
            const struct np_stack_frame *f = &fr[n];
            if (f->depth > cap) {
                size_t c = cap ? 2 * cap : 64;
                while (c < f->depth)
                    c *= 2;
                uint32_t *p = realloc(path, c * sizeof *p);
                if (!p) {
                    free(path);
                    np_stacks_free(&s);
                    return NP_EXPORT_ENOMEM;
                }
                path = p;
                cap = c;
            }
            path[f->depth - 1] = n;
            uint64_t value = o->value == NP_EXPORT_CALLS ? f->calls : f->self_ns;
            if (value || f->first_child == NP_NONE)
                write_line(out, &threads[ti], o, &s, m, path, f->depth, value);
            if (f->first_child != NP_NONE) {
                n = f->first_child;
                continue;
            }
            while (n != root && fr[n].next_sibling == NP_NONE)
                n = fr[n].parent;
            n = n == root ? NP_NONE : fr[n].next_sibling;
        }
    }
    char note[NP_STACK_NOTE_MAX];
    if (o->diag && np_stacks_note(&s, m, note, sizeof note))
        o->diag(o->diag_ctx, NP_DIAG_NOTE, note);
    free(path);
    np_stacks_free(&s);
    return 0;
}
