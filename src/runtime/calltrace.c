/* calltrace.c - the call trace API: set-up and the dump. The work on each
 * call is in calltrace_hot.h; reading, clearing and switching the trace
 * in calltrace_query.c, an object apart (a firmware that only dumps does
 * not carry it). */
#include "calltrace_hot.h"
#include "hooks.h"
#include "report.h"

#define REC sizeof(np_trace_record)
_Static_assert(sizeof(np_trace_record) == NP_CALLTRACE_RECORD_SIZE, "record size");

#if NP_CALLTRACE_ARGS
NP_PORT_TLS struct np_ct_pending np_ct_args;

/* The port's -pg hook: the arguments of the call whose entry comes next. */
static void note_args(uintptr_t self, const uintptr_t *regs)
{
    struct np_ct_pending *a = &np_ct_args;
    for (int i = 0; i < 4; i++)
        a->regs[i] = regs[i];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    a->fn = self;
}
#endif

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
                            REC == 16   ? NP_MSG("buffer too small: need at least 16 bytes (one record)")
                            : REC == 48 ? NP_MSG("buffer too small: need at least 48 bytes (one record)")
                            : REC == 32 ? NP_MSG("buffer too small: need at least 32 bytes (one record)")
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
#if NP_CALLTRACE_ARGS
    np_port_args_start(note_args);
#endif
    np_thread_unlock(t);
    return NP_OK;
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
    uint32_t n = np_ct_held(c);
    NP_REPORT(NP_REP_CALLTRACE_HEAD, c->mode == NP_CALLTRACE_STACK, (uint64_t)t->tid, NP_RV(lr), n, np_ct_lost_of(c));
    for (uint32_t i = 0; i < n; i++) {
        np_calltrace_entry e;
        np_ct_decode(np_ct_nth_newest(c, i), &e);
#if NP_CALLTRACE_ARGS
        if (e.has_args) {
            NP_REPORT(NP_REP_CALLTRACE_CALL, e.depth, NP_RV(e.fn), (uint64_t)e.named, NP_RV(e.site), 1,
                      (uint64_t)e.args[0], (uint64_t)e.args[1], (uint64_t)e.args[2], (uint64_t)e.args[3]);
            continue;
        }
#endif
        NP_REPORT(NP_REP_CALLTRACE_CALL, e.depth, NP_RV(e.fn), (uint64_t)e.named, NP_RV(e.site));
    }
    np_thread_unlock(t);
    return NP_OK;
}
