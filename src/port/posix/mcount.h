/* mcount.h - the return stack of -pg's hooks (mcount.c), as the hosted
 * parts that move the stack tell it: setjmp.c, catch.c. */
#ifndef NP_MCOUNT_H
#define NP_MCOUNT_H

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

/* The -mfentry hook as a patched entry's jump reaches it (patch.c): the
 * function starts five bytes before the hook's return address. */
void np_patch_fentry(void);

/* The thunks' two calls (thunks.c, mcount.c's assembly); whether A is
 * where a thunk's call of a function returns to; the thunk a thread that
 * meets the int3 at SITE goes to while the site becomes a jump (0: none). */
void np_thunk_enter(void);
void np_thunk_exit(void);
int np_thunk_return_point(uintptr_t a);
/* Whether PC is in the thunks' code (a sample there is the hooks'). */
int np_thunk_code(uintptr_t pc);
uintptr_t np_thunk_trapped(uintptr_t site);

#endif
