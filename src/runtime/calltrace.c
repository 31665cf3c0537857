/* calltrace.c - the call trace API: set-up, state and the dump. The work on
 * each call is in calltrace_hot.h. */
#include "calltrace_hot.h"
#include "hooks.h"
#include "report.h"

#define REC sizeof(np_trace_record)
_Static_assert(sizeof(np_trace_record) == NP_CALLTRACE_RECORD_SIZE, "record size");

int np_calltrace_lines(size_t size)
{
    size_t n = size / REC;
    return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

size_t np_calltrace_buffer_size(int lines)
{
    return lines > 0 ? (size_t)lines * REC : 0;
}

int np_calltrace_init(void *buf, size_t size, np_calltrace_mode mode)
{
    struct np_thread *t = np_self();
    if (t->flags & NP_F_CT_INIT)
        return np_error(NP_EALREADY, "np_calltrace_init", "already initialised on this thread (np_calltrace_shutdown first)");
    if (!np_hooks_have(NP_MECH_CALLTRACE))
        return np_error(NP_EINVAL, "np_calltrace_init", "this library was built without the call trace (link libnanoprof or libnanoprof-calltrace)");
    if (!buf)
        return np_error(NP_EINVAL, "np_calltrace_init", "buffer is NULL");
    if (mode != NP_CALLTRACE_STACK && mode != NP_CALLTRACE_LOG)
        return np_error(NP_EINVAL, "np_calltrace_init", "mode must be NP_CALLTRACE_STACK or NP_CALLTRACE_LOG");
    if (((uintptr_t)buf & (_Alignof(np_trace_record) - 1)) != 0)
        return np_error_msg(NP_EINVAL, NP_MSG("np_calltrace_init"),
                            _Alignof(np_trace_record) == 8 ? NP_MSG("buffer must be 8-byte aligned")
                                                           : NP_MSG("buffer must be 4-byte aligned"));
    if (size < REC || size / REC > 0xffffffffu)
        return np_error_msg(NP_ESMALL, NP_MSG("np_calltrace_init"),
                            REC == 16 ? NP_MSG("buffer too small: need at least 16 bytes (one record)")
                                      : NP_MSG("buffer too small: need at least 12 bytes (one record)"));
    if (!np_api_enter(t, "np_calltrace_init"))
        return NP_EBUSY;
    struct np_calltrace_state *c = &t->ct;
    c->buf = c->pos = buf;
    c->cap = (uint32_t)(size / REC);
    c->end = c->buf + c->cap;
    c->mode = mode;
    c->depth = c->overflow = 0;
    c->wraps = c->wraps_hi = 0;
    t->flags &= ~NP_F_CT_LOG;
    t->flags |= NP_F_CT_INIT | NP_F_CT_ON | (mode == NP_CALLTRACE_LOG ? NP_F_CT_LOG : 0);
    np_thread_unlock(t);
    return NP_OK;
}

int np_calltrace_shutdown(void)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_CT_INIT))
        return np_error(NP_ENOTINIT, "np_calltrace_shutdown", "call trace not initialised on this thread");
    if (!np_api_enter(t, "np_calltrace_shutdown"))
        return NP_EBUSY;
    t->flags &= ~(NP_F_CT_INIT | NP_F_CT_ON);
    t->ct.buf = t->ct.pos = t->ct.end = 0;
    t->ct.cap = 0;
    np_thread_unlock(t);
    return NP_OK;
}

static int set_on(const char *who, int on) /* WHO: an NP_MSG value */
{
    return np_switch_mechanism(who, NP_F_CT_INIT, NP_F_CT_ON, on,
                               NP_MSG("call trace not initialised on this thread"));
}

int np_calltrace_enable(void) { return set_on(NP_MSG("np_calltrace_enable"), 1); }
int np_calltrace_disable(void) { return set_on(NP_MSG("np_calltrace_disable"), 0); }
int np_calltrace_restore(int previous) { return set_on(NP_MSG("np_calltrace_restore"), previous != 0); }

