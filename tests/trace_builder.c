/* trace_builder.c - writes traces for the tests (see trace_builder.h). */
#define _GNU_SOURCE
#include "trace_builder.h"
#include "common/trace_format.h"
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define ZSTD_LEVEL 3
#define EVENTS_HEADER 21

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("trace_builder: out of memory\n", stderr);
        abort();
    }
    return p;
}

static void put(uint8_t **buf, size_t *len, size_t *cap, const void *bytes, size_t n)
{
    if (*len + n > *cap) {
        *cap = (*len + n) * 2;
        *buf = xrealloc(*buf, *cap);
    }
    if (n)
        memcpy(*buf + *len, bytes, n);
    *len += n;
}

static void put_bytes(struct tb *b, const void *bytes, size_t n) { put(&b->data, &b->len, &b->cap, bytes, n); }

void tb_raw(struct tb *b, const void *bytes, size_t len) { put_bytes(b, bytes, len); }

void tb_init(struct tb *b) { memset(b, 0, sizeof *b); }

void tb_free(struct tb *b)
{
    free(b->data);
    free(b->ev);
    tb_init(b);
}

void tb_header_version(struct tb *b, uint16_t version)
{
    uint8_t h[NP_TRACE_HEADER_SIZE] = { 0 };
    memcpy(h, NP_TRACE_MAGIC, NP_TRACE_MAGIC_LEN);
    np_put_u16(h + 8, version);
    np_put_u16(h + 10, NP_TRACE_HEADER_SIZE);
    if (version != NP_TRACE_VERSION_V1)
        np_put_u32(h + 12, np_crc32c(h, 12));
    put_bytes(b, h, sizeof h);
    b->version = version;
}

void tb_header(struct tb *b) { tb_header_version(b, b->version ? b->version : NP_TRACE_VERSION); }

size_t tb_chunk_header(const struct tb *b, uint8_t *h, uint32_t type, const void *payload, size_t len)
{
    np_put_u32(h, type);
    np_put_u32(h + 4, (uint32_t)len);
    if (b->version == NP_TRACE_VERSION_V1)
        return NP_TRACE_CHUNK_HEADER_V1;
    np_put_u32(h + 8, np_trace_chunk_sum(h, payload, (uint32_t)len));
    return NP_TRACE_CHUNK_HEADER;
}

void tb_chunk(struct tb *b, uint32_t type, const void *payload, size_t len)
{
    uint8_t h[NP_TRACE_CHUNK_HEADER];
    put_bytes(b, h, tb_chunk_header(b, h, type, payload, len));
    put_bytes(b, payload, len);
}

/* A payload being assembled. */
struct payload {
    uint8_t *p;
    size_t len, cap;
};

static void p_u16(struct payload *p, uint16_t v)
{
    uint8_t x[2];
    np_put_u16(x, v);
    put(&p->p, &p->len, &p->cap, x, 2);
}

static void p_u32(struct payload *p, uint32_t v)
{
    uint8_t x[4];
    np_put_u32(x, v);
    put(&p->p, &p->len, &p->cap, x, 4);
}

static void p_u64(struct payload *p, uint64_t v)
{
    uint8_t x[8];
    np_put_u64(x, v);
    put(&p->p, &p->len, &p->cap, x, 8);
}

static void p_double(struct payload *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    p_u64(p, bits);
}

static void p_bytes(struct payload *p, const void *s, size_t n)
{
    p_u16(p, (uint16_t)n);
    put(&p->p, &p->len, &p->cap, s, n);
}

static void p_string(struct payload *p, const char *s) { p_bytes(p, s, strlen(s)); }

static void p_chunk(struct tb *b, uint32_t type, struct payload *p)
{
    tb_chunk(b, type, p->p, p->len);
    free(p->p);
}

void tb_info(struct tb *b, uint32_t pid, uint32_t ppid, double ns_per_tick, uint64_t start_tick,
             uint64_t start_ns, const char *clock, int argc, const char *const *argv)
{
    struct payload p = { 0 };
    p_u32(&p, pid);
    p_u32(&p, ppid);
    p_double(&p, ns_per_tick);
    p_u64(&p, start_tick);
    p_u64(&p, start_ns);
    p_string(&p, clock);
    p_u16(&p, (uint16_t)argc);
    for (int i = 0; i < argc; i++)
        p_string(&p, argv[i]);
    p_chunk(b, NP_CHUNK_INFO, &p);
}

void tb_module(struct tb *b, uint64_t bias, uint64_t start, uint64_t end, const void *build_id,
               size_t build_id_len, const char *path)
{
    struct payload p = { 0 };
    p_u64(&p, bias);
    p_u64(&p, start);
    p_u64(&p, end);
    p_bytes(&p, build_id, build_id_len);
    p_string(&p, path);
    p_chunk(b, NP_CHUNK_MODULE, &p);
}

