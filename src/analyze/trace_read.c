/* trace_read.c - the trace file reader (interface and contract in
 * trace_read.h, format in docs/trace-format.md).
 *
 * Each file is read in two passes, both walking chunks with next_chunk(),
 * the one function that reads chunk headers and checks their bounds. Pass
 * one reads chunk headers only, plus the END chunk: its refined
 * ns_per_tick converts every time, so it is needed before the first event
 * is delivered. Pass two decodes the chunks in order and feeds the sink;
 * it alone reports problems, so that everything before the damage has
 * reached the sink when the error line goes out.
 *
 * Bytes come in with pread() into one payload buffer reused across chunks
 * and files, sized by the chunk, which next_chunk() has checked against
 * both the 64 MiB limit and the bytes left in the file. Strings are
 * copied, NUL-terminated, into an arena as large as the payload (each
 * string's 2-byte length turns into at most its terminator). An EVENTS
 * chunk's decoded stream goes to a second reused buffer; its declared
 * length is checked against the 64 MiB limit and, for zstd, against the
 * largest ratio zstd can reach, before anything is allocated. The event
 * loop consumes at least one byte per record and stops at the declared
 * count, so no input makes it spin. */
#define _GNU_SOURCE
#include "trace_read.h"
#include "common/trace_format.h"
#include "containers.h"
#include "textfmt.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define EVENTS_HEADER 21       /* u32 tid, u64 base tick, u32 count, u8 compression, u32 length */
#define END_PAYLOAD 24         /* u64 end tick, u64 lost, u64 ns_per_tick */
#define ZSTD_MAX_RATIO 32768u  /* a 4-byte RLE block decodes to at most 128 KiB */
#define NS_PER_TICK_MAX 1e12   /* a tick longer than 1000 s is not a clock */
#define NO_OFFSET UINT64_MAX   /* a problem of the whole file or path */

struct chunk {
    uint64_t off; /* of its header in the file */
    uint32_t type;
    uint32_t len;
    bool eof;     /* no chunk: the file ended cleanly */
};

/* A bounds-checked cursor over a payload: reading past the end sets bad
 * and yields zeros. */
struct cursor {
    const uint8_t *p, *end;
    bool bad;
};

struct reader {
    const char *name;
    int fd;
    uint64_t size;
    const struct np_event_sink *sink;
    const struct np_trace_hooks *hooks;
    struct np_trace_summary *sum;
    uint64_t done_before; /* bytes of the files read before this one */
    uint64_t total;       /* bytes of all files */

    uint8_t *buf;         /* the payload being decoded */
    size_t bufcap;
    uint8_t *dec;         /* a decoded event stream */
    size_t deccap;
    char *arena;          /* strings of the payload, NUL-terminated */
    size_t arenacap, arenalen;
    const char **argv;
    size_t argvcap;
    struct np_trace_block *blocks; /* a BLOCKS chunk's entries */
    size_t blockscap;
    ZSTD_DCtx *zstd;

    struct np_trace_process proc;
    uint64_t frames[NP_SAMPLE_MAX_FRAMES]; /* a SAMPLE's, decoded */
    bool begun;           /* INFO reached the sink: end() is owed */
    bool end_seen;        /* pass two met END */
    char msg[NP_TRACE_MSG_MAX];
};

/* ---- messages ------------------------------------------------------------ */

