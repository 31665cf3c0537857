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
 * does); it needs only 4 (no doubleword on the stack's alignment).
 *
 * With NP_PG_EXITS a third callback (np_port_calls_start) gets each call
 * for the mechanisms, and its exit comes from a trampoline: the hook finds
 * the word where the function keeps its return address by reading back
 * its prologue (below), and the runtime has the trampoline's address put
 * there (runtime/pg_exits.c). */
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
    "  beq 3f\n"                                                                                   \
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

/* ARMv6-M and ARMv8-M Baseline: Thumb-1's prologues, whose lr may hold
 * r8-r11's copy when -pg's hook is called (saved_return). */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define NP_CM_THUMB1 1
#else
#define NP_CM_THUMB1 0
#endif

#if NP_PG_EXITS || NP_CM_THUMB1
/* Whether the halfword at P starts a 32-bit Thumb instruction. */
#define NP_CM_WIDE(h) (((h) & 0xe000) == 0xe000 && ((h) & 0x1800))

/* The registers in a push's list (no libgcc call for a popcount). */
static uint32_t bits(uint32_t x)
{
    uint32_t n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

#if !NP_CM_THUMB1
/* ARM's modified immediate constant (ThumbExpandImm) of I12. */
static uint32_t thumb_imm(uint32_t i12)
{
    uint32_t b = i12 & 0xff;
    if (!(i12 >> 10)) {
        uint32_t k = (i12 >> 8) & 3;
        return k == 0 ? b : k == 1 ? b * 0x00010001u : k == 2 ? b * 0x01000100u : b * 0x01010101u;
    }
    uint32_t v = 0x80 | (b & 0x7f), rot = i12 >> 7;
    return v >> rot | v << (32 - rot);
}
#endif

/* Where the function that called -pg's hook keeps its return address:
 * PUSHED, the copy GCC's `push {lr}` gave the hook, which the function
 * returns from if it saved no other (a leaf); else its prologue's own
 * copy, above. The prologue is read back from the `push {lr}`: the
 * stores and subtractions from the stack pointer GCC puts there (push,
 * push.w, str.w to sp!, sub, sub.w, subw, vpush; add/mov r7 as the frame
 * pointer; moves of high registers, Thumb-1's way of saving them,
 * `mov lr, rN` among them: a push after it holds rN, not the return
 * address, and so does PUSHED). Each push of lr makes a candidate, the
 * nearest one holding the return address wins: reading back past the
 * function's start (the previous one's code or constants) may make others,
 * further up. NULL where the stack pointer changes in a way not followed
 * (a frame sized by a register other than by a constant of the code), or
 * a frame over NP_CM_PG_FRAME_WORDS. */
static __attribute__((noinline)) uintptr_t *saved_return(uintptr_t *pushed, uintptr_t self)
{
    const uint16_t *p = (const uint16_t *)(self & ~(uintptr_t)1) - 3;
    if (p[0] != 0xb500) /* push {lr}; bl __gnu_mcount_nc */
        return NULL;
    uintptr_t v = *pushed;
    uint32_t words = 1, cand[4];
    int nc = 0, moved = 0;
    for (int k = 0; k < NP_CM_PG_PROLOGUE_INSNS && words <= NP_CM_PG_FRAME_WORDS; k++) {
        uint32_t h = p[-1], h0 = p[-2], n = 0;
#if !NP_CM_THUMB1 /* (no 32-bit instruction in a Thumb-1 prologue) */
        uint32_t lr = 0;
        if (NP_CM_WIDE(h0)) {
            /* a 32-bit instruction ending there, or a 16-bit one after a
             * halfword that looks like a 32-bit one's first: the forms
             * below first */
            if (h0 == 0xe92d && !(h & 0xa000)) { /* push.w {list} */
                n = bits(h);
                lr = h & 0x4000;
            } else if (h0 == 0xf84d && (h & 0x0fff) == 0x0d04) { /* str.w rt, [sp, #-4]! */
                n = 1;
                lr = (h >> 12) == 14;
            } else if ((h0 & 0xfbef) == 0xf1ad && (h & 0x8f00) == 0x0d00) { /* sub.w sp, sp, #c */
                n = thumb_imm((h0 >> 10 & 1) << 11 | (h >> 12 & 7) << 8 | (h & 0xff)) / 4;
            } else if ((h0 & 0xfbff) == 0xf2ad && (h & 0x8f00) == 0x0d00) { /* subw sp, sp, #c */
                n = ((h0 >> 10 & 1) << 11 | (h >> 12 & 7) << 8 | (h & 0xff)) / 4;
            } else if (h0 == 0xed2d && (h & 0x0e00) == 0x0a00) { /* vpush: words in imm8 */
                n = h & 0xff;
            } else if (h0 == 0xebad && (h & 0x0f00) == 0x0d00) { /* sub sp, sp, rN */
                return NULL;
            }
            if (n) {
                if (lr && nc < 4)
                    cand[nc++] = words + n - 1;
                words += n;
                p -= 2;
                continue;
            }
        }
#endif
        if ((h & 0xfe00) == 0xb400) { /* push {list[, lr]} */
            n = bits(h & 0x1ff);
            if ((h & 0x100) && nc < 4)
                cand[nc++] = words + n - 1;
            words += n;
        } else if ((h & 0xff80) == 0xb080) { /* sub sp, #c */
            words += h & 0x7f;
        } else if ((h & 0xff87) == 0x4686) { /* mov lr, rN: the pushes after it hold rN */
            nc = 0;
            moved = 1;
        } else if ((h & 0xff87) == 0x4485 && (h0 & 0xf800) == 0x4800 && (h0 >> 8 & 7) == (h >> 3 & 15)) {
            /* ldr rN, [pc, #c]; add sp, rN: Thumb-1's large frame, its
             * size a constant after the code */
            const int32_t *c = (const int32_t *)((((uintptr_t)(p - 2) + 4) & ~(uintptr_t)3) + (h0 & 0xff) * 4);
            if (*c >= 0 || (*c & 3))
                return NULL;
            words += (uint32_t)-*c / 4;
            p--;
        } else if ((h & 0xff87) == 0x4685 || (h & 0xff87) == 0x4485) { /* mov sp, rN; add sp, rN */
            return NULL;
        } else if ((h & 0xff00) != 0xaf00 && (h & 0xff00) != 0x4600) { /* add r7, sp, #c; mov rD, rN */
            break;
        } else if ((h & 0xff87) == 0x4687) { /* mov pc, rN */
            break;
        }
        p--;
    }
    if (moved) {
        /* lr held rN when it was pushed for the hook: the first push
         * before the move has the return address (Thumb code's, or
         * EXC_RETURN) */
        if (!nc || cand[0] > NP_CM_PG_FRAME_WORDS)
            return NULL;
        uintptr_t r = pushed[cand[0]];
        return (r & 1) || r >= 0xf0000000u ? pushed + cand[0] : NULL;
    }
    for (int i = 0; i < nc; i++)
        if (cand[i] <= NP_CM_PG_FRAME_WORDS && pushed[cand[i]] == v)
            return pushed + cand[i];
    return pushed;
}

#endif

#if NP_CM_THUMB1
/* The arcs' FROM on Thumb-1: the function's return address from its
 * prologue's copy (the word pushed for the hook may hold r8-r11's). */
__attribute__((used)) uintptr_t np_cm_arc_from(uintptr_t *pushed, uintptr_t self)
{
    uintptr_t *slot = saved_return(pushed, self);
    return slot ? *slot : *pushed;
}
#define NP_CM_ARC_FROM                                                                             \
    "  add r0, sp, #20\n"                                                                          \
    "  ldr r1, [sp, #16]\n"                                                                        \
    "  bl np_cm_arc_from\n"                                                                        \
    "  ldr r3, 9f\n"                                                                               \
    "  ldr r3, [r3]\n"
#else
#define NP_CM_ARC_FROM "  ldr r0, [sp, #20]\n"
#endif

#if NP_PG_EXITS
/* The calls' callback, from the asm: np_cm_pg_enter once the runtime has
 * started (np_port_calls_start), NULL before and in code that calls
 * -finstrument-functions' hooks too. */
void (*volatile np_cm_calls_fn)(uintptr_t *pushed, uintptr_t self);
static int (*calls_enter)(uintptr_t fn, uintptr_t *slot, int how, int irq);
static uintptr_t (*calls_exit)(const uintptr_t *sp, int irq);
static uintptr_t cyg_hook;
static uint8_t cyg_known; /* 0: not yet; 1: -pg alone; 2: with -finstrument-functions */
void np_cm_pg_return(void);

static inline int in_handler(void)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    return (ipsr & 0x1ffu) != 0;
}

/* Where the instruction at P calls (Thumb-2's BL), or 0 for another. */
static uintptr_t bl_target(const uint16_t *p)
{
    uint32_t h = p[0], l = p[1];
    if ((h & 0xf800) != 0xf000 || (l & 0xd000) != 0xd000)
        return 0;
    uint32_t s = (h >> 10) & 1, i1 = !(((l >> 13) & 1) ^ s), i2 = !(((l >> 11) & 1) ^ s);
    uint32_t off = s << 24 | i1 << 23 | i2 << 22 | (h & 0x3ff) << 12 | (l & 0x7ff) << 1;
    return (uintptr_t)p + 4 + (uintptr_t)((int32_t)(off << 7) >> 7);
}

/* Whether the code after -pg's call (SELF) calls CYG before any other
 * call, as GCC places -finstrument-functions' entry hook: the firmware was
 * built with both, and takes its calls from that hook. */
static __attribute__((noinline, cold)) int calls_cyg(uintptr_t self)
{
    const uint16_t *p = (const uint16_t *)(self & ~(uintptr_t)1);
    for (int k = 0; k < 32; k++, p++) {
        uintptr_t to = bl_target(p);
        if (to)
            return to == cyg_hook;
        if (NP_CM_WIDE(p[0]))
            p++;
    }
    return 0;
}

/* saved_return, the commonest case first: nothing a prologue has before
 * the hook's `push {lr}` (a function that saves no register), whose
 * return address is PUSHED. */
static inline __attribute__((always_inline)) uintptr_t *return_slot(uintptr_t *pushed, uintptr_t self)
{
    const uint16_t *p = (const uint16_t *)(self & ~(uintptr_t)1) - 3;
    uint32_t h = p[-1];
    if (p[0] == 0xb500 && (h & 0xfe00) != 0xb400 && (h & 0xff80) != 0xb080 && (h & 0xfd00) != 0x4400 &&
        (h & 0xff00) != 0xaf00 && (NP_CM_THUMB1 || !NP_CM_WIDE(p[-2])))
        return pushed;
    return saved_return(pushed, self);
}

/* From the asm, with PUSHED the word GCC's `push {lr}` put on the stack
 * and SELF the hook's return address. */
__attribute__((used)) void np_cm_pg_enter(uintptr_t *pushed, uintptr_t self)
{
    if (!cyg_known) {
        cyg_known = calls_cyg(self) ? 2 : 1;
        if (cyg_known == 2) {
            np_cm_calls_fn = NULL;
            return;
        }
    }
    uintptr_t *slot = return_slot(pushed, self);
    int tail = slot && *slot == (uintptr_t)np_cm_pg_return;
    int how = (tail ? NP_PG_TAIL : 0) | (slot == pushed ? NP_PG_LEAF : 0);
    if (calls_enter(self & ~(uintptr_t)1, slot, how, in_handler()) && !tail)
        *slot = (uintptr_t)np_cm_pg_return;
}

/* From the trampoline, with SP as the function's return left it. */
__attribute__((used)) uintptr_t np_cm_pg_exit(const uintptr_t *sp)
{
    return calls_exit(sp, in_handler());
}

/* Forward from the function's start, an instruction at a time, to GCC's
 * `push {lr}; bl __gnu_mcount_nc`. */
uintptr_t np_port_pg_self(const void *fn_start)
{
    extern char __gnu_mcount_nc[];
    const uint16_t *p = (const uint16_t *)((uintptr_t)fn_start & ~(uintptr_t)1);
    const uint16_t *end = p + 2 * NP_CM_PG_PROLOGUE_INSNS + 3; /* the prologue, push {lr}, bl */
    for (; p < end; p++) {
        uintptr_t to = p[0] == 0xb500 ? bl_target(p + 1) : 0;
        if (to)
            return to == ((uintptr_t)__gnu_mcount_nc & ~(uintptr_t)1) ? (uintptr_t)(p + 3) : 0;
        if (NP_CM_WIDE(p[0]))
            p++;
    }
    return 0;
}

void np_port_calls_start(int (*enter)(uintptr_t fn, uintptr_t *slot, int how, int irq),
                         uintptr_t (*exit)(const uintptr_t *sp, int irq), uintptr_t cyg)
{
    calls_enter = enter;
    calls_exit = exit;
    cyg_hook = cyg & ~(uintptr_t)1;
    if (cyg_known != 2)
        np_cm_calls_fn = np_cm_pg_enter;
}

/* Where a hooked function returns: the runtime says where it goes (r0-r3,
 * its return value, kept). In an interrupt handler that is EXC_RETURN,
 * which the bx makes the exception's return. */
__asm__(".pushsection .text.np_cm_pg_return,\"ax\",%progbits\n"
        ".syntax unified\n"
        ".global np_cm_pg_return\n"
        ".hidden np_cm_pg_return\n"
        ".thumb_func\n"
        ".type np_cm_pg_return, %function\n"
        "np_cm_pg_return:\n"
        "  push {r0, r1, r2, r3}\n"
        "  mov r0, sp\n"
        "  adds r0, #16\n"
        "  bl np_cm_pg_exit\n"
        "  mov ip, r0\n"
        "  pop {r0, r1, r2, r3}\n"
        "  bx ip\n"
        ".size np_cm_pg_return, . - np_cm_pg_return\n"
        ".popsection\n");

#define NP_CM_CALLS_CALL                                                                           \
    "3: ldr r3, 7f\n"                                                                              \
    "  ldr r3, [r3]\n"                                                                             \
    "  cmp r3, #0\n"                                                                               \
    "  beq 2f\n"                                                                                   \
    "  add r0, sp, #20\n" /* the pushed word */                                                   \
    "  ldr r1, [sp, #16]\n" /* SELF */                                                             \
    "  blx r3\n"
#define NP_CM_CALLS_WORD "7: .word np_cm_calls_fn\n"
#else
#define NP_CM_CALLS_CALL "3:\n"
#define NP_CM_CALLS_WORD ""
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
        NP_CM_ARC_FROM
        "  ldr r1, [sp, #16]\n"
        "  movs r2, #1\n"
        "  bics r0, r2\n" /* the Thumb bit off: addresses as the ELF's */
        "  bics r1, r2\n"
        "  blx r3\n"
        NP_CM_ARGS_CALL
        NP_CM_CALLS_CALL
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
        NP_CM_CALLS_WORD
        ".size __gnu_mcount_nc, . - __gnu_mcount_nc\n"
        ".popsection\n");
