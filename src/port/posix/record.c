/* record.c - the recorder (docs/recording.md): set-up from the
 * environment, per-thread buffers, the writer thread, thread end, exit,
 * fatal signals, fork and exec.
 *
 * Buffers. Each recorded thread appends raw records to its live buffer (an
 * mmap of its own). A full buffer is queued for the writer thread under a
 * mutex, and the thread takes a free one: that happens once per buffer
 * (65,536 records by default), never per event. When the queue is full
 * (the writer is behind), the thread waits for the writer to free a buffer:
 * nothing is lost. A thread waits in slices; when the writer makes no
 * progress for NP_REC_STALL_MS (it may wait on a lock the waiting thread
 * holds: the loader's, in a dlopen'ed constructor), the thread takes one
 * buffer past the queue's limit instead. With NANOPROF_DROP=1 (--drop) the
 * thread records nothing instead and counts what it drops: a LOST record
 * when it has a buffer again.
 *
 * Compression. The writer compresses each chunk with zstd, unless more
 * than half the queue waits: then it writes chunks as they are until it
 * has caught up (a bigger trace rather than a program that waits; with
 * `record -A` zstd is most of the writer's work).
 *
 * Sizes. The queue holds at most NP_REC_QUEUE_BYTES of buffers (64 of the
 * default 1 MiB), and buffers mapped while many threads are live are
 * smaller, so that memory does not grow with the number of threads times
 * the buffer size.
 *
 * Buffer states (atomic, so that a fatal signal handler can read them
 * without the lock): FREE, LIVE (a thread appends to it), QUEUED, BUSY (the
 * writer encodes it). A buffer's `done` counts the records a final flush
 * has already written while it was live (exec that fails goes on).
 *
 * The end. A normal end (exit, return from main, exec) stops the writer
 * between two buffers, writes everything queued and every thread's live
 * records (compressed) and an END chunk. A fatal signal does the same with
 * write() only: it stops the writer (waiting up to 300 ms for the buffer in
 * hand), encodes uncompressed, then restores the default action and raises
 * the signal again. Other threads go on running meanwhile; what they record
 * after that is not written. */
#define _GNU_SOURCE
#include "record_hot.h"
#include "catch.h"
#include "../../runtime/blocks_table.h"
#include "../../runtime/cost_hot.h"
#include "nanoprof/blocks.h"
#include "../../runtime/hooks.h"
#include "../../common/parse_units.h"
#include "../../common/trace_format.h"
#include "../port.h"
#include "nanoprof/patch.h"
#include "posix.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct np_rec_config np_rec_cfg;

#define MAX_BUFS NP_REC_MAX_BUFS
#define MAX_STREAMS NP_REC_MAX_STREAMS
#define BUF_HEADER 64
_Static_assert(sizeof(struct np_rec_buf) <= BUF_HEADER, "buffer header");

enum { W_IDLE = 0, W_BUSY, W_STOPPED };

static struct {
    int active;               /* recording this process */
    int stopping;             /* atomic: the trace is being ended */
    int finishing;            /* atomic: 0, 1 a final flush runs, 2 done */
    long finisher;            /* its thread */
    int fd, pid;
    char dir[PATH_MAX];
    int argc;
    char **argv;
    double ns_per_tick;
    size_t nrec;              /* records per buffer */
    unsigned max_queued;
    int drop;                 /* NANOPROF_DROP: drop events rather than wait */
    unsigned live;            /* threads with a stream, not ended (under the lock) */
    uint64_t retired;         /* buffers the writer has written (under the lock) */
    uint64_t stuck_at;        /* R.retired when a buffer was last forced, + 1 (0: never) */
    pthread_mutex_t lock;
    pthread_cond_t wake, idle, space;
    struct np_rec_buf *qhead, *qtail, *free;
    unsigned nqueued;         /* atomic */
    unsigned nbufs;           /* atomic */
    struct np_rec_buf *bufs[MAX_BUFS];
    struct np_rec_stream *streams;
    unsigned nstreams;        /* atomic: slots ever used */
    unsigned uthreads;        /* user-level threads given a stream */
    int writer_started;       /* 1 running, -1 could not start */
    int wstate;               /* atomic: W_* */
    uint64_t lost_ended;      /* events lost by threads that ended */
} R = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
        .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER,
        .space = PTHREAD_COND_INITIALIZER };

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

