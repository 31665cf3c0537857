/* record_write.c - the recorder's side of docs/trace-format.md: the file
 * and its chunks, the function filters, the time filter and the event
 * encoder. Runs on the writer thread, or on the thread that makes the final
 * flush once the writer has stopped; NP_REC_FATAL is the signal handler's
 * mode: write() only, no allocation, no compression, no symbol look-up, no
 * loader lock.
 *
 * Events go through three stages, per thread:
 *   1. filters (-F, -N, -D): each call's decision is kept on a stack, so
 *      that its exit follows its entry exactly;
 *   2. the time filter (--time-filter): an entry is held back until the
 *      call is known to last at least min_ticks (a later record of the
 *      thread is that far from it) or it returns (then it is dropped with
 *      everything inside it, its switched-out time folded into one SWITCH);
 *   3. the encoder (trace_encode.h): varints into a chunk, which is
 *      compressed (zstd) and written with one write() when it is full or
 *      the buffer ends. */
#define _GNU_SOURCE
#include "record.h"
#include "catch.h"
#include "../../runtime/blocks_table.h"
#include "../../runtime/trace_encode.h"
#include "../../common/trace_format.h"
#include "../port.h"
#include "modules.h"
#include "posix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* The static library does not oblige its users to link libzstd: without
 * it, chunks are written uncompressed. */
#ifdef NP_ZSTD_WEAK
#pragma weak ZSTD_createCCtx
#pragma weak ZSTD_freeCCtx
#pragma weak ZSTD_compressCCtx
#pragma weak ZSTD_isError
#define ZSTD_PRESENT() (ZSTD_compressCCtx != NULL)
#elif defined(NP_LAZY_LIBS)
/* The shared library loads libzstd at the first chunk it compresses
 * (never in a fatal signal's handler: that writes chunks uncompressed). */
#include "lazy.h"
#define ZSTD_PRESENT() np_lazy_zstd()
#else
#define ZSTD_PRESENT() 1
#endif

#define ZSTD_LEVEL NP_REC_ZSTD_LEVEL

/* ---- chunks ------------------------------------------------------------- */

/* Writes the chunk of N bytes built at P (0: it did not fit). */
static int chunk_write(int fd, const void *p, size_t n)
{
    return n ? np_posix_write_all(fd, p, n) : -1;
}

/* ---- modules ------------------------------------------------------------ */

#define MAX_MODULES NP_REC_MAX_MODULES
static struct {
    uint64_t bias, start;
} seen[MAX_MODULES];
static unsigned nseen;
static unsigned long long last_adds = ~0ull;

/* NP_ENTER names listed in this file (NAME chunks). */
#define MAX_NAMES NP_REC_MAX_NAMES
static uint64_t names_seen[MAX_NAMES];
static unsigned nnames;

void np_rec_modules_forget(void)
{
    nseen = 0;
    last_adds = ~0ull;
    nnames = 0;
}

/* A NAME chunk for the NP_ENTER name at ADDR, the first time this file
 * meets it (past MAX_NAMES names, every time: readers take the last). It
 * goes out before the EVENTS chunk that refers to it, which is still
 * being encoded. The name has static storage (nanoprof.h). */
static void name_update(int fd, uint64_t addr)
{
    for (unsigned i = 0; i < nnames; i++)
        if (names_seen[i] == addr)
            return;
    if (nnames < MAX_NAMES)
        names_seen[nnames++] = addr;
    const char *name = (const char *)(uintptr_t)addr;
    uint8_t tmp[NP_TRACE_CHUNK_HEADER + 8 + 2 + NP_TRACE_NAME_MAX];
    chunk_write(fd, tmp, np_trace_name_chunk(tmp, sizeof tmp, addr, name, strnlen(name, NP_TRACE_NAME_MAX)));
}

/* A MODULE chunk for M, the first time this file meets it. */
static int module_note(struct np_posix_module *m, void *ctx)
{
    int fd = *(int *)ctx;
    for (unsigned i = 0; i < nseen; i++)
        if (seen[i].bias == m->bias && seen[i].start == m->start)
            return 0;
    char buf[PATH_MAX];
    const char *path = np_posix_module_path(m, buf);
    if (!path)
        return 0; /* dlopen'ed by a relative path no longer there */
    if (nseen < MAX_MODULES) {
        seen[nseen].bias = m->bias;
        seen[nseen].start = m->start;
        nseen++;
    }
    uint8_t tmp[NP_TRACE_CHUNK_HEADER + 24 + 2 + NP_BUILD_ID_MAX + 2 + PATH_MAX];
    chunk_write(fd, tmp, np_trace_module_chunk(tmp, sizeof tmp, m->bias, m->start, m->end, m->build_id,
                                               m->build_id_len, path, strnlen(path, PATH_MAX)));
    return 0;
}

/* Writes a MODULE chunk for each module not yet listed in this file. */
static void modules_update(int fd)
{
    np_posix_modules(module_note, &fd, &last_adds);
}

/* ---- the file ----------------------------------------------------------- */

