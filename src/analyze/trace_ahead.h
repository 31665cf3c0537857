/* trace_ahead.h - decoding a trace file's EVENTS chunks ahead of the
 * reader, on a thread of its own.
 *
 * Internal to the reader (trace_read.c). Reading a trace is two jobs of
 * about equal cost: decompressing and decoding the events, and the
 * consumer's work on each (the model's). With a second thread the first
 * runs while the reader delivers, so a read takes about the time of the
 * longer job instead of their sum.
 *
 * It is only a cache: for each chunk it hands over the chunk's events in
 * batches, or says "not decoded" (a malformed chunk, a failed read, no
 * memory), and the reader then reads that chunk itself, the one way that
 * reports problems. It is given only chunks whose checksums held. Batches come in chunk order through a small ring
 * (a few batches), so memory stays bounded whatever the file's size. */
#ifndef NP_ANALYZE_TRACE_AHEAD_H
#define NP_ANALYZE_TRACE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "events_decode.h"

/* Where an EVENTS chunk is: its header's file offset, its payload's length. */
struct np_ahead_chunk {
    uint64_t off;
    uint32_t len;
};

/* A batch of a chunk's events. */
struct np_ahead_batch {
    uint64_t chunk;              /* the chunk's offset */
    bool decoded;                /* false: the reader reads the chunk itself (the only batch) */
    bool last;                   /* the chunk's last batch */
    struct np_events_head head;
    uint32_t n;                  /* events */
    uint32_t records;            /* records they came from (COUNT records give none) */
    struct np_event *ev;
    /* after these events: where decoding stopped (offset in the stream),
     * and why, if at a bad record (NP_DECODE_BAD_*) or a sample, which the
     * reader reads (NP_DECODE_SAMPLE) */
    uint32_t pos;
    uint64_t tick, addr;         /* the decoder's state there */
    uint64_t pc;
    int bad;
    unsigned bad_kind;
    uint64_t bad_value;
};

struct np_ahead;

/* Starts decoding the N chunks CHUNKS (copied) of the file open on FD,
 * or held in memory at MEM (not NULL), whose chunk headers take HSIZE
 * bytes and whose times P gives (copied; times from ticks, never the
 * count). NULL when it cannot start: the reader then does it all itself. */
struct np_ahead *np_ahead_start(int fd, const uint8_t *mem, const struct np_trace_process *p,
                                const struct np_ahead_chunk *chunks, size_t n, unsigned hsize);
/* The next batch when it belongs to the chunk at OFF (waiting for it),
 * else NULL. Valid until np_ahead_release. */
const struct np_ahead_batch *np_ahead_next(struct np_ahead *a, uint64_t off);
/* Done with the batch np_ahead_next gave. */
void np_ahead_release(struct np_ahead *a);
/* Stops the thread and frees everything (A may be NULL). */
void np_ahead_stop(struct np_ahead *a);

#endif
