/* calls_out.c - the call tracker's events to a sink, and the sink that
 * gives them in the metric a view asks (calls_out.h). */
#define _GNU_SOURCE
#include "calls_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "events_decode.h"
#include "patterns.h"
#include "sinks.h"
#include "symbols.h"

/* TID's own instruction count at global count INSNS. */
static uint64_t own(const struct np_calls_out *e, uint32_t tid, uint64_t insns)
{
    return tid - 1 < e->nthreads ? insns - e->insns_out[tid - 1] : insns;
}

int np_calls_out_sink_rc(struct np_calls_out *e, int rc)
{
    if (rc && !e->sink_rc)
        e->sink_rc = rc;
    return rc;
}

/* The batch told. */
static int flush(struct np_calls_out *e)
{
    uint32_t n = e->nbatch;
    e->nbatch = 0;
    if (!n || !e->sink || e->sink_rc)
        return e->sink_rc ? -1 : 0;
    size_t done;
    return np_calls_out_sink_rc(e, np_sink_events(e->sink, e->batch_tid, e->batch, n, &done));
}

static int on_thread(void *ctx, uint32_t tid, const char *name)
{
    struct np_calls_out *e = ctx;
    if (flush(e))
        return -1;
    if (tid > e->nthreads) {
        uint64_t *a = realloc(e->insns_out, tid * sizeof *a);
        if (!a)
            return -1;
        /* a new thread's count starts at 0 */
        for (uint32_t i = e->nthreads; i < tid; i++)
            a[i] = *e->insns_now;
        e->insns_out = a;
        e->nthreads = tid;
    }
    char *full = NULL, *short_name = NULL; /* named after its entry: a C++ one as the views name it */
    if (name && np_demangle(name, &full, &short_name) > 0)
        name = short_name;
    const struct np_event_sink *s = e->sink;
    /* (unnamed: "", as a trace read back gives it) */
    int rc = s && s->thread ? np_calls_out_sink_rc(e, s->thread(s->ctx, tid, name ? name : "")) : 0;
    free(full);
    free(short_name);
    return rc;
}

/* An event of thread TID at CYCLES, its own instructions INSNS' */
static int tell(struct np_calls_out *e, uint32_t tid, uint64_t cycles, uint64_t insns, uint64_t arg,
                enum np_sink_event kind)
{
    if (!e->sink)
        return 0;
    if ((e->nbatch && tid != e->batch_tid) || e->nbatch == NP_CALLS_OUT_BATCH) {
        if (flush(e))
            return -1;
    }
    e->batch_tid = tid;
    e->batch[e->nbatch++] = (struct np_event){ cycles, arg, kind, own(e, tid, insns) };
    return 0;
}

/* ---- arguments and return values ---- */

/* The specs of the function at ADDRESS: -A's + 1 | -R's + 1 << 8. */
static uint64_t specs_of(struct np_calls_values *v, uint32_t address)
{
    uint64_t *c = np_hmap_find(&v->cache, address);
    if (c)
        return *c;
    unsigned a = 0, r = 0;
    const char *name = np_calls_name_of(v->as, address);
    if (name) {
        char *full = NULL, *short_name = NULL;
        if (np_demangle(name, &full, &short_name) <= 0)
            full = short_name = NULL;
        /* by its symbol first, then its signature, then its short name */
        const char *names[3] = { name, full, short_name };
        for (int n = 0; n < 3; n++)
            for (unsigned i = 0; i < v->n && names[n]; i++) {
                unsigned *k = v->retval[i] ? &r : &a;
                if (!*k && np_name_pattern_match(&v->pat[i], names[n]))
                    *k = i + 1;
            }
        free(full);
        free(short_name);
    }
    uint64_t k = a | (uint64_t)r << 8;
    np_hmap_put(&v->cache, address, k); /* (out of memory: looked up again next time) */
    return k;
}

/* Spec K's values from the registers (RETVAL: r0) to the sink. */
static int tell_values(struct np_calls_out *e, uint32_t tid, uint64_t cycles, unsigned k, bool retval)
{
    const struct np_calls_values *v = e->values;
    const struct np_value_spec *s = &v->spec[k - 1];
    const uint32_t *regs = retval ? v->regs : v->trk ? np_calltrack_entry_args(v->trk) : NULL;
    if (!regs)
        return 0;
    struct np_value out[NP_VALUE_ARGS_MAX];
    for (unsigned i = 0; i < s->n; i++) {
        const struct np_value_item *it = &s->item[i];
        out[i] = (struct np_value){ it->index, it->format, np_value_cut(it, regs[retval ? 0 : it->index - 1], 32),
                                    NULL, 0 };
        if (it->format == NP_VAL_STR) /* the firmware's memory is not read: its address */
            out[i].format = NP_VAL_PTR;
    }
    if (!e->sink || !e->sink->values)
        return 0;
    if (e->nbatch && flush(e))
        return -1;
    return np_calls_out_sink_rc(e, e->sink->values(e->sink->ctx, tid, cycles, retval, out, s->n)) ? -1 : 0;
}

