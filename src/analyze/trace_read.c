/* trace_read.c - the trace file reader (interface and contract in
 * trace_read.h, format in docs/trace-format.md).
 *
 * Each file is read in two passes. Pass one (walk_file) is the one walk
 * of the file's chunks: it checks each chunk header's bounds and, in a
 * file of version 2, each chunk's checksum, and lists the chunks in
 * order, the damaged ones too (a checksum that fails, a length that
 * cannot be), each with where the walk went on: after its length when
 * that lands on a chunk whose checksum holds (or on the end of the
 * file), else at the next place where a whole chunk of a known type with
 * a good checksum starts (resynchronisation). It also reads the END
 * chunk: its refined ns_per_tick converts every time, so it is needed
 * before the first event is delivered; and it notes where the EVENTS
 * chunks are, the threads, and the UNITS chunk, read next: what the ticks
 * count (and whether a second counter runs beside them) decides the
 * times too. Pass two takes the list in order, decodes the chunks and
 * feeds the sink; it alone reports problems, so that everything before
 * the damage has reached the sink when the line goes out. A damaged chunk
 * is a warning, counted in the summary: its thread's open calls (every
 * thread's when it does not read as an EVENTS chunk of a thread already
 * seen) get a loss point there, a LOST of 0 events, as a LOST record
 * does; so does a LOST record, and an END, that claims more events than
 * the thread or process can have written (np_events_possible).
 *
 * The options act at INFO (apply_units): a clock rate makes the ticks of
 * a trace in cycles ns; the count metric delivers each thread's second
 * counter (COUNT records, summed across its chunks) as the times.
 *
 * Events are decoded (events_decode.c) in batches and given to the sink
 * as runs when it takes them (np_event_sink.events), else one callback
 * each. Once INFO has given the clock, a file with several EVENTS chunks
 * has them decoded ahead on a second thread (trace_ahead.c), which pass
 * two takes batch by batch; a chunk the thread could not decode is read
 * here as it would be without it, so problems read the same either way.
 *
 * Bytes come in with pread() into one payload buffer reused across chunks
 * and files, sized by the chunk, which pass one has checked against both
 * the 64 MiB limit and the bytes left in the file. Strings are copied,
 * NUL-terminated, into an arena as large as the payload (each string's
 * 2-byte length turns into at most its terminator). An EVENTS chunk's
 * decoded stream goes to a second reused buffer; its declared length is
 * checked against the 64 MiB limit and, for zstd, against the largest
 * ratio zstd can reach, before anything is allocated. The event loop
 * consumes at least one byte per record and stops at the declared count,
 * so no input makes it spin; resynchronisation checksums at most a few
 * times the bytes left in the file, so none makes it crawl. */
#define _GNU_SOURCE
#include "trace_read.h"
#include "common/byte_cursor.h"
#include "common/report_format.h"
#include "common/trace_format.h"
#include "events_decode.h"
#include "target_ring.h"
#include "trace_ahead.h"
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

#define END_PAYLOAD 24         /* u64 end tick, u64 lost, u64 ns_per_tick */
#define NS_PER_TICK_MAX 1e12   /* a tick longer than 1000 s is not a clock */
#define NO_OFFSET UINT64_MAX   /* a problem of the whole file or path */
#define AHEAD_MIN_CHUNKS 2     /* fewer EVENTS chunks are not worth a thread */

/* Why pass one found a chunk damaged. */
enum damage {
    DAMAGE_NONE,
    DAMAGE_SUM,      /* its checksum fails */
    DAMAGE_TOO_LONG, /* it claims more than NP_TRACE_CHUNK_MAX bytes */
    DAMAGE_PAST_END, /* it claims more than the file holds, and a chunk follows */
    DAMAGE_LISTED    /* bytes the caller found damaged (np_trace_listed_damage) */
};

/* One chunk of the file (pass one's list): a good one, or a damaged one
 * that pass two skips. */
struct chunk {
    uint64_t off;    /* of its header in the file */
    uint32_t type;   /* as read (a damaged one's may be wrong) */
    uint32_t len;
    uint8_t damage;  /* enum damage */
    bool resynced;   /* damaged: its length was no use, the next chunk was sought */
    bool has_tid;    /* damaged: it reads as EVENTS, this tid */
    uint32_t tid;
    uint64_t bytes;  /* damaged: the bytes skipped, from OFF */
    uint32_t what;   /* DAMAGE_LISTED: its description, r->whats[what] */
};

struct reader {
    const struct np_source_options *opt;
    const char *name;
    int fd;
    const uint8_t *mem;   /* the bytes, when they are in memory (np_trace_listed) */
    unsigned listed;      /* np_trace_listed: its flags, NP_TRACE_LISTED_ON set */
    char (*whats)[NP_TRACE_LISTED_WHAT]; /* what the caller's damaged stretches are */
    size_t nwhats, whatscap;
    uint64_t size;
    unsigned version;     /* the file's format version */
    unsigned hsize;       /* its chunk headers' bytes */
    const struct np_event_sink *sink;
    const struct np_trace_hooks *hooks;
    struct np_trace_summary *sum;
    uint64_t done_before; /* bytes of the files read before this one */
    uint64_t total;       /* bytes of all files */

    uint8_t *buf;         /* the payload being decoded */
    size_t bufcap;
    struct np_stream_buf stream; /* a decoded event stream */
    char *arena;          /* strings of the payload, NUL-terminated */
    size_t arenacap, arenalen;
    const char **argv;
    size_t argvcap;
    struct chunk *items;           /* the file's chunks, damaged ones too (pass one) */
    size_t nitems, itemscap;
    int walk_status;               /* where pass one stopped short of the end: a status, */
    char walk_msg[NP_TRACE_MSG_MAX]; /* its line */
    uint64_t walk_end;             /* where it stopped */
    uint8_t *win;                  /* resynchronisation's window of the file */
    uint64_t budget;               /* bytes it may still checksum in this file */
    struct np_hmap file_tids;      /* pass one: the threads the file names */
    struct np_hmap last;           /* pass two: tid -> time of its last event so far */
    uint64_t end_lost_bad;         /* END's lost count when more than possible, else 0 */
    bool damaged;                  /* a damaged chunk was skipped in this file */
    struct np_ahead_chunk *chunks; /* the file's EVENTS chunks (pass one) */
    size_t nchunks, chunkscap;
    struct np_ahead *ahead;        /* decoding them ahead, or NULL */
    struct np_ring_dec ring;       /* the file's RING chunks' decoder */
    struct np_trace_block *blocks; /* a BLOCKS chunk's entries */
    size_t blockscap;

    struct np_trace_process proc;
    uint64_t frames[NP_SAMPLE_MAX_FRAMES]; /* a SAMPLE's, decoded */