/* Formats "FILE: offset N: WHAT" into r->msg; returns STATUS. */
static int fail(struct reader *r, int status, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct reader *r, int status, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    int n = off == NO_OFFSET ? snprintf(r->msg, sizeof r->msg, "%s: ", r->name)
                             : snprintf(r->msg, sizeof r->msg, "%s: offset %" PRIu64 ": ", r->name, off);
    if (n >= 0 && (size_t)n < sizeof r->msg) { /* else a path that long: its start is the message */
        va_start(ap, fmt);
        vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    np_scrub_line(r->msg); /* names and paths come from the input */
    return status;
}

static void diag(struct reader *r, enum np_diag_level level, const char *line)
{
    if (r->hooks && r->hooks->diag)
        r->hooks->diag(r->hooks->ctx, level, line);
}

/* Hands r->msg to the caller and the summary; returns STATUS. */
static int report(struct reader *r, int status)
{
    if (status == NP_TRACE_OK)
        return status;
    diag(r, status == NP_TRACE_ETRUNC ? NP_DIAG_WARNING : NP_DIAG_ERROR, r->msg);
    if (status > r->sum->status) {
        r->sum->status = status;
        snprintf(r->sum->message, sizeof r->sum->message, "%s", r->msg);
    }
    return status;
}

const char *np_trace_strerror(int status)
{
    switch (status) {
    case NP_TRACE_OK: return "no error";
    case NP_TRACE_ETRUNC: return "truncated";
    case NP_TRACE_ECORRUPT: return "corrupt";
    case NP_TRACE_EVERSION: return "unknown version";
    case NP_TRACE_ENOTTRACE: return "not a trace";
    case NP_TRACE_EEMPTY: return "no trace files";
    case NP_TRACE_ENOENT: return "cannot open";
    case NP_TRACE_EIO: return "read error";
    case NP_TRACE_ENOMEM: return "out of memory";
    case NP_TRACE_ESTOP: return "stopped by the consumer";
    }
    return "unknown status";
}

/* ---- bytes ---------------------------------------------------------------- */

/* Reads exactly N bytes at OFF; 0, or a status with the message set. */
static int read_at(struct reader *r, void *dst, size_t n, uint64_t off)
{
    uint8_t *p = dst;
    while (n) {
        ssize_t got = pread(r->fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(r, NP_TRACE_EIO, off, "read failed: %s", strerror(errno));
        if (got == 0)
            return fail(r, NP_TRACE_ETRUNC, off, "file shrank while it was read");
        p += got, off += (uint64_t)got, n -= (size_t)got;
    }
    return 0;
}

static uint64_t take(struct cursor *c, unsigned n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return 0;
    }
    uint64_t v = n == 1 ? c->p[0] : n == 2 ? np_get_u16(c->p) : n == 4 ? np_get_u32(c->p) : np_get_u64(c->p);
    c->p += n;
    return v;
}

static double take_double(struct cursor *c)
{
    uint64_t bits = take(c, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A string (u16 length, bytes) copied into the arena, NUL-terminated;
 * *LEN gets its length. Embedded NULs end it early for C consumers. */
static const char *take_string(struct reader *r, struct cursor *c, size_t *len)
{
    size_t n = (size_t)take(c, 2);
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return "";
    }
    char *s = r->arena + r->arenalen; /* fits: see the top comment */
    memcpy(s, c->p, n);
    s[n] = 0;
    r->arenalen += n + 1;
    c->p += n;
    if (len)
        *len = n;
    return s;
}

static bool good_ns_per_tick(double d)
{
    return isfinite(d) && d > 0 && d <= NS_PER_TICK_MAX;
}

static uint64_t ticks_ns(double ns_per_tick, uint64_t ticks)
{
    double ns = (double)ticks * ns_per_tick + 0.5;
    return ns >= 0x1p64 ? UINT64_MAX : (uint64_t)ns;
}

/* Unix ns of TICK. */
static uint64_t tick_time(const struct reader *r, uint64_t tick)
{
    const struct np_trace_process *p = &r->proc;
    if (tick >= p->start_tick) {
        uint64_t d = ticks_ns(p->ns_per_tick, tick - p->start_tick);
        return p->start_ns > UINT64_MAX - d ? UINT64_MAX : p->start_ns + d;
    }
    uint64_t d = ticks_ns(p->ns_per_tick, p->start_tick - tick);
    return p->start_ns > d ? p->start_ns - d : 0;
}

/* ---- chunks ------------------------------------------------------------- */

/* The header: 0 with *POS at the first chunk, or a status. */
static int read_header(struct reader *r, uint64_t *pos)
{
    uint8_t h[NP_TRACE_HEADER_SIZE];
    size_t n = r->size < sizeof h ? (size_t)r->size : sizeof h;
    int st = read_at(r, h, n, 0);
    if (st)
        return st;
    if (memcmp(h, NP_TRACE_MAGIC, n < NP_TRACE_MAGIC_LEN ? n : NP_TRACE_MAGIC_LEN) != 0)
        return fail(r, NP_TRACE_ENOTTRACE, 0, "not a nanoprof trace (no NPTRACE magic)");
    if (n < NP_TRACE_HEADER_SIZE)
        return fail(r, NP_TRACE_ETRUNC, n, "file cut short inside its %d-byte header", NP_TRACE_HEADER_SIZE);
    unsigned version = np_get_u16(h + 8), size = np_get_u16(h + 10);
    if (version != NP_TRACE_VERSION)
        return fail(r, NP_TRACE_EVERSION, 8, "trace format version %u; this nanoprof reads version %d",
                    version, NP_TRACE_VERSION);
    if (size < NP_TRACE_HEADER_SIZE)
        return fail(r, NP_TRACE_ECORRUPT, 10, "header size %u, less than %d", size, NP_TRACE_HEADER_SIZE);
    if (size > r->size)
        return fail(r, NP_TRACE_ETRUNC, r->size, "file cut short inside its %u-byte header", size);
    *pos = size;
    return 0;
}

/* The chunk at *POS, whose bounds it checks; advances *POS past it. */
static int next_chunk(struct reader *r, uint64_t *pos, struct chunk *c)
{
    c->off = *pos;
    c->eof = *pos >= r->size;
    if (c->eof)
        return 0;
    uint64_t left = r->size - *pos;
    if (left < NP_TRACE_CHUNK_HEADER)
        return fail(r, NP_TRACE_ETRUNC, *pos, "file cut short inside a chunk header (%" PRIu64 " of %d bytes)",
                    left, NP_TRACE_CHUNK_HEADER);
    uint8_t h[NP_TRACE_CHUNK_HEADER];
    int st = read_at(r, h, sizeof h, *pos);
    if (st)
        return st;
    c->type = np_get_u32(h);
    c->len = np_get_u32(h + 4);
    if (c->len > NP_TRACE_CHUNK_MAX)
        return fail(r, NP_TRACE_ECORRUPT, *pos + 4, "chunk of type %u claims %u bytes, over the %u-byte limit",
                    c->type, c->len, NP_TRACE_CHUNK_MAX);
    if (c->len > left - NP_TRACE_CHUNK_HEADER)
        return fail(r, NP_TRACE_ETRUNC, *pos, "file cut short inside a chunk (type %u, %u bytes, %" PRIu64 " present)",
                    c->type, c->len, left - NP_TRACE_CHUNK_HEADER);
    *pos += NP_TRACE_CHUNK_HEADER + (uint64_t)c->len;
    return 0;
}

/* Reads C's payload into r->buf and readies the string arena. */
static int load_payload(struct reader *r, const struct chunk *c)
{
    if (NP_GROW(r->buf, r->bufcap, (size_t)c->len + 1) < 0 ||
        NP_GROW(r->arena, r->arenacap, (size_t)c->len + 1) < 0)
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory for a %u-byte chunk", c->len);
    r->arenalen = 0;
    return read_at(r, r->buf, c->len, c->off + NP_TRACE_CHUNK_HEADER);
}

static struct cursor payload(const struct reader *r, const struct chunk *c)
{
    return (struct cursor){ r->buf, r->buf + c->len, false };
}

static uint64_t field_off(const struct reader *r, const struct chunk *c, const struct cursor *cur)
{
    return c->off + NP_TRACE_CHUNK_HEADER + (uint64_t)(cur->p - r->buf);
}

/* A decoded chunk must use its payload exactly. */
static int check_used(struct reader *r, const struct chunk *c, const struct cursor *cur, const char *what)
{
    if (cur->bad)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "%s chunk of %u bytes is too short for its fields", what, c->len);
    if (cur->p != cur->end)
        return fail(r, NP_TRACE_ECORRUPT, field_off(r, c, cur), "%s chunk has %zu bytes after its last field",
                    what, (size_t)(cur->end - cur->p));
    return 0;
}

/* Calls a sink callback; a non-zero return stops the read. */
#define SINK(r, off, fn, ...)                                                        \
    do {                                                                             \
        if ((r)->sink && (r)->sink->fn) {                                            \
            int rc_ = (r)->sink->fn((r)->sink->ctx, __VA_ARGS__);                    \
            if (rc_)                                                                 \
                return stopped((r), rc_, (off));                                     \
        }                                                                            \
    } while (0)

static int stopped(struct reader *r, int rc, uint64_t off)
{
    int st = rc > NP_TRACE_OK && rc <= NP_TRACE_ESTOP ? rc : NP_TRACE_ESTOP;
    return fail(r, st, off, "reading stopped: %s", np_trace_strerror(st));
}

static int do_info(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    struct np_trace_process *p = &r->proc;
    p->pid = (uint32_t)take(&cur, 4);
    p->ppid = (uint32_t)take(&cur, 4);
    p->info_ns_per_tick = take_double(&cur);
    p->start_tick = take(&cur, 8);
    p->start_ns = take(&cur, 8);
    p->clock = take_string(r, &cur, NULL);
    size_t argc = (size_t)take(&cur, 2);
    if (!cur.bad && argc > (size_t)(cur.end - cur.p) / 2)
        return fail(r, NP_TRACE_ECORRUPT, field_off(r, c, &cur), "INFO claims %zu arguments in %zu bytes",
                    argc, (size_t)(cur.end - cur.p));
    if (NP_GROW(r->argv, r->argvcap, argc + 1) < 0)
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory");
    for (size_t i = 0; i < argc; i++)
        r->argv[i] = take_string(r, &cur, NULL);
    r->argv[argc] = NULL;
    int st = check_used(r, c, &cur, "INFO");
    if (st)
        return st;
    if (!good_ns_per_tick(p->info_ns_per_tick))
        return fail(r, NP_TRACE_ECORRUPT, c->off + NP_TRACE_CHUNK_HEADER + 8,
                    "INFO ns_per_tick %g is not a positive clock period", p->info_ns_per_tick);
    if (!p->has_end)
        p->ns_per_tick = p->info_ns_per_tick;
    p->argc = (unsigned)argc;
    p->argv = r->argv;
    if (p->has_end) /* pass one read it, before the start tick was known */
        p->end_ns = tick_time(r, p->end_ns);
    r->begun = true;
    r->sum->files_read++;
    SINK(r, c->off, begin, p);
    return 0;
}

static int do_module(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    struct np_trace_module m;
    m.bias = take(&cur, 8);
    m.start = take(&cur, 8);
    m.end = take(&cur, 8);
    m.build_id = (const uint8_t *)take_string(r, &cur, &m.build_id_len);
    m.path = take_string(r, &cur, NULL);
    int st = check_used(r, c, &cur, "MODULE");
    if (st)
        return st;
    if (m.start > m.end)
        return fail(r, NP_TRACE_ECORRUPT, c->off + NP_TRACE_CHUNK_HEADER + 8,
                    "MODULE %s: start 0x%" PRIx64 " after end 0x%" PRIx64, m.path, m.start, m.end);
    SINK(r, c->off, module, &m);
    return 0;
}

static int do_thread(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    uint32_t tid = (uint32_t)take(&cur, 4);
    const char *name = take_string(r, &cur, NULL);
    int st = check_used(r, c, &cur, "THREAD");
    if (st)
        return st;
    SINK(r, c->off, thread, tid, name);
    return 0;
}

/* NAME: u64 address, string name (an NP_ENTER region). */
static int do_name(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    uint64_t address = take(&cur, 8);
    const char *name = take_string(r, &cur, NULL);
    int st = check_used(r, c, &cur, "NAME");
    if (st)
        return st;
    SINK(r, c->off, name, address, name);
    return 0;
}

/* BLOCKS: u64 lost, u32 n, n x (u64 address, u64 count), exactly. */
static int do_blocks(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    uint64_t lost = take(&cur, 8);
    uint32_t n = (uint32_t)take(&cur, 4);
    if (cur.bad)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "BLOCKS chunk of %u bytes is shorter than its %d-byte header",
                    c->len, NP_TRACE_BLOCKS_HEADER);
    size_t left = (size_t)(cur.end - cur.p);
    if (left / NP_TRACE_BLOCK_ENTRY != n || left % NP_TRACE_BLOCK_ENTRY)
        return fail(r, NP_TRACE_ECORRUPT, field_off(r, c, &cur) - 4,
                    "BLOCKS claims %u blocks in %zu bytes (%d each)", n, left, NP_TRACE_BLOCK_ENTRY);
    if (NP_GROW(r->blocks, r->blockscap, (size_t)n + 1) < 0)
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory for %u blocks", n);
    for (uint32_t i = 0; i < n; i++) {
        r->blocks[i].address = take(&cur, 8);
        r->blocks[i].count = take(&cur, 8);
    }
    SINK(r, c->off, blocks, r->blocks, n, lost);
    return 0;
}