void tb_thread(struct tb *b, uint32_t tid, const char *name)
{
    struct payload p = { 0 };
    p_u32(&p, tid);
    p_string(&p, name);
    p_chunk(b, NP_CHUNK_THREAD, &p);
}

void tb_sampling(struct tb *b, uint64_t tick, uint32_t hz, uint8_t unwinder, uint32_t flags, uint64_t period_ns,
                 uint16_t max_frames)
{
    struct payload p = { 0 };
    p_u64(&p, tick);
    p_u32(&p, hz);
    put(&p.p, &p.len, &p.cap, &unwinder, 1);
    p_u32(&p, flags);
    p_u64(&p, period_ns);
    p_u16(&p, max_frames);
    p_chunk(b, NP_CHUNK_SAMPLING, &p);
}

void tb_end(struct tb *b, uint64_t end_tick, uint64_t lost, double ns_per_tick)
{
    struct payload p = { 0 };
    p_u64(&p, end_tick);
    p_u64(&p, lost);
    p_double(&p, ns_per_tick);
    p_chunk(b, NP_CHUNK_END, &p);
}

void tb_blocks(struct tb *b, uint64_t lost, uint32_t n, const uint64_t *pairs, size_t npairs)
{
    struct payload p = { 0 };
    p_u64(&p, lost);
    p_u32(&p, n);
    for (size_t i = 0; i < 2 * npairs; i++)
        p_u64(&p, pairs[i]);
    p_chunk(b, NP_CHUNK_BLOCKS, &p);
}

/* ---- events -------------------------------------------------------------- */

void tb_events_begin(struct tb *b, uint32_t tid, uint64_t base_tick)
{
    b->ev_open = true;
    b->evlen = 0;
    b->ev_tid = tid;
    b->ev_count = 0;
    b->ev_base = b->ev_tick = base_tick;
    b->ev_addr = b->ev_pc = 0;
}

static void ev_varint(struct tb *b, uint64_t v)
{
    uint8_t x[NP_VARINT_MAX];
    put(&b->ev, &b->evlen, &b->evcap, x, np_put_varint(x, v));
}

static void ev_record(struct tb *b, uint64_t tick, unsigned kind)
{
    ev_varint(b, (tick - b->ev_tick) << NP_EV_KIND_BITS | kind);
    b->ev_tick = tick;
    b->ev_count++;
}

void tb_enter(struct tb *b, uint64_t tick, uint64_t address)
{
    ev_record(b, tick, NP_EV_ENTRY);
    ev_varint(b, np_zigzag((int64_t)(address - b->ev_addr)));
    b->ev_addr = address;
}

void tb_exit(struct tb *b, uint64_t tick) { ev_record(b, tick, NP_EV_EXIT); }

void tb_lost(struct tb *b, uint64_t tick, uint64_t n)
{
    ev_record(b, tick, NP_EV_LOST);
    ev_varint(b, n);
}

void tb_switch(struct tb *b, uint64_t tick, uint64_t ticks)
{
    ev_record(b, tick, NP_EV_SWITCH);
    ev_varint(b, ticks);
}

void tb_resync(struct tb *b, uint64_t tick, uint64_t n)
{
    ev_record(b, tick, NP_EV_RESYNC);
    ev_varint(b, n);
}

void tb_count(struct tb *b, uint64_t tick, uint64_t n)
{
    ev_record(b, tick, NP_EV_COUNT);
    ev_varint(b, n);
}

void tb_sample(struct tb *b, uint64_t tick, const uint64_t *frames, unsigned n, uint64_t overrun,
               uint64_t skipped)
{
    ev_record(b, tick, NP_EV_SAMPLE);
    ev_varint(b, n);
    ev_varint(b, overrun);
    ev_varint(b, skipped);
    uint64_t prev = b->ev_pc;
    for (unsigned i = 0; i < n; i++) {
        ev_varint(b, np_zigzag((int64_t)(frames[i] - prev)));
        prev = frames[i];
    }
    if (n)
        b->ev_pc = frames[0];
}

void tb_event_kind(struct tb *b, uint64_t tick, unsigned kind) { ev_record(b, tick, kind); }

void tb_event_bytes(struct tb *b, const void *bytes, size_t len, uint32_t count)
{
    put(&b->ev, &b->evlen, &b->evcap, bytes, len);
    b->ev_count += count;
}