    /* units: the file's UNITS chunk (pass one), what they are, and what
     * every file of the read gives */
    struct chunk units;
    bool has_units;
    unsigned units_seen;  /* pass two: a second one is corrupt */
    enum np_time_unit tick_unit, count_unit;
    bool has_count;       /* the trace has a second counter */
    bool counted;         /* its times are the second counter (NP_METRIC_COUNT) */
    struct np_hmap counts; /* tid -> its second counter so far, this file */
    bool unit_set;        /* a file before this one fixed the unit */
    enum np_time_unit unit;
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

/* r->msg and STATUS into the summary, unsaid; returns STATUS. */
static int record(struct reader *r, int status)
{
    if (status > r->sum->status) {
        r->sum->status = status;
        snprintf(r->sum->message, sizeof r->sum->message, "%s", r->msg);
    }
    return status;
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

/* ---- bytes ---------------------------------------------------------------- */

/* Reads exactly N bytes at OFF; 0, or a status with the message set. */
static int read_at(struct reader *r, void *dst, size_t n, uint64_t off)
{
    uint8_t *p = dst;
    if (r->mem) {
        if (off > r->size || n > r->size - off) /* the caller's listing is checked: cannot happen */
            return fail(r, NP_TRACE_ETRUNC, off, "a chunk past the end of the bytes");
        memcpy(p, r->mem + off, n);
        return 0;
    }
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

static double take_double(struct np_cursor *c)
{
    uint64_t bits = np_cursor_take(c, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A string (u16 length, bytes) copied into the arena, NUL-terminated;
 * *LEN gets its length. Embedded NULs end it early for C consumers. */
static const char *take_string(struct reader *r, struct np_cursor *c, size_t *len)
{
    const uint8_t *from;
    size_t n = np_cursor_str(c, &from);
    if (c->bad)
        return "";
    char *s = r->arena + r->arenalen; /* fits: see the top comment */
    memcpy(s, from, n);
    s[n] = 0;
    r->arenalen += n + 1;
    if (len)
        *len = n;
    return s;
}

static bool good_ns_per_tick(double d)
{
    return isfinite(d) && d > 0 && d <= NS_PER_TICK_MAX;
}

/* ---- chunks ------------------------------------------------------------- */

/* The header: 0 with *POS at the first chunk, or a status. */
static int read_header(struct reader *r, uint64_t *pos)
{
    uint8_t h[NP_TRACE_HEADER_SIZE];
    /* nothing to read, and nothing cut: said as such, an error, not the
     * warning of a file cut short inside its header */
    if (r->size == 0)
        return fail(r, NP_TRACE_ENOTTRACE, NO_OFFSET,
                    "empty trace file: the program wrote nothing (killed before its first event?)");
    size_t n = r->size < sizeof h ? (size_t)r->size : sizeof h;
    int st = read_at(r, h, n, 0);
    if (st)
        return st;
    if (memcmp(h, NP_TRACE_MAGIC, n < NP_TRACE_MAGIC_LEN ? n : NP_TRACE_MAGIC_LEN) != 0)
        return fail(r, NP_TRACE_ENOTTRACE, 0, "not a nanoprof trace (no NPTRACE magic)");
    if (n < NP_TRACE_HEADER_SIZE)
        return fail(r, NP_TRACE_ETRUNC, n, "file cut short inside its %d-byte header", NP_TRACE_HEADER_SIZE);
    unsigned version = np_get_u16(h + 8), size = np_get_u16(h + 10);
    if (version < NP_TRACE_VERSION_V1 || version > NP_TRACE_VERSION)
        return fail(r, NP_TRACE_EVERSION, 8, "trace format version %u; this nanoprof reads versions %d to %d",
                    version, NP_TRACE_VERSION_V1, NP_TRACE_VERSION);
    if (version > NP_TRACE_VERSION_V1 && !np_trace_header_sum_ok(h))
        return fail(r, NP_TRACE_ECORRUPT, NP_TRACE_HEADER_SUMMED, "damaged file header (checksum mismatch)");
    if (size < NP_TRACE_HEADER_SIZE)
        return fail(r, NP_TRACE_ECORRUPT, 10, "header size %u, less than %d", size, NP_TRACE_HEADER_SIZE);
    if (size > r->size)
        return fail(r, NP_TRACE_ETRUNC, r->size, "file cut short inside its %u-byte header", size);
    r->version = version;
    r->hsize = np_trace_chunk_header_size(version);
    if (version == NP_TRACE_VERSION_V1) {
        r->sum->files_unchecked++;
        fail(r, NP_TRACE_OK, NO_OFFSET, "trace format version 1: chunks carry no checksums, damage may go unseen");
        diag(r, NP_DIAG_NOTE, r->msg);
    }
    *pos = size;
    return 0;
}

/* The line for chunk C at the end of the file (LEFT bytes from its
 * header's start) that np_trace_chunk_check found K; its status. */
static int chunk_problem(struct reader *r, enum np_chunk_check k, const struct chunk *c, uint64_t left)
{
    switch (k) {
    case NP_CHUNK_CUT_HEADER:
        return fail(r, NP_TRACE_ETRUNC, c->off, "file cut short inside a chunk header (%" PRIu64 " of %u bytes)",
                    left, r->hsize);
    case NP_CHUNK_TOO_LONG:
        return fail(r, NP_TRACE_ECORRUPT, c->off + 4, "chunk of type %u claims %u bytes, over the %u-byte limit",
                    c->type, c->len, NP_TRACE_CHUNK_MAX);
    default:
        return fail(r, NP_TRACE_ETRUNC, c->off, "file cut short inside a chunk (type %u, %u bytes, %" PRIu64 " present)",
                    c->type, c->len, left - r->hsize);
    }
}

static uint64_t payload_at(const struct reader *r, const struct chunk *c)
{
    return c->off + r->hsize;
}

/* Reads C's payload into r->buf and readies the string arena. */
static int load_payload(struct reader *r, const struct chunk *c)
{
    if (NP_GROW(r->buf, r->bufcap, (size_t)c->len + 1) < 0 ||
        NP_GROW(r->arena, r->arenacap, (size_t)c->len + 1) < 0)
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory for a %u-byte chunk", c->len);
    r->arenalen = 0;
    return read_at(r, r->buf, c->len, payload_at(r, c));
}

static struct np_cursor payload(const struct reader *r, const struct chunk *c)
{
    return (struct np_cursor){ r->buf, r->buf + c->len, false };
}

static uint64_t field_off(const struct reader *r, const struct chunk *c, const struct np_cursor *cur)
{
    return payload_at(r, c) + (uint64_t)(cur->p - r->buf);
}

/* A decoded chunk must use its payload exactly. */
static int check_used(struct reader *r, const struct chunk *c, const struct np_cursor *cur, const char *what)
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

/* ---- pass two: damage ------------------------------------------------------------ */

/* A loss point for thread TID at TIME: a LOST of 0 events, which closes
 * the calls open there (the model's rule for a LOST record). */
static int loss_point(struct reader *r, uint32_t tid, uint64_t time, uint64_t off)
{
    const struct np_event ev = { time, 0, NP_EVENT_LOST, 0 };
    if (r->sink && r->sink->events) {
        size_t done = 0;
        int rc = r->sink->events(r->sink->ctx, tid, &ev, 1, &done);
        return rc ? stopped(r, rc, off) : 0;
    }
    SINK(r, off, lost, tid, time, 0);
    return 0;
}

/* Loss points for what damaged chunk C may have held: its thread's when
 * it reads as an EVENTS chunk of a thread already seen in the file, else
 * every such thread's (its type may be what is damaged). */
static int damage_loss(struct reader *r, const struct chunk *c)
{
    const uint64_t *t;
    if (c->type == NP_CHUNK_EVENTS && c->has_tid && (t = np_hmap_find(&r->last, c->tid)))
        return loss_point(r, c->tid, *t, c->off);
    for (size_t i = 0; i < r->last.cap; i++) {
        int st = r->last.used[i] ? loss_point(r, (uint32_t)r->last.keys[i], r->last.vals[i], c->off) : 0;
        if (st)
            return st;
    }
    return 0;
}

/* Counts a damaged chunk of BYTES bytes; r->msg (its line) goes out as a
 * warning. */
static void count_damage(struct reader *r, uint64_t bytes)
{
    r->sum->chunks_damaged++;
    r->sum->bytes_damaged += bytes;
    r->damaged = true;
    diag(r, NP_DIAG_WARNING, r->msg);
}

/* The units of the file whose INFO (chunk C) is in r->proc, as the
 * UNITS chunk (read_units) or the clock's name say, and the options: the
 * times' unit, and how ticks or counts give them. */
static int apply_units(struct reader *r, const struct chunk *c)
{
    struct np_trace_process *p = &r->proc;
    const struct np_source_options *o = r->opt;
    if (!r->has_units) {
        r->tick_unit = strcmp(p->clock, "cycles") == 0 ? NP_UNIT_CYCLES : NP_UNIT_NS;
        r->has_count = false;
    }
    enum np_time_unit unit = r->tick_unit;
    r->counted = o->metric == NP_METRIC_COUNT;
    if (r->counted) {
        if (!r->has_count)
            return fail(r, NP_TRACE_EOPTION, NO_OFFSET,
                        "no second counter to count with: the trace names none (no UNITS chunk with a count unit)");
        if (o->clock_hz > 0)
            return fail(r, NP_TRACE_EOPTION, NO_OFFSET,
                        "a clock rate turns the clock's cycles into time, not the second counter (%s)",
                        np_time_unit_name(r->count_unit));
        unit = r->count_unit;
        p->start_ns = 0;
    } else if (o->clock_hz > 0) {
        if (r->tick_unit != NP_UNIT_CYCLES)
            return fail(r, NP_TRACE_EOPTION, NO_OFFSET,
                        "a clock rate applies to a trace in cycles; this one's clock (%s) counts %s", p->clock,
                        np_time_unit_name(r->tick_unit));
        if (!good_ns_per_tick(1e9 / o->clock_hz))
            return fail(r, NP_TRACE_EOPTION, NO_OFFSET, "clock rate %g Hz is out of range", o->clock_hz);
        p->ns_per_tick = 1e9 / o->clock_hz;
        unit = NP_UNIT_NS;
    } else if (r->tick_unit != NP_UNIT_NS) {
        p->ns_per_tick = 1; /* a time is a tick, counted from the start */
        p->start_ns = 0;
    }
    if (r->unit_set && unit != r->unit)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "its times are in %s, those of the files before it in %s",
                    np_time_unit_name(unit), np_time_unit_name(r->unit));
    r->unit = unit;
    r->unit_set = true;
    p->time_unit = unit;
    return 0;
}

static int do_info(struct reader *r, const struct chunk *c)
{
    struct np_cursor cur = payload(r, c);
    struct np_trace_process *p = &r->proc;
    p->pid = (uint32_t)np_cursor_take(&cur, 4);
    p->ppid = (uint32_t)np_cursor_take(&cur, 4);
    p->info_ns_per_tick = take_double(&cur);
    p->start_tick = np_cursor_take(&cur, 8);
    p->start_ns = np_cursor_take(&cur, 8);
    p->clock = take_string(r, &cur, NULL);
    size_t argc = (size_t)np_cursor_take(&cur, 2);
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
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 8,
                    "INFO ns_per_tick %g is not a positive clock period", p->info_ns_per_tick);
    if (!p->has_end)
        p->ns_per_tick = p->info_ns_per_tick;
    p->argc = (unsigned)argc;
    p->argv = r->argv;
    if ((st = apply_units(r, c)))
        return st;
    if (p->has_end) { /* pass one read it, before the start tick was known */
        /* a loss count more than the file's threads can have written is
         * damage, said where END is (do_end), not a number */
        uint64_t threads = r->file_tids.len ? r->file_tids.len : 1, each = np_events_possible(p, p->end_ns);
        if (each <= UINT64_MAX / threads && p->events_lost > each * threads) {
            r->end_lost_bad = p->events_lost;
            p->events_lost = 0;
        }
        p->end_ns = r->counted ? 0 : np_tick_time(p, p->end_ns);
    }
    r->begun = true;
    r->sum->files_read++;
    SINK(r, c->off, begin, p);
    return 0;
}

static int do_module(struct reader *r, const struct chunk *c)
{
    struct np_cursor cur = payload(r, c);
    struct np_trace_module m;
    m.bias = np_cursor_take(&cur, 8);
    m.start = np_cursor_take(&cur, 8);
    m.end = np_cursor_take(&cur, 8);
    m.build_id = (const uint8_t *)take_string(r, &cur, &m.build_id_len);
    m.path = take_string(r, &cur, NULL);
    int st = check_used(r, c, &cur, "MODULE");
    if (st)
        return st;
    if (m.start > m.end)
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 8,
                    "MODULE %s: start 0x%" PRIx64 " after end 0x%" PRIx64, m.path, m.start, m.end);
    SINK(r, c->off, module, &m);
    return 0;
}

static int do_thread(struct reader *r, const struct chunk *c)
{
    struct np_cursor cur = payload(r, c);
    uint32_t tid = (uint32_t)np_cursor_take(&cur, 4);
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
    struct np_cursor cur = payload(r, c);
    uint64_t address = np_cursor_take(&cur, 8);
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
    struct np_cursor cur = payload(r, c);
    uint64_t lost = np_cursor_take(&cur, 8);
    uint32_t n = (uint32_t)np_cursor_take(&cur, 4);
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
        r->blocks[i].address = np_cursor_take(&cur, 8);
        r->blocks[i].count = np_cursor_take(&cur, 8);
    }
    SINK(r, c->off, blocks, r->blocks, n, lost);
    return 0;
}

/* REPORT: u16 type, then at most NP_REPORT_VALUES_MAX values (u64 each),
 * exactly; a type this nanoprof knows with every value it has. */
static int do_report(struct reader *r, const struct chunk *c)
{
    static const unsigned char need[] = NP_REPORT_VALUES;
    struct np_cursor cur = payload(r, c);
    unsigned type = (unsigned)np_cursor_take(&cur, NP_TRACE_REPORT_TYPE);
    size_t left = (size_t)(cur.end - cur.p);
    if (cur.bad || left % NP_TRACE_REPORT_VALUE || left / NP_TRACE_REPORT_VALUE > NP_REPORT_VALUES_MAX)
        return fail(r, NP_TRACE_ECORRUPT, c->off,
                    "REPORT chunk of %u bytes is not a record (a %d-byte type, then up to %d values of %d bytes)",
                    c->len, NP_TRACE_REPORT_TYPE, NP_REPORT_VALUES_MAX, NP_TRACE_REPORT_VALUE);
    unsigned n = (unsigned)(left / NP_TRACE_REPORT_VALUE);
    if (type >= 1 && type <= NP_REPORT_TYPE_LAST && n < need[type])
        return fail(r, NP_TRACE_ECORRUPT, c->off, "REPORT record of type %u holds %u values, its type has %u", type,
                    n, need[type]);
    uint64_t v[NP_REPORT_VALUES_MAX];
    for (unsigned i = 0; i < n; i++)
        v[i] = np_cursor_take(&cur, NP_TRACE_REPORT_VALUE);
    SINK(r, c->off, report, type, v, n);
    return 0;
}

/* END's fields; 0 or a status. Pass one uses it quietly, pass two checks. */
static int parse_end(struct reader *r, const struct chunk *c, uint64_t *end_tick, uint64_t *lost, double *nspt)
{
    struct np_cursor cur = payload(r, c);
    *end_tick = np_cursor_take(&cur, 8);
    *lost = np_cursor_take(&cur, 8);
    *nspt = take_double(&cur);
    int st = check_used(r, c, &cur, "END");
    if (st)
        return st;
    if (!good_ns_per_tick(*nspt))
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 16,
                    "END ns_per_tick %g is not a positive clock period", *nspt);
    return 0;
}