/* Thread TID's stack of open calls' -R specs. */
static int open_push(struct np_calls_values *v, uint32_t tid, uint8_t r)
{
    if (tid - 1 >= v->nopen) {
        size_t old = v->nopen;
        if (NP_GROW(v->open, v->nopen, (size_t)tid) < 0)
            return -1;
        memset(v->open + old, 0, (v->nopen - old) * sizeof *v->open);
    }
    struct np_calls_open *o = &v->open[tid - 1];
    if (NP_GROW(o->v, o->cap, o->n + 1) < 0)
        return -1;
    o->v[o->n++] = r;
    return 0;
}

static unsigned open_pop(struct np_calls_values *v, uint32_t tid, uint32_t n)
{
    unsigned r = 0;
    if (tid - 1 >= v->nopen)
        return 0;
    struct np_calls_open *o = &v->open[tid - 1];
    for (; n && o->n; n--)
        r = o->v[--o->n];
    return r;
}

static int on_enter(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t address)
{
    struct np_calls_out *e = ctx;
    if (tell(e, tid, cycles, insns, address, NP_EVENT_ENTER))
        return -1;
    if (!e->values)
        return 0;
    uint64_t k = specs_of(e->values, address);
    if (open_push(e->values, tid, (uint8_t)(k >> 8)))
        return np_calls_out_sink_rc(e, NP_TRACE_ENOMEM), -1;
    return k & 0xff ? tell_values(e, tid, cycles, (unsigned)(k & 0xff), false) : 0;
}

static int on_leave(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns)
{
    struct np_calls_out *e = ctx;
    if (e->values) {
        unsigned r = open_pop(e->values, tid, 1);
        if (r && tell_values(e, tid, cycles, r, true))
            return -1;
    }
    return tell(e, tid, cycles, insns, 0, NP_EVENT_EXIT);
}

static int on_resync(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t n)
{
    struct np_calls_out *e = ctx;
    if (e->values)
        (void)open_pop(e->values, tid, n);
    return tell(e, tid, cycles, insns, n, NP_EVENT_RESYNC);
}

int np_calls_values_init(struct np_calls_values *v, const char *const *text, const bool *retval, unsigned n,
                         struct np_symbols *syms, void *as, const uint32_t *regs, char *err, size_t errsize)
{
    memset(v, 0, sizeof *v);
    np_hmap_init(&v->cache);
    v->as = as;
    v->regs = regs;
    for (unsigned i = 0; i < n && i < NP_VALUE_SPECS_MAX; i++) {
        const char *opt = retval[i] ? "--retval" : "--args";
        char why[256];
        if (np_value_spec_parse(text[i], retval[i], &v->spec[i], why, sizeof why) < 0) {
            snprintf(err, errsize, "%s: %s", opt, why);
            return -1;
        }
        for (unsigned k = 0; k < v->spec[i].n; k++)
            if (v->spec[i].item[k].index > 4) {
                snprintf(err, errsize, "%s '%s': arg%u: ARM passes arguments 1 to 4 in registers, which are read", opt,
                         text[i], v->spec[i].item[k].index);
                return -1;
            }
        if (np_name_pattern_init(&v->pat[i], v->spec[i].func, why, sizeof why) < 0) {
            v->n = i + 1;
            snprintf(err, errsize, "%s '%s': %s", opt, text[i], why);
            return -1;
        }
        v->retval[i] = retval[i];
        v->n = i + 1;
        struct np_pattern_use use = { .text = v->spec[i].func };
        unsigned files;
        np_patterns_in_files(syms, &v->pat[i], &use, 1, &files);
        if (!use.in_files) {
            snprintf(err, errsize, "%s '%s': '%s' matches no function of the firmware", opt, text[i], v->spec[i].func);
            return -1;
        }
    }
    return 0;
}

void np_calls_values_free(struct np_calls_values *v)
{
    for (unsigned i = 0; i < v->n; i++)
        np_name_pattern_free(&v->pat[i]);
    for (uint32_t t = 0; t < v->nopen; t++)
        free(v->open[t].v);
    free(v->open);
    np_hmap_free(&v->cache);
    memset(v, 0, sizeof *v);
}

