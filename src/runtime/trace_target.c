/* trace_target.c - the call trace recorded on a target (nanoprof/trace.h):
 * the hooks encode each entry and exit, with the port's 64-bit clock,
 * into the one chunk buffer the firmware gives, as records of the thread
 * running now; the chunk goes whole to the output writer when it fills
 * and at each thread switch, so that every chunk holds one thread's
 * records. Nothing is allocated and no interrupt is masked: a chunk the
 * writer refuses, a call made while the writer (or another hook) runs on
 * its thread, and one of a thread an RTOS switched in while another held
 * the encoder (lock, below) are counted lost, and the END chunk says how
 * many. A host has its own recorder (record.c): there this file only
 * refuses. */
#include "trace_target.h"
#include "hooks.h"
#include "output.h"
#include "report.h"
#include "record_hooks.h"
#include "trace_encode.h"
#include "nanoprof/trace.h"

uint32_t np_tt_dropped;

#if NP_PORT_HOSTED

int np_trace_init(void *buf, size_t size)
{
    (void)buf, (void)size;
    return np_error(NP_EINVAL, "np_trace_init", "records on a target; on a host, `nanoprof record` does");
}

int np_trace_init_ring(void *buf, size_t size)
{
    return np_trace_init(buf, size);
}

int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end)
{
    (void)buf, (void)size, (void)write, (void)laps, (void)words, (void)end;
    return np_error_msg(NP_EINVAL, who, NP_MSG("records on a target; on a host, `nanoprof record` does"));
}

int np_trace_flush(void)
{
    return np_error(NP_ENOTINIT, "np_trace_flush", "no trace is being recorded (np_trace_init starts one)");
}

int np_trace_stop(void)
{
    return np_error(NP_ENOTINIT, "np_trace_stop", "no trace is being recorded (np_trace_init starts one)");
}

uint64_t np_trace_lost(void)
{
    return 0;
}

void np_tt_event(struct np_thread *t, uint64_t fn, int exit)
{
    (void)t, (void)fn, (void)exit;
}

#else

_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_ENC_MIN, "NP_TRACE_BUFFER_MIN below the encoder's minimum");
_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_CHUNK_HEADER + 4 + 2 + NP_THREAD_NAME_MAX, "a THREAD chunk fits");

static struct {
    struct np_trace_enc enc;
    uint32_t gen;          /* this trace's number: threads' fields of an
                              earlier trace are stale */
    int on;
    uint32_t lock;         /* 1 while a thread uses the encoder (take) */
    /* from here on, zero when a trace starts */
    struct np_thread *cur; /* whose records the chunk holds */
    uint64_t lost;         /* events in chunks the writer refused */
    uint32_t calls;        /* ENTRY and EXIT records in the chunk */
    uint32_t carried;      /* events its LOST records say */
    uint32_t tids;         /* thread ids given so far */
} tt;

struct np_tt_ring np_tt_ring = { NULL, NP_TT_RING_CLOSED, 0 };

/* The ring mode's state beside the hooks' (np_tt_ring). */
static struct {
    int on;
    uint32_t *words, *end;  /* the ring's words, after room for the chunk's
                               header and the RING fields */
    uint64_t clock;         /* bits 12.. of the clock at the last TIME word */
    uint32_t tid;           /* the thread whose records come now */
    uint64_t head_clock;    /* clock and tid at words[0] */
    uint32_t head_tid;
    int fast;               /* the clock is NP_PORT_CYCLES32 */
    uint32_t *laps;         /* a flight recorder's count of wraps (else
                               NULL: a full ring is drained) */
} rg;

/* Where the trace's chunks go: the output writer, or a flight recorder's
 * RAM (trace_flight.c). */
static void (*tt_write)(const char *bytes, size_t len) = np_write;

/* The trace's ticks are cycles (INFO's clock "cycles", below): END's
 * ns_per_tick is 1.0, as a double's bits. */
#define NP_TT_NS_PER_TICK_BITS 0x3ff0000000000000ull

/* The first N bytes of the buffer to the writer. */
static void write_bytes(size_t n)
{
    tt_write((const char *)tt.enc.buf, n);
}

