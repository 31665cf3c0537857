/* hooks_leaf.c - function cost's and the recorder's leaf paths for the
 * fast path of a -pg thunk (port/posix/mcount.c), at a function's start
 * and at its return, given the thread (np_cur). Plain C functions: the
 * caller saves the general registers live there (the argument registers
 * and the static chain at the start, the return value's at the return),
 * fewer than a function that saved all it changes would. Each calls
 * nothing and is built without vector registers (test_pg_fast checks
 * both), so the arguments and return values in them stay as they are;
 * the caller has checked that the mechanism alone runs on the thread (the
 * hooks' tests, on the hot word and the process-wide flags). Returns 1,
 * or 0 having changed nothing the hooks do not redo: the caller then
 * takes them. */
#include "../../runtime/cost_hot.h"
#include "../../runtime/hooks.h"
#include "mcount.h"
#include "record_hot.h"

#if defined(NP_PORT_THUNK_LEAVES) && NP_PORT_HOSTED
#define NP_LEAF_ATTRS \
    NP_HOOKS_TEXT __attribute__((used, no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))
#define NP_LEAF(name) NP_LEAF_ATTRS int name(uint64_t fn, const void *site, struct np_thread *t)
#define NP_LEAF_ARGS(name) \
    NP_LEAF_ATTRS int name(uint64_t fn, const void *site, struct np_thread *t, const uint64_t *regs)

#if NP_HOOKS_MECHANISMS & NP_MECH_COST
/* as the hooks' leaf path runs it */
NP_LEAF(np_hooks_cost_enter_leaf) { return (void)site, np_cost_fast_busy(t, 0, fn); }
NP_LEAF(np_hooks_cost_exit_leaf) { return (void)fn, (void)site, np_cost_fast_busy(t, 1, 0); }
#else
NP_LEAF(np_hooks_cost_enter_leaf) { return (void)fn, (void)site, (void)t, 0; }
NP_LEAF(np_hooks_cost_exit_leaf) { return (void)fn, (void)site, (void)t, 0; }
#endif

#if NP_HOOKS_MECHANISMS & NP_MECH_RECORD
/* the recording clock read here only where it is the CPU's counter (the
 * others are calls, which would not save the vector registers) */
NP_LEAF(np_hooks_rec_enter_leaf)
{
    return np_clock_kind == NP_CLOCK_COUNTER && np_rec_append(t, fn & NP_ADDR_MASK, site, np_port_counter);
}

NP_LEAF(np_hooks_rec_exit_leaf)
{
    return np_clock_kind == NP_CLOCK_COUNTER &&
           np_rec_append(t, (fn & NP_ADDR_MASK) | NP_RAW_EXIT_BIT, site, np_port_counter);
}

/* The entry where `record -A` is on: with the argument registers REGS
 * (rdi, rsi, rdx, rcx, r8, r9) when a spec of integers names the function,
 * as record_values.c's arguments() writes them; a function not in its
 * table yet, or a spec with a string, is the hooks'. */
NP_LEAF_ARGS(np_hooks_rec_args_enter_leaf)
{
    if (np_clock_kind != NP_CLOCK_COUNTER)
        return 0;
    uint64_t a = fn & NP_ADDR_MASK;
    unsigned at;
    uint64_t c = np_rec_vcache_find(a, &at);
    if (!c)
        return 0;
    unsigned k = (unsigned)(c >> 8 & 0xff);
    if (!k)
        return np_rec_append(t, a, site, np_port_counter);
    const struct np_rec_packed *pk = &np_rec_packed[k - 1];
    return pk->words && np_rec_append_packed(t, a, site, np_port_counter, pk->head, regs, pk->slots);
}
#else
NP_LEAF(np_hooks_rec_enter_leaf) { return (void)fn, (void)site, (void)t, 0; }
NP_LEAF(np_hooks_rec_exit_leaf) { return (void)fn, (void)site, (void)t, 0; }
NP_LEAF_ARGS(np_hooks_rec_args_enter_leaf) { return (void)fn, (void)site, (void)t, (void)regs, 0; }
#endif
#endif