void np_rec_say(const char *what, const char *detail)
{
    char line[600];
    int n = snprintf(line, sizeof line, "nanoprof: recording: %s%s%s\n", what, detail ? ": " : "",
                     detail ? detail : "");
    if (n > 0)
        np_port_write_default(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* ---- configuration ------------------------------------------------------ */

/* Reads the comma-separated patterns of the variable NAME into OUT: 0 when
 * there are too many or one is not a valid regular expression (said). */
static int parse_list(const char *name, struct np_name_pattern *out, unsigned *n)
{
    const char *s = getenv(name);
    *n = 0;
    if (!s)
        return 1;
    char *copy = strdup(s);
    if (!copy)
        return 0;
    for (char *save = NULL, *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (!*p)
            continue;
        if (*n == 64) {
            np_rec_say("NANOPROF_FILTER/NANOPROF_NOTRACE: at most 64 patterns", NULL);
            return 0;
        }
        /* the copy is kept for the whole run: the patterns point into it */
        char err[256];
        if (np_name_pattern_init(&out[(*n)++], p, err, sizeof err) < 0) {
            np_rec_say(name, err);
            return 0;
        }
    }
    if (!*n)
        free(copy);
    return 1;
}

static int configure(void)
{
    struct np_rec_config *c = &np_rec_cfg;
    const char *v;
    c->buf_bytes = NP_REC_BUF_BYTES;
    if ((v = getenv("NANOPROF_BUFFER")) && *v) {
        uint64_t b = np_parse_size(v);
        if (b < 4096 || b > (1ull << 30)) {
            np_rec_say("NANOPROF_BUFFER: not a size from 4k to 1G", v);
            return 0;
        }
        c->buf_bytes = (size_t)b;
    }
    if ((v = getenv("NANOPROF_DEPTH")) && *v) {
        char *end;
        long d = strtol(v, &end, 10);
        if (*end || d < 1 || d > 65535) {
            np_rec_say("NANOPROF_DEPTH: not a depth from 1 to 65535", v);
            return 0;
        }
        c->depth = (unsigned)d;
    }
    if ((v = getenv("NANOPROF_MIN_NS")) && *v) {
        int64_t ns = np_parse_ns(v);
        if (ns < 0) {
            np_rec_say("NANOPROF_MIN_NS: not a duration (ns, or with us, ms, s)", v);
            return 0;
        }
        c->min_ns = (uint64_t)ns;
    }
    R.nrec = c->buf_bytes / sizeof(np_raw);
    R.max_queued = NP_REC_QUEUE_BYTES / (unsigned)c->buf_bytes;
    if (R.max_queued < 2)
        R.max_queued = 2;
    if (R.max_queued > 64)
        R.max_queued = 64;
    if ((v = getenv("NANOPROF_DROP")) && *v) {
        if (strcmp(v, "0") && strcmp(v, "1")) {
            np_rec_say("NANOPROF_DROP: not 0 (wait for the writer) or 1 (drop events)", v);
            return 0;
        }
        R.drop = *v == '1';
    }
    if ((v = getenv("NANOPROF_QUEUE")) && *v) {
        char *end;
        long q = strtol(v, &end, 10);
        if (*end || q < 1 || q > MAX_BUFS / 2) {
            np_rec_say("NANOPROF_QUEUE: not a number of buffers from 1 to 2048", v);
            return 0;
        }
        R.max_queued = (unsigned)q;
    }
    if (!parse_list("NANOPROF_FILTER", c->filter, &c->nfilter) ||
        !parse_list("NANOPROF_NOTRACE", c->notrace, &c->nnotrace) || !np_rec_values_configure())
        return 0;
    return np_sample_configure();
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char p[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p)
        return -1;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] == '/' || p[i] == 0) {
            char c = p[i];
            p[i] = 0;
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            p[i] = c;
        }
    }
    return 0;
}

/* ---- buffers ------------------------------------------------------------ */

/* Records in a buffer mapped now: the configured size, less when the
 * live threads' buffers would take more than NP_REC_LIVE_BYTES. */
static size_t buf_records_locked(void)
{
    size_t n = R.nrec, share = NP_REC_LIVE_BYTES / (R.live ? R.live : 1) / sizeof(np_raw);
    size_t least = NP_REC_MIN_BUF_BYTES / sizeof(np_raw);
    if (share < least)
        share = least;
    return share < n ? share : n;
}