int np_calltrace_clear(void)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_CT_INIT))
        return np_error(NP_ENOTINIT, "np_calltrace_clear", "call trace not initialised on this thread");
    if (!np_api_enter(t, "np_calltrace_clear"))
        return NP_EBUSY;
    /* The exits of calls cleared now arrive with the stack empty, where an
     * exit does nothing. */
    t->ct.pos = t->ct.buf;
    t->ct.overflow = 0;
    t->ct.wraps = t->ct.wraps_hi = 0;
    np_thread_unlock(t);
    return NP_OK;
}

/* Record I counted from the newest (0). */
static const np_trace_record *nth_newest(const struct np_calltrace_state *c, uint32_t i)
{
    uint32_t top = np_ct_top(c);
    if (c->mode == NP_CALLTRACE_STACK)
        return &c->buf[top - 1 - i];
    return &c->buf[(top + c->cap - 1 - i) % c->cap];
}

static uint32_t held(const struct np_calltrace_state *c)
{
    if (c->mode == NP_CALLTRACE_STACK)
        return np_ct_top(c);
    return np_ct_wraps(c) ? c->cap : np_ct_top(c);
}

static uint64_t lost_of(const struct np_calltrace_state *c)
{
    if (c->mode == NP_CALLTRACE_STACK)
        return c->overflow;
    uint64_t w = np_ct_wraps(c);
    return w ? (w - 1) * c->cap + np_ct_top(c) : 0;
}

static void decode(const np_trace_record *r, np_calltrace_entry *e)
{
#if NP_ADDR_BITS > 32
    e->fn = (const void *)(uintptr_t)(r->w0 & NP_ADDR_MASK);
    e->named = (r->w0 & NP_REC_NAMED) != 0;
    e->site = (const void *)(uintptr_t)(r->w1 & NP_ADDR_MASK);
    e->depth = (uint32_t)(r->w1 >> NP_ADDR_BITS) - 1;
#else
    e->fn = (const void *)(uintptr_t)r->fn;
    e->named = (r->depth & ~NP_DEPTH_MAX) != 0;
    e->site = (const void *)(uintptr_t)r->site;
    e->depth = (r->depth & NP_DEPTH_MAX) - 1;
#endif
}

int np_calltrace_read(np_calltrace_entry *out, int max)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_CT_INIT))
        return np_error(NP_ENOTINIT, "np_calltrace_read", "call trace not initialised on this thread");
    if (!out || max < 0)
        return np_error(NP_EINVAL, "np_calltrace_read", "output array is NULL or max is negative");
    uint32_t n = held(&t->ct);
    if ((uint32_t)max < n)
        n = (uint32_t)max;
    for (uint32_t i = 0; i < n; i++)
        decode(nth_newest(&t->ct, i), &out[i]);
    return (int)n;
}

uint64_t np_calltrace_lost(void)
{
    struct np_thread *t = np_self();
    return (t->flags & NP_F_CT_INIT) ? lost_of(&t->ct) : 0;
}

__attribute__((noinline)) int np_calltrace_dump(void)
{
    struct np_thread *t = np_self();
    const void *lr = __builtin_return_address(0);
    if (!(t->flags & NP_F_CT_INIT))
        return np_error(NP_ENOTINIT, "np_calltrace_dump", "call trace not initialised on this thread");
    /* Busy while dumping: the sink may be instrumented code. */
    if (!np_api_enter(t, "np_calltrace_dump"))
        return NP_EBUSY;
    const struct np_calltrace_state *c = &t->ct;
    uint32_t n = held(c);
    NP_REPORT(NP_REP_CALLTRACE_HEAD, c->mode == NP_CALLTRACE_STACK, (uint64_t)t->tid, NP_RV(lr), n, lost_of(c));
    for (uint32_t i = 0; i < n; i++) {
        np_calltrace_entry e;
        decode(nth_newest(c, i), &e);
        NP_REPORT(NP_REP_CALLTRACE_CALL, e.depth, NP_RV(e.fn), (uint64_t)e.named, NP_RV(e.site));
    }
    np_thread_unlock(t);
    return NP_OK;
}
