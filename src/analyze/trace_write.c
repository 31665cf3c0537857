/* trace_write.c - the trace writer of the analysis side (interface in
 * trace_write.h, format in docs/trace-format.md).
 *
 * Chunks other than EVENTS are built in one scratch buffer, by the
 * builders the recorder uses too (common/trace_chunks.h), and written at
 * once. Each thread has a buffer of its own whose first bytes are left
 * for the EVENTS chunk's headers, filled in when it is flushed, so a
 * chunk goes out in one write, checksummed. Headers and records are
 * encoded by the functions the runtime's encoder uses too
 * (common/trace_format.h): a varint of the ticks since the previous
 * record of the chunk and the kind, then its argument. */
#define _GNU_SOURCE
#include "trace_write.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/trace_chunks.h"
#include "common/trace_format.h"
#include "containers.h"
#include "textfmt.h"

#define DEFAULT_CHUNK (256u << 10)
#define EVENTS_HEAD NP_TRACE_EVENTS_HEAD                  /* tid, base tick, count, compression, length */
#define PREFIX NP_TRACE_EVENTS_PREFIX                     /* before a thread's stream */
#define RECORD_MAX NP_TRACE_RECORD_MAX                    /* one record's bytes at most */
#define EVENT_MAX (2 * RECORD_MAX)                        /* an event's, its COUNT included */
#define STRING_MAX 65535u

struct wthread {
    uint32_t tid;
    uint8_t *buf;            /* PREFIX bytes, then the stream */
    size_t len, cap;         /* of the stream */
    uint32_t records;        /* in the stream */
    uint64_t base, prev;     /* the chunk's base tick; the tick of the previous record */
    uint64_t addr;           /* the previous ENTRY's address in the chunk */
    uint64_t count;          /* the second counter, last given */
    bool seen;               /* an event came: prev and count hold */
};

struct np_trace_writer {
    char *path;
    int fd;
    bool failed;
    bool counted;            /* a count unit: COUNT records are written */
    double ns_per_tick;
    size_t chunk_bytes;
    struct wthread *threads; /* in order of first event */
    size_t nthreads, cap_threads;
    struct np_hmap by_tid;   /* tid -> index */
    uint32_t last;           /* the index of the thread of the previous event */
    uint8_t *scratch;        /* the chunk being built */
    size_t scap;
    char err[NP_TRACE_MSG_MAX];
};

/* ---- failures --------------------------------------------------------------------- */

static int failed(struct np_trace_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failed(struct np_trace_writer *w, const char *fmt, ...)
{
    if (w->failed) /* the first failure is the one said */
        return -1;
    w->failed = true;
    int n = snprintf(w->err, sizeof w->err, "%s: ", w->path);
    if (n >= 0 && (size_t)n < sizeof w->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err + n, sizeof w->err - (size_t)n, fmt, ap);
        va_end(ap);
    }
    np_scrub_line(w->err);
    return -1;
}

const char *np_trace_writer_error(const struct np_trace_writer *w)
{
    return w ? w->err : "";
}

/* ---- bytes ---------------------------------------------------------------------- */