/* THREAD and END are built here field by field, not with trace_encode's
 * bounds-checked builders: the buffer holds each of them
 * (NP_TRACE_BUFFER_MIN), and the code is a third of theirs. The stream's
 * opening (header, INFO, MODULE) is report.c's. */

/* V's low N bytes at P, little-endian; past them. */
static __attribute__((noinline)) uint8_t *field(uint8_t *p, uint64_t v, unsigned n)
{
    while (n--) {
        *p++ = (uint8_t)v;
        v >>= 8;
    }
    return p;
}

/* The chunk of TYPE whose payload ends at END, from the buffer's start,
 * checksummed, to the writer. */
static void write_chunk_of(uint32_t type, const uint8_t *end)
{
    size_t n = (size_t)(end - tt.enc.buf);
    np_trace_chunk_header(tt.enc.buf, type, (uint32_t)(n - NP_TRACE_CHUNK_HEADER));
    np_trace_seal(tt.enc.buf);
    write_bytes(n);
}

#define PAYLOAD (tt.enc.buf + NP_TRACE_CHUNK_HEADER)

/* The clock: out of line, its code once (ROM is what a target lacks:
 * records go through np_trace_enc_put_small for the same reason). */
static __attribute__((noinline)) uint64_t now_ticks(void)
{
    return np_port_wall_ticks();
}

/* The encoder's flush: the chunk to the writer; refused, its events lost,
 * which the thread's next record says (a LOST record). */
static void write_chunk(struct np_trace_enc *e, void *ctx)
{
    (void)ctx;
    uint32_t failed = np_output_failures;
    write_bytes(np_trace_enc_chunk(e));
    if (np_output_failures != failed) {
        tt.lost += tt.calls;
        tt.cur->tt.lost += tt.calls + tt.carried;
    }
    tt.calls = tt.carried = 0;
}

/* T's THREAD chunk: its id and its name (np_thread_name's: the bytes
 * copied, no text made), with the encoder empty. A thread named again
 * has a THREAD chunk again: the reader takes the last. */
static void write_thread(struct np_thread *t)
{
    t->tt.named = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* a name given meanwhile clears it */
    size_t n = 0;
    while (n < NP_THREAD_NAME_MAX && t->name[n])
        n++;
    uint8_t *p = field(field(PAYLOAD, t->tt.tid, 4), n, 2);
    __builtin_memcpy(p, t->name, n);
    write_chunk_of(NP_CHUNK_THREAD, p + n);
}

/* T's records start a chunk of their own, after T's THREAD chunk when
 * this trace has not seen T yet, or T's name changed since it. */
static void begin_thread(struct np_thread *t)
{
    np_trace_enc_flush(&tt.enc);
    if (t->tt.gen != tt.gen) {
        t->tt = (struct np_tt_thread){ .gen = tt.gen, .tid = ++tt.tids };
        write_thread(t);
    } else if (!t->tt.named) {
        write_thread(t);
    }
    tt.cur = t;
    np_trace_enc_thread(&tt.enc, t->tt.tid);
}

/* The events of T's refused chunks, said by a LOST record before its next
 * one. */
static void say_lost(struct np_thread *t, uint64_t now)
{
    if (t->tt.lost) {
        uint64_t n = t->tt.lost;
        t->tt.lost = 0;
        tt.carried += (uint32_t)n;
        np_trace_enc_put_small(&tt.enc, NP_EV_LOST, n, now);
    }
}

/* The encoder is the threads': an RTOS may switch (PendSV) while a
 * thread is inside it, even inside its writer. The one that takes it
 * uses it (no interrupt masked meanwhile); another, switched in while it
 * is taken, records nothing: its event is counted lost, and said by a
 * LOST record in its stream. Returns 1 when the caller has the encoder. */
static int take(void)
{
    return !__atomic_exchange_n(&tt.lock, 1, __ATOMIC_ACQUIRE);
}

/* take() for T's event, which is counted lost when it cannot. */
static int lock(struct np_thread *t)
{
    if (take())
        return 1;
    __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    t->tt.lost++; /* (reset with the rest when T is stale: END counts it) */
    return 0;
}