static struct np_rec_buf *new_buf_locked(void)
{
    struct np_rec_buf *b = R.free;
    if (b) {
        R.free = b->next;
    } else {
        unsigned n = R.nbufs;
        if (n >= MAX_BUFS)
            return NULL;
        size_t nrec = buf_records_locked();
        void *m = mmap(NULL, BUF_HEADER + nrec * sizeof(np_raw), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        b = m;
        b->cap = (uint32_t)nrec;
        b->recs = (np_raw *)((char *)m + BUF_HEADER);
        R.bufs[n] = b;
        STORE(&R.nbufs, n + 1);
    }
    b->next = NULL;
    b->count = b->done = 0;
    b->last = 0;
    return b;
}

static void free_buf_locked(struct np_rec_buf *b)
{
    STORE(&b->state, NP_BUF_FREE);
    b->owner = NULL;
    b->next = R.free;
    R.free = b;
}

static void queue_locked(struct np_rec_buf *b, uint64_t count, int last)
{
    if (count <= b->done && !last) {
        free_buf_locked(b);
        return;
    }
    b->count = count;
    b->last = (uint32_t)last;
    b->next = NULL;
    STORE(&b->state, NP_BUF_QUEUED);
    if (R.qtail)
        R.qtail->next = b;
    else
        R.qhead = b;
    R.qtail = b;
    __atomic_add_fetch(&R.nqueued, 1, __ATOMIC_RELEASE);
    pthread_cond_signal(&R.wake);
}

/* Writes what B holds and, when it is its thread's last, ends the stream. */
static void process(struct np_rec_buf *b, int mode)
{
    struct np_rec_stream *s = b->owner;
    if (b->count > b->done)
        np_rec_write_events(R.fd, s, b->recs + b->done, (size_t)(b->count - b->done), mode);
    b->done = b->count;
    if (b->last) {
        np_rec_write_stream_end(R.fd, s, mode);
        R.lost_ended += s->w.lost;
        np_rec_wstate_reset(&s->w);
    }
}

/* After process(): the buffer goes back, and the slot of an ended thread
 * with it. */
static void retire_locked(struct np_rec_buf *b)
{
    struct np_rec_stream *s = b->owner;
    if (b->last && s)
        s->used = 0;
    free_buf_locked(b);
}

static void *writer_main(void *arg)
{
    (void)arg;
    np_posix_patch_own_thread(); /* a switch of patchable entries need not wait for it */
    pthread_mutex_lock(&R.lock);
    for (;;) {
        int idle = W_IDLE;
        if (!R.qhead || !__atomic_compare_exchange_n(&R.wstate, &idle, W_BUSY, 0, __ATOMIC_ACQ_REL,
                                                     __ATOMIC_ACQUIRE)) {
            pthread_cond_wait(&R.wake, &R.lock);
            continue;
        }
        struct np_rec_buf *b = R.qhead;
        R.qhead = b->next;
        if (!R.qhead)
            R.qtail = NULL;
        STORE(&b->state, NP_BUF_BUSY);
        pthread_mutex_unlock(&R.lock);
        process(b, NP_REC_NORMAL);
        pthread_mutex_lock(&R.lock);
        __atomic_sub_fetch(&R.nqueued, 1, __ATOMIC_RELEASE);
        retire_locked(b);
        R.retired++;
        pthread_cond_broadcast(&R.space);
        int busy = W_BUSY;
        __atomic_compare_exchange_n(&R.wstate, &busy, W_IDLE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        pthread_cond_broadcast(&R.idle);
    }
    return NULL;
}

/* The writer runs with every signal blocked: signals sent to the process
 * go to the program's threads. */
static void start_writer_locked(void)
{
    sigset_t all, old;
    pthread_t th;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = np_sample_real_pthread_create(&th, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r == 0) {
        pthread_detach(th);
        R.writer_started = 1;
    } else {
        R.writer_started = -1;
    }
}

/* No writer thread (it could not start): the caller writes the queue. */
static void drain_locked(void)
{
    while (R.qhead) {
        struct np_rec_buf *b = R.qhead;
        R.qhead = b->next;
        if (!R.qhead)
            R.qtail = NULL;
        process(b, NP_REC_NORMAL);
        __atomic_sub_fetch(&R.nqueued, 1, __ATOMIC_RELEASE);
        retire_locked(b);
    }
}

/* Gives S a fresh buffer (lock held, S has none): returns it, or NULL
 * (recording stopped, the writer is behind and not FORCE, or no memory). */
static struct np_rec_buf *take_locked(struct np_rec_stream *s, int force)
{
    struct np_rec_buf *b = NULL;
    if (!LOAD(&R.stopping) && !s->ended && (force || LOAD(&R.nqueued) < R.max_queued))
        b = new_buf_locked();
    if (b) {
        b->owner = s;
        b->seq = s->seq++;
        STORE(&b->state, NP_BUF_LIVE);
        STORE(&s->pos, b->recs);
        s->end = b->recs + b->cap - NP_REC_RESERVE;
        STORE(&s->buf, b);
    }
    return b;
}

/* Queues S's live buffer and gives it a fresh one (lock held); returns
 * it, or NULL (recording stopped, or the writer is behind). */
static struct np_rec_buf *refill_locked(struct np_rec_stream *s)
{
    struct np_rec_buf *old = s->buf;
    if (old) {
        STORE(&s->buf, (struct np_rec_buf *)NULL);
        queue_locked(old, (uint64_t)(s->pos - old->recs), 0);
    }
    STORE(&s->pos, (np_raw *)NULL);
    s->end = NULL;
    return take_locked(s, 0);
}

/* Waits (lock held) until the writer has room, then takes a buffer for
 * S; after NP_REC_STALL_MS without any progress of the writer, takes one
 * past the queue's limit (see the top). NULL: the trace ended, or no
 * buffer could be had at all. */
static struct np_rec_buf *wait_locked(struct np_rec_stream *s)
{
    struct np_rec_buf *b = NULL;
    uint64_t seen = R.retired;
    unsigned stalled = 0;
    if (R.stuck_at == R.retired + 1) {
        /* the writer has not moved since a buffer was last forced: it is
         * still stuck, waiting again would only cost another stall */
        return take_locked(s, 1);
    }
    while (!b && !LOAD(&R.stopping) && !s->ended) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += NP_REC_WAIT_SLICE_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&R.space, &R.lock, &until);
        if (R.retired != seen) {
            seen = R.retired;
            stalled = 0;
        } else {
            stalled += NP_REC_WAIT_SLICE_MS;
        }
        int force = stalled >= NP_REC_STALL_MS;
        b = take_locked(s, force);
        if (!b && force)
            break; /* not even past the limit: no memory */
        if (b && force)
            R.stuck_at = R.retired + 1;
    }
    return b;
}

static np_raw *refill(struct np_rec_stream *s)
{
    pthread_mutex_lock(&R.lock);
    struct np_rec_buf *b = refill_locked(s);
    if (R.qhead && !R.writer_started)
        start_writer_locked();
    if (R.writer_started < 0)
        drain_locked();
    if (!b && R.writer_started < 0)
        b = take_locked(s, 0); /* drained: there is room */
    if (!b && !R.drop)
        b = wait_locked(s);
    pthread_mutex_unlock(&R.lock);
    return b ? b->recs : NULL;
}

/* A signal handler can neither wait for the lock (the thread it
 * interrupted may hold it) nor start or be the writer: it gives up
 * instead. What it calls under the lock is mmap and a condition signal. */
np_raw *np_rec_refill_signal(struct np_rec_stream *s)
{
    if (pthread_mutex_trylock(&R.lock) != 0)
        return NULL;
    struct np_rec_buf *b = R.writer_started == 1 ? refill_locked(s) : NULL;
    pthread_mutex_unlock(&R.lock);
    return b ? b->recs : NULL;
}

int np_rec_stopped(void)
{
    return !R.active || LOAD(&R.stopping);
}

int np_rec_active(void)
{
    return R.active && !LOAD(&R.stopping);
}

/* ---- the hooks' slow path ------------------------------------------------ */

/* The LOST pair at P for N dropped events that left the nesting D deep,
 * having gone down to MIN (relative to where they began). */
static np_raw *lost_pair(np_raw *p, uint64_t n, int64_t d, int64_t min, uint64_t now)
{
    uint64_t closed = (uint64_t)-min, opened = (uint64_t)(d - min);
    p[0].w0 = (uint64_t)NP_RAW_LOST << NP_RAW_SHIFT | (n & NP_RAW_VALUE);
    p[0].w1 = now;
    p[1].w0 = (uint64_t)NP_RAW_LOST_NEST << NP_RAW_SHIFT | (closed & NP_RAW_NEST_MASK) |
              (opened & NP_RAW_NEST_MASK) << NP_RAW_NEST_BITS;
    p[1].w1 = now;
    return p + 2;
}

