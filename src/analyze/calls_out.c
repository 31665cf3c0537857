/* calls_out.c - the call tracker's events to a sink and a trace writer
 * (calls_out.h). */
#define _GNU_SOURCE
#include "calls_out.h"

#include <stdio.h>
#include <stdlib.h>
#include "events_decode.h"
#include "symbols.h"

/* TID's own instruction count at global count INSNS. */
static uint64_t own(const struct np_calls_out *e, uint32_t tid, uint64_t insns)
{
    return tid - 1 < e->nthreads ? insns - e->insns_out[tid - 1] : insns;
}

static uint64_t when(const struct np_calls_out *e, uint64_t cycles, uint64_t insns)
{
    if (e->metric == NP_METRIC_COUNT)
        return insns;
    if (e->ns_per_cycle > 0) /* rounded as the trace reader rounds ticks */
        return (uint64_t)((double)cycles * e->ns_per_cycle + 0.5);
    return cycles;
}

int np_calls_out_sink_rc(struct np_calls_out *e, int rc)
{
    if (rc && !e->sink_rc)
        e->sink_rc = rc;
    return rc;
}

int np_calls_out_writer_rc(struct np_calls_out *e, int rc)
{
    if (rc && !e->writer_error[0])
        snprintf(e->writer_error, sizeof e->writer_error, "%s", np_trace_writer_error(e->writer));
    return rc;
}

static int on_thread(void *ctx, uint32_t tid, const char *name)
{
    struct np_calls_out *e = ctx;
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
    int rc = 0;
    if (e->writer && np_calls_out_writer_rc(e, np_trace_writer_thread(e->writer, tid, name ? name : "")))
        rc = -1;
    else if (e->sink && e->sink->thread)
        rc = np_calls_out_sink_rc(e, e->sink->thread(e->sink->ctx, tid, name));
    free(full);
    free(short_name);
    return rc;
}

/* One event to the sink: through its batch callback when it has one (a
 * sink that writes a trace), else the event's own. */
static int tell(struct np_calls_out *e, uint32_t tid, uint64_t time, uint64_t arg, enum np_sink_event kind)
{
    const struct np_event_sink *s = e->sink;
    int rc = 0;
    if (!s)
        return 0;
    if (s->events) {
        const struct np_event ev = { time, arg, kind };
        size_t done;
        rc = s->events(s->ctx, tid, &ev, 1, &done);
    } else if (kind == NP_EVENT_ENTER && s->enter) {
        rc = s->enter(s->ctx, tid, time, arg);
    } else if (kind == NP_EVENT_EXIT && s->exit) {
        rc = s->exit(s->ctx, tid, time);
    } else if (kind == NP_EVENT_RESYNC && s->resync) {
        rc = s->resync(s->ctx, tid, time, arg);
    } else if (kind == NP_EVENT_SWITCH && s->switch_out) {
        rc = s->switch_out(s->ctx, tid, time, arg);
    }
    return np_calls_out_sink_rc(e, rc);
}

/* An event of thread TID at CYCLES, MINE its own instructions: the
 * writer's result WRC (of the same event) kept, then the sink told. */
static int event(struct np_calls_out *e, uint32_t tid, uint64_t cycles, uint64_t mine, int wrc, uint64_t arg,
                 enum np_sink_event kind)
{
    e->last_cycles = cycles;
    if (np_calls_out_writer_rc(e, wrc))
        return -1;
    return tell(e, tid, when(e, cycles, mine), arg, kind);
}

static int on_enter(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t address)
{
    struct np_calls_out *e = ctx;
    uint64_t mine = own(e, tid, insns);
    int wrc = e->writer ? np_trace_writer_enter(e->writer, tid, cycles, mine, address) : 0;
    return event(e, tid, cycles, mine, wrc, address, NP_EVENT_ENTER);
}

static int on_leave(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns)
{
    struct np_calls_out *e = ctx;
    uint64_t mine = own(e, tid, insns);
    int wrc = e->writer ? np_trace_writer_exit(e->writer, tid, cycles, mine) : 0;
    return event(e, tid, cycles, mine, wrc, 0, NP_EVENT_EXIT);
}

static int on_resync(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t n)
{
    struct np_calls_out *e = ctx;
    uint64_t mine = own(e, tid, insns);
    int wrc = e->writer ? np_trace_writer_resync(e->writer, tid, cycles, mine, n) : 0;
    return event(e, tid, cycles, mine, wrc, n, NP_EVENT_RESYNC);
}

static int on_resume(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint64_t out_cycles,
                     uint64_t out_insns)
{
    struct np_calls_out *e = ctx;
    if (tid - 1 < e->nthreads)
        e->insns_out[tid - 1] += insns - out_insns;
    uint64_t mine = own(e, tid, insns);
    int wrc = e->writer ? np_trace_writer_switch(e->writer, tid, cycles, mine, cycles - out_cycles) : 0;
    /* the instructions of the others are not the thread's: out 0 */
    uint64_t out = e->metric == NP_METRIC_COUNT ? 0
                   : e->ns_per_cycle > 0 ? np_ticks_ns(e->ns_per_cycle, cycles - out_cycles)
                                         : cycles - out_cycles;
    return event(e, tid, cycles, mine, wrc, out, NP_EVENT_SWITCH);
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

int np_calls_out_end(struct np_calls_out *c, int status, struct np_trace_summary *summary)
{
    char err[256];
    if (c->sink && c->sink->end && !c->sink_rc)
        np_calls_out_sink_rc(c, c->sink->end(c->sink->ctx));
    if (c->sink_rc && status == NP_TRACE_OK)
        status = c->sink_rc < 0 ? NP_TRACE_ESTOP : c->sink_rc;
    if (c->writer) {
        if (np_trace_writer_close(c->writer, c->last_cycles, 0, err, sizeof err) && !c->writer_error[0])
            snprintf(c->writer_error, sizeof c->writer_error, "%s", err);
        c->writer = NULL;
        if (c->writer_error[0] && status == NP_TRACE_OK) {
            snprintf(summary->message, sizeof summary->message, "%s", c->writer_error);
            status = NP_TRACE_EIO;
        }
    }
    free(c->insns_out);
    c->insns_out = NULL;
    return status;
}