static void unlock(void)
{
    __atomic_store_n(&tt.lock, 0, __ATOMIC_RELEASE);
}

/* np_thread_name: a thread this trace has seen gets its THREAD chunk
 * again now, or, when the caller cannot write (inside a hook) or another
 * thread holds the encoder, before its next records; one it has not
 * seen, with its first ones. */
static void on_name(struct np_thread *t, int now)
{
    t->tt.named = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!now || !tt.on || t->tt.gen != tt.gen || !take())
        return;
    np_trace_enc_flush(&tt.enc);
    write_thread(t);
    unlock();
}

static void ring_event(struct np_thread *t, uint64_t fn, int exit, uint64_t now);

void np_tt_event(struct np_thread *t, uint64_t fn, int exit)
{
    uint64_t now = now_ticks();
    if (rg.on) {
        if (!lock(t))
            return;
        ring_event(t, fn, exit, now);
        unlock();
        return;
    }
    if (!tt.on) {
        t->flags &= ~(uint32_t)NP_F_REC_ON; /* stopped meanwhile */
        return;
    }
    if (!lock(t))
        return;
    if (t != tt.cur)
        begin_thread(t);
    say_lost(t, now);
    /* a Thumb function's address has bit 0 set; an NP_ENTER name's
     * address is the string's, which the host reads from the ELF */
    uint64_t addr = fn & NP_REC_NAMED ? fn & NP_ADDR_MASK : fn & ~(uint64_t)1;
    tt.calls++;
    np_trace_enc_put_small(&tt.enc, exit ? NP_EV_EXIT : NP_EV_ENTRY, addr, now);
    unlock();
}

/* np_thread_switch: TO's records from now on; a SWITCH record says how
 * long it was out. */
static void on_switch(struct np_thread *from, struct np_thread *to)
{
    if (!tt.on)
        return;
    uint32_t f = to->flags;
    to->flags = f | NP_F_BUSY; /* an instrumented writer records nothing */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t now = now_ticks();
    from->tt.out = now;
    if (take()) {
        begin_thread(to);
        say_lost(to, now);
        if (to->tt.out) {
            np_trace_enc_put_small(&tt.enc, NP_EV_SWITCH, now - to->tt.out, now);
            to->tt.out = 0;
        }
        unlock();
    } else { /* inside another thread's use: its SWITCH record is lost
                (END counts it; its calls are whole: no LOST record) */
        __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    to->flags = f | NP_F_REC_ON;
}

/* The calling thread, marked busy for the API call WHO, or NULL. */
static struct np_thread *enter(const char *who) /* WHO: an NP_MSG value */
{
    struct np_thread *t = np_self();
    return np_api_enter_msg(t, who) ? t : NULL;
}

/* np_trace_init's, for WHO, the chunks to WRITE: a flight recorder's
 * stream (WRITE not np_write) is its own, apart from the writer's. */
static int trace_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t))
{
    if (!buf)
        return np_error_msg(NP_EINVAL, who, NP_MSG("buffer is NULL"));
    if (size < NP_TRACE_BUFFER_MIN)
        return np_error_msg(NP_ESMALL, who, NP_MSG("buffer too small"));
    if (tt.on)
        return np_error_msg(NP_EALREADY, who, NP_MSG("already started"));
    struct np_thread *t = enter(who);
    if (!t)
        return NP_EBUSY;
    np_port_clock_init();
    (void)np_trace_enc_init(&tt.enc, buf, size, 0, write_chunk, NULL);
    /* the stream's opening, which the firmware's reports may have sent
     * already; a trace after another opens a stream of its own (the
     * host reads each from its header) */
    tt_write = write;
    rg.laps = NULL;
    if (write == np_write) {
        np_stream_open(tt.gen != 0);
        np_output_tracing = 1;
    } else {
        np_stream_opening(write);
    }
    tt.gen++;
    __builtin_memset(&tt.cur, 0, sizeof tt - __builtin_offsetof(__typeof__(tt), cur));
    np_tt_dropped = 0;
    np_rec_switch_hook = on_switch;
    np_rec_name_hook = on_name;
    tt.on = 1;
    t->flags |= NP_F_REC_ON;
    np_thread_unlock(t);
    return NP_OK;
}