static int write_all(struct np_trace_writer *w, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return failed(w, "write failed: %s", k < 0 ? strerror(errno) : "nothing written");
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* N when the scratch buffer has room for N bytes (grown), else 0: a
 * builder's capacity there. */
static size_t scratch(struct np_trace_writer *w, size_t n)
{
    return NP_GROW(w->scratch, w->scap, n) < 0 ? 0 : n;
}

/* The chunk of N bytes a builder (common/trace_chunks.h) made in the
 * scratch buffer written (0: it had no room); WHAT names it in messages. */
static int chunk_out(struct np_trace_writer *w, size_t n, const char *what)
{
    if (!n)
        return failed(w, "out of memory for a %s chunk", what);
    if (n - NP_TRACE_CHUNK_HEADER > NP_TRACE_CHUNK_MAX)
        return failed(w, "%s chunk of %zu bytes, over the %u-byte limit", what, n - NP_TRACE_CHUNK_HEADER,
                      NP_TRACE_CHUNK_MAX);
    return write_all(w, w->scratch, n);
}

static bool string_fits(struct np_trace_writer *w, const char *what, size_t n)
{
    if (n <= STRING_MAX)
        return true;
    failed(w, "%s of %zu bytes: a trace string holds %u at most", what, n, STRING_MAX);
    return false;
}

/* ---- the file ----------------------------------------------------------------- */

static int write_head(struct np_trace_writer *w, const struct np_trace_writer_process *p)
{
    uint8_t h[NP_TRACE_HEADER_SIZE];
    np_trace_file_header(h);
    if (write_all(w, h, sizeof h))
        return -1;
    const char *clock = p->clock ? p->clock : "";
    if (p->argc > STRING_MAX)
        return failed(w, "%u arguments: a trace holds %u at most", p->argc, STRING_MAX);
    if (!string_fits(w, "the clock name", strlen(clock)))
        return -1;
    for (unsigned i = 0; i < p->argc; i++)
        if (p->argv && !string_fits(w, "an argument", np_trace_strnlen(p->argv[i], STRING_MAX + 1)))
            return -1;
    struct np_trace_info info = { p->pid, p->ppid, p->ns_per_tick, p->start_tick, p->start_ns,
                                  clock, p->argv ? (int)p->argc : 0, p->argv };
    size_t n = scratch(w, np_trace_info_room(&info));
    if (chunk_out(w, np_trace_info_chunk(w->scratch, n, &info), "INFO"))
        return -1;
    if (!p->time_unit && !p->count_unit)
        return 0;
    const char *time = p->time_unit ? p->time_unit : "ns", *count = p->count_unit ? p->count_unit : "";
    if (!string_fits(w, "the time unit", strlen(time)) || !string_fits(w, "the count unit", strlen(count)))
        return -1;
    n = scratch(w, NP_TRACE_CHUNK_HEADER + np_trace_str_room(time) + np_trace_str_room(count));
    return chunk_out(w, np_trace_units_chunk(w->scratch, n, time, count), "UNITS");
}

struct np_trace_writer *np_trace_writer_open(const char *path, const struct np_trace_writer_process *p, char *err,
                                             size_t errsize)
{
    struct np_trace_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        snprintf(err, errsize, "%s: out of memory", path);
        np_scrub_line(err);
        return NULL;
    }
    np_hmap_init(&w->by_tid);
    w->last = UINT32_MAX;
    w->counted = p->count_unit && *p->count_unit;
    w->ns_per_tick = p->ns_per_tick;
    w->chunk_bytes = p->chunk_bytes ? p->chunk_bytes : DEFAULT_CHUNK;
    if (w->chunk_bytes > NP_TRACE_CHUNK_MAX - EVENTS_HEAD - EVENT_MAX)
        w->chunk_bytes = NP_TRACE_CHUNK_MAX - EVENTS_HEAD - EVENT_MAX;
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0)
        failed(w, "cannot create: %s", strerror(errno));
    else if (!(p->ns_per_tick > 0 && p->ns_per_tick <= 1e12))
        failed(w, "ns_per_tick %g is not a positive clock period", p->ns_per_tick);
    else
        write_head(w, p);
    if (w->failed) {
        snprintf(err, errsize, "%s", w->err);
        np_trace_writer_abandon(w);
        return NULL;
    }
    return w;
}

int np_trace_writer_module(struct np_trace_writer *w, const struct np_trace_module *m)
{
    const char *path = m->path ? m->path : "";
    if (w->failed)
        return -1;
    if (m->build_id_len > NP_BUILD_ID_MAX)
        return failed(w, "a build-id of %zu bytes: a MODULE chunk holds %u at most", (size_t)m->build_id_len,
                      NP_BUILD_ID_MAX);
    if (!string_fits(w, "a module path", strlen(path)))
        return -1;
    size_t n = scratch(w, NP_TRACE_CHUNK_HEADER + 24 + 2 + m->build_id_len + 2 + strlen(path));
    return chunk_out(w, np_trace_module_chunk(w->scratch, n, m->bias, m->start, m->end, m->build_id,
                                              m->build_id_len, path, strlen(path)),
                     "MODULE");
}

