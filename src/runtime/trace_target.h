/* trace_target.h - what the hooks call of the trace recorded on a target
 * (trace_target.c and its two ways of writing, nanoprof/trace.h). */
#ifndef NP_TRACE_TARGET_H
#define NP_TRACE_TARGET_H

#include <stdint.h>
#include "thread.h"

/* One entry or exit of T (recording: NP_F_REC_ON), under the busy flag:
 * the way the trace was started with writes it (np_tt_start sets this).
 * FN: the function's address, or an NP_ENTER name | NP_REC_NAMED. */
extern void (*np_tt_event_hook)(struct np_thread *t, uint64_t fn, int exit);
/* Events the hooks dropped on a recorded thread because another hook (or
 * the writer) was running on it (hooks.c keeps it, and np_tt_ring). */
extern uint32_t np_tt_dropped;

/* The ring (trace_ring.c) for np_trace_init_ring and, LAPS not NULL, a
 * flight recorder's (trace_flight.c): see there. */
int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end);
/* Whether a trace runs (a target's). */
int np_tt_running(void);

#if !NP_PORT_HOSTED
/* ---- between trace_target.c and its two ways of writing the calls:
 * EVENTS chunks (trace_events.c, np_trace_init) and RING chunks
 * (trace_ring.c, np_trace_init_ring): each an object of its own, so that a
 * firmware carries only the one it starts. ---- */

/* A way of writing the calls. EVENT is np_tt_event_hook (it begins with
 * np_tt_event_begin, and unlocks at its end). SETUP takes the buffer
 * (the thread is busy, the trace not yet on), FINISH writes what is kept
 * (STOP: before END), SWITCHED is np_thread_switch's (TO busy meanwhile,
 * record_hooks.h). CLEAR_SCRATCH, where it is not NULL, empties the
 * scratch room before np_thread_name's THREAD chunk goes out at once. */
struct np_tt_mode {
    void (*setup)(struct np_thread *t, void *buf, size_t size);
    void (*event)(struct np_thread *t, uint64_t fn, int exit);
    void (*finish)(int stop);
    void (*switched)(struct np_thread *from, struct np_thread *to);
    void (*clear_scratch)(void);
};

struct np_tt_state {
    uint8_t *scratch;      /* room for a THREAD or END chunk (a mode's SETUP
                              sets it) */
    void (*write)(const char *bytes, size_t len); /* where chunks go: the
                              output writer, or a flight recorder's RAM */
    const struct np_tt_mode *mode;
    uint32_t gen;          /* this trace's number: threads' fields of an
                              earlier trace are stale */
    int on;
    uint32_t lock;         /* 1 while a thread writes (np_tt_take) */
    /* from here on, zero when a trace starts */
    struct np_thread *cur; /* whose records come now */
    uint64_t lost;         /* events in chunks the writer refused */
    uint32_t tids;         /* thread ids given so far */
};
extern struct np_tt_state np_tt;

/* Starts a trace for WHO (an NP_MSG value) in BUF, its chunks to WRITE,
 * written MODE's way. */
int np_tt_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t),
                const struct np_tt_mode *mode);
/* The clock (out of line: its code once). */
uint64_t np_tt_now(void);
/* T's THREAD chunk first when this trace has not seen T yet, or T's name
 * changed since (the scratch room free). */
void np_tt_thread_seen(struct np_thread *t);
/* T's THREAD chunk, at once. */
void np_tt_write_thread(struct np_thread *t);
/* The lock: 1 when the caller has it. An RTOS may switch threads inside
 * the trace's writer: the one that took the lock writes (no interrupt
 * masked meanwhile); another, switched in while it is taken, records
 * nothing: its event is counted lost, and said by a LOST record in its
 * stream. */
static inline int np_tt_take(void)
{
    return !__atomic_exchange_n(&np_tt.lock, 1, __ATOMIC_ACQUIRE);
}

/* np_tt_take for T's event, counted lost (T's and END's) when it cannot. */
static inline int np_tt_lock(struct np_thread *t)
{
    if (np_tt_take())
        return 1;
    __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    t->tt.lost++; /* (reset with the rest when T is stale: END counts it) */
    return 0;
}

static inline void np_tt_unlock(void)
{
    __atomic_store_n(&np_tt.lock, 0, __ATOMIC_RELEASE);
}

/* A mode's EVENT, first: 1 when T may write (then with the lock), 0 when
 * the trace stopped meanwhile (T's flag cleared) or the lock is taken. */
static inline int np_tt_event_begin(struct np_thread *t)
{
    if (!np_tt.on) {
        t->flags &= ~(uint32_t)NP_F_REC_ON;
        return 0;
    }
    return np_tt_lock(t);
}
#endif

#if !NP_PORT_HOSTED
#include "../common/trace_format.h"
/* The ring trace (np_trace_init_ring): the hooks write one word a record
 * at POS while the clock's bits 12..31 are EPOCH, the last TIME word's;
 * else the full path (trace_ring.c) writes it (the TIME word first,
 * draining the ring when it is nearly full). EPOCH is NP_TT_RING_CLOSED,
 * which no clock matches, while the ring is off, the full path runs, or
 * the clock is not NP_PORT_CYCLES32 (SysTick): then every record goes
 * through the full path.
 * The hooks write at most NP_TT_RING_GUARD words within one value of
 * EPOCH (4096 cycles, at 8 or more cycles a record): the full path opens
 * their path only with that much room left. */
struct np_tt_ring {
    uint32_t *pos;
    uint32_t epoch;
    uint32_t base;  /* the code window's start (the RING chunk's base) */
};
extern struct np_tt_ring np_tt_ring;
#define NP_TT_RING_CLOSED 0xffffffffu
#define NP_TT_RING_GUARD ((1 << NP_RING_TIME_BITS) / 8) /* words */

/* The hooks' own path for FN's entry or (EXIT) exit: 1 when written.
 * Interrupts are masked from the clock's read to the word's store, as
 * SystemView's recorder does: an interrupt's or another task's records
 * (which may drain the ring) come wholly before or after, and times never
 * go back. No busy flag. A function outside the window takes
 * the full path (FAR words). */
static inline __attribute__((always_inline)) int np_tt_ring_put(uint32_t fn, int exit)
{
#ifdef NP_PORT_CYCLES32
    struct np_tt_ring *r = &np_tt_ring;
    uint32_t d = fn - r->base; /* odd: a Thumb function's (base even) */
    np_port_crit c = np_port_crit_enter(NULL);
    uint32_t *p = r->pos, now = NP_PORT_CYCLES32();
    if (__builtin_expect(((r->epoch ^ now >> NP_RING_TIME_BITS) | (exit ? 0 : d >> NP_RING_FN_BITS)) != 0, 0)) {
        np_port_crit_exit(NULL, c);
        return 0;
    }
    *p = exit ? now << 2 : d | now << NP_RING_FN_BITS; /* (the clock's low 12 bits above) */
    r->pos = p + 1;
    np_port_crit_exit(NULL, c);
    return 1;
#else
    (void)fn, (void)exit;
    return 0;
#endif
}
#endif

#endif