int np_rec_file_open(const char *dir, int argc, char **argv, uint64_t start_tick, double ns_per_tick)
{
    char path[PATH_MAX];
    int pid = (int)getpid(), fd = -1;
    for (int n = 0; n < 100000 && fd < 0; n++) {
        if (n == 0)
            snprintf(path, sizeof path, "%s/%d%s", dir, pid, NP_TRACE_FILE_SUFFIX);
        else
            snprintf(path, sizeof path, "%s/%d.%d%s", dir, pid, n, NP_TRACE_FILE_SUFFIX);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    if (fd < 0)
        return -1;

    uint8_t hdr[NP_TRACE_HEADER_SIZE];
    np_trace_file_header(hdr);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct np_trace_info info = {
        .pid = (uint32_t)pid,
        .ppid = (uint32_t)(np_rec_cfg.ppid ? np_rec_cfg.ppid : getppid()),
        .ns_per_tick = ns_per_tick,
        .start_tick = start_tick,
        .start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
        .clock = np_port_wall_clock_name(), /* the recording clock */
        .argc = argc,
        .argv = (const char *const *)argv,
    };
    size_t room = np_trace_info_room(&info);
    void *chunk = malloc(room);
    if (!chunk || np_posix_write_all(fd, hdr, sizeof hdr) < 0) {
        free(chunk);
        close(fd);
        return -1;
    }
    int r = chunk_write(fd, chunk, np_trace_info_chunk(chunk, room, &info));
    free(chunk);
    if (r < 0) {
        close(fd);
        return -1;
    }
    np_rec_modules_forget();
    modules_update(fd);
    return fd;
}

void np_rec_write_end(int fd, uint64_t end_tick, uint64_t lost, double ns_per_tick)
{
    uint8_t tmp[NP_TRACE_CHUNK_HEADER + 24];
    chunk_write(fd, tmp, np_trace_end_chunk(tmp, sizeof tmp, end_tick, lost, ns_per_tick));
}

/* BLOCKS chunks: every block counted, BLOCKS_PER_CHUNK to a chunk, the
 * lost count in the first. A static buffer: no allocation, a fatal signal
 * handler writes them too. */
#define BLOCKS_PER_CHUNK NP_REC_BLOCKS_PER_CHUNK
static uint8_t blocks_buf[NP_TRACE_CHUNK_HEADER + NP_TRACE_BLOCKS_HEADER + BLOCKS_PER_CHUNK * NP_TRACE_BLOCK_ENTRY];

void np_rec_write_blocks(int fd, uint64_t lost)
{
    uint64_t pos = 0, pc, count;
    int more = 1;
    while (more) {
        struct np_trace_buf b;
        uint32_t n = 0;
        np_trace_begin(&b, blocks_buf, sizeof blocks_buf);
        np_trace_put_u64(&b, lost);
        size_t at = b.n;
        np_trace_put_u32(&b, 0);
        while (n < BLOCKS_PER_CHUNK && (more = np_blocks_next(&pos, &pc, &count))) {
            np_trace_put_u64(&b, pc);
            np_trace_put_u64(&b, count);
            n++;
        }
        if (!n && !lost)
            break;
        np_put_u32(b.p + at, n);
        chunk_write(fd, b.p, np_trace_end(&b, NP_CHUNK_BLOCKS));
        lost = 0;
    }
}

void np_rec_write_sampling(int fd, uint64_t tick, uint32_t hz, unsigned unwinder, uint32_t flags,
                           uint64_t period_ns, unsigned max_frames)
{
    uint8_t tmp[NP_TRACE_CHUNK_HEADER + NP_SAMPLING_PAYLOAD];
    chunk_write(fd, tmp, np_trace_sampling_chunk(tmp, sizeof tmp, tick, hz, unwinder, flags, period_ns, max_frames));
}

/* S's name now: np_thread_name may store it meanwhile, byte by byte. */
static void stream_name(const struct np_rec_stream *s, char name[sizeof s->name])
{
    for (size_t i = 0; i < sizeof s->name; i++)
        name[i] = __atomic_load_n(&s->name[i], __ATOMIC_RELAXED);
    name[sizeof s->name - 1] = 0;
}

static void write_thread(int fd, struct np_rec_stream *s)
{
    uint8_t tmp[NP_TRACE_CHUNK_HEADER + 4 + 2 + 16];
    char name[sizeof s->name];
    stream_name(s, name);
    chunk_write(fd, tmp, np_trace_thread_chunk(tmp, sizeof tmp, (uint32_t)s->tid, name, strlen(name)));
    memcpy(s->w.sent_name, name, sizeof name);
    s->w.thread_sent = 1;
}

/* ---- function filters --------------------------------------------------- */

/* Which patterns a function's name matches: looked up once per address
 * (the writer's symbolizer), then cached. */
#define MATCH_F 1u
#define MATCH_N 2u
#define CACHE_BITS NP_REC_FILTER_CACHE_BITS
#define CACHE_SIZE (1u << CACHE_BITS)
static struct {
    uint64_t addr;
    uint32_t bits;
} cache[CACHE_SIZE];
static unsigned ncached;

static int any_match(const struct np_name_pattern *pat, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (np_name_pattern_match(&pat[i], name))
            return 1;
    return 0;
}

static unsigned match_bits(uint64_t addr, int named, int mode)
{
    unsigned i = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
    while (cache[i].addr) {
        if (cache[i].addr == addr)
            return cache[i].bits;
        i = (i + 1) & (CACHE_SIZE - 1);
    }
    if (mode == NP_REC_FATAL)
        return 0; /* no look-up in a signal handler */
    struct np_posix_names n;
    if (named) {
        snprintf(n.name, sizeof n.name, "%.*s", NP_TRACE_NAME_MAX, (const char *)(uintptr_t)addr);
        n.v[0] = n.name, n.v[1] = NULL;
    } else {
        (void)np_posix_names_of(addr, &n);
    }
    unsigned bits = 0;
    for (int k = 0; k < 3 && n.v[k]; k++)
        bits |= (any_match(np_rec_cfg.filter, np_rec_cfg.nfilter, n.v[k]) ? MATCH_F : 0) |
                (any_match(np_rec_cfg.notrace, np_rec_cfg.nnotrace, n.v[k]) ? MATCH_N : 0);
    if (ncached >= CACHE_SIZE / 4 * 3) {
        memset(cache, 0, sizeof cache);
        ncached = 0;
        i = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
    }
    cache[i].bits = bits;
    cache[i].addr = addr;
    ncached++;
    return bits;
}

/* ---- the encoder -------------------------------------------------------- */

/* The writer's encoder (the writer thread's, or a final flush's) and the
 * fatal signal handler's: the file it writes to and its mode. */
struct enc {
    struct np_trace_enc t;
    int fd, mode;
    /* by retval: the spec (+ 1; 0 none) and the values of the chunk's last
     * VALUES record, when it came from a packed group (plain_packed) */
    unsigned vspec[2];
    uint64_t vlast[2][NP_VALUES_MAX];
};
/* one record: two varints, or a SAMPLE's four and its frames */
#define MAX_RECORD ((4 + NP_SAMPLE_MAX_FRAMES) * NP_VARINT_MAX)
#define ENC_MAIN NP_REC_CHUNK_BYTES
#define ENC_FATAL NP_REC_FATAL_CHUNK_BYTES

static void enc_write(struct np_trace_enc *t, void *ctx);
static uint8_t enc_main_buf[NP_TRACE_EVENTS_PREFIX + ENC_MAIN + MAX_RECORD];
static uint8_t enc_fatal_buf[NP_TRACE_EVENTS_PREFIX + ENC_FATAL + MAX_RECORD];
static uint8_t *zbuf;
static size_t zcap;
static ZSTD_CCtx *cctx;
static struct enc enc_main = { { .buf = enc_main_buf, .size = sizeof enc_main_buf, .limit = ENC_MAIN,
                                 .flush = enc_write, .ctx = &enc_main }, .fd = -1, .mode = NP_REC_NORMAL };
static struct enc enc_fatal = { { .buf = enc_fatal_buf, .size = sizeof enc_fatal_buf, .limit = ENC_FATAL,
                                  .flush = enc_write, .ctx = &enc_fatal }, .fd = -1, .mode = NP_REC_FATAL };

/* The encoder's full chunk: compressed when that is smaller (not in a
 * fatal signal's handler), and written with one write(). */
static void enc_write(struct np_trace_enc *t, void *ctx)
{
    struct enc *e = ctx;
    e->vspec[0] = e->vspec[1] = 0; /* a VALUES record AGAIN refers to its own chunk */
    if (e->mode == NP_REC_NORMAL) {
        modules_update(e->fd); /* before the events that may refer to them */
        if (ZSTD_PRESENT() && !np_rec_writer_behind()) {
            if (!cctx)
                cctx = ZSTD_createCCtx();
            if (!zbuf) {
                zcap = ZSTD_COMPRESSBOUND(ENC_MAIN + MAX_RECORD);
                zbuf = malloc(NP_TRACE_EVENTS_PREFIX + zcap);
            }
            if (cctx && zbuf) {
                size_t z = ZSTD_compressCCtx(cctx, zbuf + NP_TRACE_EVENTS_PREFIX, zcap,
                                             t->buf + NP_TRACE_EVENTS_PREFIX, t->len, ZSTD_LEVEL);
                if (!ZSTD_isError(z) && z < t->len) {
                    np_trace_events_prefix(zbuf, t->tid, t->base, t->count, NP_COMPRESS_ZSTD, (uint32_t)t->len,
                                           (uint32_t)z);
                    np_trace_chunk_seal(zbuf); /* over the compressed bytes: little to sum */
                    np_posix_write_all(e->fd, zbuf, NP_TRACE_EVENTS_PREFIX + z);
                    return;
                }
            }
        }
    }
    np_posix_write_all(e->fd, t->buf, np_trace_enc_chunk(t));
}

static void enc_flush(struct enc *e)
{
    np_trace_enc_flush(&e->t);
}

static void enc_sample(struct enc *e, uint64_t tick, unsigned n, uint64_t overrun, uint64_t skipped,
                       const uint64_t *frames)
{
    np_trace_enc_sample(&e->t, tick, n, overrun, skipped, frames);
}

/* The frames of the raw SAMPLE at R[0] (which holds N) into OUT. */
static void raw_frames(const np_raw *r, unsigned n, uint64_t *out)
{
    for (unsigned i = 0; i < n; i++)
        out[i] = i & 1 ? r[1 + i / 2].w1 : r[1 + i / 2].w0;
}

/* Slots a raw SAMPLE takes after its first; 0 when it claims more than
 * the N - I records left (never written so: the buffer is not ours). */
static size_t raw_sample_slots(const np_raw *r, size_t i, size_t n)
{
    size_t k = (NP_RAW_SAMPLE_FRAMES(r[i].w0 & NP_RAW_VALUE) + 1) / 2;
    return k < n - i ? k : n - i - 1;
}

/* Value I of a packed group (record.h) whose register words are REGS. */
static inline uint64_t packed_value(const struct np_rec_packed *s, unsigned i, const uint64_t *regs)
{
    if (s->whole) /* (`-A f@arg1,arg2`: the registers as they are) */
        return regs[s->word[i]];
    uint64_t v = regs[s->word[i]] << s->shift[i];
    return s->sign[i] ? (uint64_t)((int64_t)v >> s->shift[i]) : v >> s->shift[i];
}

/* The raw VALUES group at R (N records left from it) into V, its strings'
 * bytes in STRS; *SLOTS the records after its first. Returns the values,
 * 0 when the group is not whole (never written so). */
static unsigned raw_values(const np_raw *r, size_t n, struct np_value_out *v,
                           uint8_t strs[NP_VALUES_MAX][NP_VALUE_STR_MAX], size_t *slots)
{
    uint64_t h = r[0].w0 & NP_RAW_VALUE;
    size_t k = NP_RAW_VALUES_SLOTS(h);
    *slots = k < n - 1 ? k : n - 1;
    if (k > n - 1)
        return 0;
    unsigned items = NP_RAW_VALUES_ITEMS(h), got = 0;
    if (h & NP_RAW_VALUES_PACKED) {
        const struct np_rec_packed *s = np_rec_packed_spec(NP_RAW_VALUES_SPEC(h));
        const uint64_t *regs = (const uint64_t *)(const void *)(r + 1);
        if (2 * k < s->words)
            return 0;
        for (; got < s->n; got++) {
            v[got].index = s->index[got];
            v[got].format = s->format[got];
            v[got].v = packed_value(s, got, regs);
        }
        return got;
    }
    size_t j = 1;
    while (got < items && got < NP_VALUES_MAX && j <= k) {
        uint64_t w0 = r[j].w0;
        struct np_value_out *o = &v[got];
        o->index = (uint8_t)w0;
        o->format = (uint8_t)(w0 >> 8);
        size_t len = (size_t)(w0 >> 16 & 0xffff), words = (len + 15) / 16;
        o->v = r[j++].w1;
        if (o->format == NP_VAL_STR) {
            if (len > NP_VALUE_STR_MAX || j + words > k + 1)
                return 0;
            for (size_t b = 0; b < words; b++) {
                uint64_t w[2] = { r[j + b].w0, r[j + b].w1 };
                memcpy(strs[got] + 16 * b, w, len - 16 * b < 16 ? len - 16 * b : 16);
            }
            j += words;
            o->len = (uint16_t)len;
            o->bytes = strs[got];
        }
        got++;
    }
    return got;
}

static void enc_values(struct enc *e, const np_raw *r, const struct np_value_out *v, unsigned n)
{
    int retval = NP_RAW_VALUES_RETVAL(r->w0 & NP_RAW_VALUE);
    np_trace_enc_values(&e->t, r->w1, retval, v, n);
    e->vspec[retval] = 0;
}

static void enc_put(struct enc *e, unsigned kind, uint64_t value, uint64_t tick)
{
    np_trace_enc_put(&e->t, kind, value, tick);
}

/* ---- the time filter ---------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t size, int mode)
{
    if (need <= *cap)
        return 1;
    if (mode == NP_REC_FATAL)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

static void held_reset(struct np_rec_wstate *w)
{
    w->phead = w->plen = 0;
    w->npidx = 0;
    w->hflen = 0;
}

/* Emits the held records [phead, upto). */
static void held_emit(struct np_rec_wstate *w, struct enc *e, size_t upto)
{
    for (size_t i = w->phead; i < upto; i++) {
        const struct np_rec_pend *h = &w->pend[i];
        if (h->kind == NP_EV_SAMPLE) {
            const uint64_t *x = w->held_frames + h->value;
            enc_sample(e, h->tick, (unsigned)x[0], x[1], x[2], x + 3);
        } else {
            enc_put(e, h->kind, h->value, h->tick);
        }
    }
    w->phead = upto;
}

static void held_release_all(struct np_rec_wstate *w, struct enc *e)
{
    held_emit(w, e, w->plen);
    held_reset(w);
}

/* Entries held for at least min_ticks by TICK are calls long enough: out. */
static void tf_advance(struct np_rec_wstate *w, struct enc *e, uint64_t tick)
{
    size_t k = 0;
    while (k < w->npidx && tick - w->pend[w->pidx[k]].tick >= np_rec_cfg.min_ticks)
        k++;
    if (!k)
        return;
    held_emit(w, e, k < w->npidx ? w->pidx[k] : w->plen);
    memmove(w->pidx, w->pidx + k, (w->npidx - k) * sizeof *w->pidx);
    w->npidx -= k;
    if (!w->npidx)
        held_reset(w);
}

static int held_push(struct np_rec_wstate *w, unsigned kind, uint64_t value, uint64_t tick, int mode)
{
    if (!grow((void **)&w->pend, &w->pcap, w->plen + 1, sizeof *w->pend, mode))
        return 0;
    w->pend[w->plen].kind = kind;
    w->pend[w->plen].value = value;
    w->pend[w->plen].tick = tick;
    w->plen++;
    return 1;
}

static void out_entry(struct np_rec_wstate *w, struct enc *e, uint64_t addr, uint64_t tick)
{
    if (!np_rec_cfg.min_ticks) {
        enc_put(e, NP_EV_ENTRY, addr, tick);
        return;
    }
    tf_advance(w, e, tick);
    if (!grow((void **)&w->pidx, &w->pidxcap, w->npidx + 1, sizeof *w->pidx, e->mode) ||
        !held_push(w, NP_EV_ENTRY, addr, tick, e->mode)) {
        held_release_all(w, e); /* no room to hold it: keep it */
        enc_put(e, NP_EV_ENTRY, addr, tick);
        return;
    }
    w->pidx[w->npidx++] = w->plen - 1;
}

static void out_exit(struct np_rec_wstate *w, struct enc *e, uint64_t tick)
{
    if (np_rec_cfg.min_ticks) {
        tf_advance(w, e, tick);
        if (w->npidx) { /* the innermost call is held: it was too short */
            size_t i = w->pidx[--w->npidx], keep = i;
            uint64_t sw = 0;
            for (size_t k = i + 1; k < w->plen; k++) {
                if (w->pend[k].kind == NP_EV_SWITCH)
                    sw += w->pend[k].value;
                else if (w->pend[k].kind == NP_EV_SAMPLE)
                    w->pend[keep++] = w->pend[k]; /* samples outlive the call */
            }
            w->plen = keep;
            if (!w->npidx) {
                held_emit(w, e, w->plen);
                held_reset(w);
            }
            if (sw) {
                if (!w->npidx || !held_push(w, NP_EV_SWITCH, sw, tick, e->mode)) {
                    held_release_all(w, e);
                    enc_put(e, NP_EV_SWITCH, sw, tick);
                }
            }
            return;
        }
    }
    enc_put(e, NP_EV_EXIT, 0, tick);
}

/* A sample: held, in its place, while the time filter holds calls. */
static void out_sample(struct np_rec_wstate *w, struct enc *e, const np_raw *r)
{
    uint64_t v = r->w0 & NP_RAW_VALUE, tick = r->w1;
    unsigned n = NP_RAW_SAMPLE_FRAMES(v);
    uint64_t frames[NP_SAMPLE_MAX_FRAMES];
    raw_frames(r, n, frames);
    if (np_rec_cfg.min_ticks) {
        tf_advance(w, e, tick);
        if (w->npidx) {
            size_t at = w->hflen;
            if (grow((void **)&w->held_frames, &w->hfcap, at + 3 + n, sizeof *w->held_frames, e->mode) &&
                held_push(w, NP_EV_SAMPLE, at, tick, e->mode)) {
                uint64_t *x = w->held_frames + at;
                x[0] = n;
                x[1] = NP_RAW_SAMPLE_OVERRUN(v);
                x[2] = NP_RAW_SAMPLE_SKIPPED(v);
                memcpy(x + 3, frames, n * sizeof *frames);
                w->hflen = at + 3 + n;
                return;
            }
            held_release_all(w, e);
        }
    }
    enc_sample(e, tick, n, NP_RAW_SAMPLE_OVERRUN(v), NP_RAW_SAMPLE_SKIPPED(v), frames);
}

static void out_switch(struct np_rec_wstate *w, struct enc *e, uint64_t ticks, uint64_t tick)
{
    if (np_rec_cfg.min_ticks) {
        tf_advance(w, e, tick);
        if (w->npidx) {
            if (held_push(w, NP_EV_SWITCH, ticks, tick, e->mode))
                return;
            held_release_all(w, e);
        }
    }
    enc_put(e, NP_EV_SWITCH, ticks, tick);
}

/* ---- filters ------------------------------------------------------------ */

static void do_entry(struct np_rec_wstate *w, struct enc *e, uint64_t addr, int named, uint64_t tick)
{
    const struct np_rec_config *c = &np_rec_cfg;
    unsigned m = (c->nfilter || c->nnotrace) ? match_bits(addr, named, e->mode) : 0;
    int keep = (!c->nfilter || w->f_in || (m & MATCH_F)) && !w->n_in && !(m & MATCH_N) &&
               (!c->depth || w->kept < c->depth);
    if (!grow((void **)&w->stack, &w->cap, w->depth + 1, 1, e->mode)) {
        w->overflow++; /* cannot follow it: kept, as is its exit */
        out_entry(w, e, addr, tick);
        return;
    }
    w->stack[w->depth++] = (uint8_t)((keep ? NP_WS_KEPT : 0) | (m & MATCH_F ? NP_WS_F : 0) |
                                     (m & MATCH_N ? NP_WS_N : 0));
    w->f_in += (m & MATCH_F) != 0;
    w->n_in += (m & MATCH_N) != 0;
    if (keep) {
        w->kept++;
        out_entry(w, e, addr, tick);
    }
}

/* Forgets the innermost open call; returns whether it was kept. */
static int pop_call(struct np_rec_wstate *w)
{
    uint8_t b = w->stack[--w->depth];
    w->f_in -= (b & NP_WS_F) != 0;
    w->n_in -= (b & NP_WS_N) != 0;
    w->kept -= (b & NP_WS_KEPT) != 0;
    return b & NP_WS_KEPT;
}

static void do_exit(struct np_rec_wstate *w, struct enc *e, uint64_t tick)
{
    if (w->overflow) {
        w->overflow--;
        out_exit(w, e, tick);
        return;
    }
    if (!w->depth)
        return; /* a call that began before recording did */
    if (pop_call(w))
        out_exit(w, e, tick);
}

/* N events were dropped (no buffer): one LOST record. Of the calls open
 * before, the dropped events closed CLOSED, innermost first: each gets an
 * EXIT at the LOST record's time, so the trace nests as the program did.
 * They left OPENED calls open whose entries were lost: their exits are
 * dropped. */
static void do_lost(struct np_rec_wstate *w, struct enc *e, uint64_t n, uint64_t closed, uint64_t opened,
                    uint64_t tick)
{
    held_release_all(w, e);
    enc_put(e, NP_EV_LOST, n, tick);
    w->lost += n;
    for (; closed && (w->depth || w->overflow); closed--) {
        if (w->overflow) {
            w->overflow--;
            out_exit(w, e, tick);
        } else if (pop_call(w)) {
            out_exit(w, e, tick);
        }
    }
    for (; opened; opened--)
        if (grow((void **)&w->stack, &w->cap, w->depth + 1, 1, e->mode))
            w->stack[w->depth++] = 0;
}

/* ---- entry points ------------------------------------------------------- */

static struct enc *enc_for(int fd, struct np_rec_stream *s, int mode)
{
    struct enc *e = mode == NP_REC_FATAL ? &enc_fatal : &enc_main;
    e->fd = fd;
    np_trace_enc_thread(&e->t, (uint32_t)s->tid);
    e->vspec[0] = e->vspec[1] = 0;
    return e;
}

/* Caught exceptions (catch.c): the function of each open call, by its
 * position, so that a CATCH record's frames can be matched to the calls. */
static __attribute__((noinline)) int fns_grow(struct np_rec_wstate *w, size_t i)
{
    size_t cap = w->fcap ? w->fcap : 256;
    while (cap <= i)
        cap *= 2;
    uint64_t *f = realloc(w->fns, cap * sizeof *f);
    if (!f)
        return 0; /* the calls past it: no function known */
    w->fns = f;
    w->fcap = cap;
    return 1;
}

static inline void fn_note(struct np_rec_wstate *w, size_t i, uint64_t fn)
{
    if (i < w->fcap || fns_grow(w, i))
        w->fns[i] = fn;
}

/* calls opened while events were lost, from position I: no function */
static void fns_unknown(struct np_rec_wstate *w, size_t i, uint64_t n)
{
    for (; n && i < w->fcap; n--, i++)
        w->fns[i] = 0;
}

static uint64_t fn_at(const void *ctx, size_t i)
{
    const struct np_rec_wstate *w = ctx;
    return i < w->fcap ? w->fns[i] : 0;
}

/* The open calls a CATCH record (R[0], of the N records at R) abandoned,
 * DEPTH open; *SLOTS: the records it takes. */
static size_t catch_unwind(const struct np_rec_wstate *w, const np_raw *r, size_t n, size_t depth, size_t *slots)
{
    struct np_throw_frame f[NP_THROW_FRAMES];
    size_t nf = (size_t)(r[0].w0 & NP_RAW_VALUE);
    *slots = nf + 1 < n ? nf + 1 : n - 1;
    if (nf > NP_THROW_FRAMES || nf + 1 >= n)
        return 0; /* not one the runtime writes */
    for (size_t i = 0; i < nf; i++) {
        f[i].start = r[2 + i].w0;
        f[i].sp = r[2 + i].w1;
    }
    return np_catch_abandoned(f, nf, r[1].w0, depth, fn_at, w);
}

/* setjmp and longjmp (setjmp.c): a setjmp notes how many calls are open;
 * a longjmp to it closes the calls opened since, which it left without
 * their exits, with EXIT records at the time of the longjmp. */
static void jmp_mark(struct np_rec_wstate *w, uint64_t env, size_t depth)
{
    unsigned n = sizeof w->jmp / sizeof w->jmp[0], i;
    for (i = 0; i < n && w->jmp[i].env != env; i++)
        ;
    if (i == n) {
        i = w->jnext;
        w->jnext = (w->jnext + 1) % n;
        w->jmp[i].env = env;
    }
    w->jmp[i].depth = depth;
}

/* The open calls to close for a longjmp to ENV (0 when unknown). */
static size_t jmp_unwind(const struct np_rec_wstate *w, uint64_t env, size_t depth)
{
    for (unsigned i = 0; i < sizeof w->jmp / sizeof w->jmp[0]; i++)
        if (w->jmp[i].env == env && env)
            return depth > w->jmp[i].depth ? depth - w->jmp[i].depth : 0;
    return 0;
}

struct plain {
    uint8_t *base;
    size_t len;
    uint32_t count;
    uint64_t prev, prev_addr;
};

/* Where P's next record goes, one at TICK: the first of a chunk sets its
 * base (np_trace_enc_at's, with the state in P). */
static inline __attribute__((always_inline)) uint8_t *plain_at(struct plain *p, struct enc *e, uint64_t tick)
{
    if (!p->count) {
        e->t.base = p->prev = tick;
        p->prev_addr = 0;
    }
    return p->base + p->len;
}

/* The record of N bytes plain_at placed is in: the chunk goes out once
 * full. */
static inline __attribute__((always_inline)) void plain_added(struct plain *p, struct enc *e, size_t n)
{
    p->len += n;
    p->count++;
    if (p->len >= e->t.limit) {
        e->t.len = p->len;
        e->t.count = p->count;
        e->t.prev = p->prev;
        enc_flush(e);
        p->len = 0;
        p->count = 0;
    }
}

static inline __attribute__((always_inline)) void plain_put(struct plain *p, struct enc *e, unsigned ev,
                                                            uint64_t v, uint64_t tick)
{
    uint8_t *o = plain_at(p, e, tick);
    plain_added(p, e, np_trace_put_record(o, np_trace_dt(&p->prev, tick), ev, v, &p->prev_addr));
}

/* A packed VALUES group at R (N records left from it; integers only, the
 * registers as the hook had them) cut and formatted by its spec straight
 * into P: per call with `record -A`, so without np_value_out's copy, and
 * AGAIN after a record of the same spec in the chunk (the differences: a
 * byte each for arguments that change little or not at all). Returns the
 * records after its first. */
static size_t plain_packed(struct plain *p, struct enc *e, const np_raw *r, size_t n)
{
    uint64_t h = r->w0 & NP_RAW_VALUE;
    size_t k = NP_RAW_VALUES_SLOTS(h);
    unsigned spec = NP_RAW_VALUES_SPEC(h);
    const struct np_rec_packed *s = np_rec_packed_spec(spec);
    if (k > n - 1 || 2 * k < s->words)
        return k < n - 1 ? k : n - 1; /* not whole (never written so) */
    const uint64_t *regs = (const uint64_t *)(const void *)(r + 1);
    int retval = NP_RAW_VALUES_RETVAL(h);
    unsigned nv = s->n;
    uint8_t *o = plain_at(p, e, r->w1);
    uint64_t dt = np_trace_dt(&p->prev, r->w1), *last = e->vlast[retval];
    size_t m;
    if (e->vspec[retval] == spec + 1) {
        m = np_trace_put_values_again(o, dt, retval, nv);
        for (unsigned i = 0; i < nv; i++) {
            uint64_t v = packed_value(s, i, regs);
            m += np_trace_put_value_again(o + m, v, last[i]);
            last[i] = v;
        }
    } else {
        m = np_trace_put_values_head(o, dt, retval, nv);
        for (unsigned i = 0; i < nv; i++) {
            uint64_t v = packed_value(s, i, regs);
            m += np_trace_put_value_int(o + m, s->index[i], s->format[i], v);
            last[i] = v;
        }
        e->vspec[retval] = spec + 1;
    }
    plain_added(p, e, m);
    return k;
}
_Static_assert(NP_TRACE_INT_VALUES_RECORD_MAX(NP_VALUE_ARGS_MAX) <= MAX_RECORD, "a packed VALUES record after the limit");
_Static_assert(NP_VALUE_ARGS_MAX <= NP_VALUES_MAX, "a packed group in one VALUES record");

/* The plain encoder's state in P given to E's encoder for a rare record
 * (a sample, values), and taken back after it. */
static void plain_out(const struct plain *p, struct enc *e)
{
    e->t.len = p->len;
    e->t.count = p->count;
    e->t.prev = p->prev;
    e->t.prev_addr = p->prev_addr;
}

static void plain_in(struct plain *p, const struct enc *e)
{
    p->len = e->t.len;
    p->count = e->t.count;
    p->prev = e->t.prev;
    p->prev_addr = e->t.prev_addr;
}

/* The raw VALUES group at R (N records left from it) into E when KEEP;
 * P: the plain encoder's state, or NULL. Returns the records after its
 * first. */
static size_t put_values(struct enc *e, const np_raw *r, size_t n, bool keep, struct plain *p)
{
    struct np_value_out vals[NP_VALUES_MAX];
    uint8_t strs[NP_VALUES_MAX][NP_VALUE_STR_MAX];
    size_t slots;
    unsigned nv = raw_values(r, n, vals, strs, &slots);
    if (nv && keep) {
        if (p)
            plain_out(p, e);
        enc_values(e, r, vals, nv);
        if (p)
            plain_in(p, e);
    }
    return slots;
}

/* No filter of any kind (the usual case): the writer only encodes, and
 * follows the nesting with a counter, to drop the exits of calls that began
 * before recording did. The encoder's state stays in registers. */
static void encode_plain(struct np_rec_wstate *w, struct enc *e, const np_raw *r, size_t n)
{
    struct plain p = { e->t.buf + NP_TRACE_EVENTS_PREFIX, e->t.len, e->t.count, e->t.prev, e->t.prev_addr };
    size_t depth = w->depth, unknown = w->unknown;
    uint64_t lost_n = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w0 = r[i].w0, tick = r[i].w1, v = w0 & NP_RAW_VALUE;
        switch (w0 >> NP_RAW_SHIFT) {
        case NP_RAW_NAMED:
            name_update(e->fd, v);
            fn_note(w, depth + unknown, 0);
            depth++;
            plain_put(&p, e, NP_EV_ENTRY, v, tick);
            break;
        case NP_RAW_ENTRY:
            fn_note(w, depth + unknown, v);
            depth++;
            plain_put(&p, e, NP_EV_ENTRY, v, tick);
            break;
        case NP_RAW_EXIT:
            if (unknown) { /* its entry was lost */
                unknown--;
            } else if (depth) { /* else a call that began before recording did */
                depth--;
                plain_put(&p, e, NP_EV_EXIT, 0, tick);
            }
            break;
        case NP_RAW_SWITCH:
            plain_put(&p, e, NP_EV_SWITCH, v, tick);
            break;
        case NP_RAW_LOST:
            lost_n = v;
            break;
        case NP_RAW_LOST_NEST: { /* as do_lost */
            uint64_t closed = v & NP_RAW_NEST_MASK, opened = v >> NP_RAW_NEST_BITS;
            w->lost += lost_n;
            plain_put(&p, e, NP_EV_LOST, lost_n, tick);
            lost_n = 0;
            for (; closed && unknown; closed--)
                unknown--;
            for (; closed && depth; closed--, depth--)
                plain_put(&p, e, NP_EV_EXIT, 0, tick);
            fns_unknown(w, depth + unknown, opened);
            unknown += opened;
            break;
        }
        case NP_RAW_SETJMP:
            jmp_mark(w, v, depth + unknown);
            break;
        case NP_RAW_LONGJMP:
        case NP_RAW_CATCH: {
            size_t slots = 0;
            size_t k = w0 >> NP_RAW_SHIFT == NP_RAW_LONGJMP ? jmp_unwind(w, v, depth + unknown)
                                                           : catch_unwind(w, r + i, n - i, depth + unknown, &slots);
            for (; k; k--) {
                if (unknown) {
                    unknown--;
                } else {
                    depth--;
                    plain_put(&p, e, NP_EV_EXIT, 0, tick);
                }
            }
            i += slots;
            break;
        }
        case NP_RAW_SAMPLE: { /* rare: through the encoder's state in E */
            uint64_t frames[NP_SAMPLE_MAX_FRAMES];
            unsigned nf = NP_RAW_SAMPLE_FRAMES(v);
            size_t slots = raw_sample_slots(r, i, n);
            if ((nf + 1) / 2 == slots) {
                raw_frames(r + i, nf, frames);
                plain_out(&p, e);
                enc_sample(e, tick, nf, NP_RAW_SAMPLE_OVERRUN(v), NP_RAW_SAMPLE_SKIPPED(v), frames);
                plain_in(&p, e);
            }
            i += slots;
            break;
        }
        case NP_RAW_VALUES: /* of the innermost call, when it is known */
            if ((v & NP_RAW_VALUES_PACKED) && depth && !unknown)
                i += plain_packed(&p, e, r + i, n - i);
            else
                i += put_values(e, r + i, n - i, depth && !unknown, &p);
            break;
        default:
            break;
        }
    }
    plain_out(&p, e);
    w->depth = depth;
    w->unknown = unknown;
}

