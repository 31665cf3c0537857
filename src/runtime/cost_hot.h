/* cost_hot.h - what function cost measurement does on each entry and exit.
 *
 * An entry pushes an open call (its function's slot, its start time); the
 * exit pops it and adds the call to its function's sums in the thread's
 * table at once: count, inclusive time (when no other call of the same
 * function is still open: recursion is counted once), exclusive time (the
 * call's time less its callees'), minimum and maximum. Nothing is stored
 * per call, so nothing is left to walk later: np_stats_calc only merges
 * the table's sums into the shared one (stats.c).
 *
 * An entry that finds no room (the open-call stack full, or no slot for
 * its function even after merging the table into the default statistics
 * table) is dropped and counted (lost_open), and so is every call made
 * inside it, until it returns; exits come back in LIFO order, so the
 * counts stay exact for everything kept.
 *
 * Both run with the thread busy (no signal handler records meanwhile).
 * The stores are ordered for a handler that longjmps out of the hook:
 * an entry counts once its frame is whole (the top is stored last), and an
 * exit marks its frame CLOSING before it adds anything, so that the jump
 * can tell a half-added call (setjmp.c, np_cost_unwind). */
#ifndef NP_COST_HOT_H
#define NP_COST_HOT_H

#include "thread.h"
#include "../port/port.h"

/* The slot of FN, made when missing (merging a full table into the
 * default statistics table first if need be); NULL when there is no room. */
struct np_cost_fn *np_cost_slot(struct np_thread *t, uint64_t fn);
/* After a switch: takes the switched-out time off; returns the time now. */
uint64_t np_thread_time_resync(struct np_thread *t);

/* READ's time less the time T was switched out, the two read as one. An
 * RTOS switches threads from an interrupt (np_thread_switch) that may come
 * between the two reads and add the time T was out to its offset: read
 * before the counter, T would be charged with the other threads' time,
 * read after, that time would be taken off twice: the port reads both as
 * one (np_port_ticks_less). Where the OS switches threads
 * (NP_PORT_OS_THREADS) np_thread_switch runs only when the program calls
 * it, never inside a hook: READ, then the offset. */
static inline __attribute__((always_inline)) uint64_t np_thread_less_off(struct np_thread *t, uint64_t (*read)(void))
{
#if NP_PORT_OS_THREADS
    return read() - t->off;
#else
    (void)read; /* the port's ticks, read with the offset under one mask */
    return np_port_ticks_less(&t->off);
#endif
}

/* The leaf paths' time (np_cost_enter_fast, np_cost_exit_fast): the
 * counter less the time T was switched out, with NP_PORT_HOOKS_MASK
 * inside the hooks' critical section. */
static inline __attribute__((always_inline)) uint64_t np_cost_fast_time(struct np_thread *t)
{
#if NP_PORT_HOOKS_MASK
    return np_port_ticks_less_masked(&t->off);
#else
    return np_thread_less_off(t, np_port_counter);
#endif
}

/* The thread's running time: raw ticks less the time it was switched out. */
static inline __attribute__((always_inline)) uint64_t np_thread_time(struct np_thread *t)
{
    if (__builtin_expect(np_port_switched(), 0))
        return np_thread_time_resync(t);
    return np_thread_less_off(t, np_port_ticks);
}

/* Fibonacci hashing: the top bits of the product spread addresses that
 * differ only in their low bits (functions side by side) over the table. */
static inline __attribute__((always_inline)) uint32_t np_cost_hash(const struct np_cost_state *c, uint64_t fn)
{
#if NP_ADDR_BITS > 32
    return (uint32_t)((fn * 0x9e3779b97f4a7c15ull) >> c->shift);
#else /* a 32-bit product on a 32-bit CPU (a name's bit 63 left out) */
    return ((uint32_t)fn * 0x9e3779b9u) >> c->shift;
#endif
}

/* NP_F_COST_SLOW from the thread's state (with the thread busy). */
static inline void np_cost_sync_flags(struct np_thread *t)
{
    if (t->cost.lost_open || !np_port_counter_is_clock())
        t->flags |= NP_F_COST_SLOW;
    else
        t->flags &= ~NP_F_COST_SLOW;
}

/* Calls open now. */
static inline uint32_t np_cost_depth(const struct np_cost_state *c)
{
    return (uint32_t)(c->top - c->frames);
}

/* The time of the thread's last entry or exit: the switch resync never
 * lets the thread's time go back before it. */
static inline uint64_t np_cost_now_floor(const struct np_cost_state *c)
{
    uint64_t t = c->last;
    if (c->top > c->frames && (int64_t)(c->top[-1].start - t) > 0)
        t = c->top[-1].start;
    return t;
}

/* Pushes the call of slot S at time NOW onto F, the top (there is room). */
static inline __attribute__((always_inline)) void
np_cost_push(struct np_cost_state *c, struct np_cost_fn *s, struct np_cost_frame *f, uint64_t now)
{
    f->start = now;
    f->child = 0;
    f->ref = (uintptr_t)s;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    c->top = f + 1; /* the call counts from here */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->active++;
    /* no c->last: the newest time is this frame's start (np_cost_now_floor) */
}

/* *P += V: the port's 64-bit add where it has one. */
#ifdef NP_PORT_ADD64
#define np_cost_add(p, v) NP_PORT_ADD64(p, v)
#else
#define np_cost_add(p, v) (*(p) += (v))
#endif

