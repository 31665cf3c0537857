/* events_decode.h - decoding the payload of an EVENTS chunk (format in
 * docs/trace-format.md): its header, its stream (zstd or raw) and its
 * events, in batches, into struct np_event with times in ns.
 *
 * Internal to the reader: trace_read.c decodes with these as it delivers,
 * and trace_ahead.c runs them on a second thread. They write no
 * messages: each problem is a code, and the reader, which alone reports,
 * turns it into its line. Everything here reads only its arguments, so
 * the two threads share nothing but what they hand over. */
#ifndef NP_ANALYZE_EVENTS_DECODE_H
#define NP_ANALYZE_EVENTS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>
#include "events.h"
#include "../common/trace_format.h"

#define NP_EVENTS_HEADER 21   /* u32 tid, u64 base tick, u32 count, u8 compression, u32 length */
#define NP_DECODE_BATCH 256   /* events decoded at a time on the reader's stack */

/* An EVENTS chunk's header. */
struct np_events_head {
    uint32_t tid;
    uint64_t tick;
    uint32_t count;
    unsigned compression;
    uint32_t declen;          /* the decoded stream's length */
};

enum np_events_problem {
    NP_EVENTS_OK,
    NP_EVENTS_SHORT,          /* the payload is shorter than the header */
    NP_EVENTS_TOO_LONG,       /* declen over NP_TRACE_CHUNK_MAX */
    NP_EVENTS_COUNT,          /* more events than bytes */
    NP_EVENTS_RAW_SIZE,       /* raw: declen is not the bytes left */
    NP_EVENTS_COMPRESSION,    /* an unknown compression */
    NP_EVENTS_RATIO,          /* more decoded bytes than zstd can give */
    NP_EVENTS_NOT_ZSTD,
    NP_EVENTS_FRAME_SIZE,     /* the frame says another size (detail) */
    NP_EVENTS_NOMEM,
    NP_EVENTS_ZSTD,           /* zstd failed (detail: its error code) */
    NP_EVENTS_DECODED_SIZE    /* zstd gave another size (detail) */
};

/* Reads the header of PAYLOAD (LEN bytes); NP_EVENTS_OK or a problem. */
int np_events_head(const uint8_t *payload, size_t len, struct np_events_head *h);

/* A reusable buffer and zstd context for decoded streams. */
struct np_stream_buf {
    uint8_t *dec;
    size_t deccap;
    ZSTD_DCtx *zstd;
};
void np_stream_buf_free(struct np_stream_buf *b);

/* The stream of an EVENTS chunk whose header H was read from PAYLOAD
 * (LEN bytes): *STREAM is in PAYLOAD (raw) or in B (zstd). Returns
 * NP_EVENTS_OK or a problem, with *DETAIL as the problem says. */
int np_events_stream(struct np_stream_buf *b, const struct np_events_head *h, const uint8_t *payload, size_t len,
                     const uint8_t **stream, uint64_t *detail);

/* Where decoding is in a stream. COUNT records advance the count and
 * give no event: a chunk's records are its events and those. */
enum { NP_DECODE_GOOD, NP_DECODE_BAD_VARINT, NP_DECODE_BAD_KIND, NP_DECODE_SAMPLE, NP_DECODE_BAD_LOST, NP_DECODE_VALUES };
struct np_decode {
    const uint8_t *p, *end;   /* on a bad record or a sample, p is at its start */
    uint64_t tick, addr;      /* before that record */
    uint64_t count;           /* the thread's second counter there (COUNT records) */
    uint32_t records;         /* records decoded (added to) */
    bool counted;             /* times are the count, not the ticks' (NP_METRIC_COUNT) */
    uint64_t pc;              /* the chunk's previous sample PC (the reader's) */
    struct np_decode_values { /* by retval, the chunk's last VALUES record (the reader's) */
        unsigned n;           /* its values; 0: none, or one with a string */
        uint8_t index[NP_VALUES_MAX], format[NP_VALUES_MAX];
        uint64_t v[NP_VALUES_MAX];
    } values[2];
    int bad;                  /* NP_DECODE_BAD_*: stopped at a bad record;
                                 NP_DECODE_SAMPLE, NP_DECODE_VALUES: at a SAMPLE or a
                                 VALUES record, which the reader reads;
                                 NP_DECODE_BAD_LOST: at a LOST record of more events than
                                 np_events_possible */
    unsigned bad_kind;
    uint64_t bad_value;       /* NP_DECODE_BAD_LOST: its count */
    bool slow_times;          /* its times need np_tick_time's care */
};

/* Decodes up to MAX records from D, their events into EV; returns the
 * events. Times as P says, or D's count. */
uint32_t np_events_decode(const struct np_trace_process *p, struct np_decode *d, struct np_event *ev, uint32_t max);

/* The most events a thread of P can have written from P's start tick to
 * TICK (docs/trace-format.md, "Loss counts"): one a tick or one a
 * nanosecond, whichever is more, and one. A LOST record, or END, that
 * claims more is damage. */
uint64_t np_events_possible(const struct np_trace_process *p, uint64_t tick);

/* Unix ns of TICK, and ns of TICKS, as P's clock says. */
uint64_t np_tick_time(const struct np_trace_process *p, uint64_t tick);
uint64_t np_ticks_ns(double ns_per_tick, uint64_t ticks);

#endif