/* The UNITS chunk pass one found: what the ticks count, and the second
 * counter's unit (an empty string: none). Read before INFO is delivered:
 * the times depend on it. */
static int read_units(struct reader *r)
{
    const struct chunk *c = &r->units;
    int st = load_payload(r, c);
    if (st)
        return st;
    struct np_cursor cur = payload(r, c);
    const char *time = take_string(r, &cur, NULL), *count = take_string(r, &cur, NULL);
    if ((st = check_used(r, c, &cur, "UNITS")))
        return st;
    if (!np_time_unit_parse(time, &r->tick_unit))
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c),
                    "UNITS: unknown time unit '%s' (ns, cycles or instructions)", time);
    r->has_count = *count != 0;
    if (r->has_count && !np_time_unit_parse(count, &r->count_unit))
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 2 + strlen(time),
                    "UNITS: unknown count unit '%s' (ns, cycles or instructions)", count);
    return 0;
}

static int do_units(struct reader *r, const struct chunk *c)
{
    /* the first was read before INFO (read_units) */
    return r->units_seen++ ? fail(r, NP_TRACE_ECORRUPT, c->off, "a second UNITS chunk") : 0;
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
    if (r->end_lost_bad) {
        fail(r, NP_TRACE_OK, payload_at(r, c) + 8, "damaged END chunk: %" PRIu64 " events lost, more than its %zu "
             "thread%s can have written: not counted", r->end_lost_bad, r->file_tids.len,
             r->file_tids.len == 1 ? "" : "s");
        count_damage(r, r->hsize + (uint64_t)c->len);
    }
    return 0;
}

