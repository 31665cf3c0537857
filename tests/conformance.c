/* conformance.c - one model from two sources, compared (conformance.h). */
#define _GNU_SOURCE
#include "conformance.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/symbols.h"

/* ---- building ------------------------------------------------------------------- */

static void prepare(const struct np_model_options *mo, struct cf_model *out, struct np_model_options *opt)
{
    memset(out, 0, sizeof *out);
    timeline_init(&out->tl);
    *opt = mo ? *mo : (struct np_model_options){ 0 };
    out->tl.exclude_switched = opt->exclude_switched;
    opt->listener = &out->tl.listener;
}

int cf_model_from(int (*feed)(void *ctx, const struct np_event_sink *sink), void *ctx,
                  const struct np_model_options *mo, struct cf_model *out)
{
    struct np_model_options opt;
    prepare(mo, out, &opt);
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    if (!syms || !(out->m = np_model_new(&opt, syms)))
        abort();
    struct np_event_sink sink = np_model_sink(out->m);
    out->status = feed(ctx, &sink);
    int rc = np_model_finish(out->m);
    if (rc && out->status < rc)
        out->status = rc;
    np_symbols_free(syms); /* names and lines were copied */
    out->sum.status = out->status;
    return out->status;
}

int cf_model_load(const char *path, const struct np_model_options *mo, struct cf_model *out)
{
    struct np_model_options opt;
    prepare(mo, out, &opt);
    out->status = np_model_load(path, &opt, NULL, &out->m, &out->sum);
    if (!out->m)
        abort();
    return out->status;
}

void cf_model_free(struct cf_model *c)
{
    np_model_free(c->m);
    timeline_free(&c->tl);
    memset(c, 0, sizeof *c);
}

/* ---- comparing ------------------------------------------------------------------ */

struct cmp {
    const struct np_model *a, *b;
    char *msg;
    size_t size;
    uint32_t *thread, *function, *node; /* a's index -> b's */
};

static int differ(struct cmp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int differ(struct cmp *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, c->size, fmt, ap);
    va_end(ap);
    return -1;
}

static bool same_str(const char *x, const char *y)
{
    return x == y || (x && y && strcmp(x, y) == 0);
}

static const char *str(const char *s)
{
    return s ? s : "(null)";
}

