/* trace_encode.h - the runtime's encoder of the trace format
 * (docs/trace-format.md), freestanding: no file descriptor, no allocation,
 * no module walk. Chunks are built in buffers the caller gives; a full
 * EVENTS chunk goes to the caller's flush function, or, through
 * np_trace_flush_to_sink, uncompressed to a byte sink (a target's UART or
 * semihosting). The recorder (record_write.c) builds its files with it,
 * and compresses in its flush; a target writes the same format with it.
 * The integers, headers and records themselves are common/trace_format.h's,
 * which the analysis side's writer shares. */
#ifndef NP_TRACE_ENCODE_H
#define NP_TRACE_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include "../common/trace_format.h"

#include "../common/trace_chunks.h"

/* np_trace_chunk_seal out of line: a chunk built otherwise (a target's,
 * field by field) checksummed by the one copy of the code. */
void np_trace_seal(void *chunk);

/* ---- EVENTS ------------------------------------------------------------------------ */

struct np_trace_enc;
/* Takes E's full chunk: E->count records, E->len bytes of stream at
 * E->buf + NP_TRACE_EVENTS_PREFIX (np_trace_enc_chunk fills the prefix
 * for writing it as it is). The encoder empties the chunk afterwards. */
typedef void (*np_trace_flush_fn)(struct np_trace_enc *e, void *ctx);

struct np_trace_enc {
    uint8_t *buf;       /* NP_TRACE_EVENTS_PREFIX bytes of room, then the stream */
    size_t size;        /* of buf */
    size_t limit;       /* a chunk ends once its stream holds this much */
    size_t len;         /* the stream's bytes */
    uint32_t count;     /* its records */
    uint32_t tid;
    uint64_t base, prev, prev_addr, prev_pc;
    np_trace_flush_fn flush;
    void *ctx;
};

/* Readies E over BUF (SIZE bytes: at least NP_TRACE_ENC_MIN), for the
 * thread TID; chunks end near the buffer's end. Returns -1 when BUF is
 * too small. */
#define NP_TRACE_ENC_MIN (NP_TRACE_EVENTS_PREFIX + 4 * NP_TRACE_RECORD_MAX)
int np_trace_enc_init(struct np_trace_enc *e, void *buf, size_t size, uint32_t tid, np_trace_flush_fn flush,
                      void *ctx);
/* Starts TID's stream: E must be empty (flushed). */
void np_trace_enc_thread(struct np_trace_enc *e, uint32_t tid);
/* Hands the chunk to the flush function, if it holds a record. */
void np_trace_enc_flush(struct np_trace_enc *e);
/* Fills the prefix of E's chunk, uncompressed, and its checksum; its
 * bytes, at E->buf. */
size_t np_trace_enc_chunk(struct np_trace_enc *e);

/* Ticks from *PREV to TICK (never backwards, at most 60 bits); TICK, or
 * *PREV if it is earlier, becomes *PREV. */
static inline __attribute__((always_inline)) uint64_t np_trace_dt(uint64_t *prev, uint64_t tick)
{
    if ((int64_t)(tick - *prev) < 0)
        tick = *prev;
    uint64_t dt = tick - *prev;
    if (dt >> 60)
        dt = (1ull << 60) - 1;
    *prev = tick;
    return dt;
}

/* Where E's next record goes, one at TICK: the first of a chunk sets its
 * base. */
static inline __attribute__((always_inline)) uint8_t *np_trace_enc_at(struct np_trace_enc *e, uint64_t tick)
{
    if (!e->count) {
        e->base = e->prev = tick;
        e->prev_addr = 0;
        e->prev_pc = 0;
    }
    return e->buf + NP_TRACE_EVENTS_PREFIX + e->len;
}

/* The record of N bytes np_trace_enc_at placed is in: the chunk goes to
 * the flush function once full. */
static inline __attribute__((always_inline)) void np_trace_enc_added(struct np_trace_enc *e, size_t n)
{
    e->len += n;
    e->count++;
    if (e->len >= e->limit)
        np_trace_enc_flush(e);
}

/* A record of KIND (ENTRY, EXIT, LOST, SWITCH, RESYNC) at TICK with
 * VALUE (ENTRY: the address; LOST, RESYNC: a count; SWITCH: ticks);
 * SMALL: np_trace_put_record_as's. */
static inline __attribute__((always_inline)) void np_trace_enc_put_as(int small, struct np_trace_enc *e,
                                                                      unsigned kind, uint64_t value, uint64_t tick)
{
    uint8_t *o = np_trace_enc_at(e, tick);
    np_trace_enc_added(e, np_trace_put_record_as(small, o, np_trace_dt(&e->prev, tick), kind, value, &e->prev_addr));
}

static inline __attribute__((always_inline)) void np_trace_enc_put(struct np_trace_enc *e, unsigned kind,
                                                                   uint64_t value, uint64_t tick)
{
    np_trace_enc_put_as(0, e, kind, value, tick);
}

/* The same record out of line, in less code (the varints by their loop):
 * for a target, whose ROM counts more than the cycles. */
void np_trace_enc_put_small(struct np_trace_enc *e, unsigned kind, uint64_t value, uint64_t tick);

/* A SAMPLE record (trace-format.md): N frames (1 to NP_SAMPLE_MAX_FRAMES),
 * the PC first. */
void np_trace_enc_sample(struct np_trace_enc *e, uint64_t tick, unsigned n, uint64_t overrun, uint64_t skipped,
                         const uint64_t *frames);

/* A VALUES record (trace-format.md): N values (at most NP_VALUES_MAX) of
 * the innermost open call, its arguments or (RETVAL) its return value. */
void np_trace_enc_values(struct np_trace_enc *e, uint64_t tick, int retval, const struct np_value_out *v,
                         unsigned n);

/* A byte sink: WRITE takes LEN bytes (0, or -1 when they could not go:
 * FAILED counts them). */
typedef int (*np_trace_sink_fn)(void *ctx, const void *bytes, size_t len);
struct np_trace_sink {
    np_trace_sink_fn write;
    void *ctx;
    uint32_t failed;
};
/* A flush function: E's chunk, uncompressed, to the np_trace_sink CTX. */
void np_trace_flush_to_sink(struct np_trace_enc *e, void *sink);

#endif