static int on_resume(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint64_t out_cycles,
                     uint64_t out_insns)
{
    struct np_calls_out *e = ctx;
    if (tid - 1 < e->nthreads)
        e->insns_out[tid - 1] += insns - out_insns;
    return tell(e, tid, cycles, insns, cycles - out_cycles, NP_EVENT_SWITCH);
}

uint32_t np_calls_func_of(void *as, uint32_t addr)
{
    struct np_symbol sym;
    np_addrspace_lookup(as, addr, &sym);
    return sym.name ? (uint32_t)sym.elf_addr & ~1u : 0;
}

const char *np_calls_name_of(void *as, uint32_t addr)
{
    struct np_symbol sym;
    np_addrspace_lookup(as, addr, &sym);
    return sym.name;
}

struct np_calltrack_funcs np_calls_funcs(struct np_addrspace *as)
{
    struct np_calltrack_funcs f = { .ctx = as, .func_of = np_calls_func_of, .name_of = np_calls_name_of };
    return f;
}

struct np_calltrack_out np_calls_out_hooks(struct np_calls_out *c)
{
    struct np_calltrack_out out = { c, on_thread, on_enter, on_leave, on_resync, on_resume };
    return out;
}

int np_calls_out_end(struct np_calls_out *c, int status)
{
    flush(c);
    if (c->sink && c->sink->end && !c->sink_rc)
        np_calls_out_sink_rc(c, c->sink->end(c->sink->ctx));
    if (c->sink_rc && status == NP_TRACE_OK)
        status = c->sink_rc < 0 ? NP_TRACE_ESTOP : c->sink_rc;
    free(c->insns_out);
    c->insns_out = NULL;
    return status;
}

/* ---- the metric sink ---- */

static int m_begin(void *ctx, const struct np_trace_process *p)
{
    struct np_calls_metric *m = ctx;
    if (!m->next || !m->next->begin)
        return 0;
    struct np_trace_process q = *p;
    if (m->metric == NP_METRIC_COUNT)
        q.time_unit = NP_UNIT_INSNS;
    else if (m->ns_per_cycle > 0) {
        q.time_unit = NP_UNIT_NS;
        q.ns_per_tick = q.info_ns_per_tick = m->ns_per_cycle;
    }
    q.counted = false;
    return m->next->begin(m->next->ctx, &q);
}

static int m_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct np_calls_metric *m = ctx;
    if (!m->next) {
        *done = n;
        return 0;
    }
    struct np_event out[64];
    size_t told = 0;
    while (told < n) {
        size_t k = n - told < 64 ? n - told : 64;
        for (size_t i = 0; i < k; i++) {
            const struct np_event *e = &ev[told + i];
            out[i] = (struct np_event){ e->time_ns, e->arg, e->kind, 0 };
            if (m->metric == NP_METRIC_COUNT) {
                out[i].time_ns = e->count;
                if (e->kind == NP_EVENT_SWITCH)
                    out[i].arg = 0; /* the others' instructions are not the thread's */
            } else if (m->ns_per_cycle > 0) { /* rounded as the trace reader rounds ticks */
                out[i].time_ns = (uint64_t)((double)e->time_ns * m->ns_per_cycle + 0.5);
                if (e->kind == NP_EVENT_SWITCH)
                    out[i].arg = np_ticks_ns(m->ns_per_cycle, e->arg);
            }
        }
        size_t d = k;
        int rc = np_sink_events(m->next, tid, out, k, &d);
        if (rc) {
            *done = told + d;
            return rc;
        }
        told += k;
    }
    *done = n;
    return 0;
}

#define FORWARD(fn, params, ...)                                                  \
    static int m_##fn params                                                      \
    {                                                                             \
        struct np_calls_metric *m = ctx;                                          \
        return m->next && m->next->fn ? m->next->fn(m->next->ctx, __VA_ARGS__) : 0; \
    }
FORWARD(module, (void *ctx, const struct np_trace_module *mod), mod)
FORWARD(values, (void *ctx, uint32_t tid, uint64_t t, bool retval, const struct np_value *v, unsigned n), tid, t,
        retval, v, n)
FORWARD(thread, (void *ctx, uint32_t tid, const char *name), tid, name)
#undef FORWARD

static int m_end(void *ctx)
{
    struct np_calls_metric *m = ctx;
    return m->next && m->next->end ? m->next->end(m->next->ctx) : 0;
}

struct np_event_sink np_calls_metric_sink(struct np_calls_metric *m)
{
    return (struct np_event_sink){ .ctx = m, .begin = m_begin, .module = m_module, .thread = m_thread,
                                   .events = m_events, .end = m_end, .values = m_values };
}