void tb_events_chunk(struct tb *b, uint32_t tid, uint64_t base_tick, uint32_t count, uint8_t compression,
                     uint32_t decoded_len, const void *stream, size_t stream_len)
{
    struct payload p = { 0 };
    p_u32(&p, tid);
    p_u64(&p, base_tick);
    p_u32(&p, count);
    put(&p.p, &p.len, &p.cap, &compression, 1);
    p_u32(&p, decoded_len);
    put(&p.p, &p.len, &p.cap, stream, stream_len);
    p_chunk(b, NP_CHUNK_EVENTS, &p);
}

void tb_events_end(struct tb *b, unsigned compression)
{
    const void *stream = b->ev;
    size_t len = b->evlen;
    void *z = NULL;
    if (compression == NP_COMPRESS_ZSTD) {
        z = xrealloc(NULL, ZSTD_compressBound(b->evlen));
        len = ZSTD_compress(z, ZSTD_compressBound(b->evlen), b->ev, b->evlen, ZSTD_LEVEL);
        if (ZSTD_isError(len)) {
            fprintf(stderr, "trace_builder: zstd: %s\n", ZSTD_getErrorName(len));
            abort();
        }
        stream = z;
    }
    tb_events_chunk(b, b->ev_tid, b->ev_base, b->ev_count, (uint8_t)compression, (uint32_t)b->evlen, stream, len);
    free(z);
    b->ev_open = false;
}

/* ---- the running executable ------------------------------------------------- */

static void scan_notes(struct tb_self *s, const uint8_t *p, size_t size)
{
    size_t off = 0;
    while (off + sizeof(ElfW(Nhdr)) <= size) {
        const ElfW(Nhdr) *n = (const void *)(p + off);
        size_t name = off + sizeof *n, desc = name + ((n->n_namesz + 3) & ~3u);
        size_t next = desc + ((n->n_descsz + 3) & ~3u);
        if (next > size)
            return;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + name, "GNU", 4) &&
            n->n_descsz <= sizeof s->build_id) {
            memcpy(s->build_id, p + desc, n->n_descsz);
            s->build_id_len = n->n_descsz;
        }
        off = next;
    }
}

static int self_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
    struct tb_self *s = ctx;
    (void)size;
    s->bias = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            s->start = info->dlpi_addr + ph->p_vaddr;
            s->end = s->start + ph->p_memsz;
        }
        if (ph->p_type == PT_NOTE)
            scan_notes(s, (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
    }
    return 1; /* the first object is the executable */
}

void tb_self(struct tb_self *s)
{
    memset(s, 0, sizeof *s);
    dl_iterate_phdr(self_cb, s);
    ssize_t n = readlink("/proc/self/exe", s->path, sizeof s->path - 1);
    s->path[n > 0 ? n : 0] = 0;
}

void tb_module_self(struct tb *b)
{
    struct tb_self s;
    tb_self(&s);
    tb_module(b, s.bias, s.start, s.end, s.build_id, s.build_id_len, s.path);
}

