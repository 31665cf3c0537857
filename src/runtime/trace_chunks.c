/* trace_chunks.c - samples in EVENTS, and EVENTS chunks to a byte sink
 * (trace_encode.h): the recorder's (a host's), apart from the encoder a
 * target links (trace_encode.c). The other chunks are
 * common/trace_chunks.c's. */
#include "trace_encode.h"

void np_trace_enc_sample(struct np_trace_enc *e, uint64_t tick, unsigned n, uint64_t overrun, uint64_t skipped,
                         const uint64_t *frames)
{
    if (!n && !skipped)
        return; /* (no frames: the skipped periods alone, trace-format.md) */
    if (!n)
        overrun = 0;
    if (n > NP_SAMPLE_MAX_FRAMES)
        n = NP_SAMPLE_MAX_FRAMES;
    /* a buffer smaller than the largest sample: a chunk of its own */
    if (e->len + (4 + (size_t)n) * NP_VARINT_MAX > e->size - NP_TRACE_EVENTS_PREFIX)
        np_trace_enc_flush(e);
    if ((4 + (size_t)n) * NP_VARINT_MAX > e->size - NP_TRACE_EVENTS_PREFIX)
        n = (unsigned)((e->size - NP_TRACE_EVENTS_PREFIX) / NP_VARINT_MAX - 4); /* its innermost frames */
    uint8_t *o = np_trace_enc_at(e, tick);
    size_t k = np_put_varint(o, np_trace_dt(&e->prev, tick) << NP_EV_KIND_BITS | NP_EV_SAMPLE);
    k += np_put_varint(o + k, n);
    k += np_put_varint(o + k, overrun);
    k += np_put_varint(o + k, skipped);
    uint64_t prev = e->prev_pc;
    for (unsigned i = 0; i < n; i++) {
        k += np_put_varint(o + k, np_zigzag((int64_t)(frames[i] - prev)));
        prev = frames[i];
    }
    if (n)
        e->prev_pc = frames[0];
    np_trace_enc_added(e, k);
}

void np_trace_enc_values(struct np_trace_enc *e, uint64_t tick, int retval, const struct np_value_out *v,
                         unsigned n)
{
    if (e->len + NP_TRACE_VALUES_RECORD_MAX > e->size - NP_TRACE_EVENTS_PREFIX)
        np_trace_enc_flush(e);
    uint8_t *o = np_trace_enc_at(e, tick);
    np_trace_enc_added(e, np_trace_put_values(o, np_trace_dt(&e->prev, tick), retval, v, n));
}

void np_trace_flush_to_sink(struct np_trace_enc *e, void *sink)
{
    struct np_trace_sink *s = sink;
    if (s->write(s->ctx, e->buf, np_trace_enc_chunk(e)) != 0)
        s->failed++;
}