static np_raw *put_lost(struct np_rec_stream *s, np_raw *p, uint64_t now)
{
    p = lost_pair(p, s->lost_n, s->lost_d, s->lost_min, now);
    __atomic_store_n(&s->lost_n, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->lost_d, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->lost_min, 0, __ATOMIC_RELAXED);
    return p;
}

static void count_lost(struct np_rec_stream *s, uint64_t w0)
{
    unsigned kind = (unsigned)(w0 >> NP_RAW_SHIFT);
    int64_t d = s->lost_d + (kind == NP_RAW_EXIT ? -1 : kind == NP_RAW_ENTRY || kind == NP_RAW_NAMED ? 1 : 0);
    __atomic_store_n(&s->lost_n, s->lost_n + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->lost_d, d, __ATOMIC_RELAXED);
    if (d < s->lost_min)
        __atomic_store_n(&s->lost_min, d, __ATOMIC_RELAXED);
}

/* The N records of G in a row, the first at the time now (a VALUES group
 * is never split across buffers); a switch seen and lost events go first. */
static void put_group(struct np_thread *t, const np_raw *g, size_t n)
{
    struct np_rec_stream *s = t->rec;
    if (s->smp.pending) /* a sample taken in the last hook (sample.c) */
        np_sample_append_pending(s);
    uint64_t now, sw = 0;
    if (np_port_switched()) {
        uint64_t off0 = t->off;
        /* cost keeps its own clock from running backwards */
        if (t->flags & NP_F_COST_INIT)
            now = np_thread_time_resync(t) + t->off;
        else
            now = np_thread_resync_raw(t);
        if ((int64_t)(t->off - off0) > 0)
            sw = t->off - off0;
    } else {
        now = np_port_wall_ticks();
    }
    if (LOAD(&R.stopping))
        return; /* the trace has ended */
    int lost = s->lost_n != 0;
    size_t need = n + (sw != 0) + 2 * (size_t)lost;
    struct np_rec_buf *b = s->buf;
    np_raw *p = s->pos;
    /* two slots stay free for the thread's end (rec_thread_exit) */
    if (!b || (size_t)(b->recs + b->cap - 2 - p) < need) {
        if (!b && R.drop && LOAD(&R.nqueued) >= R.max_queued)
            p = NULL; /* still behind: do not take the lock for nothing */
        else
            p = refill(s);
        if (!p) {
            count_lost(s, g[0].w0);
            return;
        }
    }
    if (lost)
        p = put_lost(s, p, now);
    if (sw) {
        p->w0 = (uint64_t)NP_RAW_SWITCH << NP_RAW_SHIFT | (sw & NP_RAW_VALUE);
        p->w1 = now;
        p++;
    }
    p[0].w0 = g[0].w0;
    p[0].w1 = now;
    for (size_t i = 1; i < n; i++)
        p[i] = g[i];
    STORE(&s->pos, p + n);
}

int np_rec_writer_behind(void)
{
    /* the buffer in the writer's hands is counted until it is done */
    return LOAD(&R.nqueued) > R.max_queued / 2 + 1;
}

void np_rec_slow(struct np_thread *t, uint64_t w0)
{
    np_raw r = { w0, 0 };
    put_group(t, &r, 1);
}

void np_rec_put_group(struct np_thread *t, const np_raw *g, size_t n) { put_group(t, g, n); }

void np_rec_put_values(struct np_thread *t, const np_raw *g, size_t n, uint64_t entry)
{
    if (!np_rec_put_after_entry(t, g[0].w0, (const uint64_t *)(const void *)(g + 1), 2 * (n - 1), entry))
        put_group(t, g, n);
}

/* ---- threads ------------------------------------------------------------ */

static void install_signals(void);

/* The trace file, opened when the first thread reaches the runtime: a
 * process that never runs instrumented code (a shell, make, under
 * `nanoprof record`) leaves no file, and does not calibrate the clock. */
static int open_locked(void)
{
    if (R.fd >= 0)
        return 1;
    if (make_dir(R.dir) < 0) {
        np_rec_say("cannot create the trace directory", R.dir);
        return 0;
    }
    /* INFO's rate: the END chunk has the one measured over the run */
    R.ns_per_tick = np_port_ns_per_tick_soon();
    if (np_rec_cfg.min_ns) {
        double t = (double)np_rec_cfg.min_ns / R.ns_per_tick;
        np_rec_cfg.min_ticks = (uint64_t)t;
        if ((double)np_rec_cfg.min_ticks < t)
            np_rec_cfg.min_ticks++;
        if (!np_rec_cfg.min_ticks)
            np_rec_cfg.min_ticks = 1;
    }
    R.fd = np_rec_file_open(R.dir, R.argc, R.argv, np_port_wall_ticks(), R.ns_per_tick);
    if (R.fd < 0) {
        np_rec_say("cannot create a trace file in", R.dir);
        return 0;
    }
    install_signals();
    if (np_sample_wanted()) {
        start_writer_locked(); /* samples' buffers go to it from a signal handler */
        np_sample_begin(R.fd);
    }
    return 1;
}

/* A stack overflow's SIGSEGV can only be handled on another stack: a
 * recorded thread that has none gets one, taken back when it ends (if it
 * is still the one in place). */
#define ALTSTACK_SIZE NP_REC_ALTSTACK_BYTES

static void *altstack_on(void)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return NULL; /* the program has its own */
    void *p = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    stack_t ss = { .ss_sp = p, .ss_size = ALTSTACK_SIZE, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(p, ALTSTACK_SIZE);
        return NULL;
    }
    return p;
}

static void altstack_off(void *p)
{
    stack_t cur;
    if (!p || sigaltstack(NULL, &cur) != 0 || cur.ss_sp != p || (cur.ss_flags & SS_ONSTACK))
        return; /* replaced by the program (it may restore ours): left alone */
    stack_t off = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
    if (sigaltstack(&off, NULL) == 0)
        munmap(p, ALTSTACK_SIZE);
}

