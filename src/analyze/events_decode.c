/* events_decode.c - decoding an EVENTS chunk's payload (interface in
 * events_decode.h). */
#include "events_decode.h"
#include "common/trace_format.h"
#include "containers.h"
#include <stdlib.h>

#define ZSTD_MAX_RATIO 32768u  /* a 4-byte RLE block decodes to at most 128 KiB */

_Static_assert((int)NP_EVENT_ENTER == (int)NP_EV_ENTRY && (int)NP_EVENT_EXIT == (int)NP_EV_EXIT &&
                   (int)NP_EVENT_LOST == (int)NP_EV_LOST && (int)NP_EVENT_SWITCH == (int)NP_EV_SWITCH &&
                   (int)NP_EVENT_RESYNC == (int)NP_EV_RESYNC,
               "the sink's event kinds are the format's");

int np_events_head(const uint8_t *payload, size_t len, struct np_events_head *h)
{
    if (len < NP_EVENTS_HEADER)
        return NP_EVENTS_SHORT;
    h->tid = np_get_u32(payload);
    h->tick = np_get_u64(payload + 4);
    h->count = np_get_u32(payload + 12);
    h->compression = payload[16];
    h->declen = np_get_u32(payload + 17);
    if (h->declen > NP_TRACE_CHUNK_MAX)
        return NP_EVENTS_TOO_LONG;
    if (h->count > h->declen)
        return NP_EVENTS_COUNT;
    return NP_EVENTS_OK;
}

void np_stream_buf_free(struct np_stream_buf *b)
{
    free(b->dec);
    ZSTD_freeDCtx(b->zstd);
    b->dec = NULL;
    b->deccap = 0;
    b->zstd = NULL;
}

int np_events_stream(struct np_stream_buf *b, const struct np_events_head *h, const uint8_t *payload, size_t len,
                     const uint8_t **stream, uint64_t *detail)
{
    const uint8_t *src = payload + NP_EVENTS_HEADER;
    size_t have = len - NP_EVENTS_HEADER;
    uint32_t declen = h->declen;
    if (h->compression == NP_COMPRESS_NONE) {
        if (declen != have)
            return NP_EVENTS_RAW_SIZE;
        *stream = src;
        return NP_EVENTS_OK;
    }
    if (h->compression != NP_COMPRESS_ZSTD)
        return NP_EVENTS_COMPRESSION;
    if ((uint64_t)declen > (uint64_t)have * ZSTD_MAX_RATIO)
        return NP_EVENTS_RATIO;
    unsigned long long framed = ZSTD_getFrameContentSize(src, have);
    if (framed == ZSTD_CONTENTSIZE_ERROR)
        return NP_EVENTS_NOT_ZSTD;
    if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != declen) {
        *detail = framed;
        return NP_EVENTS_FRAME_SIZE;
    }
    if (NP_GROW(b->dec, b->deccap, (size_t)declen + 1) < 0 || (!b->zstd && !(b->zstd = ZSTD_createDCtx())))
        return NP_EVENTS_NOMEM;
    size_t got = ZSTD_decompressDCtx(b->zstd, b->dec, declen, src, have);
    if (ZSTD_isError(got)) {
        *detail = got;
        return NP_EVENTS_ZSTD;
    }
    if (got != declen) {
        *detail = got;
        return NP_EVENTS_DECODED_SIZE;
    }
    *stream = b->dec;
    return NP_EVENTS_OK;
}

/* ---- times ------------------------------------------------------------------- */

uint64_t np_ticks_ns(double ns_per_tick, uint64_t ticks)
{
    double ns = (double)ticks * ns_per_tick + 0.5;
    return ns >= 0x1p64 ? UINT64_MAX : (uint64_t)ns;
}

uint64_t np_tick_time(const struct np_trace_process *p, uint64_t tick)
{
    if (tick >= p->start_tick) {
        uint64_t d = np_ticks_ns(p->ns_per_tick, tick - p->start_tick);
        return p->start_ns > UINT64_MAX - d ? UINT64_MAX : p->start_ns + d;
    }
    uint64_t d = np_ticks_ns(p->ns_per_tick, p->start_tick - tick);
    return p->start_ns > d ? p->start_ns - d : 0;
}

