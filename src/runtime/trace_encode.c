/* trace_encode.c - the trace format's EVENTS encoder, into the caller's
 * buffer (trace_encode.h): what a target's trace links. The other chunks'
 * builders and samples are trace_chunks.c's, an object of their own, so
 * that a firmware linked without --gc-sections does not carry them. */
#include "trace_encode.h"

/* ---- EVENTS ---------------------------------------------------------------------- */

int np_trace_enc_init(struct np_trace_enc *e, void *buf, size_t size, uint32_t tid, np_trace_flush_fn flush,
                      void *ctx)
{
    if (!buf || size < NP_TRACE_ENC_MIN)
        return -1;
    *e = (struct np_trace_enc){ 0 };
    e->buf = buf;
    e->size = size;
    /* room for one more record after the limit: a chunk ends once full */
    e->limit = size - NP_TRACE_EVENTS_PREFIX - NP_TRACE_RECORD_MAX;
    e->tid = tid;
    e->flush = flush;
    e->ctx = ctx;
    return 0;
}

void np_trace_enc_thread(struct np_trace_enc *e, uint32_t tid)
{
    e->tid = tid;
    e->len = 0;
    e->count = 0;
    e->prev_pc = 0;
}

void np_trace_enc_flush(struct np_trace_enc *e)
{
    if (!e->count)
        return;
    e->flush(e, e->ctx);
    e->len = 0;
    e->count = 0;
    e->prev_pc = 0;
}

size_t np_trace_enc_chunk(struct np_trace_enc *e)
{
    np_trace_events_prefix(e->buf, e->tid, e->base, e->count, NP_COMPRESS_NONE, (uint32_t)e->len,
                           (uint32_t)e->len);
    np_trace_seal(e->buf);
    return NP_TRACE_EVENTS_PREFIX + e->len;
}

void np_trace_enc_put_small(struct np_trace_enc *e, unsigned kind, uint64_t value, uint64_t tick)
{
    np_trace_enc_put_as(1, e, kind, value, tick);
}
