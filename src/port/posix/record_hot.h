/* record_hot.h - what the recorder does on each entry and exit: one raw
 * record (address | kind, raw tick) appended to the thread's buffer. Runs
 * in the hooks' full path with the thread busy, so a signal handler that
 * interrupts it records nothing. The position is published with a release
 * store (a plain store on x86-64 and a store-release on AArch64) so that a
 * final flush on another thread reads only whole records. Everything else
 * (a switch seen, a full buffer, lost events) is np_rec_slow's. */
#ifndef NP_RECORD_HOT_H
#define NP_RECORD_HOT_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"
#include "../port.h"

static inline __attribute__((always_inline)) void np_rec_event(struct np_thread *t, uint64_t w0)
{
    struct np_rec_stream *s = t->rec;
    np_raw *p = s->pos;
    if (__builtin_expect(p >= s->end || np_port_switched(), 0)) {
        np_rec_slow(t, w0);
        return;
    }
    p->w0 = w0;
    p->w1 = np_port_wall_ticks(); /* the recording clock: wall time, as the format wants */
    __atomic_store_n(&s->pos, p + 1, __ATOMIC_RELEASE);
}

/* A hook of the recorder alone begins: the sampler told first which it
 * is (a sample that finds the thread busy is that function's), then the
 * thread busy; and ends. */
static inline __attribute__((always_inline)) struct np_rec_stream *np_rec_hook_begin(struct np_thread *t, uint64_t w0,
                                                                                    const void *site)
{
    struct np_rec_stream *s = t->rec;
    s->smp.hook_fn = w0;
    s->smp.hook_site = site;
    s->smp.hook_fp = NP_PORT_FRAME();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return s;
}

static inline __attribute__((always_inline)) void np_rec_hook_end(struct np_thread *t)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
}

/* A packed group at P: its head H at the time TICK, then SLOTS (1 to 3)
 * records of the registers REGS as the hook saved them, unrolled; a last
 * odd word's partner is the register after it, which the writer does not
 * read. */
static inline __attribute__((always_inline)) void np_rec_packed_at(np_raw *p, uint64_t h, uint64_t tick,
                                                                  const uint64_t *regs, unsigned slots)
{
    p[0].w0 = h;
    p[0].w1 = tick;
    p[1].w0 = regs[0];
    p[1].w1 = regs[1];
    if (slots > 1) {
        p[2].w0 = regs[2];
        p[2].w1 = regs[3];
        if (slots > 2) {
            p[3].w0 = regs[4];
            p[3].w1 = regs[5];
        }
    }
}

/* The recorder alone on the thread (the hooks' own path, hooks.c's
 * rec_only, and a -pg thunk's, hooks_leaf.c): W0 at the time READ gives,
 * with the thread busy. False, having written nothing, when the buffer is
 * full or a switch is to be noted: the full path's work. */
static inline __attribute__((always_inline)) bool np_rec_append(struct np_thread *t, uint64_t w0, const void *site,
                                                                uint64_t (*read)(void))
{
    struct np_rec_stream *s = np_rec_hook_begin(t, w0, site);
    np_raw *p = s->pos;
    bool ok = p < s->end && !np_port_switched();
    if (ok) {
        p->w0 = w0;
        p->w1 = read();
        __atomic_store_n(&s->pos, p + 1, __ATOMIC_RELEASE);
    }
    np_rec_hook_end(t);
    return ok;
}

/* The same for a call whose arguments a packed spec asks for
 * (hooks_leaf.c, -A): the entry W0, then the group of head H and the
 * registers REGS in SLOTS records, published together; false, having
 * written nothing, also where the slow path has more to put first (a
 * sample or a loss waiting). */
static inline __attribute__((always_inline)) bool np_rec_append_packed(struct np_thread *t, uint64_t w0,
                                                                       const void *site, uint64_t (*read)(void),
                                                                       uint64_t h, const uint64_t *regs,
                                                                       unsigned slots)
{
    struct np_rec_stream *s = np_rec_hook_begin(t, w0, site);
    np_raw *p = s->pos;
    bool ok = (intptr_t)((uintptr_t)s->end - (uintptr_t)p) >= (intptr_t)((2 + (size_t)slots) * sizeof *p) &&
              !np_port_switched() && !s->smp.pending && !__atomic_load_n(&s->lost_n, __ATOMIC_RELAXED);
    if (ok) {
        uint64_t now = read();
        p[0].w0 = w0;
        p[0].w1 = now;
        np_rec_packed_at(p + 1, h, now, regs, slots);
        __atomic_store_n(&s->pos, p + 2 + slots, __ATOMIC_RELEASE);
    }
    np_rec_hook_end(t);
    return ok;
}

/* Whether a group of N records fits after the entry ENTRY this thread
 * just wrote, at P: room left (none without a buffer: END is NULL), the
 * entry the last record (at a buffer's first record P[-1] is in its
 * header, which holds no code address), and no sample or loss waiting to
 * go in first. */
static inline __attribute__((always_inline)) bool np_rec_after_entry(const struct np_rec_stream *s,
                                                                    const np_raw *p, size_t n, uint64_t entry)
{
    /* (a group may have passed the fast path's end: the room is signed) */
    return (intptr_t)((uintptr_t)s->end - (uintptr_t)p) >= (intptr_t)(n * sizeof *p) && p[-1].w0 == entry &&
           !s->smp.pending && !__atomic_load_n(&s->lost_n, __ATOMIC_RELAXED);
}

/* A group's head H and N - 1 records of WORDS (two a record, NWORDS of
 * them, the last record's second word 0 when odd) right after the entry
 * ENTRY this thread just wrote, busy: in place, with the entry's time
 * rather than another clock read. False when that cannot be done here
 * (another buffer, a sample or a loss waiting to go in): then
 * np_rec_put_values. */
static inline __attribute__((always_inline)) bool np_rec_put_after_entry(struct np_thread *t, uint64_t h,
                                                                        const uint64_t *words, size_t nwords,
                                                                        uint64_t entry)
{
    struct np_rec_stream *s = t->rec;
    np_raw *p = s->pos;
    size_t n = 1 + (nwords + 1) / 2;
    if (!np_rec_after_entry(s, p, n, entry))
        return false;
    p[0].w0 = h;
    p[0].w1 = p[-1].w1;
    for (size_t i = 0; i < nwords; i += 2) {
        p[1 + i / 2].w0 = words[i];
        p[1 + i / 2].w1 = i + 1 < nwords ? words[i + 1] : 0;
    }
    __atomic_store_n(&s->pos, p + n, __ATOMIC_RELEASE);
    return true;
}

/* The same for a packed group (record_values.c, on every call `record -A`
 * names): SLOTS (1 to 3) records of the registers REGS (np_rec_packed_at). */
static inline __attribute__((always_inline)) bool np_rec_put_packed(struct np_thread *t, uint64_t h,
                                                                   const uint64_t *regs, unsigned slots,
                                                                   uint64_t entry)
{
    struct np_rec_stream *s = t->rec;
    np_raw *p = s->pos;
    if (!np_rec_after_entry(s, p, 1 + (size_t)slots, entry))
        return false;
    np_rec_packed_at(p, h, p[-1].w1, regs, slots);
    __atomic_store_n(&s->pos, p + 1 + slots, __ATOMIC_RELEASE);
    return true;
}

#endif