static int do_sampling(struct reader *r, const struct chunk *c)
{
    struct np_cursor cur = payload(r, c);
    struct np_trace_sampling smp;
    uint64_t tick = np_cursor_take(&cur, 8);
    smp.time_ns = r->counted ? 0 : np_tick_time(&r->proc, tick); /* counted: from the start */
    smp.hz = (uint32_t)np_cursor_take(&cur, 4);
    smp.unwinder = (unsigned)np_cursor_take(&cur, 1);
    smp.flags = (uint32_t)np_cursor_take(&cur, 4);
    smp.period_ns = np_cursor_take(&cur, 8);
    smp.max_frames = (unsigned)np_cursor_take(&cur, 2);
    int st = check_used(r, c, &cur, "SAMPLING");
    if (st)
        return st;
    if (smp.hz && !smp.period_ns)
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 17,
                    "SAMPLING at %u Hz with a period of 0 ns", smp.hz);
    if (smp.max_frames < 1 || smp.max_frames > NP_SAMPLE_MAX_FRAMES)
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + 25,
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
    if (nf > NP_SAMPLE_MAX_FRAMES)
        return "SAMPLE frame count out of range (0 to 256)";
    if (!nf && *overrun)
        return "SAMPLE of no frames with an overrun";
    uint64_t prev = *prev_pc;
    for (unsigned i = 0; i < nf; i++) {
        if (!np_get_varint(p, end, &d))
            return "corrupt varint";
        prev += (uint64_t)np_unzigzag(d);
        r->frames[i] = prev;
    }
    if (nf)
        *prev_pc = r->frames[0];
    *n = (unsigned)nf;
    return NULL;
}

/* The stream of the EVENTS chunk C with header H, decoded: *STREAM. */
static int events_stream(struct reader *r, const struct chunk *c, const struct np_events_head *h,
                         const uint8_t **stream)
{
    uint64_t detail = 0, at = payload_at(r, c) + NP_EVENTS_HEADER;
    size_t have = c->len - NP_EVENTS_HEADER;
    switch (np_events_stream(&r->stream, h, r->buf, c->len, stream, &detail)) {
    case NP_EVENTS_OK:
        return 0;
    case NP_EVENTS_RAW_SIZE:
        return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS stream of %u bytes in %zu bytes of payload", h->declen,
                    have);
    case NP_EVENTS_COMPRESSION:
        return fail(r, NP_TRACE_ECORRUPT, at - 5, "EVENTS compression %u is unknown", h->compression);
    case NP_EVENTS_RATIO:
        return fail(r, NP_TRACE_ECORRUPT, at - 4, "EVENTS claims %u decoded bytes from %zu zstd bytes", h->declen,
                    have);
    case NP_EVENTS_NOT_ZSTD:
        return fail(r, NP_TRACE_ECORRUPT, at, "EVENTS payload is not a zstd frame");
    case NP_EVENTS_FRAME_SIZE:
        return fail(r, NP_TRACE_ECORRUPT, at, "zstd frame holds %llu bytes, EVENTS says %u",
                    (unsigned long long)detail, h->declen);
    case NP_EVENTS_NOMEM:
        return fail(r, NP_TRACE_ENOMEM, c->off, "out of memory for %u decoded bytes", h->declen);
    case NP_EVENTS_ZSTD:
        return fail(r, NP_TRACE_ECORRUPT, at, "corrupt zstd frame: %s", ZSTD_getErrorName((size_t)detail));
    default:
        return fail(r, NP_TRACE_ECORRUPT, at, "zstd frame holds %zu bytes, EVENTS says %u", (size_t)detail,
                    h->declen);
    }
}

/* Where a record of an EVENTS chunk is, for messages: a file offset (raw
 * stream), or the chunk's offset and the record's decoded offset. */
struct where {
    bool raw;
    uint64_t base;
    char in[48];
};

static struct where where_of(const struct reader *r, const struct chunk *c, const struct np_events_head *h)
{
    bool raw = h->compression == NP_COMPRESS_NONE;
    return (struct where){ raw, raw ? payload_at(r, c) + NP_EVENTS_HEADER : c->off, "" };
}

static uint64_t where_off(const struct where *w, uint32_t at)
{
    return w->raw ? w->base + at : w->base;
}

static const char *where_in(struct where *w, uint32_t at)
{
    if (w->raw)
        return "";
    snprintf(w->in, sizeof w->in, " (decoded byte %u)", at);
    return w->in;
}

/* Hands N decoded events of thread TID to the sink: in one run when it
 * takes runs, else one callback each. FROM: the offset of the first in
 * the stream, which a sink that stops is told (decoding keeps no offset
 * per event, which would cost every event a store for a rare message). */
static int deliver(struct reader *r, uint32_t tid, const struct np_event *ev, uint32_t n, uint32_t from,
                   const struct where *w)
{
    if (!n)
        return 0;
    const uint64_t *last;
    /* a trace among other bytes may hold its chunks out of order (a ring
     * that wrapped): a thread's time going back there is where it stops */
    if (r->listed && (last = np_hmap_find(&r->last, tid)) && ev[0].time_ns < *last)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, from),
                    "events of thread %" PRIu32 " at %" PRIu64 ", before its events so far (to %" PRIu64 "): the "
                    "chunks are out of order from here (a ring that wrapped?)", tid, ev[0].time_ns, *last);
    if (np_hmap_put(&r->last, tid, ev[n - 1].time_ns)) /* where a damaged chunk's loss point goes */
        return fail(r, NP_TRACE_ENOMEM, where_off(w, from), "out of memory");
    if (!r->sink)
        return 0;
    if (r->sink->events) {
        size_t done = n;
        int rc = r->sink->events(r->sink->ctx, tid, ev, n, &done);
        if (rc) {
            done = done < n ? done : n - 1;
            r->sum->events += done;
            return stopped(r, rc, where_off(w, from));
        }
        r->sum->events += n;
        return 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint64_t now = ev[k].time_ns, arg = ev[k].arg, off = where_off(w, from);
        switch (ev[k].kind) {
        case NP_EVENT_ENTER:
            SINK(r, off, enter, tid, now, arg);
            break;
        case NP_EVENT_EXIT:
            SINK(r, off, exit, tid, now);
            break;
        case NP_EVENT_LOST:
            SINK(r, off, lost, tid, now, arg);
            break;
        case NP_EVENT_RESYNC:
            SINK(r, off, resync, tid, now, arg);
            break;
        default:
            SINK(r, off, switch_out, tid, now, arg);
            break;
        }
        r->sum->events++;
    }
    return 0;
}

/* After the first I of COUNT events of chunk C (of thread TID) were
 * delivered: the bad record decoding stopped at (BAD, BAD_KIND, BAD_VALUE,
 * at offset POS), or the bytes left after the last event (POS < DECLEN).
 * A LOST record that claims more than the thread can have written makes
 * the rest of the chunk damage, skipped and counted. */
static int events_end(struct reader *r, const struct chunk *c, uint32_t tid, struct where *w, int bad,
                      unsigned bad_kind, uint64_t bad_value, uint32_t pos, uint32_t declen, uint32_t i, uint32_t count)
{
    if (bad == NP_DECODE_BAD_LOST) {
        const uint64_t *t = np_hmap_find(&r->last, tid);
        fail(r, NP_TRACE_OK, where_off(w, pos), "damaged EVENTS chunk of thread %" PRIu32 ": a LOST record of %" PRIu64
             " events, more than the thread can have written by then%s: skipped its %u events from there", tid,
             bad_value, where_in(w, pos), count - i);
        count_damage(r, r->hsize + (uint64_t)c->len);
        return t ? loss_point(r, tid, *t, c->off) : 0;
    }
    if (bad == NP_DECODE_BAD_VARINT)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, pos), "corrupt varint in event %u of %u%s", i, count,
                    where_in(w, pos));
    if (bad == NP_DECODE_BAD_KIND)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, pos), "unknown event kind %u in event %u of %u%s", bad_kind,
                    i, count, where_in(w, pos));
    if (pos != declen)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, pos), "%u bytes after the last of %u events%s",
                    declen - pos, count, where_in(w, pos));
    return 0;
}