static void rec_attach(struct np_thread *t)
{
    if (!R.active || LOAD(&R.stopping) || (t->flags & NP_F_REC_ON))
        return;
    np_port_clock_thread(); /* the clock, and switch detection on this thread */
    pthread_mutex_lock(&R.lock);
    if (!open_locked()) {
        R.active = 0;
        pthread_mutex_unlock(&R.lock);
        return;
    }
    /* a user-level thread (np_thread_init) gets a stream of its own */
    int user = t != np_thread_os();
    struct np_rec_stream *s = NULL;
    unsigned n = R.nstreams;
    for (unsigned i = 0; i < n && !s; i++)
        if (!R.streams[i].used)
            s = &R.streams[i];
    if (!s && n < MAX_STREAMS) {
        s = &R.streams[n];
        STORE(&R.nstreams, n + 1);
    }
    if (s) {
        s->used = 1;
        s->ended = 0;
        R.live++;
        s->seq = 0;
        s->lost_n = 0;
        s->lost_d = s->lost_min = 0;
        STORE(&s->buf, (struct np_rec_buf *)NULL);
        STORE(&s->pos, (np_raw *)NULL);
        s->end = NULL;
        memset(s->name, 0, sizeof s->name);
        s->out_tick = 0;
        if (user) {
            unsigned u = ++R.uthreads;
            s->tid = NP_REC_UTHREAD_TID + (long)u;
            snprintf(s->name, sizeof s->name, "uthread %u", u);
        } else {
            s->tid = np_port_tid();
            prctl(PR_GET_NAME, s->name);
        }
        if (t->name[0]) /* np_thread_name's */
            memcpy(s->name, t->name, sizeof s->name);
        np_rec_wstate_reset(&s->w);
        memset(&s->smp, 0, sizeof s->smp);
        if (!user) /* the OS thread's timer samples whichever thread runs */
            np_sample_thread_begin(s);
    }
    pthread_mutex_unlock(&R.lock);
    if (s) {
        s->altstack = user ? NULL : altstack_on();
        t->rec = s;
        t->flags |= NP_F_REC_ON;
    }
}

/* A user-level scheduler switched threads (np_thread_switch): TO gets a
 * stream the first time it runs; after that, the time it spent switched
 * out is a SWITCH record, as for an OS thread the kernel switched out. */
static void rec_switch(struct np_thread *from, struct np_thread *to)
{
    if (!R.active || LOAD(&R.stopping))
        return;
    uint64_t now = np_port_wall_ticks();
    if ((from->flags & NP_F_REC_ON) && from->rec)
        from->rec->out_tick = now;
    if (!(to->flags & NP_F_REC_ON)) {
        rec_attach(to);
        return;
    }
    struct np_rec_stream *s = to->rec;
    uint64_t out = s->out_tick;
    s->out_tick = 0;
    if (!out || now <= out || (to->flags & NP_F_BUSY))
        return;
    to->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    np_rec_slow(to, (uint64_t)NP_RAW_SWITCH << NP_RAW_SHIFT | ((now - out) & NP_RAW_VALUE));
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    to->flags &= ~NP_F_BUSY;
}

/* np_thread_name: T's stream takes the name; the writer writes its THREAD
 * chunk again at the stream's end (np_rec_write_stream_end). The name is
 * stored byte by byte, atomically: the writer reads it without the lock. */
static void rec_name(struct np_thread *t, int now)
{
    (void)now;
    if (!(t->flags & NP_F_REC_ON) || !t->rec)
        return;
    _Static_assert(sizeof t->name == sizeof t->rec->name, "a thread's name fits its stream's");
    pthread_mutex_lock(&R.lock);
    for (size_t i = 0; i < sizeof t->name; i++)
        STORE(&t->rec->name[i], t->name[i]);
    pthread_mutex_unlock(&R.lock);
}

/* The thread ends (its thread-specific data destructors run): its last
 * buffer goes to the writer, which then ends its stream. */
static void rec_thread_exit(struct np_thread *t)
{
    if (!(t->flags & NP_F_REC_ON) || !np_thread_lock(t))
        return;
    struct np_rec_stream *s = t->rec;
    t->flags &= ~NP_F_REC_ON; /* (its samples stop here: take, sample.c) */
    pthread_mutex_lock(&R.lock);
    np_sample_thread_end(s);
    if (!t->name[0]) /* the OS's name as it is now, unless np_thread_name gave one */
        prctl(PR_GET_NAME, s->name);
    s->ended = 1;
    R.live--;
    pthread_cond_broadcast(&R.space); /* it may wait in a signal handler */
    if (!LOAD(&R.stopping)) { /* (else the final flush writes it all) */
        np_raw tail[NP_SAMPLE_TAIL_MAX];
        size_t k = np_sample_tail(s, tail, np_port_wall_ticks(), 1);
        struct np_rec_buf *b = s->buf;
        np_raw *p = s->pos;
        if (b && (size_t)(b->recs + b->cap - p) < 2 + k) { /* two slots were kept: for the lost */
            STORE(&s->buf, (struct np_rec_buf *)NULL);
            queue_locked(b, (uint64_t)(p - b->recs), 0);
            b = NULL;
        }
        if (!b && (b = new_buf_locked())) {
            b->owner = s;
            b->seq = s->seq++;
            p = b->recs;
        }
        if (b) {
            if (s->lost_n)
                p = put_lost(s, p, np_port_wall_ticks());
            memcpy(p, tail, k * sizeof *tail);
            p += k;
            STORE(&s->buf, (struct np_rec_buf *)NULL);
            queue_locked(b, (uint64_t)(p - b->recs), 1);
            if (!R.writer_started)
                start_writer_locked();
            if (R.writer_started < 0)
                drain_locked();
        }
    }
    STORE(&s->pos, (np_raw *)NULL);
    s->end = NULL;
    void *alt = s->altstack; /* the slot may be another thread's once unlocked */
    s->altstack = NULL;
    pthread_mutex_unlock(&R.lock);
    altstack_off(alt);
    t->rec = NULL;
    np_thread_unlock(t);
}