/* Compares field F of X and Y (integers), naming the element WHAT. */
#define FIELD(c, what, x, y, f)                                                                              \
    do {                                                                                                     \
        if ((uint64_t)(x)->f != (uint64_t)(y)->f)                                                           \
            return differ(c, "%s: %s %" PRIu64 " != %" PRIu64, what, #f, (uint64_t)(x)->f, (uint64_t)(y)->f); \
    } while (0)
/* The same for indices, mapped through MAP first (NP_NONE stays). */
#define INDEX(c, what, x, y, f, map)                                                                          \
    do {                                                                                                      \
        uint32_t m_ = (x)->f == NP_NONE ? NP_NONE : (map)[(x)->f];                                            \
        if (m_ != (y)->f)                                                                                     \
            return differ(c, "%s: %s %" PRIu32 " (mapped) != %" PRIu32, what, #f, m_, (uint32_t)(y)->f);      \
    } while (0)

static int processes(struct cmp *c)
{
    size_t na, nb;
    const struct np_process *a = np_model_processes(c->a, &na), *b = np_model_processes(c->b, &nb);
    if (na != nb)
        return differ(c, "%zu processes != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        char what[64];
        snprintf(what, sizeof what, "process %zu", i);
        const struct np_process *x = &a[i], *y = &b[i];
        /* not the file: each source names its own input (the firmware, the
         * trace written of its run) */
        if (!same_str(x->clock, y->clock))
            return differ(c, "%s: clock %s != %s", what, str(x->clock), str(y->clock));
        FIELD(c, what, x, y, pid);
        FIELD(c, what, x, y, ppid);
        FIELD(c, what, x, y, argc);
        for (unsigned k = 0; k < x->argc; k++)
            if (!same_str(x->argv[k], y->argv[k]))
                return differ(c, "%s: argv[%u] %s != %s", what, k, str(x->argv[k]), str(y->argv[k]));
        if (x->ns_per_tick != y->ns_per_tick)
            return differ(c, "%s: ns_per_tick %.17g != %.17g", what, x->ns_per_tick, y->ns_per_tick);
        FIELD(c, what, x, y, start_ns);
        FIELD(c, what, x, y, end_ns);
        FIELD(c, what, x, y, complete);
        FIELD(c, what, x, y, events_lost);
        FIELD(c, what, x, y, blocks_lost);
        FIELD(c, what, x, y, time_unit);
    }
    return 0;
}

static int threads(struct cmp *c)
{
    size_t na, nb;
    const struct np_thread *a = np_model_threads(c->a, &na), *b = np_model_threads(c->b, &nb);
    if (na != nb)
        return differ(c, "%zu threads != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && (b[j].process != a[i].process || b[j].tid != a[i].tid))
            j++;
        if (j == nb)
            return differ(c, "thread %" PRIu32 " (pid %" PRIu32 ") is in one model only", a[i].tid, a[i].pid);
        c->thread[i] = (uint32_t)j;
    }
    for (size_t i = 0; i < na; i++) {
        const struct np_thread *x = &a[i], *y = &b[c->thread[i]];
        char what[64];
        snprintf(what, sizeof what, "thread %" PRIu32, x->tid);
        if (!same_str(x->name, y->name))
            return differ(c, "%s: name %s != %s", what, str(x->name), str(y->name));
        FIELD(c, what, x, y, pid);
        FIELD(c, what, x, y, first_ns);
        FIELD(c, what, x, y, last_ns);
        FIELD(c, what, x, y, calls);
        FIELD(c, what, x, y, total_ns);
        FIELD(c, what, x, y, switched_ns);
        FIELD(c, what, x, y, lost);
        FIELD(c, what, x, y, dropped);
        FIELD(c, what, x, y, closed_at_loss);
        FIELD(c, what, x, y, closed_at_cut);
        FIELD(c, what, x, y, closed_at_resync);
        FIELD(c, what, x, y, unmatched_exits);
    }
    return 0;
}

static int functions(struct cmp *c)
{
    size_t na, nb;
    const struct np_function *a = np_model_functions(c->a, &na), *b = np_model_functions(c->b, &nb);
    if (na != nb)
        return differ(c, "%zu functions != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && !(same_str(a[i].name, b[j].name) && same_str(a[i].module, b[j].module) &&
                           a[i].address == b[j].address))
            j++;
        if (j == nb)
            return differ(c, "function %s is in one model only", a[i].name);
        c->function[i] = (uint32_t)j;
        const struct np_function *x = &a[i], *y = &b[j];
        char what[256];
        snprintf(what, sizeof what, "function %s", x->name);
        if (!same_str(x->symbol, y->symbol) || !same_str(x->file, y->file))
            return differ(c, "%s: symbol or file differ", what);
        FIELD(c, what, x, y, line);
        FIELD(c, what, x, y, calls);
        FIELD(c, what, x, y, total_ns);
        FIELD(c, what, x, y, self_ns);
        FIELD(c, what, x, y, sum_ns);
        FIELD(c, what, x, y, min_ns);
        FIELD(c, what, x, y, max_ns);
        FIELD(c, what, x, y, switched_ns);
        FIELD(c, what, x, y, self_switched_ns);
        FIELD(c, what, x, y, resynced);
    }
    return 0;
}

static int arcs(struct cmp *c)
{
    size_t na, nb;
    const struct np_arc *a = np_model_arcs(c->a, &na), *b = np_model_arcs(c->b, &nb);
    const struct np_function *fa = np_model_functions(c->a, &(size_t){ 0 });
    if (na != nb)
        return differ(c, "%zu arcs != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        uint32_t caller = a[i].caller == NP_NONE ? NP_NONE : c->function[a[i].caller];
        uint32_t callee = c->function[a[i].callee];
        size_t j = 0;
        while (j < nb && (b[j].caller != caller || b[j].callee != callee))
            j++;
        char what[256];
        snprintf(what, sizeof what, "arc %s -> %s", a[i].caller == NP_NONE ? "(root)" : fa[a[i].caller].name,
                 fa[a[i].callee].name);
        if (j == nb)
            return differ(c, "%s is in one model only", what);
        FIELD(c, what, &a[i], &b[j], calls);
        FIELD(c, what, &a[i], &b[j], total_ns);
        FIELD(c, what, &a[i], &b[j], switched_ns);
        FIELD(c, what, &a[i], &b[j], outer_ns);
    }
    return 0;
}

/* Matches each node of A with B's of the same path (a child comes after
 * its parent in both), then compares them. */
