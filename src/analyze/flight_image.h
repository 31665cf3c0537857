/* flight_image.h - a flight recorder's RAM image (np_trace_init_flight)
 * as the capture it stands for (flight_image.c). */
#ifndef NP_FLIGHT_IMAGE_H
#define NP_FLIGHT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* What the image held. */
struct np_flight_info {
    uint32_t block;   /* the control block's address */
    uint32_t nwords;  /* the ring's words */
    uint32_t kept;    /* of them, written (all once the ring has wrapped) */
    uint32_t laps;    /* its wraps */
    uint32_t dropped; /* chunks (thread names) its room did not keep */
};

/* Whether IMG (LEN bytes) holds a flight recorder's control block: 0 when
 * not; 1 when it does, with the capture it stands for (the chunks kept in
 * RAM, a RING chunk of the words from the oldest to the newest before
 * END) in *OUT (malloc'd, *OUT_LEN bytes) and *INFO; -1 with the reason
 * in ERR (N bytes) when the block or what it points to is not in the
 * image, or memory ran out. */
int np_flight_capture(const uint8_t *img, size_t len, uint8_t **out, size_t *out_len, struct np_flight_info *info,
                      char *err, size_t n);

#endif
