/* timeline.h - a call listener (model.h) for the tests: keeps every call
 * it is told, in the order they began, each with its duration once it
 * ends, and checks what the listener is promised: per thread, a call
 * begins at the depth of its thread's open calls, ends while it is the
 * innermost of them, every call that began ends, and a thread's events
 * never go back in time. Out of memory aborts: test code. */
#ifndef NP_TEST_TIMELINE_H
#define NP_TEST_TIMELINE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/model.h"

struct timeline {
    struct np_call *calls;      /* in the order they began */
    size_t n, cap;
    size_t *open;               /* indices of the calls begun, not ended */
    size_t nopen, capopen;
    uint64_t *last;             /* per thread: the time of its last event */
    size_t caplast;
    bool exclude_switched;      /* the model's option: durations less switched time */
    const char *bad;            /* the first broken promise, or NULL */
    struct np_call_listener listener;
};

static inline void *timeline_grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * size);
    if (!q)
        abort();
    memset((char *)q + *cap * size, 0, (n - *cap) * size);
    *cap = n;
    return q;
}

/* Thread T's events come in time order. */
static inline void timeline_at(struct timeline *tl, uint32_t t, uint64_t ns)
{
    tl->last = (uint64_t *)timeline_grow(tl->last, &tl->caplast, (size_t)t + 1, sizeof *tl->last);
    if (ns < tl->last[t] && !tl->bad)
        tl->bad = "a thread's time goes back";
    tl->last[t] = ns;
}

/* The innermost open call of thread T (its index in tl->open), or -1;
 * *DEPTH: how many of its calls are open. */
static inline long timeline_innermost(const struct timeline *tl, uint32_t t, uint32_t *depth)
{
    long at = -1;
    *depth = 0;
    for (size_t i = 0; i < tl->nopen; i++)
        if (tl->calls[tl->open[i]].thread == t) {
            at = (long)i;
            ++*depth;
        }
    return at;
}

static inline int timeline_begin(void *ctx, const struct np_model *m, const struct np_call *c)
{
    (void)m;
    struct timeline *tl = (struct timeline *)ctx;
    uint32_t depth;
    timeline_innermost(tl, c->thread, &depth);
    if ((depth != c->depth || c->duration_ns) && !tl->bad)
        tl->bad = "a call begins at another depth than its thread's open calls";
    timeline_at(tl, c->thread, c->start_ns);
    tl->calls = (struct np_call *)timeline_grow(tl->calls, &tl->cap, tl->n + 1, sizeof *tl->calls);
    tl->open = (size_t *)timeline_grow(tl->open, &tl->capopen, tl->nopen + 1, sizeof *tl->open);
    tl->open[tl->nopen++] = tl->n;
    tl->calls[tl->n++] = *c;
    return 0;
}

static inline int timeline_end(void *ctx, const struct np_model *m, const struct np_call *c)
{
    (void)m;
    struct timeline *tl = (struct timeline *)ctx;
    uint32_t depth;
    long at = timeline_innermost(tl, c->thread, &depth);
    struct np_call *b = at >= 0 ? &tl->calls[tl->open[at]] : NULL;
    if (!b || b->function != c->function || b->start_ns != c->start_ns || b->depth != c->depth ||
        b->node != c->node) {
        if (!tl->bad)
            tl->bad = "a call ends that is not its thread's innermost";
        return 0;
    }
    /* in wall time */
    timeline_at(tl, c->thread, c->start_ns + c->duration_ns + (tl->exclude_switched ? c->switched_ns : 0));
    *b = *c;
    memmove(&tl->open[at], &tl->open[at + 1], (tl->nopen - (size_t)at - 1) * sizeof *tl->open);
    tl->nopen--;
    return 0;
}

/* Ready to be options.listener. */
static inline void timeline_init(struct timeline *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->listener = (struct np_call_listener){ tl, timeline_begin, timeline_end, NULL };
}

/* NULL when every promise held (every call ended, too), else the first broken. */
static inline const char *timeline_check(const struct timeline *tl)
{
    return tl->bad ? tl->bad : tl->nopen ? "a call began that did not end" : NULL;
}

static inline int timeline_cmp(const void *a, const void *b)
{
    const struct np_call *x = (const struct np_call *)a, *y = (const struct np_call *)b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* The calls by thread, start, then depth (callers first). */
static inline void timeline_sort(struct timeline *tl)
{
    if (tl->n)
        qsort(tl->calls, tl->n, sizeof *tl->calls, timeline_cmp);
}

static inline void timeline_free(struct timeline *tl)
{
    free(tl->calls);
    free(tl->open);
    free(tl->last);
    memset(tl, 0, sizeof *tl);
}

#endif