/* END's fields; 0 or a status. Pass one uses it quietly, pass two checks. */
static int parse_end(struct reader *r, const struct chunk *c, uint64_t *end_tick, uint64_t *lost, double *nspt)
{
    struct cursor cur = payload(r, c);
    *end_tick = take(&cur, 8);
    *lost = take(&cur, 8);
    *nspt = take_double(&cur);
    int st = check_used(r, c, &cur, "END");
    if (st)
        return st;
    if (!good_ns_per_tick(*nspt))
        return fail(r, NP_TRACE_ECORRUPT, c->off + NP_TRACE_CHUNK_HEADER + 16,
                    "END ns_per_tick %g is not a positive clock period", *nspt);
    return 0;
}

static int do_end(struct reader *r, const struct chunk *c)
{
    uint64_t tick, lost;
    double nspt;
    if (r->end_seen)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "a second END chunk");
    int st = parse_end(r, c, &tick, &lost, &nspt);
    if (st)
        return st;
    r->end_seen = true;
    return 0;
}

static int do_sampling(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    struct np_trace_sampling smp;
    smp.time_ns = tick_time(r, take(&cur, 8));
    smp.hz = (uint32_t)take(&cur, 4);
    smp.unwinder = (unsigned)take(&cur, 1);
    smp.flags = (uint32_t)take(&cur, 4);
    smp.period_ns = take(&cur, 8);
    smp.max_frames = (unsigned)take(&cur, 2);
    int st = check_used(r, c, &cur, "SAMPLING");
    if (st)
        return st;
    if (smp.hz && !smp.period_ns)
        return fail(r, NP_TRACE_ECORRUPT, c->off + NP_TRACE_CHUNK_HEADER + 17,
                    "SAMPLING at %u Hz with a period of 0 ns", smp.hz);
    if (smp.max_frames < 1 || smp.max_frames > NP_SAMPLE_MAX_FRAMES)
        return fail(r, NP_TRACE_ECORRUPT, c->off + NP_TRACE_CHUNK_HEADER + 25,
                    "SAMPLING max_frames %u (1 to %d)", smp.max_frames, NP_SAMPLE_MAX_FRAMES);
    SINK(r, c->off, sampling, &smp);
    return 0;
}

