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

/* NP_CALLTRACE_ARGS: the arguments of FN's call into R, when a hook holds
 * them (np_ct_args); R says whether it has them. */
static inline __attribute__((always_inline)) void np_ct_args_put(np_trace_record *r, uint64_t fn)
{
#if NP_CALLTRACE_ARGS
    struct np_ct_pending *a = &np_ct_args;
#if NP_ADDR_BITS > 32
    int have = a->fn == fn; /* (FN is never 0) */
    if (have)
        r->w0 |= NP_REC_ARGS;
#else
    int have = a->fn && a->fn - (fn & ~1ull) < NP_CT_ARGS_REACH; /* (a Thumb function's bit 0) */
    r->has_args = (uint32_t)have;
#endif
    a->fn = 0;
    if (have)
        for (int i = 0; i < 4; i++)
            r->args[i] = (__typeof__(r->args[0]))a->regs[i];
#else
    (void)r, (void)fn;
#endif
}

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
    np_ct_args_put(p, fn);
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
        np_ct_args_put(p, fn);
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

/* ---- reading (calltrace.c's dump, calltrace_query.c) ---- */

/* Record I counted from the newest (0). */
static inline const np_trace_record *np_ct_nth_newest(const struct np_calltrace_state *c, uint32_t i)
{
    uint32_t top = np_ct_top(c);
    if (c->mode == NP_CALLTRACE_STACK)
        return &c->buf[top - 1 - i];
    return &c->buf[(top + c->cap - 1 - i) % c->cap];
}

static inline uint32_t np_ct_held(const struct np_calltrace_state *c)
{
    if (c->mode == NP_CALLTRACE_STACK)
        return np_ct_top(c);
    return np_ct_wraps(c) ? c->cap : np_ct_top(c);
}

static inline uint64_t np_ct_lost_of(const struct np_calltrace_state *c)
{
    if (c->mode == NP_CALLTRACE_STACK)
        return c->overflow;
    uint64_t w = np_ct_wraps(c);
    return w ? (w - 1) * c->cap + np_ct_top(c) : 0;
}

static inline void np_ct_decode(const np_trace_record *r, np_calltrace_entry *e)
{
#if NP_ADDR_BITS > 32
    e->fn = (const void *)(uintptr_t)(r->w0 & NP_ADDR_MASK);
    e->named = (r->w0 & NP_REC_NAMED) != 0;
    e->site = (const void *)(uintptr_t)(r->w1 & NP_ADDR_MASK);
    e->depth = (uint32_t)(r->w1 >> NP_ADDR_BITS) - 1;
#if NP_CALLTRACE_ARGS
    e->has_args = (r->w0 & NP_REC_ARGS) != 0;
#endif
#else
    e->fn = (const void *)(uintptr_t)r->fn;
    e->named = (r->depth & ~NP_DEPTH_MAX) != 0;
    e->site = (const void *)(uintptr_t)r->site;
    e->depth = (r->depth & NP_DEPTH_MAX) - 1;
#if NP_CALLTRACE_ARGS
    e->has_args = r->has_args != 0;
#endif
#endif
#if NP_CALLTRACE_ARGS
    for (int i = 0; i < 4; i++)
        e->args[i] = e->has_args ? (uintptr_t)r->args[i] : 0;
#endif
}

#endif
