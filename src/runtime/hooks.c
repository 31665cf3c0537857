/* hooks.c - the entry and exit hooks the compiler inserts, and the manual
 * markers, dispatched to the mechanisms this thread has turned on.
 *
 * The same file builds each library: NP_HOOKS_MECHANISMS says which
 * mechanisms the hooks call (the all-in-one library checks the thread's
 * flags for each; a single-mechanism library calls only its own), the way
 * the SDK linked libos.CALLTRACE.a or libos.FUNCTIONCOST.a. */
#include "calltrace_hot.h"
#include "cost_hot.h"
#include "hooks.h"

#ifndef NP_HOOKS_MECHANISMS
#define NP_HOOKS_MECHANISMS (NP_MECH_CALLTRACE | NP_MECH_COST | NP_MECH_USER)
#endif

/* Lets the init functions refuse a mechanism this library's hooks do not
 * call, instead of silently recording nothing. */
const unsigned np_hooks_mechanisms = NP_HOOKS_MECHANISMS;

#if defined(NP_INTERPOSE_SETJMP)
extern const char np_setjmp_linked;
__attribute__((used)) static const char *const keep_setjmp = &np_setjmp_linked;
#endif

#if NP_HOOKS_MECHANISMS & NP_MECH_USER
static np_hook_fn user_enter, user_exit;
static void *user_ctx;
/* Read on every hook; written rarely (np_hooks_set). Relaxed atomics keep
 * the read a plain load. */
static int user_on;

void np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx)
{
    __atomic_store_n(&user_on, 0, __ATOMIC_SEQ_CST);
    user_enter = enter;
    user_exit = exit;
    user_ctx = ctx;
    __atomic_store_n(&user_on, enter || exit, __ATOMIC_SEQ_CST);
}
#define NP_USER_ON() __atomic_load_n(&user_on, __ATOMIC_RELAXED)
#else
void np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx)
{
    (void)enter, (void)exit, (void)ctx;
}
#define NP_USER_ON() 0
#endif

static inline __attribute__((always_inline)) void
np_on_enter(uint64_t fn, const void *site)
{
    struct np_thread *t = np_self();
    uint32_t f = t->flags;

    if (__builtin_expect(f & NP_F_BUSY, 0)) {
        t->dropped++;
        return;
    }
    if (!(f & NP_F_RECORDING) && !NP_USER_ON())
        return;
    t->flags = f | NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    if (f & NP_F_CT_ON)
        np_ct_enter(t, fn, site);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
    if (f & NP_F_COST_ON)
        np_cost_enter(t, fn);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_USER
    if (NP_USER_ON() && user_enter)
        user_enter(user_ctx, (const void *)(uintptr_t)(fn & NP_ADDR_MASK), site);
#endif
    (void)fn, (void)site;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
}

static inline __attribute__((always_inline)) void
np_on_exit(uint64_t fn, const void *site)
{
    struct np_thread *t = np_self();
    uint32_t f = t->flags;

    if (__builtin_expect(f & NP_F_BUSY, 0)) {
        t->dropped++;
        return;
    }
    if (!(f & NP_F_RECORDING) && !NP_USER_ON())
        return;
    t->flags = f | NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    if (f & NP_F_CT_ON)
        np_ct_exit(t);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
    if (f & NP_F_COST_ON)
        np_cost_exit(t, fn & NP_ADDR_MASK);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_USER
    if (NP_USER_ON() && user_exit)
        user_exit(user_ctx, (const void *)(uintptr_t)(fn & NP_ADDR_MASK), site);
#endif
    (void)fn, (void)site;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
}

NP_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    np_on_enter((uint64_t)(uintptr_t)fn & NP_ADDR_MASK, site);
}

NP_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    np_on_exit((uint64_t)(uintptr_t)fn & NP_ADDR_MASK, site);
}

/* Manual markers: the name string stands for the function. noinline so
 * that the return address is the marker's own call site. */
__attribute__((noinline)) void np_enter(const char *name)
{
    np_on_enter(((uint64_t)(uintptr_t)name & NP_ADDR_MASK) | NP_REC_NAMED,
                __builtin_return_address(0));
}

__attribute__((noinline)) void np_exit(void)
{
    np_on_exit(0, __builtin_return_address(0));
}
