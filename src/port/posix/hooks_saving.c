/* hooks_saving.c - function cost's leaf path for a caller that has no
 * register to spare: the fast path of a -pg thunk (port/posix/mcount.c),
 * at a function's start (every argument register live) and at its return
 * (the return value's). Each saves what it changes (NP_PORT_SAVES_ALL,
 * the port's) and calls nothing, and is built without vector registers,
 * which it would not save; the caller has checked that cost measurement
 * alone runs on the thread (the hooks' NP_COST_MASK test, on the hot word
 * and the process-wide flags). Returns 1, or 0 having changed nothing:
 * the caller then takes the hooks. */
#include "../../runtime/cost_hot.h"
#include "../../runtime/hooks.h"
#include "mcount.h"

#if defined(NP_PORT_SAVES_ALL) && NP_PORT_HOSTED
#define NP_SAVING NP_HOOKS_TEXT NP_PORT_SAVES_ALL __attribute__((used, no_sanitize_address, no_sanitize_thread, \
                                                                 no_sanitize_undefined))

#if NP_HOOKS_MECHANISMS & NP_MECH_COST
/* with the thread busy, as the hooks' leaf path runs it */
#define NP_SAVING_COST(call)                        \
    struct np_thread *t = np_cur;                   \
    uint32_t f = t->hot;                            \
    t->flags = f | NP_F_BUSY;                       \
    __atomic_signal_fence(__ATOMIC_SEQ_CST);        \
    int done = (call);                              \
    __atomic_signal_fence(__ATOMIC_SEQ_CST);        \
    t->flags = f;                                   \
    return done

NP_SAVING int np_hooks_cost_enter_saving(uint64_t fn) { NP_SAVING_COST(np_cost_enter_fast(t, fn)); }
NP_SAVING int np_hooks_cost_exit_saving(void) { NP_SAVING_COST(np_cost_exit_fast(t)); }
#else
NP_SAVING int np_hooks_cost_enter_saving(uint64_t fn)
{
    (void)fn;
    return 0;
}
NP_SAVING int np_hooks_cost_exit_saving(void) { return 0; }
#endif
#endif