/* The SAMPLE record at D (the batch decoder stops at each), to the sink;
 * event I of COUNT. */
static int read_sample(struct reader *r, struct np_decode *d, const uint8_t *stream, uint32_t tid, struct where *w,
                       uint32_t i, uint32_t count)
{
    const uint8_t *rec = d->p, *p = rec;
    uint64_t v, overrun = 0, skipped = 0;
    unsigned n = 0;
    uint32_t at = (uint32_t)(rec - stream);
    const char *bad = np_get_varint(&p, d->end, &v) ? take_sample(r, &p, d->end, &d->pc, &n, &overrun, &skipped)
                                                    : "corrupt varint";
    if (bad)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, at), "%s in SAMPLE event %u of %u%s", bad, i, count,
                    where_in(w, at));
    d->tick += v >> NP_EV_KIND_BITS;
    d->p = p;
    d->bad = NP_DECODE_GOOD;
    uint64_t time = d->counted ? d->count : np_tick_time(&r->proc, d->tick);
    if (np_hmap_put(&r->last, tid, time))
        return fail(r, NP_TRACE_ENOMEM, where_off(w, at), "out of memory");
    SINK(r, where_off(w, at), sample, tid, time, r->frames, n,
         !n ? 0 : overrun == UINT64_MAX ? overrun : overrun + 1, skipped);
    r->sum->events++;
    return 0;
}

/* The VALUES record at D (the batch decoder stops at each), to the sink;
 * event I of COUNT. */
static int read_values(struct reader *r, struct np_decode *d, const uint8_t *stream, uint32_t tid, struct where *w,
                       uint32_t i, uint32_t count)
{
    const uint8_t *p = d->p, *end = d->end;
    uint32_t at = (uint32_t)(p - stream);
    uint64_t v, head;
    struct np_value vals[NP_VALUES_MAX];
    const char *bad = NULL;
    unsigned n = 0;
    bool again = false;
    struct np_decode_values *last = NULL;
    if (!np_get_varint(&p, end, &v) || !np_get_varint(&p, end, &head)) {
        bad = "corrupt varint";
    } else if (again = head & NP_VALUES_AGAIN, head &= ~(uint64_t)NP_VALUES_AGAIN, last = &d->values[head & 1],
               (head >> 1) == 0 || (head >> 1) > NP_VALUES_MAX) {
        bad = "a count of values out of 1 to 8";
    } else if (again && last->n != head >> 1) {
        bad = last->n ? "a repeat of a VALUES record of another count"
                      : "a repeat of a VALUES record the chunk has not had";
    } else if (again) {
        for (n = 0; n < (head >> 1); n++) {
            uint64_t dv;
            if (!np_get_varint(&p, end, &dv)) {
                bad = "corrupt varint";
                break;
            }
            vals[n] = (struct np_value){ last->index[n], last->format[n], last->v[n] + (uint64_t)np_unzigzag(dv),
                                         NULL, 0 };
        }
    } else {
        for (n = 0; n < (head >> 1) && !bad; n++) {
            struct np_value *x = &vals[n];
            uint64_t index, len;
            if (!np_get_varint(&p, end, &index) || p >= end) {
                bad = "corrupt varint";
                break;
            }
            x->index = (unsigned)(index > 255 ? 255 : index);
            x->format = *p++;
            x->str = NULL;
            x->len = 0;
            if (x->format >= NP_VAL_FORMATS) {
                bad = "an unknown value format";
            } else if (x->format == NP_VAL_STR) {
                if (!np_get_varint(&p, end, &len) || len > NP_VALUE_STR_MAX || len > (uint64_t)(end - p))
                    bad = "a string value longer than its record";
                else
                    x->str = (const char *)p, x->len = (size_t)len, p += len;
            } else if (!np_get_varint(&p, end, &x->v)) {
                bad = "corrupt varint";
            }
        }
    }
    if (bad)
        return fail(r, NP_TRACE_ECORRUPT, where_off(w, at), "%s in VALUES event %u of %u%s", bad, i, count,
                    where_in(w, at));
    if (!again) {
        last->n = n;
        for (unsigned k = 0; k < n; k++) {
            if (np_value_signed(vals[k].format))
                vals[k].v = (uint64_t)np_unzigzag(vals[k].v);
            if (vals[k].format == NP_VAL_STR)
                last->n = 0; /* never repeated */
            last->index[k] = (uint8_t)vals[k].index;
            last->format[k] = (uint8_t)vals[k].format;
            last->v[k] = vals[k].v;
        }
    } else {
        for (unsigned k = 0; k < n; k++)
            last->v[k] = vals[k].v;
    }
    d->tick += v >> NP_EV_KIND_BITS;
    d->p = p;
    d->bad = NP_DECODE_GOOD;
    uint64_t time = d->counted ? d->count : np_tick_time(&r->proc, d->tick);
    SINK(r, where_off(w, at), values, tid, time, head & 1, vals, n);
    r->sum->events++;
    return 0;
}

/* Events I.. of the EVENTS chunk C (header H, decoded STREAM) from D on,
 * to the sink, in batches; samples one by one. */
static int events_from(struct reader *r, const struct chunk *c, const struct np_events_head *h,
                       const uint8_t *stream, struct np_decode *d, uint32_t i)
{
    struct where w = where_of(r, c, h);
    struct np_event ev[NP_DECODE_BATCH];
    int st;
    while (i < h->count) {
        uint32_t max = h->count - i < NP_DECODE_BATCH ? h->count - i : NP_DECODE_BATCH;
        uint32_t from = (uint32_t)(d->p - stream), before = d->records;
        uint32_t n = np_events_decode(&r->proc, d, ev, max);
        /* what came before a bad record is delivered before it is reported */
        if ((st = deliver(r, h->tid, ev, n, from, &w)))
            return st;
        i += d->records - before;
        if (d->bad == NP_DECODE_SAMPLE) {
            if ((st = read_sample(r, d, stream, h->tid, &w, i, h->count)))
                return st;
            i++;
        } else if (d->bad == NP_DECODE_VALUES) {
            if ((st = read_values(r, d, stream, h->tid, &w, i, h->count)))
                return st;
            i++;
        } else if (d->bad) {
            break;
        }
    }
    return events_end(r, c, h->tid, &w, d->bad, d->bad_kind, d->bad_value, (uint32_t)(d->p - stream), h->declen, i,
                      h->count);
}

static int do_events(struct reader *r, const struct chunk *c)
{
    struct np_events_head h;
    switch (np_events_head(r->buf, c->len, &h)) {
    case NP_EVENTS_OK:
        break;
    case NP_EVENTS_SHORT:
        return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS chunk of %u bytes is shorter than its %d-byte header",
                    c->len, NP_EVENTS_HEADER);
    case NP_EVENTS_TOO_LONG:
        return fail(r, NP_TRACE_ECORRUPT, payload_at(r, c) + NP_EVENTS_HEADER - 4,
                    "EVENTS stream of %u bytes, over the %u-byte limit", h.declen, NP_TRACE_CHUNK_MAX);
    default:
        return fail(r, NP_TRACE_ECORRUPT, c->off, "EVENTS claims %u events in %u bytes", h.count, h.declen);
    }
    const uint8_t *stream = NULL;
    int st = events_stream(r, c, &h, &stream);
    if (st)
        return st;
    struct np_decode d = { .p = stream, .end = stream + h.declen, .tick = h.tick, .counted = r->counted };
    if (!r->counted)
        return events_from(r, c, &h, stream, &d, 0);
    /* the thread's count goes on from its previous chunk */
    uint64_t *count = np_hmap_find(&r->counts, h.tid);
    d.count = count ? *count : 0;
    st = events_from(r, c, &h, stream, &d, 0);
    if (np_hmap_put(&r->counts, h.tid, d.count) && !st)
        st = fail(r, NP_TRACE_ENOMEM, c->off, "out of memory");
    return st;
}

