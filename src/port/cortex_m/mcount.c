/* mcount.c - -pg's call counting on Cortex-M: __gnu_mcount_nc, which GCC
 * calls at the start of each function built with -pg, and the runtime's
 * callback it hands each call to (np_port_arcs_start, port.h).
 *
 * GCC's prologue is `push {lr}; bl __gnu_mcount_nc`: on entry lr is the
 * return address into the function (SELF) and the word on top of the
 * stack is the function's own lr, a return address into its caller
 * (FROM). The routine calls the callback with both, then returns into the
 * function with lr as it was before the push and the stack as before it.
 * ARMv6-M (Thumb-1) has no `pop {lr}`: the function's lr is restored by
 * a move, and the return address is moved into the pushed word's slot to
 * return with `pop {pc}`. The same code runs on ARMv7-M. r0-r3 are kept:
 * they hold the function's arguments, which a second callback gets
 * (np_port_args_start: the call trace's, where -finstrument-functions'
 * hook tells the entry that follows), as pushed. The callbacks are called with the
 * stack 8-byte aligned when the function's prologue kept it so (GCC's
 * does); it needs only 4 (no doubleword on the stack's alignment). */
#include "../port.h"

void (*volatile np_cm_mcount_fn)(uintptr_t from, uintptr_t self);

void np_port_arcs_start(void (*fn)(uintptr_t from, uintptr_t self))
{
    np_cm_mcount_fn = fn;
}

/* The arguments' callback: in a runtime built for them only (a firmware
 * that counts arcs alone does not carry its test). */
#if NP_CALLTRACE_ARGS
void (*volatile np_cm_args_fn)(uintptr_t self, const uintptr_t *regs);

void np_port_args_start(void (*fn)(uintptr_t self, const uintptr_t *regs))
{
    np_cm_args_fn = fn;
}
#define NP_CM_ARGS_CALL                                                                            \
    "1: ldr r3, 8f\n"                                                                              \
    "  ldr r3, [r3]\n"                                                                             \
    "  cmp r3, #0\n"                                                                               \
    "  beq 2f\n"                                                                                   \
    "  ldr r0, [sp, #16]\n" /* SELF */                                                             \
    "  movs r2, #1\n"                                                                              \
    "  bics r0, r2\n"                                                                              \
    "  mov r1, sp\n" /* r0-r3 as pushed */                                                         \
    "  blx r3\n"
#define NP_CM_ARGS_WORD "8: .word np_cm_args_fn\n"
#else
#define NP_CM_ARGS_CALL "1:\n"
#define NP_CM_ARGS_WORD ""
#endif

__asm__(".pushsection .text.__gnu_mcount_nc,\"ax\",%progbits\n"
        ".syntax unified\n"
        ".global __gnu_mcount_nc\n"
        ".thumb_func\n"
        ".type __gnu_mcount_nc, %function\n"
        "__gnu_mcount_nc:\n"
        "  push {r0, r1, r2, r3, lr}\n" /* [sp, #16]: SELF; [sp, #20]: FROM */
        "  ldr r3, 9f\n"
        "  ldr r3, [r3]\n"
        "  cmp r3, #0\n"
        "  beq 1f\n"
        "  ldr r0, [sp, #20]\n"
        "  mov r1, lr\n"
        "  movs r2, #1\n"
        "  bics r0, r2\n" /* the Thumb bit off: addresses as the ELF's */
        "  bics r1, r2\n"
        "  blx r3\n"
        NP_CM_ARGS_CALL
        "2: ldr r0, [sp, #20]\n"
        "  mov lr, r0\n" /* the function's lr */
        "  ldr r0, [sp, #16]\n"
        "  str r0, [sp, #20]\n" /* where to return, in its pushed word */
        "  pop {r0, r1, r2, r3}\n"
        "  add sp, #4\n"
        "  pop {pc}\n"
        "  .align 2\n"
        "9: .word np_cm_mcount_fn\n"
        NP_CM_ARGS_WORD
        ".size __gnu_mcount_nc, . - __gnu_mcount_nc\n"
        ".popsection\n");
