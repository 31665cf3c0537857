/* byte_cursor.h - a bounds-checked cursor over a chunk's payload, for the
 * readers of the trace format (analyze/trace_read.c, source_capture.c):
 * reading past its end sets bad and yields zeros, so that a chunk's
 * fields are read one after the other and checked once. */
#ifndef NP_BYTE_CURSOR_H
#define NP_BYTE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace_format.h"

struct np_cursor {
    const uint8_t *p, *end;
    bool bad;
};

/* An integer field of N bytes (1, 2, 4 or 8), little-endian. */
static inline uint64_t np_cursor_take(struct np_cursor *c, unsigned n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return 0;
    }
    uint64_t v = n == 1 ? c->p[0] : n == 2 ? np_get_u16(c->p) : n == 4 ? np_get_u32(c->p) : np_get_u64(c->p);
    c->p += n;
    return v;
}

/* Passes over N bytes; where they start (valid unless bad). */
static inline const uint8_t *np_cursor_skip(struct np_cursor *c, size_t n)
{
    const uint8_t *at = c->p;
    if (c->bad || (size_t)(c->end - c->p) < n)
        c->bad = true;
    else
        c->p += n;
    return at;
}

/* A string field (u16 length, bytes): its bytes in *S, in the payload;
 * its length returned (0 when bad). */
static inline size_t np_cursor_str(struct np_cursor *c, const uint8_t **s)
{
    size_t n = (size_t)np_cursor_take(c, 2);
    *s = np_cursor_skip(c, n);
    return c->bad ? 0 : n;
}

/* A varint field into *V; false, and bad, when it is not whole. */
static inline bool np_cursor_varint(struct np_cursor *c, uint64_t *v)
{
    if (!c->bad && !np_get_varint(&c->p, c->end, v))
        c->bad = true;
    return !c->bad;
}

#endif