/* A RING chunk's EVENTS chunk (CHUNK, N bytes, its header included),
 * read as if the file held it where the RING chunk is. */
struct ring_read {
    struct reader *r;
    const struct chunk *c;
};

static int ring_events(void *ctx, const uint8_t *chunk, size_t n)
{
    struct ring_read *x = ctx;
    struct reader *r = x->r;
    struct chunk e = { .off = x->c->off, .type = NP_CHUNK_EVENTS, .len = (uint32_t)(n - NP_TRACE_CHUNK_HEADER) };
    uint8_t *ring = r->buf;
    r->buf = (uint8_t *)chunk + NP_TRACE_CHUNK_HEADER; /* do_events reads r->buf, and nothing grows it */
    int st = do_events(r, &e);
    r->buf = ring;
    return st;
}

/* A target's raw call words (np_trace_init_ring), decoded into EVENTS
 * chunks that are read as the file's own. */
static int do_ring(struct reader *r, const struct chunk *c)
{
    const char *err;
    if (r->version == NP_TRACE_VERSION_V1)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "RING chunk in a version 1 trace");
    struct ring_read x = { r, c };
    int st = np_ring_decode(&r->ring, r->buf, c->len, ring_events, &x, &err);
    if (st < 0)
        return fail(r, strcmp(err, "out of memory") ? NP_TRACE_ECORRUPT : NP_TRACE_ENOMEM, c->off, "%s", err);
    return st;
}

/* The read-ahead stopped at a sample, event I of chunk C, at offset POS
 * of the stream (it decodes calls only): the rest of the chunk is read
 * here, from the decoder's state in D. */
static int events_resume(struct reader *r, const struct chunk *c, const struct np_events_head *h,
                         const struct np_decode *d, uint32_t pos, uint32_t i)
{
    int st = load_payload(r, c);
    const uint8_t *stream = NULL;
    if (st || (st = events_stream(r, c, h, &stream)))
        return st;
    struct np_decode from = *d;
    from.p = stream + pos;
    from.end = stream + h->declen;
    return events_from(r, c, h, stream, &from, i);
}

/* The same from the batches the read-ahead thread decoded, the first B. */
static int events_ahead(struct reader *r, const struct chunk *c, const struct np_ahead_batch *b)
{
    struct np_events_head h = b->head;
    struct where w = where_of(r, c, &h);
    uint32_t i = 0, from = 0;
    for (;;) {
        int st = deliver(r, h.tid, b->ev, b->n, from, &w);
        from = b->pos;
        i += b->records;
        bool last = b->last;
        int bad = b->bad;
        unsigned bad_kind = b->bad_kind;
        uint64_t bad_value = b->bad_value;
        uint32_t pos = b->pos;
        struct np_decode resume = { .tick = b->tick, .addr = b->addr, .pc = b->pc };
        np_ahead_release(r->ahead);
        if (st)
            return st;
        if (last && (bad == NP_DECODE_SAMPLE || bad == NP_DECODE_VALUES))
            return events_resume(r, c, &h, &resume, pos, i);
        if (last)
            return events_end(r, c, h.tid, &w, bad, bad_kind, bad_value, pos, h.declen, i, h.count);
        if (!(b = np_ahead_next(r->ahead, c->off)))
            return fail(r, NP_TRACE_EIO, c->off, "read-ahead ended inside an EVENTS chunk"); /* cannot happen */
    }
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
    case NP_CHUNK_UNITS:
    case NP_CHUNK_REPORT:
    case NP_CHUNK_RING:
        break;
    default:
        return 0; /* unknown types are skipped */
    }
    if (c->type == NP_CHUNK_EVENTS && r->ahead) {
        const struct np_ahead_batch *b = np_ahead_next(r->ahead, c->off);
        if (b && b->decoded)
            return events_ahead(r, c, b);
        if (b)
            np_ahead_release(r->ahead); /* not decoded: read here, where problems are reported */
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
    case NP_CHUNK_UNITS:
        return do_units(r, c);
    case NP_CHUNK_REPORT:
        return do_report(r, c);
    case NP_CHUNK_RING:
        return do_ring(r, c);
    default:
        return do_end(r, c);
    }
}

/* ---- pass one: the walk ------------------------------------------------------- */

#define RESYNC_WINDOW (64u << 10) /* bytes of the file searched at a time for a chunk's start */
#define RESYNC_SLACK (64u << 20)  /* bytes resynchronisation may checksum beyond 4 times the file's */

/* Pass one stops short of the file's end at OFF with STATUS (r->msg its
 * line): pass two reports it after the chunks before. */
static void walk_stop(struct reader *r, int status, uint64_t off)
{
    r->walk_status = status;
    r->walk_end = off;
    memcpy(r->walk_msg, r->msg, sizeof r->walk_msg);
}

/* *OK: whether a version 2 chunk whose checksum holds starts at OFF, of
 * a known type when KNOWN. Its payload goes to r->buf; the checksumming
 * is paid from r->budget, and once that is spent (hostile input: damage
 * everywhere) none is found any more. 0 or a status. */
static int chunk_ok_at(struct reader *r, uint64_t off, bool known, bool *ok)
{
    uint8_t h[NP_TRACE_CHUNK_HEADER];
    struct chunk c = { .off = off };
    *ok = false;
    if (r->size - off < sizeof h)
        return 0;
    int st = read_at(r, h, sizeof h, off);
    if (st)
        return st;
    if (np_trace_chunk_check(h, sizeof h, r->size - off, &c.type, &c.len) != NP_CHUNK_WHOLE ||
        (known && !np_trace_chunk_name(c.type)) || c.len > r->budget)
        return 0;
    r->budget -= c.len;
    if ((st = load_payload(r, &c)))
        return st;
    *ok = np_trace_chunk_sum_ok(h, r->buf);
    return 0;
}

/* Resynchronisation: the first offset from FROM on where a chunk of a
 * known type whose checksum holds starts, into *AT; the file's size when
 * there is none (or when finding it would spend the budget). 0 or a
 * status. */
static int resync(struct reader *r, uint64_t from, uint64_t *at)
{
    *at = r->size;
    if (!r->win && !(r->win = malloc(RESYNC_WINDOW)))
        return fail(r, NP_TRACE_ENOMEM, from, "out of memory");
    while (r->size - from >= NP_TRACE_CHUNK_HEADER) {
        size_t n = r->size - from < RESYNC_WINDOW ? (size_t)(r->size - from) : RESYNC_WINDOW;
        int st = read_at(r, r->win, n, from);
        if (st)
            return st;
        size_t last = n - NP_TRACE_CHUNK_HEADER; /* the last offset with a whole header here */
        for (size_t i = 0; i <= last; i++) {
            if (!np_trace_chunk_plausible(r->win + i, r->size - from - i))
                continue;
            if (np_get_u32(r->win + i + 4) > r->budget)
                return 0;
            bool ok;
            if ((st = chunk_ok_at(r, from + i, true, &ok)))
                return st;
            if (ok) {
                *at = from + i;
                return 0;
            }
        }
        from += last + 1;
    }
    return 0;
}

/* The thread of the EVENTS or THREAD chunk C, its payload's first 4
 * bytes: at LOADED (its payload), or read. */
static bool chunk_tid(struct reader *r, const struct chunk *c, const uint8_t *loaded, uint32_t *tid)
{
    uint8_t b[4];
    if (loaded) {
        if (c->len < 4)
            return false;
        *tid = np_get_u32(loaded);
        return true;
    }
    if ((!c->damage && c->len < 4) || r->size - payload_at(r, c) < 4 || read_at(r, b, 4, payload_at(r, c)))
        return false;
    *tid = np_get_u32(b);
    return true;
}

/* The good chunk C (its payload at LOADED, or NULL) into the list, and
 * what pass one keeps of it: the first UNITS and END, where the EVENTS
 * chunks are (for the read-ahead; none when out of memory: *NOMEM), the
 * threads named. False when out of memory. */