/* A SAMPLE's fields after its kind (trace-format.md) into r->frames;
 * PREV_PC is the chunk's previous sample PC. 0, or a message fragment. */
static const char *take_sample(struct reader *r, const uint8_t **p, const uint8_t *end, uint64_t *prev_pc,
                               unsigned *n, uint64_t *overrun, uint64_t *skipped)
{
    uint64_t nf, d;
    if (!np_get_varint(p, end, &nf) || !np_get_varint(p, end, overrun) || !np_get_varint(p, end, skipped))
        return "corrupt varint";
    if (nf < 1 || nf > NP_SAMPLE_MAX_FRAMES)
        return "SAMPLE frame count out of range (1 to 256)";
    uint64_t prev = *prev_pc;
    for (unsigned i = 0; i < nf; i++) {
        if (!np_get_varint(p, end, &d))
            return "corrupt varint";
        prev += (uint64_t)np_unzigzag(d);
        r->frames[i] = prev;
    }
    *prev_pc = r->frames[0];
    *n = (unsigned)nf;
    return NULL;
}

/* The event stream of an EVENTS chunk, decoded: *STREAM, *LEN. */
static int events_stream(struct reader *r, const struct chunk *c, struct cursor *cur, unsigned compression,
                         uint32_t declen, const uint8_t **stream)
{
    size_t have = (size_t)(cur->end - cur->p);
    if (compression == NP_COMPRESS_NONE) {
        if (declen != have)
            return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS stream of %u bytes in %zu bytes of payload",
                        declen, have);
        *stream = cur->p;
        return 0;
    }
    uint64_t at = field_off(r, c, cur);
    if (compression != NP_COMPRESS_ZSTD)
        return fail(r, NP_TRACE_ECORRUPT, at - 5, "EVENTS compression %u is unknown", compression);
    if ((uint64_t)declen > (uint64_t)have * ZSTD_MAX_RATIO)
        return fail(r, NP_TRACE_ECORRUPT, at - 4, "EVENTS claims %u decoded bytes from %zu zstd bytes",
                    declen, have);
    unsigned long long framed = ZSTD_getFrameContentSize(cur->p, have);
    if (framed == ZSTD_CONTENTSIZE_ERROR)
        return fail(r, NP_TRACE_ECORRUPT, at, "EVENTS payload is not a zstd frame");
    if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != declen)
        return fail(r, NP_TRACE_ECORRUPT, at, "zstd frame holds %llu bytes, EVENTS says %u", framed, declen);
    if (NP_GROW(r->dec, r->deccap, (size_t)declen + 1) < 0 || (!r->zstd && !(r->zstd = ZSTD_createDCtx())))
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory for %u decoded bytes", declen);
    size_t got = ZSTD_decompressDCtx(r->zstd, r->dec, declen, cur->p, have);
    if (ZSTD_isError(got))
        return fail(r, NP_TRACE_ECORRUPT, at, "corrupt zstd frame: %s", ZSTD_getErrorName(got));
    if (got != declen)
        return fail(r, NP_TRACE_ECORRUPT, at, "zstd frame holds %zu bytes, EVENTS says %u", got, declen);
    *stream = r->dec;
    return 0;
}