int np_trace_init(void *buf, size_t size)
{
    return trace_start(NP_MSG("np_trace_init"), buf, size, np_write);
}

int np_tt_running(void)
{
    return tt.on;
}

/* ---- the ring (np_trace_init_ring) ---- */

/* Events in words [A, B): entries and exits (the rest are control words). */
static uint32_t ring_events(const uint32_t *a, const uint32_t *b)
{
    uint32_t n = 0;
    for (; a < b; a++)
        n += (*a & 3) != 2;
    return n;
}

/* The words written so far go out as one RING chunk, built in place before
 * them (its header and fields fill the room np_trace_init_ring kept);
 * refused, their events are lost. The ring starts again, its head state
 * the state now. */
static void ring_drain(void)
{
    uint32_t *p = np_tt_ring.pos;
    if (p != rg.words) {
        uint8_t *h = (uint8_t *)rg.words - NP_RING_HEAD - NP_TRACE_CHUNK_HEADER;
        uint8_t *f = h + NP_TRACE_CHUNK_HEADER;
        uint32_t n = (uint32_t)((uint8_t *)p - f);
        np_put_u32(f, np_tt_ring.base);
        np_put_u32(f + 4, rg.head_tid);
        np_put_u64(f + 8, rg.head_clock);
        np_put_u32(f + 16, 0);
        np_trace_chunk_header(h, NP_CHUNK_RING, n);
        np_trace_seal(h); /* (its code once, trace_encode.c's) */
        uint32_t failed = np_output_failures;
        np_write((const char *)h, NP_TRACE_CHUNK_HEADER + n);
        if (np_output_failures != failed)
            tt.lost += ring_events(rg.words, p);
    }
    np_tt_ring.pos = rg.words;
    rg.head_tid = rg.tid;
    rg.head_clock = rg.clock;
}

/* A flight recorder's ring full: the rest of the lap PAD words, and the
 * next lap from the start, over the oldest words. */
static void ring_wrap(void)
{
    for (uint32_t *p = np_tt_ring.pos; p < rg.end; p++)
        *p = NP_RING_CTL(NP_RING_PAD, 0);
    np_tt_ring.pos = rg.words;
    (*rg.laps)++;
}

static void ring_full(void)
{
    if (rg.laps)
        ring_wrap();
    else
        ring_drain();
}

/* One word at the ring's end, draining it when full. */
static void ring_word(uint32_t w)
{
    if (np_tt_ring.pos == rg.end)
        ring_full();
    *np_tt_ring.pos++ = w;
}

/* The clock NOW said (a TIME word, TIME_HI first when its high bits
 * changed) unless the last TIME word says it already. */
static void ring_time(uint64_t now)
{
    uint64_t c = now >> NP_RING_TIME_BITS;
    if (c == rg.clock >> NP_RING_TIME_BITS)
        return;
    /* a flight recorder's reader starts anywhere: each TIME word there
     * comes with TIME_HI before it and THREAD after (ring_thread's) */
    if ((c >> 24) != (rg.clock >> (NP_RING_TIME_BITS + 24)) || rg.laps)
        ring_word(NP_RING_CTL(NP_RING_TIME_HI, (c >> 24) & 0xffffff));
    ring_word(NP_RING_CTL(NP_RING_TIME, c & 0xffffff));
    rg.clock = c << NP_RING_TIME_BITS;
    if (rg.laps)
        rg.tid = 0;
}