/* Pops F, the innermost call, at time NOW: adds its duration DUR and its
 * self time SELF to its function's sums. */
static inline __attribute__((always_inline)) void
np_cost_pop_add(struct np_cost_state *c, struct np_cost_frame *f, uint64_t dur, uint64_t self, uint64_t now)
{
    uint64_t ref = f->ref; /* not closing: only this marks it */
#if NP_PORT_HOSTED
    f->ref = ref | NP_COST_CLOSING;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
    /* no jump leaves a hook on a target (np_cost_unwind is a host's): no
     * mark, and the time stored first, which frees its registers */
    c->last = now;
#endif
    struct np_cost_fn *s = (struct np_cost_fn *)(uintptr_t)ref;
    np_cost_add(&s->calls, 1);
    if (--s->active == 0)
        np_cost_add(&s->total, dur);
    /* branches, not conditional moves: after the first calls they are
     * rarely taken, and then there is no store */
    if (dur < s->min)
        s->min = dur;
    if (dur > s->max)
        s->max = dur;
    np_cost_add(&s->self, self);
    np_cost_add(&f[-1].child, dur); /* the caller's, or the spare frame below the first */
#if NP_PORT_HOSTED
    c->last = now;
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    c->top = f;
}

/* Pops F, the innermost call, at time NOW. */
static inline __attribute__((always_inline)) void
np_cost_pop(struct np_cost_state *c, struct np_cost_frame *f, uint64_t now)
{
    uint64_t dur = (int64_t)(now - f->start) > 0 ? now - f->start : 0;
    np_cost_pop_add(c, f, dur, dur > f->child ? dur - f->child : 0, now);
}

static inline __attribute__((always_inline)) void
np_cost_enter(struct np_thread *t, uint64_t fn)
{
    struct np_cost_state *c = &t->cost;
    struct np_cost_frame *f = c->top;
    struct np_cost_fn *s = &c->tab[np_cost_hash(c, fn)];

    if (__builtin_expect(c->lost_open != 0 || f == c->end, 0) ||
        (__builtin_expect(s->fn != fn, 0) && !(s = np_cost_slot(t, fn)))) {
        if (c->lost_open++ == 0)
            np_cost_sync_flags(t);
        c->lost++;
        return;
    }
    /* read after a merge: the merge's time is the caller's */
    np_cost_push(c, s, f, np_thread_time(t));
}

static inline __attribute__((always_inline)) void
np_cost_exit(struct np_thread *t)
{
    struct np_cost_state *c = &t->cost;
    struct np_cost_frame *f = c->top;

    if (__builtin_expect(c->lost_open != 0, 0)) {
        if (--c->lost_open == 0)
            np_cost_sync_flags(t);
        c->lost++;
        return;
    }
    if (__builtin_expect(f == c->frames, 0))
        return; /* the exit of a call entered before measuring began */
    np_cost_pop(c, f - 1, np_thread_time(t));
}

/* The common case alone, for the hooks' leaf path, which checks first that
 * NP_F_COST_SLOW is clear (no dropped call open, the CPU's counter as the
 * clock): room on the stack, the function in its first slot, no switch to
 * take off. Returns 0, having changed nothing, when the full path
 * (np_cost_enter, np_cost_exit) must run instead. */
static inline __attribute__((always_inline)) int
np_cost_enter_fast(struct np_thread *t, uint64_t fn)
{
    struct np_cost_state *c = &t->cost;
    struct np_cost_frame *f = c->top;
    struct np_cost_fn *s = &c->tab[np_cost_hash(c, fn)];
    if (__builtin_expect((f == c->end) | (s->fn != fn), 0) || __builtin_expect(np_port_switched(), 0))
        return 0;
    np_cost_push(c, s, f, np_cost_fast_time(t));
    return 1;
}

static inline __attribute__((always_inline)) int
np_cost_exit_fast(struct np_thread *t)
{
    struct np_cost_state *c = &t->cost;
    struct np_cost_frame *f = c->top - 1;
    if (__builtin_expect(f + 1 == c->frames, 0) || __builtin_expect(np_port_switched(), 0))
        return 0;
#if NP_PORT_OS_THREADS
    uint64_t off = t->off, raw = np_port_counter();
#else
    uint64_t off = 0, raw = np_cost_fast_time(t);
#endif
    uint64_t base = f->start + off, dur = raw - base;
#if NP_PORT_HOOKS_MASK
    uint64_t self = dur - f->child; /* (a target's: the fewest instructions) */
#else
    /* the rest is added up first, so that one subtraction stands between
     * the counter's read (slow) and the sums, which wait for it */
    uint64_t self = raw - (base + f->child);
#endif
    if (__builtin_expect((int64_t)self < 0, 0))
        return 0; /* a clock that went back, or more time in callees than in
                     the call: the full path's clamps */
    np_cost_pop_add(c, f, dur, self, raw - off);
    return 1;
}

#if !NP_PORT_HOOKS_MASK
/* Either, with the thread busy first: the checks read what a signal
 * handler's hooks may change (a merge moves the slots). A target masks
 * interrupts instead (hooks.c). */
static inline __attribute__((always_inline)) int np_cost_fast_busy(struct np_thread *t, int exit, uint64_t fn)
{
    uint32_t f = t->hot;
    t->flags = f | NP_F_BUSY; /* the flags alone (the hot word's low half) */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int done = exit ? np_cost_exit_fast(t) : np_cost_enter_fast(t, fn);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags = f;
    return done;
}
#endif

#endif
