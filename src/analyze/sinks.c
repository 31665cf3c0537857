/* sinks.c - a batch told to any sink, and the tee (sinks.h). */
#include "sinks.h"

static int one_event(const struct np_event_sink *s, uint32_t tid, const struct np_event *e)
{
    switch (e->kind) {
    case NP_EVENT_ENTER:
        return s->enter ? s->enter(s->ctx, tid, e->time_ns, e->arg) : 0;
    case NP_EVENT_EXIT:
        return s->exit ? s->exit(s->ctx, tid, e->time_ns) : 0;
    case NP_EVENT_LOST:
        return s->lost ? s->lost(s->ctx, tid, e->time_ns, e->arg) : 0;
    case NP_EVENT_RESYNC:
        return s->resync ? s->resync(s->ctx, tid, e->time_ns, e->arg) : 0;
    default:
        return s->switch_out ? s->switch_out(s->ctx, tid, e->time_ns, e->arg) : 0;
    }
}

int np_sink_events(const struct np_event_sink *s, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    if (s->events)
        return s->events(s->ctx, tid, ev, n, done);
    for (size_t i = 0; i < n; i++) {
        int rc = one_event(s, tid, &ev[i]);
        if (rc) {
            *done = i;
            return rc;
        }
    }
    *done = n;
    return 0;
}

/* ---- the tee ---- */

/* CALL on A then B, each when it has the callback */
#define BOTH(t, fn, ...)                                                                       \
    do {                                                                                       \
        int rc_ = (t)->a && (t)->a->fn ? (t)->a->fn((t)->a->ctx, __VA_ARGS__) : 0;             \
        if (!rc_ && (t)->b && (t)->b->fn)                                                      \
            rc_ = (t)->b->fn((t)->b->ctx, __VA_ARGS__);                                        \
        return rc_;                                                                            \
    } while (0)

static int tee_begin(void *ctx, const struct np_trace_process *p) { BOTH((struct np_sink_tee *)ctx, begin, p); }
static int tee_module(void *ctx, const struct np_trace_module *m) { BOTH((struct np_sink_tee *)ctx, module, m); }
static int tee_thread(void *ctx, uint32_t tid, const char *name)
{
    BOTH((struct np_sink_tee *)ctx, thread, tid, name);
}
static int tee_name(void *ctx, uint64_t address, const char *name)
{
    BOTH((struct np_sink_tee *)ctx, name, address, name);
}
static int tee_blocks(void *ctx, const struct np_trace_block *b, size_t n, uint64_t lost)
{
    BOTH((struct np_sink_tee *)ctx, blocks, b, n, lost);
}
static int tee_sample(void *ctx, uint32_t tid, uint64_t t, const uint64_t *f, unsigned n, uint64_t periods,
                      uint64_t skipped)
{
    BOTH((struct np_sink_tee *)ctx, sample, tid, t, f, n, periods, skipped);
}
static int tee_sampling(void *ctx, const struct np_trace_sampling *s) { BOTH((struct np_sink_tee *)ctx, sampling, s); }
static int tee_damaged(void *ctx, const uint8_t *bytes, size_t n) { BOTH((struct np_sink_tee *)ctx, damaged, bytes, n); }
static int tee_report(void *ctx, unsigned type, const uint64_t *values, unsigned n)
{
    BOTH((struct np_sink_tee *)ctx, report, type, values, n);
}
static int tee_values(void *ctx, uint32_t tid, uint64_t t, bool retval, const struct np_value *v, unsigned n)
{
    BOTH((struct np_sink_tee *)ctx, values, tid, t, retval, v, n);
}
#undef BOTH
static int tee_end(void *ctx)
{
    struct np_sink_tee *t = ctx;
    int rc = t->a && t->a->end ? t->a->end(t->a->ctx) : 0;
    if (!rc && t->b && t->b->end)
        rc = t->b->end(t->b->ctx);
    return rc;
}

static int tee_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct np_sink_tee *t = ctx;
    size_t a_done = n;
    int rc = t->a ? np_sink_events(t->a, tid, ev, n, &a_done) : 0;
    if (rc) {
        *done = a_done;
        return rc;
    }
    return t->b ? np_sink_events(t->b, tid, ev, n, done) : (*done = n, 0);
}

struct np_event_sink np_sink_tee(struct np_sink_tee *t)
{
    struct np_event_sink s = { .ctx = t, .begin = tee_begin, .module = tee_module, .thread = tee_thread,
                               .end = tee_end, .blocks = tee_blocks, .sample = tee_sample,
                               .sampling = tee_sampling, .name = tee_name, .events = tee_events,
                               .report = tee_report, .values = tee_values };
    /* damage as bytes only when both take it: one without gets loss points */
    if ((!t->a || t->a->damaged) && (!t->b || t->b->damaged))
        s.damaged = tee_damaged;
    return s;
}