/* The hooks' path closed, while np_tt_event writes. */
static void ring_close(void)
{
    np_tt_ring.epoch = NP_TT_RING_CLOSED;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The hooks' path open again with the DWT clock, the ring drained first
 * when it has not the room they may take. */
static void ring_reopen(void)
{
    if (!rg.fast || !rg.on)
        return;
    if (rg.end - np_tt_ring.pos < NP_TT_RING_GUARD)
        ring_full();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    np_tt_ring.epoch = (uint32_t)rg.clock >> NP_RING_TIME_BITS;
}

/* A LOST word for T's events not said yet; a THREAD word when T is not the
 * thread of the records now (a switch np_tt_event saw first). */
static void ring_thread(struct np_thread *t, uint64_t now)
{
    if (t->tt.gen != tt.gen) {
        t->tt = (struct np_tt_thread){ .gen = tt.gen, .tid = ++tt.tids };
        write_thread(t);
    } else if (!t->tt.named) {
        write_thread(t);
    }
    if (t->tt.tid != rg.tid) {
        rg.tid = t->tt.tid;
        tt.cur = t;
        ring_word(NP_RING_CTL(NP_RING_THREAD, (rg.tid & 0xfff) | ((uint32_t)now & NP_RING_TIME_MASK) << 12));
    }
    while (t->tt.lost) {
        uint32_t n = t->tt.lost > 0xffffff ? 0xffffff : t->tt.lost;
        t->tt.lost -= n;
        ring_word(NP_RING_CTL(NP_RING_LOST, n));
    }
}

/* The hooks' path closed, and room for a slow record's words (at most a
 * TIME_HI, TIME, THREAD, LOST, FAR_LO and FAR_HI), so that none is split
 * across two chunks. */
static void ring_begin(void)
{
    ring_close();
    if (rg.end - np_tt_ring.pos < 8 && !rg.laps) /* (a flight recorder's wraps anywhere) */
        ring_drain();
}

static void ring_event(struct np_thread *t, uint64_t fn, int exit, uint64_t now)
{
    ring_begin();
    ring_time(now);
    ring_thread(t, now);
    uint32_t lo = (uint32_t)now & NP_RING_TIME_MASK;
    if (exit) {
        ring_word((uint32_t)now << 2);
    } else {
        /* a Thumb function's address has bit 0 set, which an ENTRY word
         * keeps as its tag; an NP_ENTER name's is the string's, which the
         * host reads from the ELF: FAR words, as a function's beyond the
         * window */
        int named = (fn & NP_REC_NAMED) != 0;
        uint32_t a = (uint32_t)(named ? fn & NP_ADDR_MASK : fn & ~(uint64_t)1);
        if (!named && (a & ~NP_RING_FN_MASK) == np_tt_ring.base) {
            ring_word((a & NP_RING_FN_MASK) | 1 | lo << NP_RING_FN_BITS);
        } else {
            ring_word(NP_RING_CTL(NP_RING_FAR_LO, a & 0xffffff));
            ring_word(NP_RING_CTL(NP_RING_FAR_HI, a >> 24 | lo << 8));
        }
    }
    ring_reopen();
}

static void ring_switch(struct np_thread *from, struct np_thread *to)
{
    uint32_t f = to->flags;
    to->flags = f | NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    (void)from;
    if (take()) {
        uint64_t now = now_ticks();
        ring_begin();
        ring_time(now);
        ring_thread(to, now);
        ring_reopen();
        unlock();
    } else {
        __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    to->flags = f | NP_F_REC_ON;
}

/* Room for the THREAD chunk (the largest but MODULE, written first) and
 * END. */
#define RING_SCRATCH (NP_TRACE_CHUNK_HEADER + 4 + 2 + NP_THREAD_NAME_MAX + 4)
_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_CHUNK_HEADER + NP_RING_HEAD + RING_SCRATCH + 16, "a ring of words");
_Static_assert(NP_TRACE_RING_FAST >= NP_TRACE_CHUNK_HEADER + NP_RING_HEAD + RING_SCRATCH + 4 * NP_TT_RING_GUARD,
               "a drain holds as many words as the hooks may write in a burst");

/* np_thread_name in ring mode: T's THREAD chunk at once when it can be,
 * else with its next slow record. */
static void ring_name(struct np_thread *t, int now)
{
    t->tt.named = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!now || !rg.on || t->tt.gen != tt.gen || !take())
        return;
    write_thread(t);
    unlock();
}

/* np_trace_init_ring's and np_trace_init_flight's ring in BUF (SIZE
 * bytes, 4-aligned), its chunks to WRITE; a flight recorder's (LAPS not
 * NULL) wraps, counting its laps there. Its words in [*WORDS, *END). */
