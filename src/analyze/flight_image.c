/* flight_image.c - a flight recorder's RAM image into a capture: the
 * control block found by its id, as OpenOCD finds RTT's; the block gives
 * its own address, and so the image's; from it, the chunks the target
 * kept in RAM, and the ring's words, read from the oldest (the one the
 * hooks write next, once the ring has wrapped) to the newest, as one RING
 * chunk flagged NP_RING_FLIGHT, which the reader decodes from its first
 * synchronisation on (target_ring.c). */
#define _GNU_SOURCE
#include "flight_image.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/trace_format.h"

/* The image's bytes at address ADDR, N of them, or NULL when it does not
 * hold them all. BASE: the image's first byte's address. */
static const uint8_t *at(const uint8_t *img, size_t len, uint32_t base, uint32_t addr, uint64_t n)
{
    if (addr < base || (uint64_t)(addr - base) + n > len)
        return NULL;
    return img + (addr - base);
}

/* The control block: the first copy of the id, 4-aligned in the image,
 * whose version is known; NULL when none is. */
static const uint8_t *find_block(const uint8_t *img, size_t len)
{
    static const char id[NP_FLIGHT_ID_LEN] = NP_FLIGHT_ID;
    for (const uint8_t *p = img; len >= NP_FLIGHT_BLOCK && (p = memmem(p, len - (size_t)(p - img), id, sizeof id));
         p++) {
        if ((size_t)(p - img) + NP_FLIGHT_BLOCK > len)
            return NULL;
        if ((p - img) % 4 == 0 && np_get_u32(p + NP_FLIGHT_VERSION) == 1)
            return p;
    }
    return NULL;
}

int np_flight_capture(const uint8_t *img, size_t len, uint8_t **out, size_t *out_len, struct np_flight_info *info,
                      char *err, size_t n)
{
    const uint8_t *b = find_block(img, len);
    if (!b)
        return 0;
    uint32_t self = np_get_u32(b + NP_FLIGHT_SELF), base = self - (uint32_t)(b - img);
    uint32_t meta_at = np_get_u32(b + NP_FLIGHT_META), meta_len = np_get_u32(b + NP_FLIGHT_META_LEN);
    uint32_t words_at = np_get_u32(b + NP_FLIGHT_WORDS), nwords = np_get_u32(b + NP_FLIGHT_NWORDS);
    uint32_t pos_at = np_get_u32(b + NP_FLIGHT_POS_AT);
    *info = (struct np_flight_info){ .block = self, .nwords = nwords, .laps = np_get_u32(b + NP_FLIGHT_LAPS),
                                     .dropped = np_get_u32(b + NP_FLIGHT_DROPPED) };
    if ((uint64_t)(b - img) > self) {
        snprintf(err, n, "a flight recorder's block at 0x%08x is %zu bytes into the image: not an image of the RAM "
                 "from its start address", self, (size_t)(b - img));
        return -1;
    }
    const uint8_t *meta = at(img, len, base, meta_at, meta_len);
    const uint8_t *words = at(img, len, base, words_at, (uint64_t)nwords * 4);
    const uint8_t *pos_p = at(img, len, base, pos_at, 4);
    if (meta_len > np_get_u32(b + NP_FLIGHT_META_CAP) || !meta || !words || !pos_p) {
        uint32_t from = pos_at < self ? pos_at : self, words_end = words_at + nwords * 4;
        uint32_t to = pos_at + 4 > words_end ? pos_at + 4 : words_end;
        snprintf(err, n, "the flight recorder's block at 0x%08x: the image (0x%08x to 0x%08zx) does not hold %s; "
                 "dump the RAM from 0x%08x to 0x%08x at least", self, base, (size_t)base + len,
                 !pos_p ? "the hooks' write position" : "its chunks and ring", from, to);
        return -1;
    }
    uint32_t pos = np_get_u32(pos_p);
    if (pos < words_at || pos > words_at + nwords * 4 || (pos - words_at) % 4) {
        snprintf(err, n, "the flight recorder's write position 0x%08x is not in its ring (0x%08x, %u words)", pos,
                 words_at, nwords);
        return -1;
    }
    uint32_t next = (pos - words_at) / 4;
    info->kept = info->laps ? nwords : next;
    uint64_t ring = (uint64_t)NP_RING_HEAD + 4 * (uint64_t)info->kept;
    if (ring > NP_TRACE_CHUNK_MAX) {
        snprintf(err, n, "the flight recorder's ring of %u words is over a chunk's %u bytes", nwords,
                 NP_TRACE_CHUNK_MAX);
        return -1;
    }
    /* the chunks before END, the RING chunk, END (and what follows) */
    size_t split = meta_len;
    for (size_t o = NP_TRACE_HEADER_SIZE; o + NP_TRACE_CHUNK_HEADER <= meta_len;) {
        uint32_t type = np_get_u32(meta + o), l = np_get_u32(meta + o + 4);
        if (type == NP_CHUNK_END) {
            split = o;
            break;
        }
        if (l > meta_len - o - NP_TRACE_CHUNK_HEADER)
            break;
        o += NP_TRACE_CHUNK_HEADER + l;
    }
    size_t total = meta_len + NP_TRACE_CHUNK_HEADER + (size_t)ring;
    uint8_t *c = malloc(total);
    if (!c) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    memcpy(c, meta, split);
    uint8_t *h = c + split, *f = h + NP_TRACE_CHUNK_HEADER;
    np_put_u32(f, np_get_u32(b + NP_FLIGHT_BASE));
    np_put_u32(f + 4, 0);
    np_put_u64(f + 8, 0);
    np_put_u32(f + 16, NP_RING_FLIGHT);
    uint8_t *w = f + NP_RING_HEAD;
    if (info->laps) { /* the oldest first: the previous lap's rest */
        memcpy(w, words + 4 * (size_t)next, 4 * (size_t)(nwords - next));
        w += 4 * (size_t)(nwords - next);
    }
    memcpy(w, words, 4 * (size_t)next);
    np_trace_chunk_header(h, NP_CHUNK_RING, (uint32_t)ring);
    np_trace_chunk_seal(h);
    memcpy(f + ring, meta + split, meta_len - split);
    *out = c;
    *out_len = total;
    return 1;
}
