/* report.h - the runtime's reports (dumps, notes, error lines) as records
 * (common/report_format.h): made here, sent as REPORT chunks on a target
 * built for records, formatted into lines (common/report_text.c)
 * elsewhere. */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "np_config.h"
#include "../common/report_format.h"

/* The record TYPE with its N values V (report_format.h's). */
void np_report(unsigned type, const uint64_t *v, unsigned n);
/* The same with the values listed. */
#define NP_REPORT(type, ...)                                          \
    do {                                                              \
        const uint64_t np_rv_[] = { __VA_ARGS__ };                    \
        np_report((type), np_rv_, sizeof np_rv_ / sizeof np_rv_[0]);  \
    } while (0)
/* A pointer as a value. */
#define NP_RV(p) ((uint64_t)(uintptr_t)(p))

/* On a target: opens the output's stream, once (FRESH: again): the
 * trace's file header, INFO and MODULE (the firmware's build-id, by which
 * the host knows the ELF that names the records). */
void np_stream_open(int fresh);
/* The opening's bytes to WRITE (np_stream_open's; a flight recorder's
 * RAM). */
void np_stream_opening(void (*write)(const char *, size_t));
/* The firmware's build-id and its bytes (0: none). */
const uint8_t *np_build_id(size_t *len);
/* V's low N bytes at P, little-endian; past them: a chunk's fields, one
 * copy of the code for every chunk a target builds. */
uint8_t *np_chunk_field(uint8_t *p, uint64_t v, unsigned n);
/* The chunk of TYPE at BUF whose payload ends at END, its header and
 * checksum filled in, to WRITE. */
void np_chunk_send(uint8_t *buf, uint32_t type, const uint8_t *end, void (*write)(const char *, size_t));

#endif