int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end)
{
    uintptr_t a = (uintptr_t)buf;
    size_t head = NP_TRACE_CHUNK_HEADER + NP_RING_HEAD;
    int st = trace_start(who, buf, size, write);
    if (st)
        return st;
    struct np_thread *t = enter(who);
    if (!t)
        return NP_EBUSY;
    /* the ring's words between the RING chunk's header and, at the
     * buffer's end, room for the THREAD and END chunks */
    rg.words = (uint32_t *)(a + head);
    rg.end = (uint32_t *)((a + size - RING_SCRATCH) & ~(uintptr_t)3);
    *words = rg.words;
    *end = rg.end;
    tt.enc.buf = (uint8_t *)rg.end;
    /* the window: the 1 MiB of code this function is in */
    np_tt_ring.base = (uint32_t)(uintptr_t)np_tt_ring_start & ~NP_RING_FN_MASK;
    rg.clock = ~(uint64_t)0;
    rg.tid = 0;
#ifdef NP_PORT_CYCLES32
    rg.fast = NP_PORT_CYCLES32_ON() && size >= NP_TRACE_RING_FAST;
#endif
    uint64_t now = now_ticks();
    np_tt_ring.pos = rg.words;
    ring_time(now);
    rg.head_clock = rg.clock;
    if (!laps)
        np_tt_ring.pos = rg.words; /* its TIME word is the head's clock */
    rg.on = 1;
    ring_thread(t, now);
    rg.head_tid = rg.tid;
    if (!laps)
        np_tt_ring.pos = rg.words;
    rg.laps = laps;
    np_rec_switch_hook = ring_switch;
    np_rec_name_hook = ring_name;
    ring_reopen();
    np_thread_unlock(t);
    return NP_OK;
}

int np_trace_init_ring(void *buf, size_t size)
{
    uintptr_t a = ((uintptr_t)buf + 3) & ~(uintptr_t)3;
    uint32_t *words, *end;
    if (buf && size >= NP_TRACE_BUFFER_MIN + 8 && !tt.on)
        return np_tt_ring_start(NP_MSG("np_trace_init_ring"), (void *)a, size - (a - (uintptr_t)buf), np_write,
                                NULL, &words, &end);
    return np_trace_init(buf, size);
}

/* np_trace_flush, np_trace_stop (STOP): the chunk being filled goes out;
 * stopping, the END chunk after it. */
static int finish(const char *who, int stop) /* WHO: an NP_MSG value */
{
    if (!tt.on)
        return np_error_msg(NP_ENOTINIT, who, NP_MSG("not started"));
    struct np_thread *t = enter(who);
    if (!t)
        return NP_EBUSY;
    if (!take()) {
        np_thread_unlock(t);
        return np_error_msg(NP_EBUSY, who, NP_MSG("another thread is in it"));
    }
    if (rg.on) {
        ring_close();
        if (!rg.laps) /* (a flight recorder's words stay where they are, to be read) */
            ring_drain();
        if (stop)
            rg.on = 0;
        else
            ring_reopen();
    } else {
        np_trace_enc_flush(&tt.enc);
    }
    if (stop) {
        tt.on = 0;
        np_output_tracing = 0;
        np_rec_switch_hook = NULL;
        np_rec_name_hook = NULL;
        t->flags &= ~(uint32_t)NP_F_REC_ON;
        /* END: the end tick, the events lost, ns_per_tick (1.0) */
        uint8_t *p = field(field(PAYLOAD, now_ticks(), 8), np_trace_lost(), 8);
        write_chunk_of(NP_CHUNK_END, field(p, NP_TT_NS_PER_TICK_BITS, 8));
    }
    unlock();
    np_thread_unlock(t);
    return NP_OK;
}

int np_trace_flush(void)
{
    return finish(NP_MSG("np_trace_flush"), 0);
}

int np_trace_stop(void)
{
    return finish(NP_MSG("np_trace_stop"), 1);
}

uint64_t np_trace_lost(void)
{
    return tt.lost + __atomic_load_n(&np_tt_dropped, __ATOMIC_RELAXED);
}

#endif