static int nodes(struct cmp *c)
{
    size_t na, nb;
    const struct np_node *a = np_model_nodes(c->a, &na), *b = np_model_nodes(c->b, &nb);
    const struct np_thread *ta = np_model_threads(c->a, &(size_t){ 0 }), *tb = np_model_threads(c->b, &(size_t){ 0 });
    const struct np_function *fa = np_model_functions(c->a, &(size_t){ 0 });
    if (na != nb)
        return differ(c, "%zu nodes != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        uint32_t want_thread = c->thread[a[i].thread];
        if (a[i].parent == NP_NONE) {
            c->node[i] = tb[want_thread].root;
            if (ta[a[i].thread].root != i)
                return differ(c, "node %zu: a root that is not its thread's", i);
            continue;
        }
        uint32_t parent = c->node[a[i].parent], function = c->function[a[i].function];
        size_t j = 0;
        while (j < nb && (b[j].parent != parent || b[j].function != function || b[j].thread != want_thread))
            j++;
        if (j == nb)
            return differ(c, "node %zu (%s) is in one model only", i, fa[a[i].function].name);
        c->node[i] = (uint32_t)j;
    }
    for (size_t i = 0; i < na; i++) {
        const struct np_node *x = &a[i], *y = &b[c->node[i]];
        char what[256];
        snprintf(what, sizeof what, "node %zu (%s, thread %" PRIu32 ")", i,
                 x->function == NP_NONE ? "root" : fa[x->function].name, ta[x->thread].tid);
        INDEX(c, what, x, y, parent, c->node);
        INDEX(c, what, x, y, function, c->function);
        INDEX(c, what, x, y, thread, c->thread);
        INDEX(c, what, x, y, first_child, c->node);
        INDEX(c, what, x, y, next_sibling, c->node);
        INDEX(c, what, x, y, last_child, c->node);
        FIELD(c, what, x, y, depth);
        FIELD(c, what, x, y, calls);
        FIELD(c, what, x, y, total_ns);
        FIELD(c, what, x, y, self_ns);
        FIELD(c, what, x, y, switched_ns);
        FIELD(c, what, x, y, resynced);
    }
    return 0;
}

static int blocks(struct cmp *c)
{
    size_t na, nb;
    const struct np_block *a = np_model_blocks(c->a, &na), *b = np_model_blocks(c->b, &nb);
    if (na != nb)
        return differ(c, "%zu blocks != %zu", na, nb);
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && (b[j].function != c->function[a[i].function] || b[j].address != a[i].address))
            j++;
        if (j == nb)
            return differ(c, "block 0x%" PRIx64 " is in one model only", a[i].address);
        if (!same_str(a[i].file, b[j].file))
            return differ(c, "block 0x%" PRIx64 ": file differs", a[i].address);
        FIELD(c, "block", &a[i], &b[j], line);
        FIELD(c, "block", &a[i], &b[j], count);
    }
    return 0;
}

/* The calls told, thread by thread, in the order they began. */
static int calls(struct cmp *c, const struct timeline *x, const struct timeline *y)
{
    size_t nt;
    np_model_threads(c->a, &nt);
    if (x->n != y->n)
        return differ(c, "%zu calls told != %zu", x->n, y->n);
    for (size_t t = 0; t < nt; t++) {
        size_t j = 0;
        for (size_t i = 0; i < x->n; i++) {
            const struct np_call *p = &x->calls[i];
            if (p->thread != t)
                continue;
            while (j < y->n && y->calls[j].thread != c->thread[t])
                j++;
            if (j == y->n)
                return differ(c, "thread index %zu: fewer calls told in the second model", t);
            const struct np_call *q = &y->calls[j++];
            char what[64];
            snprintf(what, sizeof what, "call %zu told", i);
            INDEX(c, what, p, q, function, c->function);
            INDEX(c, what, p, q, node, c->node);
            FIELD(c, what, p, q, depth);
            FIELD(c, what, p, q, start_ns);
            FIELD(c, what, p, q, duration_ns);
            FIELD(c, what, p, q, switched_ns);
            FIELD(c, what, p, q, resynced);
        }
    }
    return 0;
}