static int do_events(struct reader *r, const struct chunk *c)
{
    struct cursor cur = payload(r, c);
    uint32_t tid = (uint32_t)take(&cur, 4);
    uint64_t tick = take(&cur, 8);
    uint32_t count = (uint32_t)take(&cur, 4);
    unsigned compression = (unsigned)take(&cur, 1);
    uint32_t declen = (uint32_t)take(&cur, 4);
    if (cur.bad)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS chunk of %u bytes is shorter than its %d-byte header",
                    c->len, EVENTS_HEADER);
    if (declen > NP_TRACE_CHUNK_MAX)
        return fail(r, NP_TRACE_ECORRUPT, field_off(r, c, &cur) - 4,
                    "EVENTS stream of %u bytes, over the %u-byte limit", declen, NP_TRACE_CHUNK_MAX);
    if (count > declen)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS claims %u events in %u bytes", count, declen);
    const uint8_t *stream = NULL;
    int st = events_stream(r, c, &cur, compression, declen, &stream);
    if (st)
        return st;
    /* where a record sits: a file offset, or a decoded offset in the chunk */
    bool raw = compression == NP_COMPRESS_NONE;
    uint64_t base = raw ? field_off(r, c, &cur) : c->off;
    char in[48] = "";
#define WHERE(q) (raw ? base + (uint64_t)((q) - stream) : base)
#define IN(q) (raw ? "" : (snprintf(in, sizeof in, " (decoded byte %zu)", (size_t)((q) - stream)), in))
    const uint8_t *p = stream, *end = stream + declen;
    uint64_t addr = 0, prev_pc = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *rec = p;
        uint64_t v, arg = 0;
        if (!np_get_varint(&p, end, &v))
            return fail(r, NP_TRACE_ECORRUPT, WHERE(rec), "corrupt varint in event %u of %u%s", i, count, IN(rec));
        unsigned kind = (unsigned)(v & ((1u << NP_EV_KIND_BITS) - 1));
        tick += v >> NP_EV_KIND_BITS;
        if (kind <= NP_EV_SWITCH && kind != NP_EV_EXIT && !np_get_varint(&p, end, &arg))
            return fail(r, NP_TRACE_ECORRUPT, WHERE(rec), "corrupt varint in event %u of %u%s", i, count, IN(rec));
        uint64_t now = tick_time(r, tick);
        switch (kind) {
        case NP_EV_ENTRY:
            addr += (uint64_t)np_unzigzag(arg);
            SINK(r, WHERE(rec), enter, tid, now, addr);
            break;
        case NP_EV_EXIT:
            SINK(r, WHERE(rec), exit, tid, now);
            break;
        case NP_EV_LOST:
            SINK(r, WHERE(rec), lost, tid, now, arg);
            break;
        case NP_EV_SWITCH:
            SINK(r, WHERE(rec), switch_out, tid, now, ticks_ns(r->proc.ns_per_tick, arg));
            break;
        case NP_EV_SAMPLE: {
            unsigned n = 0;
            uint64_t overrun = 0, skipped = 0;
            const char *bad = take_sample(r, &p, end, &prev_pc, &n, &overrun, &skipped);
            if (bad)
                return fail(r, NP_TRACE_ECORRUPT, WHERE(rec), "%s in SAMPLE event %u of %u%s", bad, i, count,
                            IN(rec));
            SINK(r, WHERE(rec), sample, tid, now, r->frames, n, overrun == UINT64_MAX ? overrun : overrun + 1,
                 skipped);
            break;
        }
        default:
            return fail(r, NP_TRACE_ECORRUPT, WHERE(rec), "unknown event kind %u in event %u of %u%s", kind, i,
                        count, IN(rec));
        }
        r->sum->events++;
    }
    if (p != end)
        return fail(r, NP_TRACE_ECORRUPT, WHERE(p), "%zu bytes after the last of %u events%s", (size_t)(end - p),
                    count, IN(p));
