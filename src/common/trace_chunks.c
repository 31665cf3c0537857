/* trace_chunks.c - the trace format's chunks other than EVENTS built whole
 * into a caller's buffer (trace_chunks.h): the one encoder of their
 * layouts, which the recorder (runtime/record_write.c) and the analysis
 * side's writer (analyze/trace_write.c: import, emu) share. */
#include "trace_chunks.h"

/* ---- a chunk in a caller's buffer ------------------------------------------------ */

static uint8_t *room(struct np_trace_buf *b, size_t n)
{
    if (b->over || n > b->cap - b->n) {
        b->over = 1;
        return NULL;
    }
    uint8_t *p = b->p + b->n;
    b->n += n;
    return p;
}

void np_trace_begin(struct np_trace_buf *b, void *mem, size_t cap)
{
    b->p = mem;
    b->cap = cap;
    b->n = 0;
    b->over = 0;
    (void)room(b, NP_TRACE_CHUNK_HEADER);
}

void np_trace_put_u8(struct np_trace_buf *b, uint8_t v)
{
    uint8_t *p = room(b, 1);
    if (p)
        *p = v;
}

void np_trace_put_u16(struct np_trace_buf *b, uint16_t v)
{
    uint8_t *p = room(b, 2);
    if (p)
        np_put_u16(p, v);
}

void np_trace_put_u32(struct np_trace_buf *b, uint32_t v)
{
    uint8_t *p = room(b, 4);
    if (p)
        np_put_u32(p, v);
}

void np_trace_put_u64(struct np_trace_buf *b, uint64_t v)
{
    uint8_t *p = room(b, 8);
    if (p)
        np_put_u64(p, v);
}

void np_trace_put_double(struct np_trace_buf *b, double v)
{
    uint64_t bits;
    __builtin_memcpy(&bits, &v, sizeof bits);
    np_trace_put_u64(b, bits);
}

void np_trace_put_bytes(struct np_trace_buf *b, const void *s, size_t len)
{
    if (len > 0xffff)
        len = 0xffff;
    np_trace_put_u16(b, (uint16_t)len);
    uint8_t *p = room(b, len);
    for (size_t i = 0; p && i < len; i++)
        p[i] = ((const uint8_t *)s)[i];
}

size_t np_trace_strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (s && n < max && s[n])
        n++;
    return n;
}

void np_trace_put_str(struct np_trace_buf *b, const char *s)
{
    np_trace_put_bytes(b, s, np_trace_strnlen(s, 0xffff));
}

size_t np_trace_str_room(const char *s)
{
    return 2 + np_trace_strnlen(s, 0xffff);
}

size_t np_trace_end(struct np_trace_buf *b, uint32_t type)
{
    if (b->over)
        return 0;
    np_trace_chunk_header(b->p, type, (uint32_t)(b->n - NP_TRACE_CHUNK_HEADER));
    np_trace_chunk_seal(b->p);
    return b->n;
}

/* ---- whole chunks ---------------------------------------------------------------- */

size_t np_trace_info_room(const struct np_trace_info *i)
{
    size_t room = NP_TRACE_CHUNK_HEADER + 4 + 4 + 8 + 8 + 8 + np_trace_str_room(i->clock) + 2;
    for (int k = 0; i->argv && k < i->argc && k < 0xffff; k++)
        room += np_trace_str_room(i->argv[k]);
    return room;
}

size_t np_trace_info_chunk(void *mem, size_t cap, const struct np_trace_info *i)
{
    struct np_trace_buf b;
    int argc = i->argc < 0 || !i->argv ? 0 : i->argc > 0xffff ? 0xffff : i->argc;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u32(&b, i->pid);
    np_trace_put_u32(&b, i->ppid);
    np_trace_put_double(&b, i->ns_per_tick);
    np_trace_put_u64(&b, i->start_tick);
    np_trace_put_u64(&b, i->start_ns);
    np_trace_put_str(&b, i->clock);
    np_trace_put_u16(&b, (uint16_t)argc);
    for (int k = 0; k < argc; k++)
        np_trace_put_str(&b, i->argv[k]);
    return np_trace_end(&b, NP_CHUNK_INFO);
}

size_t np_trace_module_chunk(void *mem, size_t cap, uint64_t bias, uint64_t start, uint64_t end,
                             const void *build_id, size_t build_id_len, const char *path, size_t path_len)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u64(&b, bias);
    np_trace_put_u64(&b, start);
    np_trace_put_u64(&b, end);
    np_trace_put_bytes(&b, build_id, build_id && build_id_len <= NP_BUILD_ID_MAX ? build_id_len : 0);
    np_trace_put_bytes(&b, path, path_len);
    return np_trace_end(&b, NP_CHUNK_MODULE);
}

size_t np_trace_thread_chunk(void *mem, size_t cap, uint32_t tid, const char *name, size_t len)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u32(&b, tid);
    np_trace_put_bytes(&b, name, len);
    return np_trace_end(&b, NP_CHUNK_THREAD);
}

size_t np_trace_name_chunk(void *mem, size_t cap, uint64_t addr, const char *name, size_t len)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u64(&b, addr);
    np_trace_put_bytes(&b, name, len > NP_TRACE_NAME_MAX ? NP_TRACE_NAME_MAX : len);
    return np_trace_end(&b, NP_CHUNK_NAME);
}

size_t np_trace_units_chunk(void *mem, size_t cap, const char *time, const char *count)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_str(&b, time);
    np_trace_put_str(&b, count);
    return np_trace_end(&b, NP_CHUNK_UNITS);
}

size_t np_trace_end_chunk(void *mem, size_t cap, uint64_t end_tick, uint64_t lost, double ns_per_tick)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u64(&b, end_tick);
    np_trace_put_u64(&b, lost);
    np_trace_put_double(&b, ns_per_tick);
    return np_trace_end(&b, NP_CHUNK_END);
}

size_t np_trace_sampling_chunk(void *mem, size_t cap, uint64_t tick, uint32_t hz, unsigned unwinder,
                               uint32_t flags, uint64_t period_ns, unsigned max_frames)
{
    struct np_trace_buf b;
    np_trace_begin(&b, mem, cap);
    np_trace_put_u64(&b, tick);
    np_trace_put_u32(&b, hz);
    np_trace_put_u8(&b, (uint8_t)unwinder);
    np_trace_put_u32(&b, flags);
    np_trace_put_u64(&b, period_ns);
    np_trace_put_u16(&b, (uint16_t)max_frames);
    return np_trace_end(&b, NP_CHUNK_SAMPLING);
}