static bool take_chunk(struct reader *r, const struct chunk *c, const uint8_t *loaded, bool *end, bool *nomem)
{
    uint32_t tid;
    if (NP_GROW(r->items, r->itemscap, r->nitems + 1) < 0)
        return false;
    r->items[r->nitems++] = *c;
    if ((c->type == NP_CHUNK_EVENTS || c->type == NP_CHUNK_THREAD) && chunk_tid(r, c, loaded, &tid) &&
        np_hmap_put(&r->file_tids, tid, 1))
        return false;
    if (c->type == NP_CHUNK_UNITS && !r->has_units) {
        r->has_units = true;
        r->units = *c;
    }
    if (c->type == NP_CHUNK_EVENTS && !*nomem) {
        *nomem = NP_GROW(r->chunks, r->chunkscap, r->nchunks + 1) < 0;
        if (!*nomem)
            r->chunks[r->nchunks++] = (struct np_ahead_chunk){ c->off, c->len };
    }
    if (c->type != NP_CHUNK_END || *end)
        return true;
    *end = true;
    uint64_t tick, lost;
    double nspt;
    if ((loaded || load_payload(r, c) == 0) && parse_end(r, c, &tick, &lost, &nspt) == 0) {
        r->proc.has_end = true;
        r->proc.end_ns = tick; /* a tick until INFO is read */
        r->proc.events_lost = lost;
        r->proc.ns_per_tick = nspt;
    }
    return true;
}

/* The chunk C at the end of the file (LEFT bytes from it) that
 * np_trace_chunk_at found K (its payload at LOADED, or NULL), damaged:
 * where the walk goes on, into *NEXT; false when it cannot go on (the
 * file is cut short; the walk has stopped). */
static bool take_damage(struct reader *r, struct chunk *c, enum np_chunk_check k, const uint8_t *loaded,
                        uint64_t left, uint64_t *next)
{
    c->damage = k == NP_CHUNK_DAMAGED ? DAMAGE_SUM : k == NP_CHUNK_TOO_LONG ? DAMAGE_TOO_LONG : DAMAGE_PAST_END;
    c->has_tid = c->type == NP_CHUNK_EVENTS && chunk_tid(r, c, loaded, &c->tid);
    /* its length holds when a good chunk, or the end, follows */
    *next = c->off + r->hsize + (uint64_t)c->len;
    bool ok = false;
    int st = k == NP_CHUNK_DAMAGED && *next < r->size ? chunk_ok_at(r, *next, false, &ok) : 0;
    if (!st && (k != NP_CHUNK_DAMAGED || (*next != r->size && !ok))) {
        st = resync(r, c->off + 1, next);
        if (!st && *next == r->size && k == NP_CHUNK_CUT) {
            walk_stop(r, chunk_problem(r, k, c, left), c->off); /* no damage: the last chunk is cut */
            return false;
        }
        c->resynced = true;
    }
    if (!st && NP_GROW(r->items, r->itemscap, r->nitems + 1) < 0)
        st = fail(r, NP_TRACE_ENOMEM, c->off, "out of memory");
    if (st) {
        walk_stop(r, st, c->off);
        return false;
    }
    c->bytes = *next - c->off;
    r->items[r->nitems++] = *c;
    return true;
}

/* Pass one from POS, the first chunk: the list of the file's chunks. */
static void walk_file(struct reader *r, uint64_t pos)
{
    bool checked = r->version > NP_TRACE_VERSION_V1, end = false, nomem = false;
    r->budget = 4 * r->size + RESYNC_SLACK;
    r->nitems = r->nchunks = 0;
    r->walk_status = NP_TRACE_OK;
    np_hmap_clear(&r->file_tids);
    r->ring.n_out = 0; /* (a file's threads are its own) */
    while (pos < r->size) {
        struct chunk c = { .off = pos };
        uint64_t left = r->size - pos;
        uint8_t h[NP_TRACE_CHUNK_HEADER];
        const uint8_t *loaded = NULL;
        int st = left >= r->hsize ? read_at(r, h, r->hsize, pos) : 0;
        enum np_chunk_check k = NP_CHUNK_CUT_HEADER;
        if (!st)
            k = np_trace_chunk_check(left >= r->hsize ? h : NULL, r->hsize, left, &c.type, &c.len);
        if (!st && k == NP_CHUNK_WHOLE && checked && !(st = load_payload(r, &c))) {
            loaded = r->buf;
            if (!np_trace_chunk_sum_ok(h, r->buf))
                k = NP_CHUNK_DAMAGED;
        }
        if (st) {
            walk_stop(r, st, pos);
            return;
        }
        if (k == NP_CHUNK_WHOLE) {
            if (!take_chunk(r, &c, loaded, &end, &nomem)) {
                walk_stop(r, fail(r, NP_TRACE_ENOMEM, pos, "out of memory"), pos);
                return;
            }
            pos += r->hsize + (uint64_t)c.len;
            continue;
        }
        /* without checksums, or cut inside a header, as a file cut short */
        if (!checked || k == NP_CHUNK_CUT_HEADER) {
            walk_stop(r, chunk_problem(r, k, &c, left), pos);
            return;
        }
        if (!take_damage(r, &c, k, loaded, left, &pos))
            return;
    }
    if (nomem)
        r->nchunks = 0;
    r->walk_end = pos;
}

/* The damaged stretch C the caller listed (np_trace_listed_damage):
 * said in the caller's words, counted, and given to a sink that keeps
 * damage (np_event_sink.damaged) in place of the loss points it makes
 * (a reader of what that sink writes makes them). */
static int listed_damage(struct reader *r, const struct chunk *c, bool first)
{
    const char *what = r->whats[c->what];
    if (first)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "damaged %s where INFO should be: the trace cannot be read", what);
    fail(r, NP_TRACE_OK, c->off, "damaged %s: skipped %" PRIu64 " bytes", what, c->bytes);
    count_damage(r, c->bytes);
    if (r->sink && r->sink->damaged) {
        int rc = r->sink->damaged(r->sink->ctx, r->mem + c->off, (size_t)c->bytes);
        return rc ? stopped(r, rc, c->off) : 0;
    }
    return damage_loss(r, c);
}

/* The damaged chunk C, which pass one found: said, counted and skipped;
 * the FIRST chunk (INFO) fails the file. */
static int do_damage(struct reader *r, const struct chunk *c, bool first)
{
    char kind[64], why[96], thread[32] = "";
    if (c->damage == DAMAGE_LISTED)
        return listed_damage(r, c, first);
    const char *name = np_trace_chunk_name(c->type);
    if (name)
        snprintf(kind, sizeof kind, "%s chunk", name);
    else
        snprintf(kind, sizeof kind, "chunk of unknown type %" PRIu32, c->type);
    if (c->damage == DAMAGE_SUM)
        snprintf(why, sizeof why, "checksum mismatch%s", c->resynced ? ", and no chunk after its length" : "");
    else
        snprintf(why, sizeof why, "it claims %" PRIu32 " bytes, %s", c->len,
                 c->damage == DAMAGE_TOO_LONG ? "over the limit" : "past the end of the file");
    if (first)
        return fail(r, NP_TRACE_ECORRUPT, c->off, "damaged %s%s (%s): the file cannot be read", kind,
                    c->type == NP_CHUNK_INFO ? "" : " where INFO should be", why);
    if (c->has_tid && np_hmap_find(&r->last, c->tid))
        snprintf(thread, sizeof thread, " of thread %" PRIu32, c->tid);
    if (!c->resynced)
        fail(r, NP_TRACE_OK, c->off, "damaged %s%s (%s): skipped its %" PRIu64 " bytes", kind, thread, why,
             c->bytes);
    else if (c->off + c->bytes == r->size)
        fail(r, NP_TRACE_OK, c->off, "damaged %s%s (%s): skipped the %" PRIu64 " bytes to the end of the file, "
             "where no whole chunk follows", kind, thread, why, c->bytes);
    else
        fail(r, NP_TRACE_OK, c->off, "damaged %s%s (%s): skipped %" PRIu64 " bytes, to the next whole chunk at "
             "offset %" PRIu64, kind, thread, why, c->bytes, c->off + c->bytes);
    count_damage(r, c->bytes);
    return damage_loss(r, c);
}