/* setjmp.c, with the thread busy: a setjmp or longjmp goes into the stream
 * (record_write.c closes the calls a longjmp leaves). */
static void rec_jump(struct np_thread *t, unsigned kind, const void *env)
{
    np_rec_event(t, (uint64_t)kind << NP_RAW_SHIFT | ((uint64_t)(uintptr_t)env & NP_ADDR_MASK));
}

/* catch.c, with the thread busy: a caught exception goes into the stream,
 * the CATCH record and its frames in one buffer (record_write.c closes
 * the calls the exception abandoned). A catch there is no buffer for is
 * counted lost. */
static void rec_catch(struct np_thread *t, uint64_t sp, const struct np_throw_frame *f, size_t n)
{
    struct np_rec_stream *s = t->rec;
    /* what the slow path may put before it: lost events, a switch, a sample */
    size_t before = 8 + (NP_SAMPLE_MAX_FRAMES + 1) / 2, most = R.nrec > before + 8 ? R.nrec - before - 8 : 0;
    if (n + 1 > most)
        n = most ? most - 1 : 0; /* the innermost frames: those that count */
    if (!n || LOAD(&R.stopping))
        return;
    uint64_t w0 = (uint64_t)NP_RAW_CATCH << NP_RAW_SHIFT | n;
    struct np_rec_buf *b = s->buf;
    np_raw *p = s->pos;
    if (!b || !p || (size_t)(b->recs + b->cap - 2 - p) < before + 2 + n) {
        if (!refill(s)) {
            count_lost(s, w0);
            return;
        }
    }
    np_rec_slow(t, w0); /* what was pending, then the CATCH record */
    b = s->buf;
    p = s->pos;
    if (!b || !p || p <= b->recs || p[-1].w0 != w0 || (size_t)(b->recs + b->cap - 2 - p) < 1 + n)
        return; /* the trace ended */
    p[0].w0 = sp;
    p[0].w1 = 0;
    for (size_t i = 0; i < n; i++) {
        p[1 + i].w0 = f[i].start;
        p[1 + i].w1 = f[i].sp;
    }
    STORE(&s->pos, p + 1 + n);
}

/* ---- the end ------------------------------------------------------------- */

static void nap_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Stops the writer between two buffers. Normal mode waits (lock held);
 * fatal mode polls for up to 300 ms, then goes on without it. */
