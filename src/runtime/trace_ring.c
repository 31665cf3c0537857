/* trace_ring.c - the trace's calls kept as raw words in a ring
 * (np_trace_init_ring, and np_trace_init_flight's ring): one word an
 * entry or exit, control words for time, threads, losses and far
 * entries (trace_format.h). With the DWT clock the hooks write the words
 * themselves (np_tt_ring_put); else, and for what they cannot write, the
 * full path does, here. The words go out as RING chunks when the ring
 * fills, at np_trace_flush and at np_trace_stop; a flight recorder's wrap
 * over their oldest instead. What the EVENTS way shares is
 * trace_target.c's. */
#include "trace_target.h"
#include "output.h"
#include "report.h"
#include "trace_encode.h"
#include "nanoprof/trace.h"

#if !NP_PORT_HOSTED

/* The ring's state beside the hooks' (np_tt_ring). */
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

/* np_tt_ring_start's LAPS, for setup (np_tt_start calls it). */
static uint32_t *laps_given;

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
        np_trace_seal(h); /* (its code once) */
        uint32_t failed = np_output_failures;
        np_tt.write((const char *)h, NP_TRACE_CHUNK_HEADER + n);
        if (np_output_failures != failed)
            np_tt.lost += ring_events(rg.words, p);
    }
    np_tt_ring.pos = rg.words;
    rg.head_tid = rg.tid;
    rg.head_clock = rg.clock;
}

static void ring_time(uint64_t now, unsigned bits);

/* The THREAD word: a switch to TID at NOW's low 12 bits. */
static inline uint32_t thread_word(uint32_t tid, uint32_t now)
{
    return NP_RING_CTL(NP_RING_THREAD, (tid & 0xfff) | ((uint32_t)now & NP_RING_TIME_MASK) << 12);
}

/* A flight recorder's ring full: the rest of the lap PAD words, and the
 * next lap from the start, over the oldest words. Each lap begins with
 * the clock read now and the thread (TIME_HI, TIME, THREAD), where its
 * reader may start, whatever the words left of the lap before. Called
 * between records (ring_begin leaves room for one), so no record's words
 * are split by the lap and none's time is before the clock's read here. */
static void ring_wrap(void)
{
    for (uint32_t *p = np_tt_ring.pos; p < rg.end; p++)
        *p = NP_RING_CTL(NP_RING_PAD, 0);
    np_tt_ring.pos = rg.words;
    (*rg.laps)++;
    uint64_t now = np_tt_now();
    uint32_t tid = rg.tid;
    rg.clock = ~(uint64_t)0;
    ring_time(now, 0);
    rg.tid = tid;
    *np_tt_ring.pos++ = thread_word(tid, now);
}

static void ring_full(void)
{
    if (rg.laps)
        ring_wrap();
    else
        ring_drain();
}

/* One word at the ring's end, draining it when full. */
static __attribute__((noinline)) void ring_word(uint32_t w)
{
    if (np_tt_ring.pos == rg.end)
        ring_full();
    *np_tt_ring.pos++ = w;
}

/* The clock NOW said by a TIME word (TIME_HI first when its high bits
 * changed), unless the last one says it already, or the reader takes the
 * next word with a time, which says the clock's low BITS bits (0: none
 * comes), at NOW without it (np_ring_time_after): the last time the
 * reader knew is less than that word's span behind (an EXIT's: half). That
 * time is the last word's when it has one (every word is written while
 * the clock's bits 12 and up are rg.clock's: the hooks write only then),
 * else no earlier than rg.clock. A flight recorder's reader starts
 * anywhere: it has every TIME word. */
static void ring_time(uint64_t now, unsigned bits)
{
    uint64_t c = now >> NP_RING_TIME_BITS, known = rg.clock;
    if (c == rg.clock >> NP_RING_TIME_BITS)
        return;
    uint32_t low;
    if (np_tt_ring.pos > rg.words && np_ring_word_time(np_tt_ring.pos[-1], &low))
        known |= low & NP_RING_TIME_MASK;
    uint32_t span = bits == NP_RING_EXIT_BITS ? 1u << (NP_RING_EXIT_BITS - 1) : bits ? 1u << NP_RING_TIME_BITS : 0;
    if (!rg.laps && now - known < span) {
        rg.clock = c << NP_RING_TIME_BITS;
        return;
    }
    /* a flight recorder's reader starts at a TIME word: each comes with
     * TIME_HI before it and THREAD after (ring_thread's) */
    if ((c >> 24) != (rg.clock >> (NP_RING_TIME_BITS + 24)) || rg.laps)
        ring_word(NP_RING_CTL(NP_RING_TIME_HI, (c >> 24) & 0xffffff));
    ring_word(NP_RING_CTL(NP_RING_TIME, c & 0xffffff));
    rg.clock = c << NP_RING_TIME_BITS;
    if (rg.laps)
        rg.tid = 0;
}

/* The hooks' path closed, while the full path writes. */
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
 * thread of the records now (a switch the full path saw first). */
