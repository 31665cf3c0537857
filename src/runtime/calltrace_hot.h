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
    uint32_t i = c->top, d = c->depth;
    uint32_t next = i + 1;
    if (__builtin_expect(next == c->cap, 0)) {
        next = 0;
        c->wraps++;
    }
    c->top = next;
    c->depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    c->buf[i].w0 = fn;
    c->buf[i].w1 = NP_CODE_ADDR(site) |
                   (uint64_t)(d < NP_DEPTH_MAX ? d : NP_DEPTH_MAX) << NP_ADDR_BITS;
}

static inline __attribute__((always_inline)) void
np_ct_stack_enter(struct np_thread *t, uint64_t fn, const void *site)
{
    struct np_calltrace_state *c = &t->ct;
    uint32_t i = c->top;
    if (__builtin_expect(i < c->cap, 1)) {
        c->top = i + 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        c->buf[i].w0 = fn;
        c->buf[i].w1 = NP_CODE_ADDR(site) |
                       (uint64_t)(i < NP_DEPTH_MAX ? i : NP_DEPTH_MAX) << NP_ADDR_BITS;
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
    else if (c->top)
        c->top--;
}

#endif
