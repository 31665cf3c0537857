/* trace_ahead.c - the read-ahead thread (design in trace_ahead.h).
 *
 * One producer (the thread), one consumer (the reader), a ring of nslots
 * batches. Counters only grow: the thread fills slot tail % nslots, the
 * reader reads slot head % nslots, and a slot is the reader's from the
 * moment tail passes it until its release. The mutex is taken only to
 * wait (free_slot, np_ahead_next) and to wake: a capture's chunks are
 * small, a batch each, and a lock per batch cost more than decoding
 * them. Everything the thread reads was copied at the start, or is its
 * own. */
#define _GNU_SOURCE
#include "trace_ahead.h"
#include "common/trace_format.h"
#include "containers.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16
#define BATCH 4096 /* events per batch */
/* When every chunk is small (a target's capture: chunks of a few hundred
 * bytes, a batch each) the ring has more slots of fewer events, as many
 * events in all: a chunk of SMALL_CHUNK bytes holds at most as many. */
#define SLOTS_SMALL 64
#define SMALL_CHUNK (SLOTS * BATCH / SLOTS_SMALL)
/* The thread, once it waits for free slots, is woken when half of them
 * are free (WAKE_FREE): it then fills them in one go instead of waking
 * for each. The same for the reader: once it waits for batches, it is
 * woken when half are ready (or the last is). Each wake-up costs both
 * threads a few microseconds (more in a virtual machine), and with one
 * per batch they add up to a tenth of a read. */
#define WAKE_FREE(a) ((a)->nslots / 2)
#define WAKE_READY(a) ((a)->nslots / 2)

struct np_ahead {
    int fd;
    const uint8_t *mem;          /* the file's bytes when they are in memory, else NULL */
    unsigned hsize;              /* a chunk header's bytes */
    struct np_trace_process proc;
    struct np_ahead_chunk *chunks;
    size_t nchunks;
    pthread_t thread;

    pthread_mutex_t lock;
    pthread_cond_t cond;         /* either side waiting for the other */
    struct np_ahead_batch slots[SLOTS_SMALL];
    unsigned nslots;             /* used: SLOTS, or SLOTS_SMALL */
    uint32_t batch;              /* events a slot holds: BATCH, or SMALL_CHUNK */
    uint64_t head, tail;         /* batches released, batches filled */
    bool finished;               /* the thread filled its last batch */
    bool stop;                   /* the reader wants no more */
    bool thread_waits, reader_waits;

    uint8_t *payload;            /* the thread's own buffers */
    size_t payloadcap;
    struct np_stream_buf stream;
};

/* head, tail, stop and the two waits are read without the lock on the
 * way that finds what it needs (a slot free, a batch filled: no lock
 * taken per batch, which costs more than a small chunk's decoding), and
 * written with it or atomically. A side that waits says so (*_waits)
 * before it checks again and waits, under the lock; the other stores
 * its counter, then reads that flag: one of the two sees the other's
 * store (both sequentially consistent), so no wake-up is lost. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/* The next slot to fill, once the reader has freed it; NULL on stop. */
static struct np_ahead_batch *free_slot(struct np_ahead *a)
{
    if (!LOAD(a->stop) && a->tail - LOAD(a->head) < a->nslots)
        return &a->slots[a->tail % a->nslots];
    pthread_mutex_lock(&a->lock);
    STORE(a->thread_waits, true);
    while (!LOAD(a->stop) && a->tail - LOAD(a->head) == a->nslots)
        pthread_cond_wait(&a->cond, &a->lock);
    STORE(a->thread_waits, false);
    struct np_ahead_batch *b = LOAD(a->stop) ? NULL : &a->slots[a->tail % a->nslots];
    pthread_mutex_unlock(&a->lock);
    return b;
}

