/* target_ring.c - a target's RING chunks into EVENTS chunks: the words
 * its hooks wrote (docs/trace-format.md, "RING"), each a record that
 * stands alone, read in order with the chunk's head state (the thread, the
 * clock's high bits) and the TIME and THREAD words that change it. A run
 * of one thread's records becomes one EVENTS chunk; a switch back to a
 * thread gives it a SWITCH event (how long it was out), as the target's
 * EVENTS encoder does. A record's time is the first at or after the last
 * one's with its low bits (np_ring_time_after): the target writes a TIME
 * word when it would not be. */
#include <stdlib.h>
#include <string.h>
#include "target_ring.h"
#include "common/trace_format.h"

struct run {
    uint32_t tid, count;
    uint64_t base, last, prev_addr;
};

static int grow(struct np_ring_dec *d, size_t more)
{
    if (d->len + more <= d->cap)
        return 0;
    size_t cap = d->cap ? d->cap * 2 : 4096;
    while (cap < d->len + more)
        cap *= 2;
    uint8_t *b = realloc(d->buf, cap);
    if (!b)
        return -1;
    d->buf = b;
    d->cap = cap;
    return 0;
}

/* One record of the run R at time T. */
static int put(struct np_ring_dec *d, struct run *r, uint64_t t, unsigned kind, uint64_t arg)
{
    if (grow(d, NP_TRACE_RECORD_MAX))
        return -1;
    if (!r->count)
        r->base = r->last = t;
    d->len += np_trace_put_record(d->buf + d->len, t - r->last, kind, arg, &r->prev_addr);
    r->last = t;
    r->count++;
    return 0;
}

/* The run R out as an EVENTS chunk, and a new one begun for TID. */
static int flush(struct np_ring_dec *d, struct run *r, uint32_t tid, int (*emit)(void *, const uint8_t *, size_t),
                 void *ctx)
{
    int st = 0;
    if (r->count) {
        uint32_t n = (uint32_t)(d->len - NP_TRACE_EVENTS_PREFIX);
        np_trace_events_prefix(d->buf, r->tid, r->base, r->count, 0, n, n);
        np_trace_chunk_seal(d->buf);
        st = emit(ctx, d->buf, d->len);
    }
    *r = (struct run){ .tid = tid };
    d->len = NP_TRACE_EVENTS_PREFIX;
    return st;
}

/* When TID was switched out (0: not yet), cleared; the slot to set. */
static struct np_ring_out *out_of(struct np_ring_dec *d, uint32_t tid)
{
    for (size_t i = 0; i < d->n_out; i++)
        if (d->out[i].tid == tid)
            return &d->out[i];
    if (d->n_out == d->cap_out) {
        size_t cap = d->cap_out ? 2 * d->cap_out : 16;
        struct np_ring_out *o = realloc(d->out, cap * sizeof *o);
        if (!o)
            return NULL;
        d->out = o;
        d->cap_out = cap;
    }
    d->out[d->n_out] = (struct np_ring_out){ tid, 0 };
    return &d->out[d->n_out++];
}

