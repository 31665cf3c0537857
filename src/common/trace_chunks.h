/* trace_chunks.h - the trace format's chunks other than EVENTS
 * (docs/trace-format.md), built whole into a caller's buffer: each layout
 * encoded here once, for the recorder (runtime/record_write.c) and the
 * analysis side's writer (analyze/trace_write.c). No allocation and no C
 * library. */
#ifndef NP_TRACE_CHUNKS_H
#define NP_TRACE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>
#include "trace_format.h"

/* ---- a chunk in a caller's buffer -------------------------------------------
 * np_trace_begin leaves room for the header, the np_trace_put_* append
 * fields (a string: u16 length, at most 65535 bytes), np_trace_end fills
 * the header in. Whatever does not fit marks the chunk OVER: np_trace_end
 * then returns 0 and nothing may be written. */
struct np_trace_buf {
    uint8_t *p;
    size_t cap, n;
    int over;
};

void np_trace_begin(struct np_trace_buf *b, void *mem, size_t cap);
void np_trace_put_u8(struct np_trace_buf *b, uint8_t v);
void np_trace_put_u16(struct np_trace_buf *b, uint16_t v);
void np_trace_put_u32(struct np_trace_buf *b, uint32_t v);
void np_trace_put_u64(struct np_trace_buf *b, uint64_t v);
void np_trace_put_double(struct np_trace_buf *b, double v);
void np_trace_put_bytes(struct np_trace_buf *b, const void *s, size_t len);
void np_trace_put_str(struct np_trace_buf *b, const char *s); /* NULL: empty */
/* The chunk's bytes (header included, its checksum filled in), or 0
 * when it did not fit. */
size_t np_trace_end(struct np_trace_buf *b, uint32_t type);
/* Bytes a string field takes (its length, at most 65535, and 2). */
size_t np_trace_str_room(const char *s);
/* S's length, at most MAX, without the C library. */
size_t np_trace_strnlen(const char *s, size_t max);

/* ---- whole chunks ---------------------------------------------------------------
 * Each builds its chunk in MEM (CAP bytes) and returns its bytes, 0 when
 * they do not fit; the file header is NP_TRACE_HEADER_SIZE bytes from
 * np_trace_file_header (trace_format.h). */
struct np_trace_info {
    uint32_t pid, ppid;          /* 0 where there are none (a target) */
    double ns_per_tick;
    uint64_t start_tick, start_ns;
    const char *clock;           /* "tsc", "monotonic", "cycles" (time in cycles) */
    int argc;
    const char *const *argv;     /* NULL ones: empty */
};
size_t np_trace_info_room(const struct np_trace_info *i);
size_t np_trace_info_chunk(void *mem, size_t cap, const struct np_trace_info *i);
size_t np_trace_module_chunk(void *mem, size_t cap, uint64_t bias, uint64_t start, uint64_t end,
                             const void *build_id, size_t build_id_len, const char *path, size_t path_len);
size_t np_trace_thread_chunk(void *mem, size_t cap, uint32_t tid, const char *name, size_t len);
size_t np_trace_name_chunk(void *mem, size_t cap, uint64_t addr, const char *name, size_t len);
size_t np_trace_units_chunk(void *mem, size_t cap, const char *time, const char *count);
size_t np_trace_end_chunk(void *mem, size_t cap, uint64_t end_tick, uint64_t lost, double ns_per_tick);
size_t np_trace_sampling_chunk(void *mem, size_t cap, uint64_t tick, uint32_t hz, unsigned unwinder,
                               uint32_t flags, uint64_t period_ns, unsigned max_frames);

#endif
