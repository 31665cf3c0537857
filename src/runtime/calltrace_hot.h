/* calltrace_hot.h - what the call trace does on each entry and exit. Inline:
 * the hooks compile these straight into __cyg_profile_func_enter/exit. */
#ifndef NP_CALLTRACE_HOT_H
#define NP_CALLTRACE_HOT_H

#include "thread.h"

static inline __attribute__((always_inline)) void
np_ct_enter(struct np_thread *t, uint64_t fn, const void *site)
{
    struct np_calltrace_state *c = &t->ct;
    uint64_t s = (uint64_t)(uintptr_t)site & NP_ADDR_MASK;

    if (c->mode == NP_CALLTRACE_LOG) {
        uint32_t i = c->top;
        uint64_t d = c->depth < NP_DEPTH_MAX ? c->depth : NP_DEPTH_MAX;
        c->buf[i].w0 = fn;
        c->buf[i].w1 = s | d << NP_ADDR_BITS;
        c->depth++;
        c->top = (i + 1 == c->cap) ? 0 : i + 1;
        c->total++;
    } else if (__builtin_expect(c->top < c->cap, 1)) {
        uint32_t i = c->top;
        c->buf[i].w0 = fn;
        c->buf[i].w1 = s | (uint64_t)(i < NP_DEPTH_MAX ? i : NP_DEPTH_MAX) << NP_ADDR_BITS;
        c->top = i + 1;
    } else {
        c->overflow++;
    }
}

static inline __attribute__((always_inline)) void
np_ct_exit(struct np_thread *t)
{
    struct np_calltrace_state *c = &t->ct;

    if (c->mode == NP_CALLTRACE_LOG) {
        if (c->depth)
            c->depth--;
    } else if (c->overflow) {
        c->overflow--;
    } else if (c->top) {
        c->top--;
    }
}

#endif
