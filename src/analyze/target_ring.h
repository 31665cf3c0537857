/* target_ring.h - a target's RING chunks (np_trace_init_ring) decoded
 * into the trace format's EVENTS chunks, which every reader then reads as
 * it reads a recorder's (target_ring.c). */
#ifndef NP_TARGET_RING_H
#define NP_TARGET_RING_H

#include <stddef.h>
#include <stdint.h>

/* What a decoder carries from one RING chunk to the next: when each
 * thread was switched out (its SWITCH event says how long). */
struct np_ring_dec {
    struct np_ring_out {
        uint32_t tid;
        uint64_t at;
    } *out;
    size_t n_out, cap_out;
    uint8_t *buf;      /* the EVENTS chunk being built */
    size_t len, cap;
};

/* Each EVENTS chunk (version 2 chunk header included) of the RING payload
 * P (LEN bytes), one a run of one thread's records, handed to EMIT, which
 * returns 0 to go on. Returns 0; -1 and *ERR (a phrase) when the payload
 * is not a RING's or memory ran out; EMIT's non-zero return. */
int np_ring_decode(struct np_ring_dec *d, const uint8_t *p, size_t len,
                   int (*emit)(void *ctx, const uint8_t *chunk, size_t n), void *ctx, const char **err);
void np_ring_dec_free(struct np_ring_dec *d);

#endif