static void stop_writer(int mode)
{
    if (mode == NP_REC_NORMAL) {
        while (LOAD(&R.wstate) == W_BUSY)
            pthread_cond_wait(&R.idle, &R.lock);
        STORE(&R.wstate, W_STOPPED);
        return;
    }
    for (int i = 0; i < 300; i++) {
        int idle = W_IDLE;
        if (__atomic_compare_exchange_n(&R.wstate, &idle, W_STOPPED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
            idle == W_STOPPED)
            return;
        nap_ms(1);
    }
    STORE(&R.wstate, W_STOPPED);
}

static struct np_rec_buf *todo[MAX_BUFS];
static uint64_t todo_count[MAX_BUFS];

static int todo_before(unsigned a, unsigned b)
{
    const struct np_rec_buf *x = todo[a], *y = todo[b];
    if (x->owner != y->owner)
        return x->owner < y->owner;
    return x->seq < y->seq;
}

/* Every record not yet written, in each thread's order, then END. */
static void final_flush(int mode)
{
    unsigned n = 0, nb = LOAD(&R.nbufs);
    for (unsigned i = 0; i < nb; i++) {
        struct np_rec_buf *b = R.bufs[i];
        uint32_t st = LOAD(&b->state);
        uint64_t count = 0;
        if (st == NP_BUF_QUEUED) {
            count = b->count;
        } else if (st == NP_BUF_LIVE && b->owner) {
            struct np_rec_stream *s = b->owner;
            np_raw *p = LOAD(&s->pos);
            if (LOAD(&s->buf) == b && p >= b->recs && p <= b->recs + b->cap)
                count = (uint64_t)(p - b->recs);
            else
                count = b->done;
        } else {
            continue;
        }
        if (count < b->done)
            count = b->done;
        todo[n] = b;
        todo_count[n] = count;
        n++;
    }
    /* insertion sort: by thread, then buffer order */
    for (unsigned i = 1; i < n; i++) {
        for (unsigned j = i; j > 0 && todo_before(j, j - 1); j--) {
            struct np_rec_buf *tb = todo[j];
            uint64_t tc = todo_count[j];
            todo[j] = todo[j - 1];
            todo_count[j] = todo_count[j - 1];
            todo[j - 1] = tb;
            todo_count[j - 1] = tc;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        struct np_rec_buf *b = todo[i];
        int queued = LOAD(&b->state) == NP_BUF_QUEUED;
        b->count = todo_count[i];
        process(b, mode);
        if (mode == NP_REC_NORMAL && queued) {
            __atomic_sub_fetch(&R.nqueued, 1, __ATOMIC_RELEASE);
            retire_locked(b);
        }
    }
    if (mode == NP_REC_NORMAL)
        R.qhead = R.qtail = NULL;

    uint64_t lost = R.lost_ended, now = np_port_wall_ticks();
    unsigned ns = LOAD(&R.nstreams);
    struct np_thread *me = np_thread_os();
    for (unsigned i = 0; i < ns; i++) {
        struct np_rec_stream *s = &R.streams[i];
        if (!s->used)
            continue;
        /* events a thread dropped since its last buffer: a LOST record */
        uint64_t n = __atomic_load_n(&s->lost_n, __ATOMIC_RELAXED);
        if (n) {
            np_raw x[2];
            lost_pair(x, n, __atomic_load_n(&s->lost_d, __ATOMIC_RELAXED),
                      __atomic_load_n(&s->lost_min, __ATOMIC_RELAXED), now);
            np_rec_write_events(R.fd, s, x, 2, mode);
        }
        /* what its samples owe: periods not sampled since its last */
        np_raw tail[NP_SAMPLE_TAIL_MAX];
        size_t k = np_sample_tail(s, tail, now, me && me->rec == s);
        if (k)
            np_rec_write_events(R.fd, s, tail, k, mode);
        np_rec_write_stream_end(R.fd, s, mode);
        lost += s->w.lost;
    }
    if (np_blocks_started())
        np_rec_write_blocks(R.fd, np_blocks_lost());
    np_rec_write_end(R.fd, now, lost, np_port_ns_per_tick_final());
}

/* The end of the trace: exit, exec, or a fatal signal. */
static void finish(int mode)
{
    if (mode == NP_REC_NORMAL && R.active && R.fd < 0 && R.pid == (int)getpid() && np_blocks_started() &&
        !LOAD(&R.stopping)) {
        /* blocks were counted but the trace never opened (rec_blocks_start
         * could not take the lock): it opens now, for them */
        pthread_mutex_lock(&R.lock);
        open_locked();
        pthread_mutex_unlock(&R.lock);
    }
    if (!R.active || R.fd < 0 || R.pid != (int)getpid())
        return; /* nothing recorded, or not ours: a vfork child before its exec */
    int zero = 0;
    if (!__atomic_compare_exchange_n(&R.finishing, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* another thread ends the trace: a fatal signal waits for it */
        if (mode == NP_REC_FATAL && R.finisher != np_port_tid())
            for (int i = 0; i < 1000 && LOAD(&R.finishing) == 1; i++)
                nap_ms(1);
        return;
    }
    R.finisher = np_port_tid();
    STORE(&R.stopping, 1);
    if (mode == NP_REC_NORMAL) {
        pthread_mutex_lock(&R.lock);
        pthread_cond_broadcast(&R.space); /* waiting threads give up */
    }
    stop_writer(mode);
    final_flush(mode);
    if (mode == NP_REC_NORMAL) {
        unsigned ns = LOAD(&R.nstreams);
        for (unsigned i = 0; i < ns; i++)
            np_rec_wstate_reset(&R.streams[i].w);
        pthread_mutex_unlock(&R.lock);
    }
    STORE(&R.finishing, 2);
}

__attribute__((destructor)) static void rec_fini(void)
{
    finish(NP_REC_NORMAL);
}

/* ---- fatal signals ------------------------------------------------------- */

static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGSEGV, SIGABRT, SIGBUS, SIGFPE };
#define NFATAL (sizeof fatal_sigs / sizeof fatal_sigs[0])

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    (void)info, (void)uc;
    finish(NP_REC_FATAL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* pending until this handler returns (the signal is blocked in it);
     * a fault instead happens again on return, with the default action */
    raise(sig);
    errno = saved;
}

/* Only where the program left the default action: a signal it ignores or
 * handles (inherited, or set by a constructor before ours) stays so. A
 * handler the program installs later replaces ours. */
static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < NFATAL; i++)
        sigaddset(&sa.sa_mask, fatal_sigs[i]);
    for (unsigned i = 0; i < NFATAL; i++) {
        struct sigaction old;
        if (sigaction(fatal_sigs[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            sigaction(fatal_sigs[i], &sa, NULL);
    }
}

/* ---- fork and exec -------------------------------------------------------- */

static void fork_prepare(void)
{
    if (R.active)
        pthread_mutex_lock(&R.lock);
}

static void fork_parent(void)
{
    if (R.active)
        pthread_mutex_unlock(&R.lock);
}

/* The child: a new file, <pid>.npt with ppid set, and only the forking
 * thread, which goes on with its open calls (their exits, which the new
 * file never saw begin, are dropped). What the parent had not written is
 * the parent's to write. */
static void fork_child(void)
{
    if (!R.active)
        return;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    R.lock = m;
    R.wake = c;
    R.idle = c;
    R.space = c;
    if (LOAD(&R.stopping)) {
        R.active = 0;
        return;
    }
    struct np_thread *t = np_thread_os();
    struct np_rec_stream *own = t && (t->flags & NP_F_REC_ON) ? t->rec : NULL;
    unsigned ns = LOAD(&R.nstreams);
    for (unsigned i = 0; i < ns; i++) {
        struct np_rec_stream *s = &R.streams[i];
        np_rec_wstate_reset(&s->w);
        if (s != own)
            s->used = 0;
    }
    R.free = NULL;
    unsigned nb = LOAD(&R.nbufs);
    for (unsigned i = 0; i < nb; i++) {
        struct np_rec_buf *b = R.bufs[i];
        if (own && b == own->buf)
            b->done = 0;
        else
            free_buf_locked(b);
    }
    if (own) {
        if (own->buf)
            STORE(&own->pos, own->buf->recs);
        own->tid = np_port_tid();
        own->lost_n = 0;
        own->lost_d = own->lost_min = 0;
    }
    R.qhead = R.qtail = NULL;
    R.nqueued = 0;
    R.live = own ? 1 : 0;
    R.stuck_at = 0;
    R.writer_started = 0;
    R.wstate = W_IDLE;
    R.finishing = 0;
    R.lost_ended = 0;
    /* the parent is the process that recorded until now: getppid() may
     * already name a reaper, when the parent ran on and ended first */
    np_rec_cfg.ppid = R.pid;
    R.pid = (int)getpid();
    if (R.fd < 0)
        return; /* the parent had not begun: the child begins when it does */
    close(R.fd);
    R.fd = np_rec_file_open(R.dir, R.argc, R.argv, np_port_wall_ticks(), R.ns_per_tick);
    if (R.fd < 0) {
        np_rec_say("cannot create the child's trace file in", R.dir);
        STORE(&R.stopping, 1);
        R.active = 0;
        return;
    }
    if (np_sample_wanted()) {
        if (!NP_UNDER_TSAN) /* else at the first hook's full buffer: samples past one buffer are dropped */
            start_writer_locked();
        np_sample_file_opened(R.fd);
        np_sample_fork_child(own);
    }
}

void np_rec_before_exec(void)
{
    finish(NP_REC_NORMAL);
}

/* _exit skips atexit and destructors: the trace ends here. It may be
 * called from a signal handler, so the end is written as for a fatal
 * signal (no lock), and the process exits by the system call itself. */
NP_HOOK void _exit(int status)
{
    finish(NP_REC_FATAL);
    for (;;)
        syscall(SYS_exit_group, status);
}

NP_HOOK void _Exit(int status)
{
    _exit(status);
}

/* The exec failed: the program goes on, into a new file. */
void np_rec_exec_failed(void)
{
    if (!R.active || R.pid != (int)getpid() || LOAD(&R.finishing) != 2)
        return;
    pthread_mutex_lock(&R.lock);
    close(R.fd);
    R.fd = np_rec_file_open(R.dir, R.argc, R.argv, np_port_wall_ticks(), R.ns_per_tick);
    if (R.fd >= 0) {
        np_blocks_clear(); /* the closed file has the counts so far */
        R.lost_ended = 0;
        STORE(&R.wstate, W_IDLE);
        STORE(&R.finishing, 0);
        STORE(&R.stopping, 0);
        np_sample_file_opened(R.fd);
    }
    pthread_mutex_unlock(&R.lock);
}

/* ---- start ----------------------------------------------------------------- */

static int cmdline(char ***argv)
{
    /* when the C library does not pass them to constructors */
    static char buf[8192];
    static char *args[256];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    int argc = 0;
    for (size_t i = 0; i < n && argc < 256; i += strlen(buf + i) + 1)
        args[argc++] = buf + i;
    *argv = args;
    return argc;
}

/* The first basic block counted (blocks.c): a program built with coverage
 * alone never reaches rec_attach, so the trace opens here. The lock is
 * only tried: held, it is either another thread opening the trace or this
 * thread, interrupted by a signal whose handler runs covered code. */
static void rec_blocks_start(void)
{
    if (!R.active || LOAD(&R.stopping) || R.pid != (int)getpid() || pthread_mutex_trylock(&R.lock) != 0)
        return;
    open_locked();
    pthread_mutex_unlock(&R.lock);
}

__attribute__((constructor)) static void rec_init(int argc, char **argv, char **envp)
{
    (void)envp;
    const char *dir = getenv("NANOPROF_RECORD");
    if (!dir || !*dir || R.active)
        return;
    if (!configure())
        return;
    if (strlen(dir) >= sizeof R.dir) {
        np_rec_say("trace directory name too long", dir);
        return;
    }
    strcpy(R.dir, dir);
    R.streams = calloc(MAX_STREAMS, sizeof *R.streams);
    if (!R.streams)
        return;
    if (argc <= 0 || !argv)
        argc = cmdline(&argv);
    R.argc = argc;
    R.argv = argv;
    R.pid = (int)getpid();
    np_rec_cfg.ppid = (int)getppid();
    R.active = 1; /* the file opens at the first thread (open_locked) */
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    __atomic_store_n(&np_rec_exit_hook, rec_thread_exit, __ATOMIC_RELEASE);
    __atomic_store_n(&np_rec_jump_hook, rec_jump, __ATOMIC_RELEASE);
    __atomic_store_n(&np_rec_catch_hook, rec_catch, __ATOMIC_RELEASE);
    __atomic_store_n(&np_rec_attach_hook, rec_attach, __ATOMIC_RELEASE);
    __atomic_store_n(&np_rec_switch_hook, rec_switch, __ATOMIC_RELEASE);
    __atomic_store_n(&np_rec_name_hook, rec_name, __ATOMIC_RELEASE);
    __atomic_store_n(&np_blocks_start_hook, rec_blocks_start, __ATOMIC_RELEASE);
    struct np_thread *t = np_thread_os();
    if (t)
        rec_attach(t); /* attached before recording began */
    else if (np_sample_wanted())
        np_thread_attach(); /* sampled from the start, instrumented or not */
    if (np_blocks_started())
        rec_blocks_start(); /* blocks counted before recording began */
    /* patchable entries (-P, --trace-off, --trace-signal): switched once
     * the recorder takes events */
    const char *patch = getenv("NANOPROF_PATCH"), *off = getenv("NANOPROF_PATCH_OFF"),
               *sig = getenv("NANOPROF_PATCH_SIGNAL");
    if (patch && *patch && np_posix_patch_start(patch, !(off && !strcmp(off, "1")), sig ? atoi(sig) : 0) != 0)
        np_rec_say("patchable entries", np_trace_error());
}

void np_rec_attach_self(void)
{
    struct np_thread *t = np_thread_os();
    if (t)
        rec_attach(t);
    else
        np_thread_attach();
}

int np_rec_each_stream(void (*file_fn)(int fd, void *ctx), void (*each)(struct np_rec_stream *s, void *ctx),
                       void *ctx)
{
    if (!np_rec_active())
        return -1;
    pthread_mutex_lock(&R.lock);
    if (!R.writer_started && R.fd >= 0)
        start_writer_locked();
    if (file_fn && R.fd >= 0)
        file_fn(R.fd, ctx);
    unsigned n = LOAD(&R.nstreams);
    for (unsigned i = 0; i < n; i++)
        if (R.streams[i].used && !R.streams[i].ended)
            each(&R.streams[i], ctx);
    pthread_mutex_unlock(&R.lock);
    return 0;
}
