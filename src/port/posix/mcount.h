/* mcount.h - the return stack of -pg's hooks (mcount.c), as the hosted
 * parts that move the stack tell it: setjmp.c, catch.c. */
#ifndef NP_MCOUNT_H
#define NP_MCOUNT_H

#include <stddef.h>
#include <stdint.h>

/* setjmp(ENV) notes the depth; a longjmp to ENV cuts back to it, closing
 * nothing (the mechanisms cut their own calls). */
void np_mcount_setjmp(const void *env);
void np_mcount_longjmp(const void *env);
/* A C++ exception: thrown (the original return addresses are put back for
 * the unwinder), a landing pad about to run in the frame whose stack
 * pointer (at its calls) is LIVE (the calls whose return addresses lie
 * below it close), caught (the living frames' return addresses are taken
 * again). */
void np_mcount_unwinding(void);
void np_mcount_unwound(const void *live);
void np_mcount_caught(void);
/* The return address the frame whose return address's slot is SLOT
 * returns to in truth, RET read there: the caller's, from the return
 * stack, where RET is the trampoline's or a thunk's; else RET. For a walk
 * of the calling thread's frames, innermost first (the sampler's, in the
 * thread's signal handler): *CURSOR, -1 at the first frame, keeps its
 * place on the return stack. */
uintptr_t np_mcount_frame_return(const uintptr_t *slot, uintptr_t ret, long *cursor);
/* Set (by the recorder, for -A and -R): the first called after each
 * entry event with the argument registers (REGS[0] the first integer
 * argument's), the second before each exit event with REGS[0] the return
 * value; each only when some spec asks. */
extern void (*np_mcount_values)(uintptr_t fn, const uint64_t *regs);
extern void (*np_mcount_retvals)(uintptr_t fn, const uint64_t *regs);
/* Sets them (each not NULL); a thunk's fast path leaves every call to
 * the hooks from then on. */
void np_mcount_values_set(void (*arguments)(uintptr_t fn, const uint64_t *regs),
                          void (*retvals)(uintptr_t fn, const uint64_t *regs));

/* The -mfentry hook as a patched entry's jump reaches it (patch.c): the
 * function starts five bytes before the hook's return address. */
void np_patch_fentry(void);

/* The thunks' two calls (thunks.c, mcount.c's assembly); whether A is
 * where a thunk's call of a function returns to; the thunk a thread that
 * meets the int3 at SITE goes to while the site becomes a jump (0: none). */
void np_thunk_enter(void);
void np_thunk_exit(void);
int np_thunk_return_point(uintptr_t a);
/* The thunks' fast path (mcount.c): what an area's thunks share, put at
 * AT (at most NP_THUNK_SHARED_BYTES) into *F: the enter of cost or the
 * recorder, and the exit, which goes on to SLOW (np_thunk_exit's jump)
 * where it cannot take the return; 0 where the fast path cannot be. At T,
 * the first NP_THUNK_BYTES - NP_THUNK_CALLS bytes of the thunk of the
 * function FN whose body is at BODY: the fast path, with F's code (none:
 * only a jump to the calls behind it). Where in a thunk the body returns
 * to from the fast path (SIZE_MAX: none). */
struct np_thunk_fast {
    uintptr_t enter, exit; /* 0: no fast path */
    int32_t cur, rs;       /* np_cur's and the return stack's offsets from the thread pointer */
};
int np_thunk_shared_put(uint8_t *at, uintptr_t slow, struct np_thunk_fast *f);
void np_thunk_fast_put(uint8_t *t, uintptr_t fn, uintptr_t body, const struct np_thunk_fast *f);
size_t np_thunk_fast_return(void);
#if defined(NP_PORT_THUNK_LEAVES)
struct np_thread;
/* hooks_leaf.c: cost's and the recorder's leaf paths for the fast path,
 * each alone on the thread T, given the function FN and its call site (the
 * caller's return address); 1, or 0 having changed nothing. */
#define NP_LEAF_DECL(name) \
    int name(uint64_t fn, const void *site, struct np_thread *t) __attribute__((visibility("hidden")))
NP_LEAF_DECL(np_hooks_cost_enter_leaf);
NP_LEAF_DECL(np_hooks_cost_exit_leaf);
NP_LEAF_DECL(np_hooks_rec_enter_leaf);
NP_LEAF_DECL(np_hooks_rec_exit_leaf);
/* the same with the argument registers REGS (rdi to r9), for -A */
int np_hooks_rec_args_enter_leaf(uint64_t fn, const void *site, struct np_thread *t, const uint64_t *regs)
    __attribute__((visibility("hidden")));
#endif
/* Whether PC is in the thunks' code (a sample there is the hooks'). */
int np_thunk_code(uintptr_t pc);
uintptr_t np_thunk_trapped(uintptr_t site);

#endif