#undef WHERE
#undef IN
    return 0;
}

static int do_chunk(struct reader *r, const struct chunk *c, bool first)
{
    if (first && c->type != NP_CHUNK_INFO)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "first chunk has type %u, not INFO (%d)", c->type, NP_CHUNK_INFO);
    switch (c->type) {
    case NP_CHUNK_INFO:
    case NP_CHUNK_MODULE:
    case NP_CHUNK_THREAD:
    case NP_CHUNK_EVENTS:
    case NP_CHUNK_END:
    case NP_CHUNK_NAME:
    case NP_CHUNK_BLOCKS:
    case NP_CHUNK_SAMPLING:
        break;
    default:
        return 0; /* unknown types are skipped */
    }
    int st = load_payload(r, c);
    if (st)
        return st;
    switch (c->type) {
    case NP_CHUNK_INFO:
        return first ? do_info(r, c) : fail(r, NP_TRACE_ECORRUPT, c->off, "a second INFO chunk");
    case NP_CHUNK_MODULE:
        return do_module(r, c);
    case NP_CHUNK_THREAD:
        return do_thread(r, c);
    case NP_CHUNK_EVENTS:
        return do_events(r, c);
    case NP_CHUNK_NAME:
        return do_name(r, c);
    case NP_CHUNK_BLOCKS:
        return do_blocks(r, c);
    case NP_CHUNK_SAMPLING:
        return do_sampling(r, c);
    default:
        return do_end(r, c);
    }
}