void np_rec_write_events(int fd, struct np_rec_stream *s, const np_raw *r, size_t n, int mode)
{
    struct np_rec_wstate *w = &s->w;
    struct enc *e = enc_for(fd, s, mode);
    if (!w->thread_sent)
        write_thread(fd, s);
    const struct np_rec_config *c = &np_rec_cfg;
    if (!c->nfilter && !c->nnotrace && !c->depth && !c->min_ticks) {
        encode_plain(w, e, r, n);
        enc_flush(e);
        return;
    }
    uint64_t lost_n = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = r[i].w0 & NP_RAW_VALUE, tick = r[i].w1;
        switch (r[i].w0 >> NP_RAW_SHIFT) {
        case NP_RAW_NAMED:
            name_update(e->fd, v);
            fn_note(w, w->depth + w->overflow, 0);
            do_entry(w, e, v, 1, tick);
            break;
        case NP_RAW_ENTRY:
            fn_note(w, w->depth + w->overflow, v);
            do_entry(w, e, v, 0, tick);
            break;
        case NP_RAW_EXIT:
            do_exit(w, e, tick);
            break;
        case NP_RAW_SWITCH:
            /* outside every kept call it belongs to no call of the trace
             * (and a trace the filters kept nothing of stays empty) */
            if (w->kept)
                out_switch(w, e, v, tick);
            break;
        case NP_RAW_LOST:
            lost_n = v;
            break;
        case NP_RAW_LOST_NEST: {
            uint64_t opened = v >> NP_RAW_NEST_BITS;
            do_lost(w, e, lost_n, v & NP_RAW_NEST_MASK, opened, tick);
            size_t open = w->depth + w->overflow;
            fns_unknown(w, open > opened ? open - opened : 0, opened);
            lost_n = 0;
            break;
        }
        case NP_RAW_SETJMP:
            jmp_mark(w, v, w->depth + w->overflow);
            break;
        case NP_RAW_LONGJMP:
            for (size_t k = jmp_unwind(w, v, w->depth + w->overflow); k; k--)
                do_exit(w, e, tick);
            break;
        case NP_RAW_CATCH: {
            size_t slots;
            for (size_t k = catch_unwind(w, r + i, n - i, w->depth + w->overflow, &slots); k; k--)
                do_exit(w, e, tick);
            i += slots;
            break;
        }
        case NP_RAW_SAMPLE: { /* kept whatever the call filters say */
            size_t slots = raw_sample_slots(r, i, n);
            if ((NP_RAW_SAMPLE_FRAMES(v) + 1) / 2 == slots)
                out_sample(w, e, &r[i]);
            i += slots;
            break;
        }
        case NP_RAW_VALUES: /* with the innermost call, when it is kept */
            i += put_values(e, r + i, n - i, w->depth && !w->overflow && (w->stack[w->depth - 1] & NP_WS_KEPT), NULL);
            break;
        default:
            break;
        }
    }
    enc_flush(e);
}