static void ring_thread(struct np_thread *t, uint64_t now)
{
    np_tt_thread_seen(t);
    if (t->tt.tid != rg.tid) {
        rg.tid = t->tt.tid;
        np_tt.cur = t;
        ring_word(thread_word(rg.tid, now));
    }
    while (t->tt.lost) {
        uint32_t n = t->tt.lost > 0xffffff ? 0xffffff : t->tt.lost;
        t->tt.lost -= n;
        ring_word(NP_RING_CTL(NP_RING_LOST, n));
    }
}

/* The clock's low bits the first word with a time that T's record brings
 * says: a THREAD word's when T is not the thread of the records now, else
 * the record's BITS (0: it has no word). */
static unsigned ring_said(struct np_thread *t, unsigned bits)
{
    np_tt_thread_seen(t);
    return t->tt.tid != rg.tid ? NP_RING_TIME_BITS : bits;
}

/* The hooks' path closed, and room for a slow record's words (at most a
 * TIME_HI, TIME, THREAD, LOST, FAR_LO and FAR_HI), so that none is split
 * across two chunks or a flight recorder's laps. */
static void ring_begin(void)
{
    ring_close();
    if (rg.end - np_tt_ring.pos < 8)
        ring_full();
}

/* The full path reads the clock with the hooks' path closed and the lock
 * taken: no other record comes between, and times never go back. */
static void event(struct np_thread *t, uint64_t fn, int exit)
{
    if (!np_tt_event_begin(t))
        return;
    ring_begin();
    uint64_t now = np_tt_now();
    ring_time(now, ring_said(t, exit ? NP_RING_EXIT_BITS : NP_RING_TIME_BITS));
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
    np_tt_unlock();
}

/* np_thread_switch (TO busy): a THREAD word for TO, and its LOST words. */
static void switched(struct np_thread *from, struct np_thread *to)
{
    (void)from;
    if (np_tt_take()) {
        ring_begin();
        uint64_t now = np_tt_now();
        ring_time(now, ring_said(to, 0));
        ring_thread(to, now);
        ring_reopen();
        np_tt_unlock();
    } else {
        __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    }
}

/* Room for the THREAD chunk (the largest but MODULE, written first) and
 * END. */
#define RING_SCRATCH (NP_TRACE_CHUNK_HEADER + 4 + 2 + NP_THREAD_NAME_MAX + 4)
_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_CHUNK_HEADER + NP_RING_HEAD + RING_SCRATCH + 16, "a ring of words");
_Static_assert(NP_TRACE_RING_FAST >= NP_TRACE_CHUNK_HEADER + NP_RING_HEAD + RING_SCRATCH + 4 * NP_TT_RING_GUARD,
               "a drain holds as many words as the hooks may write in a burst");

static void finish(int stop)
{
    ring_close();
    if (!rg.laps) /* (a flight recorder's words stay where they are, to be read) */
        ring_drain();
    if (stop)
        rg.on = 0;
    else
        ring_reopen();
}

/* The ring's words between the RING chunk's header and, at the buffer's
 * end, the scratch room for the THREAD and END chunks. */
static void setup(struct np_thread *t, void *buf, size_t size)
{
    uintptr_t a = (uintptr_t)buf;
    rg.laps = laps_given;
    rg.words = (uint32_t *)(a + NP_TRACE_CHUNK_HEADER + NP_RING_HEAD);
    rg.end = (uint32_t *)((a + size - RING_SCRATCH) & ~(uintptr_t)3);
    np_tt.scratch = (uint8_t *)rg.end;
    /* the window: the 1 MiB of code this function is in */
    np_tt_ring.base = (uint32_t)(uintptr_t)np_tt_ring_start & ~NP_RING_FN_MASK;
    np_tt_ring.pos = rg.words;
    rg.clock = ~(uint64_t)0;
    rg.tid = 0;
    rg.fast = 0;
#ifdef NP_PORT_CYCLES32
    rg.fast = NP_PORT_CYCLES32_ON() && size >= NP_TRACE_RING_FAST;
#endif
    rg.on = 1;
    uint64_t now = np_tt_now();
    if (rg.laps) {
        /* a flight recorder's reader starts at a TIME word: its first */
        ring_time(now, NP_RING_TIME_BITS);
        ring_thread(t, now);
    } else {
        /* a RING chunk's fields say the clock and the thread at its first
         * word: no TIME or THREAD word before it */
        rg.clock = now >> NP_RING_TIME_BITS << NP_RING_TIME_BITS;
        np_tt_thread_seen(t);
        rg.tid = t->tt.tid;
        np_tt.cur = t;
    }
    rg.head_clock = rg.clock;
    rg.head_tid = rg.tid;
    ring_reopen();
}

static const struct np_tt_mode ring = { setup, event, finish, switched, NULL };

/* BUF: 4-aligned. */
int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end)
{
    laps_given = laps;
    int st = np_tt_start(who, buf, size, write, &ring);
    if (st)
        return st;
    *words = rg.words;
    *end = rg.end;
    return NP_OK;
}

int np_trace_init_ring(void *buf, size_t size)
{
    uintptr_t a = ((uintptr_t)buf + 3) & ~(uintptr_t)3;
    size_t skip = a - (uintptr_t)buf;
    uint32_t *words, *end;
    return np_tt_ring_start(NP_MSG("np_trace_init_ring"), buf ? (void *)a : NULL, size > skip ? size - skip : 0,
                            np_write, NULL, &words, &end);
}

#endif