/* Pass one: the first END chunk's values into r->proc, quietly. */
static void find_end(struct reader *r, uint64_t pos)
{
    struct chunk c;
    while (next_chunk(r, &pos, &c) == 0 && !c.eof) {
        if (c.type != NP_CHUNK_END)
            continue;
        uint64_t tick, lost;
        double nspt;
        if (load_payload(r, &c) == 0 && parse_end(r, &c, &tick, &lost, &nspt) == 0) {
            r->proc.has_end = true;
            r->proc.end_ns = tick; /* a tick until INFO is read */
            r->proc.events_lost = lost;
            r->proc.ns_per_tick = nspt;
        }
        return;
    }
}

static void progress(struct reader *r, uint64_t pos)
{
    if (r->hooks && r->hooks->progress)
        r->hooks->progress(r->hooks->ctx, r->done_before + pos, r->total);
}

/* Reads the file open on r->fd; returns its status (reported). */
static int read_file(struct reader *r)
{
    memset(&r->proc, 0, sizeof r->proc);
    r->proc.file = r->name;
    r->begun = r->end_seen = false;
    r->sum->files++;
    uint64_t pos = 0;
    int st = read_header(r, &pos);
    if (st)
        return report(r, st);
    find_end(r, pos);
    struct chunk c;
    for (bool first = true;; first = false) {
        st = next_chunk(r, &pos, &c);
        if (st || c.eof)
            break;
        st = do_chunk(r, &c, first);
        if (st)
            break;
        progress(r, pos);
    }
    if (!r->end_seen) {
        r->sum->files_unfinished++;
        if (!st && r->begun) {
            snprintf(r->msg, sizeof r->msg, "%s: no END chunk: the program did not exit normally; "
                     "using what it recorded", r->name);
            diag(r, NP_DIAG_WARNING, np_scrub_line(r->msg));
        }
    }
    if (!st && !r->begun)
        st = fail(r, NP_TRACE_ETRUNC, pos, "no INFO chunk: the file holds a header only");
    report(r, st);
    if (r->begun && r->sink && r->sink->end) {
        int rc = r->sink->end(r->sink->ctx);
        if (rc && !st)
            st = report(r, stopped(r, rc, r->size));
    }
    return st;
}

static void reader_init(struct reader *r, const struct np_event_sink *sink, const struct np_trace_hooks *hooks,
                        struct np_trace_summary *sum)
{
    memset(r, 0, sizeof *r);
    r->sink = sink;
    r->hooks = hooks;
    r->sum = sum;
    r->fd = -1;
}

static void reader_free(struct reader *r)
{
    free(r->buf);
    free(r->dec);
    free(r->arena);
    free(r->argv);
    free(r->blocks);
    ZSTD_freeDCtx(r->zstd);
}

/* Reads the regular file on FD; the file's size was SIZE when listed. */
static int read_open(struct reader *r, int fd, const char *name)
{
    struct stat st;
    r->fd = fd;
    r->name = name;
    if (fstat(fd, &st) != 0)
        return report(r, fail(r, NP_TRACE_EIO, NO_OFFSET, "cannot stat: %s", strerror(errno)));
    if (!S_ISREG(st.st_mode)) {
        r->sum->files++;
        return report(r, fail(r, NP_TRACE_ENOTTRACE, NO_OFFSET, "not a regular file"));
    }
    r->size = (uint64_t)st.st_size;
    r->sum->bytes += r->size;
    if (!r->total)
        r->total = r->size;
    int status = read_file(r);
    progress(r, r->size);
    r->done_before += r->size;
    return status;
}