int tb_write_prefix(const struct tb *b, const char *path, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = len < b->len ? len : b->len;
    int ok = !n || fwrite(b->data, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int tb_write(const struct tb *b, const char *path) { return tb_write_prefix(b, path, b->len); }

/* ---- the sample trace ------------------------------------------------------- */

/* Distinct bodies, so that no optimiser folds two into one address. */
static volatile int sample_sink;
#define SAMPLE __attribute__((noinline, used))
SAMPLE void sample_main(void) { sample_sink = 1; }
static const unsigned sample_helper_line = __LINE__ + 1;
SAMPLE static void sample_helper(void) { sample_sink = 2; }
SAMPLE void sample_leaf(void) { sample_sink = 3; }
static const unsigned sample_fib_line = __LINE__ + 1;
SAMPLE void sample_fib(void) { sample_sink = 4; }
SAMPLE void sample_square(void) { sample_sink = 5; }
SAMPLE void sample_twice(void) { sample_sink = 6; }

void tb_sample_functions(struct tb_sample *s)
{
    s->main = (uint64_t)(uintptr_t)sample_main;
    s->helper = (uint64_t)(uintptr_t)sample_helper;
    s->leaf = (uint64_t)(uintptr_t)sample_leaf;
    s->fib = (uint64_t)(uintptr_t)sample_fib;
    s->square = (uint64_t)(uintptr_t)sample_square;
    s->twice = (uint64_t)(uintptr_t)sample_twice;
    s->helper_line = sample_helper_line;
    s->fib_line = sample_fib_line;
}

void tb_sample_trace(struct tb *b, const struct tb_sample *s, bool with_end)
{
    static const char *const argv[] = { "./sample", "--flag", "a,b \"c\"" };
    tb_header(b);
    tb_info(b, 4242, 1, 2.0, 1000, 1000000000ull, "monotonic", 3, argv);
    tb_module_self(b);
    tb_thread(b, 100, "main");

    tb_events_begin(b, 100, 1000);
    tb_enter(b, 1000, s->main);
    tb_enter(b, 1010, s->helper);
    tb_enter(b, 1020, s->leaf);
    tb_exit(b, 1050);
    tb_events_end(b, NP_COMPRESS_NONE);

    tb_thread(b, 101, "worker");
    tb_events_begin(b, 101, 1990);
    tb_enter(b, 2000, s->square);
    tb_enter(b, 2010, 0x10);
    tb_exit(b, 2020);
    tb_switch(b, 2030, 5);
    tb_exit(b, 2040);
    tb_enter(b, 2060, s->twice);
    tb_enter(b, 2090, s->square);
    tb_exit(b, 2100);
    tb_events_end(b, NP_COMPRESS_ZSTD);

    tb_events_begin(b, 100, 1050);
    tb_exit(b, 1060);
    tb_exit(b, 1100);
    tb_enter(b, 1200, s->fib);
    tb_enter(b, 1210, s->fib);
    tb_enter(b, 1220, s->fib);
    tb_exit(b, 1230);
    tb_exit(b, 1240);
    tb_enter(b, 1250, s->fib);
    tb_exit(b, 1255);
    tb_exit(b, 1300);
    tb_events_end(b, NP_COMPRESS_NONE);

    if (with_end)
        tb_end(b, 3000, 0, 1.0);
}

void tb_lossy_trace(struct tb *b, const struct tb_sample *s)
{
    tb_header(b);
    tb_info(b, 4646, 1, 1.0, 0, 1000000000ull, "monotonic", 0, NULL);
    tb_module_self(b);
    tb_thread(b, 300, "main");
    tb_events_begin(b, 300, 0);
    tb_enter(b, 0, s->main);
    tb_enter(b, 10, s->helper);
    tb_enter(b, 20, s->leaf);
    tb_exit(b, 25);
    tb_lost(b, 30, 20);
    tb_enter(b, 40, s->leaf);
    tb_exit(b, 50);
    tb_exit(b, 60);
    tb_exit(b, 70);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_thread(b, 301, "worker");
    tb_events_begin(b, 301, 100);
    tb_enter(b, 100, s->square);
    tb_exit(b, 110);
    tb_events_end(b, NP_COMPRESS_ZSTD);
    tb_events_begin(b, 302, 200);
    tb_lost(b, 200, 150);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_thread(b, 303, "waiting");
    tb_end(b, 300, 270, 1.0);
}

void tb_blocks_trace(struct tb *b, const struct tb_sample *s)
{
    tb_header(b);
    tb_info(b, 4343, 1, 1.0, 0, 1000000000ull, "monotonic", 0, NULL);
    tb_module_self(b);
    tb_blocks(b, 5, 2, (const uint64_t[]){ s->fib, 7, s->leaf, 4 }, 2);
    tb_blocks(b, 2, 2, (const uint64_t[]){ s->fib, 3, 0x10, 2 }, 2);
    tb_end(b, 100, 0, 1.0);
}

void tb_samples_trace(struct tb *b, const struct tb_sample *s, bool with_calls)
{
    const uint64_t leaf[] = { s->leaf, s->helper + 1, s->main + 1 }, square[] = { s->square, s->main + 1 },
                   fib[] = { s->fib, s->fib + 1, s->main + 1 }, wsquare[] = { s->square, s->twice + 1 },
                   unknown[] = { 0x10, s->twice + 1 };
    tb_header(b);
    tb_info(b, 4545, 1, 1.0, 0, 1000000000ull, "monotonic", 0, NULL);
    tb_module_self(b);
    tb_sampling(b, 0, 1000, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 1000000, 128);
    tb_thread(b, 200, "main");
    tb_thread(b, 201, "worker");
    tb_events_begin(b, 200, 0);
    if (with_calls)
        tb_enter(b, 500, s->main);
    tb_sample(b, 1000, leaf, 3, 0, 0);
    tb_sample(b, 2000, leaf, 3, 1, 0);
    tb_sample(b, 3000, leaf, 3, 0, 0);
    tb_sample(b, 4000, square, 2, 0, 2);
    tb_sample(b, 5000, fib, 3, 0, 0);
    if (with_calls)
        tb_exit(b, 6000);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_events_begin(b, 201, 0);
    tb_sample(b, 1500, wsquare, 2, 0, 0);
    tb_sample(b, 2500, wsquare, 2, 0, 0);
    tb_sample(b, 3500, unknown, 2, 0, 0);
    tb_sample(b, 3900, NULL, 0, 0, 3); /* the thread's last periods, not sampled */
    tb_events_end(b, NP_COMPRESS_ZSTD);
    tb_end(b, 10000, 0, 1.0);
}
