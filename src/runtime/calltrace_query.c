/* calltrace_query.c - the call trace read, cleared and switched on and
 * off (nanoprof/calltrace.h): an object apart from calltrace.c, so that a
 * firmware that only dumps does not carry it. */
#include "calltrace_hot.h"
#include "hooks.h"
#include "report.h"

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

int np_calltrace_read(np_calltrace_entry *out, int max)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_CT_INIT))
        return np_error(NP_ENOTINIT, "np_calltrace_read", "call trace not initialised on this thread");
    if (!out || max < 0)
        return np_error(NP_EINVAL, "np_calltrace_read", "output array is NULL or max is negative");
    uint32_t n = np_ct_held(&t->ct);
    if ((uint32_t)max < n)
        n = (uint32_t)max;
    for (uint32_t i = 0; i < n; i++)
        np_ct_decode(np_ct_nth_newest(&t->ct, i), &out[i]);
    return (int)n;
}

uint64_t np_calltrace_lost(void)
{
    struct np_thread *t = np_self();
    return (t->flags & NP_F_CT_INIT) ? np_ct_lost_of(&t->ct) : 0;
}