int cf_compare(const struct cf_model *x, const struct cf_model *y, char *msg, size_t size)
{
    const struct np_model *a = x->m, *b = y->m;
    size_t nt, nf, nn;
    np_model_threads(a, &nt);
    np_model_functions(a, &nf);
    np_model_nodes(a, &nn);
    struct cmp c = { a, b, msg, size, calloc(nt + 1, sizeof(uint32_t)), calloc(nf + 1, sizeof(uint32_t)),
                     calloc(nn + 1, sizeof(uint32_t)) };
    if (!c.thread || !c.function || !c.node)
        abort();
    const struct np_model_sampling *sa = np_model_sampling(a), *sb = np_model_sampling(b);
    int rc = 0;
    if (x->tl.bad || y->tl.bad)
        rc = differ(&c, "a listener's promise broken: %s", x->tl.bad ? x->tl.bad : y->tl.bad);
    else if (np_model_time_unit(a) != np_model_time_unit(b))
        rc = differ(&c, "unit %s != %s", np_time_unit_name(np_model_time_unit(a)),
                    np_time_unit_name(np_model_time_unit(b)));
    else if (np_model_first_ns(a) != np_model_first_ns(b))
        rc = differ(&c, "first_ns %" PRIu64 " != %" PRIu64, np_model_first_ns(a), np_model_first_ns(b));
    else if (np_model_estimated(a) != np_model_estimated(b) || sa->samples != sb->samples ||
             sa->periods != sb->periods)
        rc = differ(&c, "samples differ");
    if (!rc)
        rc = processes(&c);
    if (!rc)
        rc = threads(&c);
    if (!rc)
        rc = functions(&c);
    if (!rc)
        rc = arcs(&c);
    if (!rc)
        rc = nodes(&c);
    if (!rc)
        rc = blocks(&c);
    if (!rc)
        rc = calls(&c, &x->tl, &y->tl);
    free(c.thread);
    free(c.function);
    free(c.node);
    return rc;
}

/* ---- scripts -------------------------------------------------------------------- */

int cf_write_script(const struct cf_script *s, const char *path, char *err, size_t errsize)
{
    struct np_trace_writer *w = np_trace_writer_open(path, &s->process, err, errsize);
    if (!w)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < s->nmodules && !rc; i++)
        rc = np_trace_writer_module(w, &s->modules[i]);
    for (size_t i = 0; i < s->nevents && !rc; i++) {
        const struct cf_event *e = &s->events[i];
        switch (e->kind) {
        case CF_ENTER: rc = np_trace_writer_enter(w, e->tid, e->ticks, e->count, e->arg); break;
        case CF_EXIT: rc = np_trace_writer_exit(w, e->tid, e->ticks, e->count); break;
        case CF_LOST: rc = np_trace_writer_lost(w, e->tid, e->ticks, e->count, e->arg); break;
        case CF_SWITCH: rc = np_trace_writer_switch(w, e->tid, e->ticks, e->count, e->arg); break;
        case CF_RESYNC: rc = np_trace_writer_resync(w, e->tid, e->ticks, e->count, e->arg); break;
        case CF_THREAD: rc = np_trace_writer_thread(w, e->tid, e->name); break;
        }
    }
    if (rc) {
        snprintf(err, errsize, "%s", np_trace_writer_error(w));
        np_trace_writer_abandon(w);
        return -1;
    }
    return np_trace_writer_close(w, s->end_tick, s->events_lost, err, errsize);
}

/* How the reader turns a script's ticks or counts into times (the
 * format and the source options, docs/trace-format.md). */
struct times {
    bool counted;
    double ns_per_tick;
    uint64_t start_tick, start_ns;
};

static uint64_t ticks_ns(double ns_per_tick, uint64_t ticks)
{
    double ns = (double)ticks * ns_per_tick + 0.5;
    return ns >= 0x1p64 ? UINT64_MAX : (uint64_t)ns;
}

static uint64_t time_of(const struct times *t, uint64_t ticks, uint64_t count)
{
    if (t->counted)
        return count;
    if (ticks >= t->start_tick)
        return t->start_ns + ticks_ns(t->ns_per_tick, ticks - t->start_tick);
    uint64_t d = ticks_ns(t->ns_per_tick, t->start_tick - ticks);
    return t->start_ns > d ? t->start_ns - d : 0;
}