uint64_t np_events_possible(const struct np_trace_process *p, uint64_t tick)
{
    double per_tick = p->ns_per_tick > 1 ? p->ns_per_tick : 1; /* also for NaN */
    double n = tick > p->start_tick ? (double)(tick - p->start_tick) * per_tick : 0;
    return n >= 0x1p63 ? UINT64_MAX : (uint64_t)n + 1;
}

/* Whether np_tick_time needs none of its care (a time before the start,
 * a value past 2^63, an overflow) for ticks from FIRST to LAST, which do
 * not decrease (unless WRAPPED past 2^64): then fast_time, monotonic,
 * gives its values for all of them. */
static bool fast_times(const struct np_trace_process *p, uint64_t first, uint64_t last, bool wrapped)
{
    uint64_t dt = last - p->start_tick;
    double ns = (double)(int64_t)dt * p->ns_per_tick + 0.5;
    return !wrapped && first >= p->start_tick && dt < (UINT64_C(1) << 63) && ns < 0x1p63 &&
           (uint64_t)(int64_t)ns <= UINT64_MAX - p->start_ns;
}

/* np_tick_time where fast_times holds: below 2^63 the signed conversions
 * give the values of the unsigned ones, cheaper. */
static inline uint64_t fast_time(const struct np_trace_process *p, uint64_t tick)
{
    double ns = (double)(int64_t)(tick - p->start_tick) * p->ns_per_tick + 0.5;
    return p->start_ns + (uint64_t)(int64_t)ns;
}

/* Turns the ticks in EV[0..N).time_ns into times (FIRST, WRAPPED: as
 * fast_times has them). */
static void ticks_to_times(const struct np_trace_process *p, struct np_event *ev, uint32_t n, uint64_t first,
                           bool wrapped)
{
    if (!n)
        return;
    if (!fast_times(p, first, ev[n - 1].time_ns, wrapped)) {
        for (uint32_t i = 0; i < n; i++)
            ev[i].time_ns = np_tick_time(p, ev[i].time_ns);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        ev[i].time_ns = fast_time(p, ev[i].time_ns);
}

/* ---- events ------------------------------------------------------------------ */

/* np_get_varint, with the one- and two-byte values of most events first;
 * when ROOMY, the caller knows that NP_VARINT_MAX bytes are there. */
static inline __attribute__((always_inline)) int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v,
                                                            bool roomy)
{
    const uint8_t *q = *p;
    if (roomy || end - q >= 2) {
        if (q[0] < 0x80) {
            *v = q[0];
            *p = q + 1;
            return 1;
        }
        if (q[1] < 0x80) {
            *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
            *p = q + 2;
            return 1;
        }
    }
    return np_get_varint(p, end, v);
}

/* Decodes up to MAX records, their events into EV (COUNT records give
 * none); returns the events. ROOMY: the stream holds the longest MAX
 * records could take, so no varint needs checking for its end before its
 * second byte. TIMES: each tick is made a time at once, as if fast_times
 * held; the caller checks that it did. Else the ticks first, then the
 * times. COUNTED: the times are the count (NP_METRIC_COUNT), a switch
 * lasts 0 (the count does not run while the thread is out). */
