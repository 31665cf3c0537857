/* fuzz_events.c - libFuzzer target, structure-aware: the input is a
 * program for trace_builder, so every trace it writes is well-formed and
 * the fuzzer explores what fuzz_trace_read rarely reaches: any sequence of
 * events (exits with nothing open, LOST of as many events as can have
 * been lost, SWITCH longer than the gap, SAMPLE
 * with any frames, RESYNC of more calls than are open, COUNT, time
 * running backwards across chunks), in zstd and plain chunks, over several
 * threads, with or without END. Checks: the read succeeds, every event
 * written is delivered, and the model's invariant holds (self times add
 * up to the threads' totals; min <= max; the listener is told every call
 * kept, nested as the model promises, unless the profile is estimated
 * from samples). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/model.h"
#include "analyze/trace_read.h"
#include "common/trace_format.h"
#include "../timeline.h"
#include "../trace_builder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
    const uint8_t *p, *end;
};

static uint64_t next(struct input *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->p < in->end; i++)
        v = v << 8 | *in->p++;
    return v;
}

/* Writes the trace the input describes; returns the events written.
 * The input is read left to right as the calls' arguments are written:
 * each value is read into a variable of its own first, as C leaves the
 * order in which a call's arguments are evaluated unspecified (GCC and
 * clang differ), and one input must make the same trace with any compiler. */
static uint64_t build(struct tb *b, struct input *in)
{
    uint64_t tick = next(in, 2), events = 0, start = tick;
    tb_header(b);
    double ns_per_tick = 1.0 + (double)next(in, 1) / 16;
    uint64_t start_ns = next(in, 1);
    tb_info(b, 1, 0, ns_per_tick, tick, start_ns, "fuzz", 0, NULL);
    tb_module(b, 0, 0x1000, 0x2000, "", 0, "/nonexistent/fuzz.so");
    if (next(in, 1) & 1)
        tb_sampling(b, tick, 997, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME, 1003009, 128);
    tb_events_begin(b, 1, tick);
    while (in->p < in->end) {
        unsigned op = (unsigned)next(in, 1);
        switch (op % 8) {
        case 0: /* a call of one of 16 functions, or of any address */
        case 1: {
            tick += next(in, 1);
            uint64_t address = op & 8 ? next(in, 8) : 0x1000 + 16 * (next(in, 1) % 16);
            tb_enter(b, tick, address);
            events++;
            break;
        }
        case 2:
        case 3:
            tb_exit(b, tick += next(in, 1));
            events++;
            break;
        case 4: { /* no more events than can have been lost by then (one a
                   * tick since the start): more would be damage */
            tick += next(in, 1);
            uint64_t most = tick > start ? tick - start : 0, lost = next(in, 1);
            tb_lost(b, tick, most == UINT64_MAX ? lost : lost % (most + 1)); /* a tick wrapped round */
            events++;
            break;
        }
        case 5: {
            tick += next(in, 1);
            uint64_t ticks = next(in, 2);
            tb_switch(b, tick, ticks);
            events++;
            break;
        }
        case 6: /* a new chunk, perhaps of another thread, perhaps from earlier */
            tb_events_end(b, op & 8 ? NP_COMPRESS_ZSTD : NP_COMPRESS_NONE);
            if (op & 16)
                tb_thread(b, (uint32_t)next(in, 1) % 4, "t");
            tick -= op & 32 ? next(in, 1) : 0;
            tb_events_begin(b, (uint32_t)next(in, 1) % 4, tick);
            break;
        default:
            if (op & 16) { /* a sample of 1 to 4 frames, in the module or anywhere */
                uint64_t frames[4];
                unsigned n = 1 + (unsigned)next(in, 1) % 4;
                for (unsigned i = 0; i < n; i++)
                    frames[i] = op & 32 ? next(in, 8) : 0x1000 + next(in, 2) % 0x1000;
                tick += next(in, 1);
                uint64_t overrun = next(in, 1);
                uint64_t skipped = next(in, 1);
                tb_sample(b, tick, frames, n, overrun, skipped);
                events++;
            } else if (op & 32) { /* calls closed by re-synchronisation, or the second counter */
                tick += next(in, 1);
                if (op & 64) {
                    uint64_t closed = next(in, 1) % 8;
                    tb_resync(b, tick, closed);
                    events++;
                } else {
                    uint64_t count = next(in, 2);
                    tb_count(b, tick, count); /* no event of its own */
                }
            } else { /* a jump in time */
                tick += next(in, 4);
            }
            break;
        }
    }
    tb_events_end(b, NP_COMPRESS_ZSTD);
    if (tick & 1)
        tb_end(b, tick, 0, 1.0);
    return events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = { data, data + size };
    struct tb b;
    tb_init(&b);
    uint64_t events = build(&b, &in);
    int fd = memfd_create("events.npt", MFD_CLOEXEC);
    if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len)
        abort();
    tb_free(&b);
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener };
    struct np_model *m = np_model_new(&opt, NULL);
    struct np_event_sink sink = np_model_sink(m);
    struct np_trace_summary sum = { 0 };
    if (np_trace_read_fd(fd, "events.npt", &sink, NULL, &sum) != NP_TRACE_OK || sum.events != events)
        abort();
    if (np_model_finish(m) != 0)
        abort();
    size_t nf, nt, nc = tl.n;
    const struct np_function *f = np_model_functions(m, &nf);
    const struct np_thread *t = np_model_threads(m, &nt);
    const struct np_call *c = tl.calls;
    if (timeline_check(&tl))
        abort();
    size_t nn;
    const struct np_node *nodes = np_model_nodes(m, &nn);
    for (size_t i = 0; i < nc; i++) /* each call is of its node's function, in its thread */
        if (c[i].thread >= nt || c[i].function >= nf || c[i].node >= nn || nodes[c[i].node].function != c[i].function ||
            nodes[c[i].node].thread != c[i].thread)
            abort();
    uint64_t self = 0, total = 0, calls = 0, marked = 0, resynced = 0, closed = 0;
    for (size_t i = 0; i < nc; i++)
        marked += c[i].resynced;
    for (size_t i = 0; i < nf; i++) {
        self += f[i].self_ns;
        resynced += f[i].resynced;
        if (f[i].calls && f[i].min_ns > f[i].max_ns)
            abort();
    }
    for (size_t i = 0; i < nt; i++) {
        total += t[i].total_ns;
        calls += t[i].calls;
        closed += t[i].closed_at_resync;
    }
    /* in a profile estimated from samples (no call kept), "calls" count
     * samples, and the timeline is made of successive samples; without
     * filters every call a RESYNC closed is counted and told so */
    if (self != total || (!np_model_estimated(m) && (calls != nc || marked != resynced || closed != resynced)))
        abort();
    np_model_free(m);
    timeline_free(&tl);
    close(fd);
    return 0;
}