int np_trace_read_fd(int fd, const char *name, const struct np_event_sink *sink,
                     const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_trace_summary local = { 0 };
    struct reader r;
    reader_init(&r, sink, hooks, summary ? summary : &local);
    read_open(&r, fd, name);
    reader_free(&r);
    return r.sum->status;
}

/* ---- directories --------------------------------------------------------- */

/* Trace files sort by pid, then exec number (<pid>.npt before
 * <pid>.1.npt), then name; names not of that form come last. */
static int parse_name(const char *s, unsigned long long *pid, unsigned long long *n)
{
    char *e;
    if (*s < '0' || *s > '9')
        return 0;
    *pid = strtoull(s, &e, 10);
    *n = 0;
    if (strcmp(e, NP_TRACE_FILE_SUFFIX) == 0)
        return 1;
    if (*e != '.' || e[1] < '0' || e[1] > '9')
        return 0;
    *n = strtoull(e + 1, &e, 10);
    return strcmp(e, NP_TRACE_FILE_SUFFIX) == 0;
}

static int name_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    unsigned long long px, nx, py, ny;
    int kx = parse_name(x, &px, &nx), ky = parse_name(y, &py, &ny);
    if (kx != ky)
        return ky - kx;
    if (kx && (px != py || nx != ny))
        return px != py ? (px < py ? -1 : 1) : (nx < ny ? -1 : 1);
    return strcmp(x, y);
}

static bool is_trace_name(const char *s)
{
    size_t n = strlen(s), k = strlen(NP_TRACE_FILE_SUFFIX);
    return n > k && strcmp(s + n - k, NP_TRACE_FILE_SUFFIX) == 0;
}

/* The sorted *.npt names in DIR (NULL-terminated), or NULL. */
static char **list_traces(struct reader *r, const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        report(r, fail(r, NP_TRACE_ENOENT, NO_OFFSET, "cannot open directory: %s", strerror(errno)));
        return NULL;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_trace_name(e->d_name))
            continue;
        if (NP_GROW(names, cap, n + 2) < 0 || !(names[n] = strdup(e->d_name))) {
            report(r, fail(r, NP_TRACE_ENOMEM, NO_OFFSET, "out of memory listing the directory"));
            break;
        }
        names[++n] = NULL;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, name_cmp);
    *count = n;
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int read_path(struct reader *r, const char *path)
{
    r->name = path;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        r->sum->files++;
        return report(r, fail(r, NP_TRACE_ENOENT, NO_OFFSET, "cannot open: %s", strerror(errno)));
    }
    int st = read_open(r, fd, path);
    close(fd);
    return st;
}

static int read_dir(struct reader *r, const char *dir)
{
    size_t n = 0;
    char **names = list_traces(r, dir, &n);
    if (!n) {
        if (!r->sum->status)
            report(r, fail(r, NP_TRACE_EEMPTY, NO_OFFSET, "no %s trace files in this directory", NP_TRACE_FILE_SUFFIX));
        free_names(names, n);
        return r->sum->status;
    }
    char **paths = calloc(n, sizeof *paths);
    for (size_t i = 0; paths && i < n; i++) {
        struct stat st;
        if (asprintf(&paths[i], "%s/%s", dir, names[i]) < 0)
            paths[i] = NULL;
        else if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            r->total += (uint64_t)st.st_size;
    }
    for (size_t i = 0; i < n; i++) {
        if (!paths || !paths[i]) {
            report(r, fail(r, NP_TRACE_ENOMEM, NO_OFFSET, "out of memory"));
            break;
        }
        read_path(r, paths[i]);
    }
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free_names(names, n);
    return r->sum->status;
}

int np_trace_read(const char *path, const struct np_event_sink *sink, const struct np_trace_hooks *hooks,
                  struct np_trace_summary *summary)
{
    struct np_trace_summary local;
    struct reader r;
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    reader_init(&r, sink, hooks, summary);
    r.name = path;
    struct stat st;
    if (stat(path, &st) != 0)
        report(&r, fail(&r, NP_TRACE_ENOENT, NO_OFFSET, "cannot open: %s", strerror(errno)));
    else if (S_ISDIR(st.st_mode))
        read_dir(&r, path);
    else
        read_path(&r, path);
    reader_free(&r);
    return summary->status;
}