static void progress(struct reader *r, uint64_t pos)
{
    if (r->hooks && r->hooks->progress)
        r->hooks->progress(r->hooks->ctx, r->done_before + pos, r->total);
}

/* A file's read begins: what the last one left is cleared. */
static void file_begin(struct reader *r)
{
    memset(&r->proc, 0, sizeof r->proc);
    r->proc.file = r->name;
    r->begun = r->end_seen = r->damaged = false;
    r->has_units = r->has_count = r->counted = false;
    r->units_seen = 0;
    r->end_lost_bad = 0;
    np_hmap_clear(&r->counts);
    np_hmap_clear(&r->last);
    r->sum->files++;
}

static int read_items(struct reader *r);

/* Reads the file open on r->fd; returns its status (reported). */
static int read_file(struct reader *r)
{
    file_begin(r);
    uint64_t pos = 0;
    int st = read_header(r, &pos);
    if (st)
        return report(r, st);
    walk_file(r, pos);
    return read_items(r);
}

/* Pass two over the chunks pass one (or the caller) listed: the file's
 * status (reported). */
static int read_items(struct reader *r)
{
    int st;
    bool quiet_end = r->listed & NP_TRACE_LISTED_QUIET_END, walk_stopped = false;
    if (r->has_units && (st = read_units(r)))
        return report(r, st);
    for (size_t i = 0; i < r->nitems; i++) {
        const struct chunk *c = &r->items[i];
        st = c->damage ? do_damage(r, c, i == 0) : do_chunk(r, c, i == 0);
        if (st)
            break;
        /* INFO gave the clock: the events can be decoded ahead (times
         * from ticks: the counts go on across a thread's chunks) */
        if (i == 0 && r->nchunks >= AHEAD_MIN_CHUNKS && !r->counted)
            r->ahead = np_ahead_start(r->fd, r->mem, &r->proc, r->chunks, r->nchunks, r->hsize);
        progress(r, i + 1 < r->nitems ? r->items[i + 1].off : r->walk_end);
    }
    if (!st && r->walk_status) {
        memcpy(r->msg, r->walk_msg, sizeof r->msg);
        st = r->walk_status;
        walk_stopped = true;
    }
    np_ahead_stop(r->ahead);
    r->ahead = NULL;
    if (!r->end_seen && !(r->listed & NP_TRACE_LISTED_NO_TRACE)) {
        r->sum->files_unfinished++;
        if (!st && r->begun && !quiet_end) {
            snprintf(r->msg, sizeof r->msg, "%s: no END chunk: %s; using what it recorded", r->name,
                     r->damaged ? "the program did not exit normally, or its END was damaged"
                                : "the program did not exit normally");
            diag(r, NP_DIAG_WARNING, np_scrub_line(r->msg));
        }
    }
    if (!st && !r->begun)
        st = fail(r, NP_TRACE_ETRUNC, r->walk_end, "no INFO chunk: the file holds a header only");
    if (walk_stopped && quiet_end)
        record(r, st); /* the caller says where the trace stops */
    else
        report(r, st);
    if (r->begun && r->sink && r->sink->end) {
        int rc = r->sink->end(r->sink->ctx);
        if (rc && !st)
            st = report(r, stopped(r, rc, r->size));
    }
    return st;
}

static const struct np_source_options default_options = { 0 };

static void reader_init(struct reader *r, const struct np_source_options *o, const struct np_event_sink *sink,
                        const struct np_trace_hooks *hooks, struct np_trace_summary *sum)
{
    memset(r, 0, sizeof *r);
    r->opt = o ? o : &default_options;
    r->sink = sink;
    r->hooks = hooks;
    r->sum = sum;
    r->fd = -1;
    np_hmap_init(&r->counts);
    np_hmap_init(&r->file_tids);
    np_hmap_init(&r->last);
}

static void reader_free(struct reader *r)
{
    free(r->whats);
    free(r->buf);
    np_stream_buf_free(&r->stream);
    free(r->arena);
    free(r->argv);
    free(r->chunks);
    free(r->items);
    free(r->win);
    free(r->blocks);
    np_ring_dec_free(&r->ring);
    np_hmap_free(&r->counts);
    np_hmap_free(&r->file_tids);
    np_hmap_free(&r->last);
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
    reader_init(&r, NULL, sink, hooks, summary ? summary : &local);
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
        int st = read_path(r, paths[i]);
        if (st == NP_TRACE_ESTOP || st == NP_TRACE_EOPTION)
            break; /* the consumer wants no more, or the options fit no file */
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
    return np_trace_read_with(path, NULL, sink, hooks, summary);
}

int np_trace_read_with(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_trace_summary local;
    struct reader r;
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    reader_init(&r, o, sink, hooks, summary);
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

/* ---- a trace among other bytes ----------------------------------------------------- */

struct np_trace_listed {
    struct reader r;
    struct np_trace_summary local;
    bool end, nomem;     /* take_chunk's: END seen; no room for the read-ahead's list */
};

struct np_trace_listed *np_trace_listed_new(const uint8_t *bytes, uint64_t size, unsigned version, const char *name,
                                            unsigned flags, const struct np_source_options *o,
                                            const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_trace_listed *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    struct reader *r = &t->r;
    reader_init(r, o, NULL, hooks, summary ? summary : &t->local);
    r->mem = bytes;
    r->size = r->total = r->walk_end = size;
    r->name = name;
    r->listed = flags | NP_TRACE_LISTED_ON;
    r->version = version;
    r->hsize = np_trace_chunk_header_size(version);
    r->sum->bytes += size;
    file_begin(r);
    if (version == NP_TRACE_VERSION_V1) {
        r->sum->files_unchecked++;
        fail(r, NP_TRACE_OK, NO_OFFSET, "trace format version 1: chunks carry no checksums, damage may go unseen");
        diag(r, NP_DIAG_NOTE, r->msg);
    }
    return t;
}

int np_trace_listed_chunk(struct np_trace_listed *t, uint64_t off, uint32_t type, uint32_t len)
{
    struct chunk c = { .off = off, .type = type, .len = len };
    /* (the payload is read again where it is needed: pass two reads
     * chunks into its buffer) */
    return take_chunk(&t->r, &c, NULL, &t->end, &t->nomem) ? 0 : NP_TRACE_ENOMEM;
}

int np_trace_listed_damage(struct np_trace_listed *t, uint64_t off, uint64_t bytes, const char *what)
{
    struct reader *r = &t->r;
    struct chunk c = { .off = off, .damage = DAMAGE_LISTED, .bytes = bytes, .what = (uint32_t)r->nwhats };
    if (NP_GROW(r->whats, r->whatscap, r->nwhats + 1) < 0 || NP_GROW(r->items, r->itemscap, r->nitems + 1) < 0)
        return NP_TRACE_ENOMEM;
    snprintf(r->whats[r->nwhats++], sizeof *r->whats, "%s", what);
    /* its thread, when it reads as an EVENTS chunk (damage_loss) */
    if (bytes >= 4)
        c.type = np_get_u32(r->mem + off);
    if (c.type == NP_CHUNK_EVENTS && bytes >= (uint64_t)r->hsize + 4) {
        c.has_tid = true;
        c.tid = np_get_u32(r->mem + off + r->hsize);
    }
    r->items[r->nitems++] = c;
    return 0;
}

void np_trace_listed_no_trace(struct np_trace_listed *t)
{
    t->r.listed |= NP_TRACE_LISTED_NO_TRACE;
}

void np_trace_listed_stop(struct np_trace_listed *t, int status, uint64_t off, const char *line)
{
    struct reader *r = &t->r;
    snprintf(r->msg, sizeof r->msg, "%s", line);
    np_scrub_line(r->msg);
    walk_stop(r, status, off);
}

int np_trace_listed_read(struct np_trace_listed *t, const struct np_event_sink *sink)
{
    struct reader *r = &t->r;
    r->sink = sink;
    if (t->nomem)
        r->nchunks = 0;
    int st = read_items(r);
    progress(r, r->size);
    return st;
}

void np_trace_listed_free(struct np_trace_listed *t)
{
    if (!t)
        return;
    reader_free(&t->r);
    free(t);
}