static void publish(struct np_ahead *a)
{
    STORE(a->tail, a->tail + 1); /* (the thread alone writes it) */
    if (!LOAD(a->reader_waits))
        return;
    pthread_mutex_lock(&a->lock);
    if (LOAD(a->reader_waits) && a->tail - LOAD(a->head) >= WAKE_READY(a))
        pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* Reads the payload of chunk C into a->payload; false if it cannot. */
static bool read_payload(struct np_ahead *a, const struct np_ahead_chunk *c)
{
    if (NP_GROW(a->payload, a->payloadcap, (size_t)c->len + 1) < 0)
        return false;
    uint8_t *p = a->payload;
    size_t n = c->len;
    off_t off = (off_t)(c->off + a->hsize);
    if (a->mem) { /* (the reader checked every chunk's bounds) */
        memcpy(p, a->mem + off, n);
        return true;
    }
    while (n) {
        ssize_t got = pread(a->fd, p, n, off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        p += got, off += got, n -= (size_t)got;
    }
    return true;
}

/* Decodes chunk C into batches; false on stop. */
static bool decode_chunk(struct np_ahead *a, const struct np_ahead_chunk *c)
{
    struct np_ahead_batch *b = free_slot(a);
    if (!b)
        return false;
    b->chunk = c->off;
    b->decoded = false;
    b->last = true;
    b->n = b->records = 0;
    const uint8_t *stream;
    uint64_t detail;
    if (!read_payload(a, c) || np_events_head(a->payload, c->len, &b->head) != NP_EVENTS_OK ||
        np_events_stream(&a->stream, &b->head, a->payload, c->len, &stream, &detail) != NP_EVENTS_OK) {
        publish(a); /* the reader reads it, and says what is wrong */
        return true;
    }
    struct np_events_head head = b->head;
    struct np_decode d = { .p = stream, .end = stream + head.declen, .tick = head.tick };
    for (uint32_t i = 0;;) {
        uint32_t max = head.count - i < a->batch ? head.count - i : a->batch;
        b->chunk = c->off;
        b->decoded = true;
        b->head = head;
        uint32_t before = d.records;
        b->n = np_events_decode(&a->proc, &d, b->ev, max);
        b->records = d.records - before;
        i += b->records;
        b->pos = (uint32_t)(d.p - stream);
        b->tick = d.tick, b->addr = d.addr, b->pc = d.pc;
        b->bad = d.bad;
        b->bad_kind = d.bad_kind;
        b->bad_value = d.bad_value;
        b->last = d.bad || i == head.count;
        publish(a);
        if (b->last)
            return true;
        if (!(b = free_slot(a)))
            return false;
    }
}

static void *run(void *arg)
{
    struct np_ahead *a = arg;
    for (size_t i = 0; i < a->nchunks && decode_chunk(a, &a->chunks[i]); i++)
        ;
    pthread_mutex_lock(&a->lock);
    a->finished = true;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static void free_ahead(struct np_ahead *a)
{
    for (size_t i = 0; i < SLOTS_SMALL; i++)
        free(a->slots[i].ev);
    free(a->chunks);
    free(a->payload);
    np_stream_buf_free(&a->stream);
    free(a);
}

struct np_ahead *np_ahead_start(int fd, const uint8_t *mem, const struct np_trace_process *p,
                                const struct np_ahead_chunk *chunks, size_t n, unsigned hsize)
{
    struct np_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->fd = fd;
    a->mem = mem;
    a->hsize = hsize;
    a->proc = *p;
    a->nchunks = n;
    a->nslots = SLOTS_SMALL;
    a->batch = SMALL_CHUNK;
    for (size_t i = 0; i < n && a->nslots == SLOTS_SMALL; i++)
        if (chunks[i].len > SMALL_CHUNK) {
            a->nslots = SLOTS;
            a->batch = BATCH;
        }
    bool ok = (a->chunks = malloc(n * sizeof *chunks)) != NULL;
    for (size_t i = 0; ok && i < a->nslots; i++)
        ok = (a->slots[i].ev = malloc(a->batch * sizeof *a->slots[i].ev)) != NULL;
    if (!ok) {
        free_ahead(a);
        return NULL;
    }
    memcpy(a->chunks, chunks, n * sizeof *chunks);
    if (pthread_mutex_init(&a->lock, NULL)) {
        free_ahead(a);
        return NULL;
    }
    if (pthread_cond_init(&a->cond, NULL)) {
        pthread_mutex_destroy(&a->lock);
        free_ahead(a);
        return NULL;
    }
    if (pthread_create(&a->thread, NULL, run, a)) {
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
        free_ahead(a);
        return NULL;
    }
    return a;
}

const struct np_ahead_batch *np_ahead_next(struct np_ahead *a, uint64_t off)
{
    const struct np_ahead_batch *b = NULL;
    if (a->head != LOAD(a->tail)) { /* (the reader alone writes head) */
        b = &a->slots[a->head % a->nslots];
    } else {
        pthread_mutex_lock(&a->lock);
        STORE(a->reader_waits, true);
        while (a->head == LOAD(a->tail) && !a->finished)
            pthread_cond_wait(&a->cond, &a->lock);
        STORE(a->reader_waits, false);
        b = a->head == LOAD(a->tail) ? NULL : &a->slots[a->head % a->nslots];
        pthread_mutex_unlock(&a->lock);
    }
    return b && b->chunk == off ? b : NULL;
}

void np_ahead_release(struct np_ahead *a)
{
    STORE(a->head, a->head + 1);
    if (!LOAD(a->thread_waits))
        return;
    pthread_mutex_lock(&a->lock);
    if (LOAD(a->thread_waits) && a->nslots - (LOAD(a->tail) - a->head) >= WAKE_FREE(a))
        pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

void np_ahead_stop(struct np_ahead *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    STORE(a->stop, true);
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->lock);
    free_ahead(a);
}
