/* stacks.h - the call tree as folded stacks and flame graphs draw it:
 * the model's tree (np_node) with deep recursion merged, so that what they
 * write grows with the calls and not with the square of a recursion's
 * depth (a 100,000-deep recursion written whole is some 100 GB of folded
 * stacks, and a flame graph 1.6 million pixels tall).
 *
 * A frame is one path of calls, as a node is, except that:
 *   - a run of more than NP_STACK_RUN calls of one function, each made by
 *     the one before (direct recursion), is one frame above the run's
 *     first call: "fib [recursion x99999]" for a 100,000-deep fib, the
 *     count being the levels it merges. Its calls, self time and callees
 *     are those of every call it merges, its total that of the run;
 *   - below NP_STACK_DEPTH levels of frames (recursion through several
 *     functions, a->b->a->b...), the calls of each path are one frame,
 *     "[99500 levels merged]", whose self time is all of their time.
 * Nothing else changes: a tree without such recursion gives one frame per
 * node, in the same order. Self times still add up to the threads'
 * totals, and calls to the calls kept. */
#ifndef NP_ANALYZE_STACKS_H
#define NP_ANALYZE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

#define NP_STACK_RUN 100    /* recursive calls of one function drawn one a level, at most */
#define NP_STACK_DEPTH 500  /* levels of frames below a thread, at most */

enum np_stack_kind {
    NP_STACK_THREAD,        /* a thread's root (function NP_NONE) */
    NP_STACK_CALL,          /* calls of a function on one path */
    NP_STACK_RECURSION,     /* a run of direct recursion, merged */
    NP_STACK_DEEPER         /* every call below NP_STACK_DEPTH on one path (function NP_NONE) */
};

struct np_stack_frame {
    uint32_t parent;        /* NP_NONE for a thread's root */
    uint32_t first_child, last_child, next_sibling; /* NP_NONE-terminated, in order of first call */
    uint32_t function;
    uint32_t thread;
    uint32_t depth;         /* 0: a thread's root */
    uint32_t kind;          /* enum np_stack_kind */
    uint64_t merged;        /* RECURSION, DEEPER: the levels merged */
    uint64_t calls, total_ns, self_ns;
    uint64_t resynced;      /* its calls closed by re-synchronisation (np_node.resynced) */
};

struct np_stacks {
    struct np_stack_frame *frames;
    size_t n, cap;
    uint32_t *roots;        /* per thread of the model: its root frame */
    size_t recursions;      /* RECURSION frames */
    size_t deeper;          /* DEEPER frames */
    uint32_t example;       /* the first RECURSION frame, or NP_NONE */
};

/* Builds S from M's call trees. 0, or -1 when out of memory. */
int np_stacks_build(struct np_stacks *s, const struct np_model *m);
void np_stacks_free(struct np_stacks *s);

/* Frame F's name in BUF: the function's, "fib [recursion x99999]", or
 * "[99500 levels merged]" (a thread's root: ""), followed by " (?)" when
 * some of its calls were closed by re-synchronisation. */
#define NP_STACK_NAME_MAX 4200
const char *np_stack_name(const struct np_stacks *s, const struct np_model *m, uint32_t f, char *buf,
                          size_t size);

/* What was merged, for a note, in BUF; NULL when nothing was. */
#define NP_STACK_NOTE_MAX 512
const char *np_stacks_note(const struct np_stacks *s, const struct np_model *m, char *buf, size_t size);

#endif
