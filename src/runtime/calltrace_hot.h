/* calltrace_hot.h - what the call trace does on each entry and exit. Inline:
 * the hooks compile these straight into __cyg_profile_func_enter/exit.
 *
 * These need no busy flag: a slot is reserved (the index moved) before it
 * is written, so a signal handler that runs instrumented code in between
 * takes the next slot and leaves the index where it found it, and every
 * counter it touches it puts back (each entry has its exit). The signal
 * fences keep the compiler from moving the writes before the reservation. */
#ifndef NP_CALLTRACE_HOT_H
#define NP_CALLTRACE_HOT_H

#include "thread.h"

static inline __attribute__((always_inline)) void
np_ct_log_enter(struct np_thread *t, uint64_t fn, const void *site)
{
    struct np_calltrace_state *c = &t->ct;
    np_trace_record *p = c->pos;
    if (__builtin_expect(p == c->end, 0)) {
        p = c->buf;
        if (++c->wraps == 0)
            c->wraps_hi++;
#ifdef NP_DEPTH_AT_WRAP
        /* a round adds at most its records to the depth: below 2^31 */
        if (c->depth > NP_DEPTH_AT_WRAP)
            c->depth = NP_DEPTH_AT_WRAP;
#endif
    }
    c->pos = p + 1;
    uint32_t level = c->depth + 1;
    c->depth = level;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    np_ct_record_put(p, fn, site, level);
}

static inline __attribute__((always_inline)) void
np_ct_stack_enter(struct np_thread *t, uint64_t fn, const void *site)
{
    struct np_calltrace_state *c = &t->ct;
    np_trace_record *p = c->pos;
    if (__builtin_expect(p != c->end, 1)) {
        c->pos = p + 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        np_ct_record_put(p, fn, site, (uint32_t)(p - c->buf) + 1);
    } else {
        c->overflow++;
    }
}

static inline __attribute__((always_inline)) void
np_ct_log_exit(struct np_thread *t)
{
    struct np_calltrace_state *c = &t->ct;
    if (c->depth)
        c->depth--;
}

static inline __attribute__((always_inline)) void
np_ct_stack_exit(struct np_thread *t)
{
    struct np_calltrace_state *c = &t->ct;
    if (c->overflow)
        c->overflow--;
    else if (c->pos != c->buf)
        c->pos--;
}

#endif