int np_trace_writer_thread(struct np_trace_writer *w, uint32_t tid, const char *name)
{
    if (w->failed || !string_fits(w, "a thread name", strlen(name)))
        return -1;
    size_t n = scratch(w, NP_TRACE_CHUNK_HEADER + 4 + 2 + strlen(name));
    return chunk_out(w, np_trace_thread_chunk(w->scratch, n, tid, name, strlen(name)), "THREAD");
}

int np_trace_writer_name(struct np_trace_writer *w, uint64_t address, const char *name)
{
    size_t n = strlen(name);
    if (w->failed || !string_fits(w, "a name", n))
        return -1;
    size_t room = scratch(w, NP_TRACE_CHUNK_HEADER + 8 + 2 + n);
    return chunk_out(w, np_trace_name_chunk(w->scratch, room, address, name, n), "NAME");
}

static int flush_thread(struct np_trace_writer *w, struct wthread *t);

int np_trace_writer_raw(struct np_trace_writer *w, const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < w->nthreads && !w->failed; i++)
        flush_thread(w, &w->threads[i]);
    return w->failed ? -1 : write_all(w, bytes, n);
}

/* ---- events ------------------------------------------------------------------- */

/* Writes T's buffered records as an EVENTS chunk and empties it. */
static int flush_thread(struct np_trace_writer *w, struct wthread *t)
{
    if (!t->records)
        return 0;
    np_trace_events_prefix(t->buf, t->tid, t->base, t->records, NP_COMPRESS_NONE, (uint32_t)t->len,
                           (uint32_t)t->len);
    np_trace_chunk_seal(t->buf);
    int rc = write_all(w, t->buf, PREFIX + t->len);
    t->len = 0;
    t->records = 0;
    t->addr = 0; /* address deltas start over with each chunk */
    return rc;
}