int np_ring_decode(struct np_ring_dec *d, const uint8_t *p, size_t len,
                   int (*emit)(void *ctx, const uint8_t *chunk, size_t n), void *ctx, const char **err)
{
    *err = "out of memory";
    if (len < NP_RING_HEAD || (len - NP_RING_HEAD) % 4) {
        *err = "a RING chunk's length is not its fields and whole words";
        return -1;
    }
    uint32_t base = np_get_u32(p), tid = np_get_u32(p + 4);
    uint64_t clock = np_get_u64(p + 8), last = clock;
    uint32_t flags = np_get_u32(p + 16);
    if (flags & ~NP_RING_FLIGHT) {
        *err = "a RING chunk has flags this reader does not know";
        return -1;
    }
    /* a flight recorder's words: none counts before the first TIME_HI,
     * TIME, THREAD run (0: synchronised; 1, 2: its first words seen) */
    int sync = flags & NP_RING_FLIGHT ? 3 : 0;
    d->len = 0;
    if (grow(d, NP_TRACE_EVENTS_PREFIX))
        return -1;
    struct run r = { .tid = tid };
    d->len = NP_TRACE_EVENTS_PREFIX;
    uint32_t far_lo = 0;
    int has_far = 0, st = 0;
    for (const uint8_t *w8 = p + NP_RING_HEAD; w8 < p + len && !st; w8 += 4) {
        uint32_t w = np_get_u32(w8), v = w >> 8, low;
        if (sync) {
            unsigned kind = (w & 3) == 2 ? w >> 2 & 63 : 0;
            if (kind == NP_RING_TIME_HI) {
                sync = 2;
                clock = (uint64_t)v << (NP_RING_TIME_BITS + 24);
            } else if (kind == NP_RING_TIME && sync == 2) {
                sync = 1;
                clock |= (uint64_t)v << NP_RING_TIME_BITS;
            } else if (kind == NP_RING_THREAD && sync == 1) {
                sync = 0;
                r.tid = v & 0xfff;
                last = clock | (v >> 12 & NP_RING_TIME_MASK);
            } else { /* (a call whose context was overwritten, as older ones) */
                sync = 3;
            }
            continue;
        }
        /* a word with a time: the first at or after the last one's with its
         * low bits, and the clock's high bits from it */
        unsigned bits = np_ring_word_time(w, &low);
        uint64_t t = bits ? np_ring_time_after(last, low, bits) : last;
        last = t;
        if (bits)
            clock = t & ~(uint64_t)NP_RING_TIME_MASK;
        if (w & 1) { /* ENTRY */
            st = put(d, &r, t, NP_EV_ENTRY, (base & ~NP_RING_FN_MASK) | (w & NP_RING_FN_MASK & ~1u));
            continue;
        }
        if (!(w & 2)) { /* EXIT */
            st = put(d, &r, t, NP_EV_EXIT, 0);
            continue;
        }
        switch (w >> 2 & 63) {
        case NP_RING_TIME:
            clock = (clock & ~((uint64_t)0xffffff << NP_RING_TIME_BITS)) | (uint64_t)v << NP_RING_TIME_BITS;
            last = clock > last ? clock : last;
            break;
        case NP_RING_TIME_HI:
            clock = (clock & (((uint64_t)1 << (NP_RING_TIME_BITS + 24)) - 1)) | (uint64_t)v << (NP_RING_TIME_BITS + 24);
            break;
        case NP_RING_THREAD: {
            uint32_t to = v & 0xfff;
            if (to == r.tid)
                break;
            struct np_ring_out *o = out_of(d, r.tid);
            if (!o)
                return -1;
            o->at = t;
            if ((st = flush(d, &r, to, emit, ctx)))
                break;
            if (!(o = out_of(d, to)))
                return -1;
            if (o->at) {
                st = put(d, &r, t, NP_EV_SWITCH, t - o->at);
                o->at = 0;
            }
            break;
        }
        case NP_RING_LOST:
            st = put(d, &r, t, NP_EV_LOST, v);
            break;
        case NP_RING_PAD:
            break;
        case NP_RING_FAR_LO:
            far_lo = v;
            has_far = 1;
            break;
        case NP_RING_FAR_HI:
            if (!has_far) {
                *err = "a RING chunk's FAR_HI word has no FAR_LO before it";
                return -1;
            }
            st = put(d, &r, t, NP_EV_ENTRY, (uint64_t)(v & 0xff) << 24 | far_lo);
            has_far = 0;
            break;
        default:
            *err = "a RING chunk holds a word of an unknown kind";
            return -1;
        }
    }
    if (!st)
        st = flush(d, &r, 0, emit, ctx);
    return st;
}

void np_ring_dec_free(struct np_ring_dec *d)
{
    free(d->out);
    free(d->buf);
    *d = (struct np_ring_dec){ 0 };
}