static inline __attribute__((always_inline)) uint32_t decode(const struct np_trace_process *pr, struct np_decode *d,
                                                             struct np_event *ev, uint32_t max, bool roomy,
                                                             bool times, bool counted)
{
    const uint8_t *p = d->p, *end = d->end;
    uint64_t tick = d->tick, first = tick, addr = d->addr, count = d->count;
    bool wrapped = false;
    /* the next event, and the end of the room left: a COUNT record takes
     * one of the MAX records and gives no event (pointers, as few live
     * values as can be: the calls' path below must not spill) */
    struct np_event *e = ev, *stop = ev + max;
    while (e < stop) {
        const uint8_t *rec = p;
        uint64_t v, arg = 0;
        if (!get_varint(&p, end, &v, roomy)) {
            d->bad = NP_DECODE_BAD_VARINT;
            p = rec;
            break;
        }
        unsigned kind = (unsigned)(v & ((1u << NP_EV_KIND_BITS) - 1));
        if (kind > NP_EV_SWITCH) { /* out of the way of calls: rare */
            if (kind != NP_EV_RESYNC && kind != NP_EV_COUNT) { /* the tick stays before the record */
                d->bad = kind == NP_EV_SAMPLE   ? NP_DECODE_SAMPLE
                         : kind == NP_EV_VALUES ? NP_DECODE_VALUES
                                                : NP_DECODE_BAD_KIND;
                d->bad_kind = kind;
                p = rec;
                break;
            }
            tick += v >> NP_EV_KIND_BITS;
            wrapped |= tick < (v >> NP_EV_KIND_BITS);
            if (!get_varint(&p, end, &arg, roomy)) {
                d->bad = NP_DECODE_BAD_VARINT;
                p = rec;
                break;
            }
            if (kind == NP_EV_COUNT) {
                if (counted) /* else the count is never read */
                    count += arg;
                stop--;
            } else {
                *e++ = (struct np_event){ counted ? count : times ? fast_time(pr, tick) : tick, arg, kind, 0 };
            }
            continue;
        }
        /* the calls' path, as short as it can be */
        tick += v >> NP_EV_KIND_BITS;
        wrapped |= tick < (v >> NP_EV_KIND_BITS);
        if (kind != NP_EV_EXIT && !get_varint(&p, end, &arg, roomy)) {
            d->bad = NP_DECODE_BAD_VARINT;
            p = rec;
            break;
        }
        if (kind == NP_EV_ENTRY) {
            arg = addr += (uint64_t)np_unzigzag(arg);
        } else if (kind >= NP_EV_LOST) { /* SWITCH or LOST: as few tests as before for EXIT */
            if (kind == NP_EV_SWITCH) {
                arg = counted ? 0 : np_ticks_ns(pr->ns_per_tick, arg);
            } else if (arg > np_events_possible(pr, tick)) {
                d->bad = NP_DECODE_BAD_LOST;
                d->bad_value = arg;
                tick -= v >> NP_EV_KIND_BITS; /* the tick stays before the record */
                p = rec;
                break;
            }
        }
        *e++ = (struct np_event){ counted ? count : times ? fast_time(pr, tick) : tick, arg, kind, 0 };
    }
    uint32_t n = (uint32_t)(e - ev);
    d->p = p, d->tick = tick, d->addr = addr, d->count = count;
    d->records += n + (uint32_t)(ev + max - stop);
    if (counted)
        return n;
    if (!times)
        ticks_to_times(pr, ev, n, first, wrapped);
    else if (!fast_times(pr, first, tick, wrapped))
        d->slow_times = true; /* np_events_decode decodes these again */
    return n;
}

uint32_t np_events_decode(const struct np_trace_process *pr, struct np_decode *d, struct np_event *ev, uint32_t max)
{
    if (d->counted) /* an emulated run's instructions: not worth the fast paths */
        return decode(pr, d, ev, max, false, false, true);
    /* as many as the bytes left surely hold without checks, and again
     * (fewer each time) until few bytes are left */
    uint32_t n = 0, k = 0; /* events, records */
    for (;;) {
        size_t roomy = (size_t)(d->end - d->p) / (2 * NP_VARINT_MAX);
        if (roomy < 64 || k == max)
            break;
        uint32_t want = roomy < max - k ? (uint32_t)roomy : max - k;
        struct np_decode from = *d;
        uint32_t got = d->slow_times ? 0 : decode(pr, d, ev + n, want, true, true, false);
        if (d->slow_times) { /* times that need np_tick_time: rare */
            *d = from;
            d->slow_times = true;
            got = decode(pr, d, ev + n, want, true, false, false);
        }
        uint32_t records = d->records - from.records;
        n += got;
        k += records;
        if (records < want)
            return n; /* stopped at a record */
    }
    if (k < max)
        n += decode(pr, d, ev + n, max - k, false, false, false);
    return n;
}