void np_rec_write_stream_end(int fd, struct np_rec_stream *s, int mode)
{
    struct np_rec_wstate *w = &s->w;
    struct enc *e = enc_for(fd, s, mode);
    if (w->plen > w->phead) {
        if (!w->thread_sent)
            write_thread(fd, s);
        held_release_all(w, e); /* calls open at the end: kept */
        enc_flush(e);
    }
    char name[sizeof s->name];
    stream_name(s, name);
    if (w->thread_sent && strncmp(w->sent_name, name, sizeof name) != 0)
        write_thread(fd, s);
}

void np_rec_wstate_reset(struct np_rec_wstate *w)
{
    w->depth = w->f_in = w->n_in = w->kept = w->overflow = w->unknown = 0;
    held_reset(w);
    w->lost = 0;
    memset(w->jmp, 0, sizeof w->jmp);
    w->jnext = 0;
    w->thread_sent = 0;
    memset(w->sent_name, 0, sizeof w->sent_name);
}

void np_rec_wstate_free(struct np_rec_wstate *w)
{
    free(w->stack);
    free(w->pend);
    free(w->pidx);
    free(w->held_frames);
    free(w->fns);
    w->fns = NULL;
    w->fcap = 0;
    w->stack = NULL;
    w->pend = NULL;
    w->pidx = NULL;
    w->held_frames = NULL;
    w->cap = w->pcap = w->pidxcap = w->hfcap = 0;
    np_rec_wstate_reset(w);
}

void np_rec_write_shutdown(void)
{
    if (cctx && ZSTD_PRESENT())
        ZSTD_freeCCtx(cctx);
    cctx = NULL;
    free(zbuf);
    zbuf = NULL;
}