/* Thread TID's state, made on its first event. */
static struct wthread *thread_of(struct np_trace_writer *w, uint32_t tid)
{
    if (w->last < w->nthreads && w->threads[w->last].tid == tid)
        return &w->threads[w->last];
    uint64_t *v = np_hmap_find(&w->by_tid, tid);
    if (v) {
        w->last = (uint32_t)*v;
        return &w->threads[w->last];
    }
    if (NP_GROW(w->threads, w->cap_threads, w->nthreads + 1) < 0 ||
        np_hmap_put(&w->by_tid, tid, w->nthreads)) {
        failed(w, "out of memory");
        return NULL;
    }
    struct wthread *t = &w->threads[w->nthreads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->cap = w->chunk_bytes + EVENT_MAX;
    if (!(t->buf = malloc(PREFIX + t->cap))) {
        failed(w, "out of memory");
        return NULL;
    }
    w->last = (uint32_t)w->nthreads++;
    return t;
}

/* The checks of an event of thread T (TID) at TICKS and COUNT that may
 * be wrong, or is the first of its thread or of a chunk: 0 to write it,
 * the chunk's base set; -1 with the writer failed. */
static __attribute__((noinline)) int event_check(struct np_trace_writer *w, struct wthread *t, uint32_t tid,
                                                 uint64_t ticks, uint64_t count)
{
    if (w->failed || !t)
        return -1;
    if (t->seen && ticks < t->prev)
        return failed(w, "thread %" PRIu32 ": tick %" PRIu64 " comes before its previous event's, %" PRIu64, tid,
                      ticks, t->prev);
    /* dt is shifted left by the kind's bits: it must keep its top bits */
    if (t->seen && t->records && (ticks - t->prev) >> (64 - NP_EV_KIND_BITS))
        return failed(w, "thread %" PRIu32 ": %" PRIu64 " ticks between two events, more than a record holds",
                      tid, ticks - t->prev);
    if (w->counted && count < t->count)
        return failed(w, "thread %" PRIu32 ": count %" PRIu64 " is less than its previous event's, %" PRIu64, tid,
                      count, t->count);
    if (!t->records)
        t->base = t->prev = ticks;
    t->seen = true;
    return 0;
}

/* An event of KIND of thread TID at TICKS, COUNT, with ARG: a COUNT
 * record first when the count moved. The common event, of a thread
 * already in the chunk and in order, is written with no call. */
static inline __attribute__((always_inline)) int event(struct np_trace_writer *w, uint32_t tid, unsigned kind,
                                                       uint64_t ticks, uint64_t count, uint64_t arg)
{
    struct wthread *t = w->last < w->nthreads && w->threads[w->last].tid == tid ? &w->threads[w->last]
                                                                                : thread_of(w, tid);
    if (__builtin_expect(w->failed || !t || !t->records || ticks < t->prev ||
                             (ticks - t->prev) >> (64 - NP_EV_KIND_BITS) || (w->counted && count < t->count),
                         0) &&
        event_check(w, t, tid, ticks, count))
        return -1;
    uint64_t dt = ticks - t->prev;
    uint8_t *p = t->buf + PREFIX + t->len, *q = p;
    if (w->counted && count != t->count) {
        q += np_trace_put_record(q, dt, NP_EV_COUNT, count - t->count, &t->addr);
        t->count = count;
        t->records++;
        dt = 0; /* the event follows with dt 0 */
    }
    q += np_trace_put_record(q, dt, kind, arg, &t->addr);
    t->len += (size_t)(q - p);
    t->prev = ticks;
    t->records++;
    /* a chunk holds u32 records; its buffer has room for one more event */
    if (t->len >= w->chunk_bytes || t->records >= UINT32_MAX - 2)
        return flush_thread(w, t);
    return 0;
}

int np_trace_writer_enter(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count,
                          uint64_t address)
{
    return event(w, tid, NP_EV_ENTRY, ticks, count, address);
}

int np_trace_writer_exit(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count)
{
    return event(w, tid, NP_EV_EXIT, ticks, count, 0);
}

int np_trace_writer_resync(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count, uint64_t n)
{
    return event(w, tid, NP_EV_RESYNC, ticks, count, n);
}

int np_trace_writer_lost(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count, uint64_t n)
{
    return event(w, tid, NP_EV_LOST, ticks, count, n);
}

int np_trace_writer_switch(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count,
                           uint64_t switched)
{
    return event(w, tid, NP_EV_SWITCH, ticks, count, switched);
}

int np_trace_writer_values(struct np_trace_writer *w, uint32_t tid, bool retval, const struct np_value *v, unsigned n)
{
    struct wthread *t = thread_of(w, tid);
    if (w->failed || !t)
        return -1;
    if (!t->seen)
        return 0; /* no call open */
    if (t->len + NP_TRACE_VALUES_RECORD_MAX > t->cap && flush_thread(w, t))
        return -1;
    if (!t->records)
        t->base = t->prev;
    struct np_value_out out[NP_VALUES_MAX];
    if (n > NP_VALUES_MAX)
        n = NP_VALUES_MAX;
    for (unsigned i = 0; i < n; i++)
        out[i] = (struct np_value_out){ (uint8_t)v[i].index, (uint8_t)v[i].format,
                                        (uint16_t)(v[i].len < NP_VALUE_STR_MAX ? v[i].len : NP_VALUE_STR_MAX), v[i].v,
                                        (const uint8_t *)v[i].str };
    t->len += np_trace_put_values(t->buf + PREFIX + t->len, 0, retval, out, n);
    t->records++;
    if (t->len >= w->chunk_bytes || t->records >= UINT32_MAX - 2)
        return flush_thread(w, t);
    return 0;
}

/* ---- the end -------------------------------------------------------------------- */

static void free_writer(struct np_trace_writer *w)
{
    for (size_t i = 0; i < w->nthreads; i++)
        free(w->threads[i].buf);
    free(w->threads);
    np_hmap_free(&w->by_tid);
    free(w->scratch);
    free(w->path);
    free(w);
}

/* np_trace_writer_close, with END when END is true. */
static int finish(struct np_trace_writer *w, bool end, uint64_t end_tick, uint64_t events_lost, char *err,
                  size_t errsize)
{
    for (size_t i = 0; i < w->nthreads && !w->failed; i++)
        flush_thread(w, &w->threads[i]);
    if (!w->failed && end) {
        size_t n = scratch(w, NP_TRACE_CHUNK_HEADER + 24);
        chunk_out(w, np_trace_end_chunk(w->scratch, n, end_tick, events_lost, w->ns_per_tick), "END");
    }
    if (w->fd >= 0 && close(w->fd) != 0)
        failed(w, "close failed: %s", strerror(errno));
    w->fd = -1;
    int rc = w->failed ? -1 : 0;
    if (rc)
        snprintf(err, errsize, "%s", w->err);
    free_writer(w);
    return rc;
}

int np_trace_writer_close(struct np_trace_writer *w, uint64_t end_tick, uint64_t events_lost, char *err,
                          size_t errsize)
{
    return finish(w, true, end_tick, events_lost, err, errsize);
}

int np_trace_writer_close_unended(struct np_trace_writer *w, char *err, size_t errsize)
{
    return finish(w, false, 0, 0, err, errsize);
}

void np_trace_writer_abandon(struct np_trace_writer *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free_writer(w);
}

/* ---- a sink that writes ------------------------------------------------------------ */

struct np_trace_write_sink {
    char *path;
    int (*prepare)(void *ctx);
    void *prepare_ctx;
    struct np_trace_writer *w;
    uint64_t start_tick;     /* a time is a tick less this */
    bool has_end;
    bool end_at_last;        /* the source knew no end: END at the last event's tick */
    uint64_t end_tick, events_lost, last_tick;
    char err[NP_TRACE_MSG_MAX];
};

struct np_trace_write_sink *np_trace_write_sink_new(const char *path, int (*prepare)(void *ctx), void *ctx)
{
    struct np_trace_write_sink *s = calloc(1, sizeof *s);
    if (s && !(s->path = strdup(path))) {
        free(s);
        s = NULL;
    }
    if (s) {
        s->prepare = prepare;
        s->prepare_ctx = ctx;
    }
    return s;
}

/* A writer call's -1: the writer's line kept, the read stopped (EIO). */
static int sink_failed(struct np_trace_write_sink *s)
{
    if (!s->err[0])
        snprintf(s->err, sizeof s->err, "%s", np_trace_writer_error(s->w));
    return NP_TRACE_EIO;
}

#define SINK_DO(s, call) ((call) ? sink_failed(s) : 0)

/* INFO as the source's times say: a tick is one unit of them, counted
 * from START_TICK (from 0: start_ns is a time in ns; else the clock's
 * start tick), so that a reader gives back the same times. */
static int ws_begin(void *ctx, const struct np_trace_process *p)
{
    struct np_trace_write_sink *s = ctx;
    if (s->w)
        return NP_TRACE_ECORRUPT; /* one process a file */
    int rc = s->prepare ? s->prepare(s->prepare_ctx) : 0;
    if (rc)
        return rc;
    bool ns = p->time_unit == NP_UNIT_NS;
    const char *clock = p->clock ? p->clock : "";
    /* (a clock named "cycles" counts cycles, any other ns) */
    bool clock_says = p->time_unit == NP_UNIT_CYCLES ? strcmp(clock, "cycles") == 0
                                                     : p->time_unit == NP_UNIT_NS && strcmp(clock, "cycles") != 0;
    struct np_trace_writer_process wp = { 0 };
    wp.pid = p->pid;
    wp.ppid = p->ppid;
    wp.clock = clock;
    wp.ns_per_tick = 1.0;
    s->start_tick = ns ? 0 : p->start_tick;
    wp.start_tick = ns ? p->start_ns : p->start_tick;
    wp.start_ns = ns ? p->start_ns : 0;
    wp.argc = p->argc;
    wp.argv = p->argv;
    /* UNITS only when the clock's name does not say the unit, or for the
     * second counter's */
    wp.time_unit = clock_says && !p->counted ? NULL : np_time_unit_name(p->time_unit);
    wp.count_unit = p->counted ? np_time_unit_name(p->count_unit) : NULL;
    s->has_end = p->has_end;
    s->end_tick = p->end_ns + s->start_tick;
    s->end_at_last = !ns && !p->end_ns;
    s->events_lost = p->events_lost;
    s->w = np_trace_writer_open(s->path, &wp, s->err, sizeof s->err);
    return s->w ? 0 : NP_TRACE_EIO;
}

static int ws_module(void *ctx, const struct np_trace_module *m)
{
    struct np_trace_write_sink *s = ctx;
    return SINK_DO(s, np_trace_writer_module(s->w, m));
}

static int ws_thread(void *ctx, uint32_t tid, const char *name)
{
    struct np_trace_write_sink *s = ctx;
    return SINK_DO(s, np_trace_writer_thread(s->w, tid, name ? name : ""));
}

static int ws_name(void *ctx, uint64_t address, const char *name)
{
    struct np_trace_write_sink *s = ctx;
    return SINK_DO(s, np_trace_writer_name(s->w, address, name));
}

/* A run of thread TID's events, each at its time plus BASE ticks: event()
 * with the thread looked up once (a writer without a second counter). 0,
 * or -1 with *DONE the events written. */
static int events_run(struct np_trace_writer *w, uint32_t tid, const struct np_event *ev, size_t n, uint64_t base,
                      size_t *done)
{
    struct wthread *t = w->last < w->nthreads && w->threads[w->last].tid == tid ? &w->threads[w->last]
                                                                                : thread_of(w, tid);
    for (size_t i = 0; i < n; i++) {
        uint64_t ticks = ev[i].time_ns + base;
        if (__builtin_expect(w->failed || !t || !t->records || ticks < t->prev ||
                                 (ticks - t->prev) >> (64 - NP_EV_KIND_BITS), 0) &&
            event_check(w, t, tid, ticks, 0)) {
            *done = i;
            return -1;
        }
        uint8_t *p = t->buf + PREFIX + t->len;
        /* the sink's kinds are the format's (events.h) */
        t->len += np_trace_put_record(p, ticks - t->prev, ev[i].kind, ev[i].arg, &t->addr);
        t->prev = ticks;
        t->records++;
        if ((t->len >= w->chunk_bytes || t->records >= UINT32_MAX - 2) && flush_thread(w, t)) {
            *done = i + 1;
            return -1;
        }
    }
    *done = n;
    return 0;
}

static int ws_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct np_trace_write_sink *s = ctx;
    struct np_trace_writer *w = s->w;
    uint64_t base = s->start_tick;
    if (n && ev[n - 1].time_ns + base > s->last_tick)
        s->last_tick = ev[n - 1].time_ns + base;
    if (!w->counted)
        return events_run(w, tid, ev, n, base, done) ? sink_failed(s) : 0;
    for (size_t i = 0; i < n; i++) {
        if (event(w, tid, ev[i].kind, ev[i].time_ns + base, ev[i].count, ev[i].arg)) {
            *done = i;
            return sink_failed(s);
        }
    }
    *done = n;
    return 0;
}