#define GIVE(sink, fn, ...)                                          \
    do {                                                             \
        if ((sink)->fn) {                                            \
            int rc_ = (sink)->fn((sink)->ctx, ##__VA_ARGS__);        \
            if (rc_)                                                 \
                return rc_ <= NP_TRACE_ESTOP ? rc_ : NP_TRACE_ESTOP; \
        }                                                            \
    } while (0)

int cf_feed_script(const struct cf_script *s, const char *file, const struct np_source_options *o,
                   const struct np_event_sink *sink)
{
    static const struct np_source_options defaults = { 0 };
    const struct np_trace_writer_process *w = &s->process;
    if (!o)
        o = &defaults;
    /* UNITS as the writer writes it, or the clock's name */
    enum np_time_unit ticks = w->clock && !strcmp(w->clock, "cycles") ? NP_UNIT_CYCLES : NP_UNIT_NS, count = 0;
    if (w->time_unit || w->count_unit)
        np_time_unit_parse(w->time_unit ? w->time_unit : "ns", &ticks);
    bool has_count = w->count_unit && *w->count_unit && np_time_unit_parse(w->count_unit, &count);
    struct times t = { o->metric == NP_METRIC_COUNT, w->ns_per_tick, w->start_tick, w->start_ns };
    struct np_trace_process p = {
        .file = file, .pid = w->pid, .ppid = w->ppid, .info_ns_per_tick = w->ns_per_tick,
        .start_tick = w->start_tick, .clock = w->clock ? w->clock : "", .argc = w->argc, .argv = w->argv,
        .has_end = true, .events_lost = s->events_lost, .time_unit = ticks,
    };
    if (t.counted) {
        if (!has_count || o->clock_hz > 0)
            return NP_TRACE_EOPTION;
        p.time_unit = count;
        t.start_ns = 0;
    } else if (o->clock_hz > 0) {
        if (ticks != NP_UNIT_CYCLES)
            return NP_TRACE_EOPTION;
        t.ns_per_tick = 1e9 / o->clock_hz;
        p.time_unit = NP_UNIT_NS;
    } else if (ticks != NP_UNIT_NS) {
        t.ns_per_tick = 1;
        t.start_ns = 0;
    }
    p.ns_per_tick = t.ns_per_tick;
    p.start_ns = t.start_ns;
    p.end_ns = t.counted ? 0 : time_of(&t, s->end_tick, 0);
    GIVE(sink, begin, &p);
    for (size_t i = 0; i < s->nmodules; i++)
        GIVE(sink, module, &s->modules[i]);
    for (size_t i = 0; i < s->nevents; i++) {
        const struct cf_event *e = &s->events[i];
        uint64_t now = time_of(&t, e->ticks, e->count);
        switch (e->kind) {
        case CF_ENTER: GIVE(sink, enter, e->tid, now, e->arg); break;
        case CF_EXIT: GIVE(sink, exit, e->tid, now); break;
        case CF_LOST: GIVE(sink, lost, e->tid, now, e->arg); break;
        case CF_SWITCH: GIVE(sink, switch_out, e->tid, now, t.counted ? 0 : ticks_ns(t.ns_per_tick, e->arg)); break;
        case CF_RESYNC: GIVE(sink, resync, e->tid, now, e->arg); break;
        case CF_THREAD: GIVE(sink, thread, e->tid, e->name); break;
        }
    }
    GIVE(sink, end);
    return NP_TRACE_OK;
}

struct script_feed {
    const struct cf_script *s;
    const char *file;
    const struct np_source_options *o;
};

static int feed_script(void *ctx, const struct np_event_sink *sink)
{
    const struct script_feed *f = ctx;
    return cf_feed_script(f->s, f->file, f->o, sink);
}

int cf_check_script(const struct cf_script *s, const char *path, const struct np_model_options *mo, char *msg,
                    size_t size)
{
    char err[NP_TRACE_MSG_MAX];
    if (cf_write_script(s, path, err, sizeof err)) {
        snprintf(msg, size, "writing: %s", err);
        return -1;
    }
    struct cf_model read, fed;
    cf_model_load(path, mo, &read);
    struct script_feed f = { s, path, mo ? &mo->source : NULL };
    cf_model_from(feed_script, &f, mo, &fed);
    int rc = 0;
    if (read.status != fed.status) {
        snprintf(msg, size, "status %s (%s) read, %s fed", np_trace_strerror(read.status), read.sum.message,
                 np_trace_strerror(fed.status));
        rc = -1;
    } else if (cf_compare(&fed, &read, msg, size)) {
        rc = -1;
    }
    cf_model_free(&read);
    cf_model_free(&fed);
    return rc;
}