static int ws_values(void *ctx, uint32_t tid, uint64_t time_ns, bool retval, const struct np_value *v, unsigned n)
{
    struct np_trace_write_sink *s = ctx;
    (void)time_ns; /* at its call's entry or with its exit */
    return SINK_DO(s, np_trace_writer_values(s->w, tid, retval, v, n));
}

static int ws_damaged(void *ctx, const uint8_t *bytes, size_t n)
{
    struct np_trace_write_sink *s = ctx;
    return SINK_DO(s, np_trace_writer_raw(s->w, bytes, n));
}

struct np_event_sink np_trace_write_sink(struct np_trace_write_sink *s)
{
    return (struct np_event_sink){ .ctx = s, .begin = ws_begin, .module = ws_module, .thread = ws_thread,
                                   .name = ws_name, .events = ws_events, .damaged = ws_damaged,
                                   .values = ws_values };
}

void np_trace_write_sink_stopped(struct np_trace_write_sink *s)
{
    s->has_end = false;
}

bool np_trace_write_sink_begun(const struct np_trace_write_sink *s)
{
    return s && s->w;
}

int np_trace_write_sink_close(struct np_trace_write_sink *s, char *err, size_t errsize)
{
    int rc = 0;
    if (s->err[0]) {
        snprintf(err, errsize, "%s", s->err);
        rc = -1;
    }
    if (s->w) {
        char e[NP_TRACE_MSG_MAX];
        uint64_t end = s->end_at_last && s->last_tick > s->end_tick ? s->last_tick : s->end_tick;
        int wrc = s->has_end ? np_trace_writer_close(s->w, end, s->events_lost, e, sizeof e)
                             : np_trace_writer_close_unended(s->w, e, sizeof e);
        if (wrc && !rc) {
            snprintf(err, errsize, "%s", e);
            rc = -1;
        }
    }
    free(s->path);
    free(s);
    return rc;
}
