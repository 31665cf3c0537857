/* insn_gen.c - random ARM and Thumb instruction streams (insn_gen.h).
 *
 * A stream is a sequence of items: one instruction of a class picked by
 * weight, with the instructions it needs before it (a load's base register
 * pointed into the data region, a branch's target address built in a
 * register). Every encoding field is random within what the architecture
 * defines: condition codes, registers, shifter operands, S bits,
 * addressing modes, register lists, modes and states.
 *
 * Branches only go forward (but for the two-pass loops of self-modifying
 * code): a branch is followed by a few items (its "filler", run when it
 * is not taken) and lands on one of their starts or just after them.
 * Filler never changes the state or the mode, so the generator knows both
 * at every item. Instructions that change the state or the mode are
 * unconditional and followed by dead padding. A stream may end with an
 * access outside memory or an undefined instruction (fault_tail).
 *
 * Implementation-defined choices taken as QEMU takes them, which the
 * interpreter follows too: str pc and stm with the PC store the address
 * + 8 (the ARM7TDMI itself stores + 12).
 *
 * Left out as UNPREDICTABLE on ARMv4T/ARMv5TE (ARM ARM, DDI 0100I):
 * - PC as Rd of data processing (except the branch idioms built here), as
 *   any operand of a register-shifted operand, of a multiply, DSP
 *   instruction, clz, swp, msr or mrs; S=1 data processing into the PC in
 *   USR/SYS; Rn != 0 for mov/mvn and Rd != 0 for tst/teq/cmp/cmn (SBZ).
 *   (S=1 data processing into the PC in other modes is defined, CPSR =
 *   SPSR, but QEMU does that for movs and subs only: only those are made.)
 * - mul/mla with Rd == Rm; umull..smlal (and smlal<x><y>) with RdHi, RdLo
 *   and Rm not all different (also Rm kept apart for smlal<x><y>).
 * - loads and stores with writeback (post-indexed included) whose Rd or
 *   Rm is the base, or whose base is the PC; register offsets in the PC;
 *   RRX-scaled offsets (out of the data region, not unpredictable);
 *   post-indexed halfword forms with W=1; ldrd/strd with an odd or r14 Rd,
 *   Rm in {Rd, Rd+1}, writeback with the base in {Rd, Rd+1}.
 * - unaligned word and doubleword accesses, ldm/stm and swp included:
 *   before ARMv6 an unaligned ldr loads the aligned word rotated, and str,
 *   ldm and stm ignore the address's bits 1:0 (ARM DUI 0068B 4-10, ARM
 *   DDI 0100I A2.8); QEMU accesses the unaligned bytes instead, so
 *   Unicorn is no reference there. (Unaligned halfwords are UNPREDICTABLE
 *   and compared: the interpreter does as QEMU.)
 * - ldm/stm with the PC as base or an empty list (but as the undefined
 *   last instruction: both engines refuse them), writeback with the base in
 *   the list (stm keeps it when it is the lowest: that is defined), ^ forms
 *   in USR/SYS or with writeback (except ldm {..., pc}^), and the
 *   instruction just after an ldm/stm ^ touching banked registers (a nop
 *   follows). swp with Rn equal to Rd or Rm.
 * - msr writing reserved bits or the T bit, or an invalid mode; mrs/msr of
 *   the SPSR in USR/SYS; a conditional instruction that changes the mode.
 * - bx to ARM state with address bit 1 set; loads into the PC of a
 *   misaligned ARM address; Thumb blx with an odd suffix offset.
 * - Thumb: hi-register add/mov/cmp with two low registers, cmp with the
 *   PC, mov/add to the PC except in the branch idioms, mul with Rd == Rm,
 *   ldmia with the base in the list, stmia with the base in the list but
 *   not lowest, empty lists, bx with H1 set on v4T.
 * - the condition 0xF (NV) on anything but the v5 unconditional
 *   instructions (blx <imm>, pld).
 * GEN_V4T streams also leave out what v4T and v5TE run differently: every
 * v5 instruction (blx, clz, bkpt in ARM state and Thumb bkpt other than
 * 0xab, the DSP instructions, ldrd/strd, pld), the Q flag, and loads of the
 * PC that would change the state (v5 interworks, v4T does not). */
#include "insn_gen.h"
#include <string.h>

/* nesting of branch filler at most this deep */
#define MAX_DEPTH 2
/* room left after the last item: pc-relative loads read up to 1 KiB ahead */
#define TAIL_ROOM 0x800u

enum { USR = 0x10, FIQ = 0x11, IRQ = 0x12, SVC = 0x13, ABT = 0x17, UND = 0x1b, SYS = 0x1f };
static const unsigned modes[7] = {USR, FIQ, IRQ, SVC, ABT, UND, SYS};

struct gen {
    struct gen_stream *s;
    uint64_t rng;
    bool v5;
    unsigned exclude; /* enum gen_class */
    uint32_t pos;  /* where the next instruction goes */
    bool thumb;    /* the state at pos */
    unsigned mode; /* the mode at pos */
    int depth;     /* > 0 inside branch filler: state and mode stay */
    /* Cortex-M streams */
    enum gen_isa isa;
    bool m;          /* a Cortex-M stream: item() is m_item() */
    unsigned march;  /* M_V7 M_DSP M_FP M_V8 */
    uint32_t mavoid; /* registers nothing may write (an IT block's base) */
    bool in_it;      /* inside an IT block: no set-up, no SP change */
    int msp_off;     /* the SP's offset from M_SP_INIT (changed only at depth 0) */
};

/* ---- randomness (splitmix64) ---- */

static uint64_t next64(struct gen *g)
{
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rnd(struct gen *g, uint32_t n)
{
    return (uint32_t)(next64(g) % n);
}

static bool chance(struct gen *g, unsigned percent)
{
    return rnd(g, 100) < percent;
}

/* A register value: small numbers, edge values and random words, so that
 * shifts by register, saturation, carries and overflows all happen. */
static uint32_t value(struct gen *g)
{
    static const uint32_t edge[] = {0,          1,          2,      0x7fffffff, 0x80000000, 0xffffffff,
                                    0x0000ffff, 0xffff8000, 0x7fff, 0x8000,     0x00010000, 0x80000001};
    unsigned k = rnd(g, 10);
    if (k < 3)
        return rnd(g, 70);
    if (k < 5)
        return edge[rnd(g, sizeof edge / sizeof edge[0])];
    return (uint32_t)next64(g);
}

static bool has_spsr(unsigned mode)
{
    return mode != USR && mode != SYS;
}

static bool privileged(unsigned mode)
{
    return mode != USR;
}

/* The flags bits msr may write: N Z C V, and Q on v5. */
static uint32_t flag_mask(struct gen *g)
{
    return g->v5 ? 0xf8000000u : 0xf0000000u;
}

/* A valid PSR: flags, I, F, T and a mode. */
static uint32_t random_psr(struct gen *g)
{
    return ((uint32_t)next64(g) & flag_mask(g)) | rnd(g, 4) << 6 | rnd(g, 2) << 5 | modes[rnd(g, 7)];
}

/* ---- emission ---- */

static void put32(struct gen *g, uint32_t addr, uint32_t w)
{
    uint8_t *p = &g->s->code[addr - GEN_CODE_BASE];
    p[0] = (uint8_t)w;
    p[1] = (uint8_t)(w >> 8);
    p[2] = (uint8_t)(w >> 16);
    p[3] = (uint8_t)(w >> 24);
}

static void put16(struct gen *g, uint32_t addr, uint32_t h)
{
    uint8_t *p = &g->s->code[addr - GEN_CODE_BASE];
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static uint32_t arm(struct gen *g, uint32_t w)
{
    uint32_t at = g->pos;
    put32(g, at, w);
    g->pos += 4;
    g->s->insns++;
    return at;
}

static uint32_t thumb(struct gen *g, uint32_t h)
{
    uint32_t at = g->pos;
    put16(g, at, h);
    g->pos += 2;
    g->s->insns++;
    return at;
}

/* Words or halfwords never executed (skipped by the branch before them). */
static void dead(struct gen *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (g->thumb) {
            put16(g, g->pos, (uint32_t)next64(g));
            g->pos += 2;
        } else {
            put32(g, g->pos, (uint32_t)next64(g));
            g->pos += 4;
        }
    }
}

/* ---- ARM helpers ---- */

#define AL 0xeu

static uint32_t cond(struct gen *g)
{
    return chance(g, 50) ? AL : rnd(g, 14);
}

static unsigned reg(struct gen *g)
{
    return rnd(g, 15);
}

/* A register other than the PC and those in AVOID (a bit mask). */
static unsigned reg_not(struct gen *g, unsigned avoid)
{
    unsigned r;
    do
        r = rnd(g, 15);
    while (avoid >> r & 1);
    return r;
}

static unsigned lo_not(struct gen *g, unsigned avoid)
{
    unsigned r;
    do
        r = rnd(g, 8);
    while (avoid >> r & 1);
    return r;
}

/* and rb, ry, #0xff0; orr rb, rb, #0x104000: rb in [0x104000, 0x104ff0],
 * 16-byte aligned, from a random register. */
static void a_base(struct gen *g, unsigned rb)
{
    arm(g, 0xe2000eff | reg(g) << 16 | rb << 12);
    arm(g, 0xe3800941 | rb << 16 | rb << 12);
}

/* and rm, ry, #MASK (MASK < 256) */
static void a_index(struct gen *g, unsigned rm, uint32_t mask)
{
    arm(g, 0xe2000000 | reg(g) << 16 | rm << 12 | mask);
}

/* add rt, pc, #V at AT (V a small multiple of 4, < 1024) */
static void a_patch_adr(struct gen *g, uint32_t at, unsigned rt, uint32_t target)
{
    uint32_t v = target - (at + 8);
    put32(g, at, 0xe28f0f00 | rt << 12 | v >> 2);
}

static void a_patch_branch(struct gen *g, uint32_t at, uint32_t target)
{
    uint32_t w;
    memcpy(&w, &g->s->code[at - GEN_CODE_BASE], 4);
    put32(g, at, (w & 0xff000000u) | ((target - (at + 8)) >> 2 & 0x00ffffffu));
}

/* ---- Thumb helpers ---- */

/* rb = 0x104000 + ((ry & 0xff) << 4), with RT as scratch (RT != RB) */
static void t_base(struct gen *g, unsigned rb, unsigned rt)
{
    thumb(g, 0x0000 | 24 << 6 | rnd(g, 8) << 3 | rt); /* lsls rt, ry, #24 */
    thumb(g, 0x0800 | 20 << 6 | rt << 3 | rt);        /* lsrs rt, rt, #20 */
    thumb(g, 0x2000 | rb << 8 | 0x41);                /* movs rb, #0x41 */
    thumb(g, 0x0000 | 14 << 6 | rb << 3 | rb);        /* lsls rb, rb, #14 */
    thumb(g, 0x1800 | rt << 6 | rb << 3 | rb);        /* adds rb, rb, rt */
}

/* ro = (ry & 0xff) << K */
static void t_index(struct gen *g, unsigned ro, unsigned k)
{
    thumb(g, 0x0000 | 24 << 6 | rnd(g, 8) << 3 | ro);
    thumb(g, 0x0800 | (24 - k) << 6 | ro << 3 | ro);
}

/* sp = a data region address, through the low register RB */
static void t_sp(struct gen *g, unsigned rb)
{
    t_base(g, rb, lo_not(g, 1u << rb));
    thumb(g, 0x4685 | rb << 3); /* mov sp, rb */
}

/* adr rt, TARGET at AT (TARGET word-aligned, after AT) */
static void t_patch_adr(struct gen *g, uint32_t at, unsigned rt, uint32_t target)
{
    put16(g, at, 0xa000 | rt << 8 | (target - ((at + 4) & ~3u)) >> 2);
}

/* Dead halfwords until pos is word-aligned. */
static void t_align(struct gen *g)
{
    if (g->pos & 2)
        dead(g, 1);
}

/* ---- items ---- */

static void item(struct gen *g);

/* Filler of a branch: up to N items that keep state and mode; records
 * their starts and the end in B (N + 1 entries) and returns how many. */
static unsigned filler(struct gen *g, unsigned n, uint32_t *b)
{
    unsigned k = 0, count = rnd(g, n + 1);
    g->depth++;
    for (unsigned i = 0; i < count; i++) {
        b[k++] = g->pos;
        item(g);
    }
    b[k++] = g->pos;
    g->depth--;
    return k;
}

/* data processing, all three shifter operand forms */
static void a_dp(struct gen *g)
{
    uint32_t op = rnd(g, 16), s = op >= 8 && op <= 11 ? 1 : rnd(g, 2);
    uint32_t rd = op >= 8 && op <= 11 ? 0 : reg(g);
    uint32_t rn = op == 13 || op == 15 ? 0 : rnd(g, 16);
    uint32_t c = cond(g), form = rnd(g, 20), w;
    if (form < 7) { /* immediate */
        w = 1u << 25 | rnd(g, 16) << 8 | rnd(g, 256);
    } else if (form < 15) { /* register shifted by an immediate; the PC reads as the address + 8 */
        w = rnd(g, 32) << 7 | rnd(g, 4) << 5 | rnd(g, 16);
    } else { /* register shifted by a register: no PC anywhere */
        uint32_t rs = reg(g);
        if (rn == 15)
            rn = reg(g);
        if (chance(g, 40)) /* amounts 0..63 as well as whole words */
            a_index(g, rs, chance(g, 50) ? 0x3f : 0xff);
        w = rs << 8 | rnd(g, 4) << 5 | 1u << 4 | reg(g);
    }
    arm(g, c << 28 | w | op << 21 | s << 20 | rn << 16 | rd << 12);
}

static void a_mul(struct gen *g)
{
    uint32_t c = cond(g), s = rnd(g, 2);
    if (chance(g, 40)) { /* mul, mla */
        uint32_t rm = reg(g), rd = reg_not(g, 1u << rm), a = rnd(g, 2), rn = a ? reg(g) : 0; /* mul: Rn SBZ */
        arm(g, c << 28 | a << 21 | s << 20 | rd << 16 | rn << 12 | reg(g) << 8 | 0x90 | rm);
    } else { /* umull umlal smull smlal */
        uint32_t rm = reg(g), lo = reg_not(g, 1u << rm), hi = reg_not(g, 1u << rm | 1u << lo);
        arm(g, c << 28 | 0x00800090 | rnd(g, 4) << 21 | s << 20 | hi << 16 | lo << 12 | reg(g) << 8 | rm);
    }
}

/* v5TE: the saturating arithmetic, the halfword multiplies, clz */
static void a_dsp(struct gen *g)
{
    uint32_t c = cond(g) << 28, x = rnd(g, 2) << 5, y = rnd(g, 2) << 6;
    uint32_t rd = reg(g), rn = reg(g), rs = reg(g), rm = reg(g), k = rnd(g, 7);
    if (g->exclude & GEN_X_HALFWORD_MUL)
        k = k & 1 ? 0 : 6;
    switch (k) {
    case 0: /* qadd qsub qdadd qdsub */
        arm(g, c | 0x01000050 | rnd(g, 4) << 21 | rn << 16 | rd << 12 | rm);
        break;
    case 1: /* smla<x><y> */
        arm(g, c | 0x01000080 | rd << 16 | rn << 12 | rs << 8 | y | x | rm);
        break;
    case 2: /* smlaw<y> */
        arm(g, c | 0x01200080 | rd << 16 | rn << 12 | rs << 8 | y | rm);
        break;
    case 3: /* smulw<y> */
        arm(g, c | 0x012000a0 | rd << 16 | rs << 8 | y | rm);
        break;
    case 4: { /* smlal<x><y> */
        uint32_t lo = reg_not(g, 1u << rm), hi = reg_not(g, 1u << rm | 1u << lo);
        arm(g, c | 0x01400080 | hi << 16 | lo << 12 | rs << 8 | y | x | rm);
        break;
    }
    case 5: /* smul<x><y> */
        arm(g, c | 0x01600080 | rd << 16 | rs << 8 | y | x | rm);
        break;
    default: /* clz */
        arm(g, c | 0x016f0f10 | rd << 12 | rm);
        break;
    }
}

/* ldr str ldrb strb (and the T forms), immediate or scaled register
 * offset, pre- or post-indexed, with or without writeback; pc-relative
 * loads of the code */
static void a_ldst(struct gen *g)
{
    uint32_t c = cond(g), load = rnd(g, 2), byte = chance(g, 35);
    if (load && chance(g, 8)) { /* literal: [pc, #+-imm], the PC reading as the address + 8 */
        uint32_t rd = reg(g), off = rnd(g, 0x400) & (byte ? ~0u : ~3u);
        arm(g, c << 28 | 0x05100000 | rnd(g, 2) << 23 | byte << 22 | 15 << 16 | rd << 12 | off);
        return;
    }
    uint32_t rb = reg(g), p = chance(g, 70), u = rnd(g, 2), wb = p ? chance(g, 30) : 1;
    uint32_t w = p ? wb : chance(g, 15); /* post-indexed: W=1 is ldrt/strt */
    /* str pc stores the address + 8 (implementation defined; Unicorn's choice) */
    uint32_t rd = load || byte || !p || !chance(g, 4) ? reg(g) : 15;
    if (wb && rd == rb)
        rd = reg_not(g, 1u << rb);
    a_base(g, rb);
    uint32_t off;
    if (chance(g, 40)) {
        uint32_t rm = reg_not(g, 1u << rb), type, amount, odd = byte && chance(g, 50);
        a_index(g, rm, odd ? 0xff : 0xf0);
        /* offsets stay small and, for words, multiples of 4 (rm is a
         * multiple of 16); an odd rm is not rotated into the top bits */
        switch (type = rnd(g, odd ? 3 : 4)) {
        case 0:
            amount = rnd(g, 5);
            break;
        default:
            amount = 1 + rnd(g, 2);
            break;
        }
        off = 1u << 25 | amount << 7 | type << 5 | rm;
    } else {
        off = rnd(g, 4096) & (byte ? ~0u : ~3u);
    }
    arm(g, c << 28 | 0x04000000 | p << 24 | u << 23 | byte << 22 | w << 21 | load << 20 | rb << 16 | rd << 12 | off);
}

/* ldrh strh ldrsb ldrsh, and ldrd strd on v5 */
static void a_ldst_h(struct gen *g)
{
    /* L S H per kind: ldrh strh ldrsb ldrsh ldrd strd */
    static const uint32_t lsh[6] = {0x100020, 0x000020, 0x100040, 0x100060, 0x000040, 0x000060};
    static const uint32_t size[6] = {2, 2, 1, 2, 8, 8};
    uint32_t kind = rnd(g, g->v5 ? 6 : 4), c = cond(g), sz = size[kind];
    if (kind != 1 && kind < 4 && chance(g, 8)) { /* literal */
        uint32_t rd = reg(g), off = rnd(g, 256) & ~(sz - 1);
        arm(g, c << 28 | 0x01400090 | 1u << 24 | rnd(g, 2) << 23 | lsh[kind] | 15 << 16 | rd << 12 |
                   (off >> 4) << 8 | (off & 15));
        return;
    }
    uint32_t rb = reg(g), p = chance(g, 70), u = rnd(g, 2), w = p ? chance(g, 30) : 0, wb = !p || w;
    uint32_t rd, avoid = wb ? 1u << rb : 0;
    if (sz == 8) { /* an even register below r14 */
        do
            rd = 2 * rnd(g, 7);
        while (wb && (rd == rb || rd + 1 == rb));
    } else {
        rd = reg_not(g, avoid);
    }
    a_base(g, rb);
    uint32_t off;
    /* an odd halfword address now and then: UNPREDICTABLE, and the
     * interpreter does as QEMU (the two bytes at the address) */
    if (sz == 2 && chance(g, 10))
        sz = 1;
    if (chance(g, 40)) {
        uint32_t rm;
        do
            rm = reg_not(g, 1u << rb);
        while (sz == 8 && (rm == rd || rm == rd + 1));
        a_index(g, rm, sz == 8 ? 0xf8 : sz == 2 ? 0xfe : 0xff);
        off = rm;
    } else {
        uint32_t imm = rnd(g, 256) & ~(sz - 1);
        off = 1u << 22 | (imm >> 4) << 8 | (imm & 15);
    }
    arm(g, c << 28 | 0x90 | p << 24 | u << 23 | w << 21 | lsh[kind] | rb << 16 | rd << 12 | off);
}

/* ldm stm, all four modes, writeback, the ^ forms */
static void a_ldm(struct gen *g)
{
    uint32_t c = cond(g), load = rnd(g, 2), rb = reg(g), pu = rnd(g, 4), list;
    bool user = has_spsr(g->mode) && chance(g, 12);
    uint32_t w = user ? 0 : rnd(g, 2);
    do
        list = (uint32_t)next64(g) & (uint32_t)next64(g) & 0x7fff; /* about a quarter of the registers */
    while (!list);
    if (w && (list >> rb & 1)) {
        /* stm may keep the base when it is the lowest register */
        if (load || (list & ((1u << rb) - 1)))
            list &= ~(1u << rb);
        if (!list)
            list = 1u << reg_not(g, 1u << rb);
    }
    if (!load && !user && chance(g, 5))
        list |= 1u << 15; /* stores the PC + 8 (implementation defined; Unicorn's choice) */
    a_base(g, rb);
    arm(g, c << 28 | 0x08000000 | pu << 23 | user << 22 | w << 21 | load << 20 | rb << 16 | list);
    if (user)
        arm(g, 0xe1a00000); /* nop: the next instruction must not touch banked registers */
}

static void a_swp(struct gen *g)
{
    uint32_t rb = reg(g), rd = reg_not(g, 1u << rb), rm = reg_not(g, 1u << rb);
    a_base(g, rb);
    arm(g, cond(g) << 28 | 0x01000090 | rnd(g, 2) << 22 | rb << 16 | rd << 12 | rm);
}

static void a_mrs(struct gen *g)
{
    uint32_t spsr = has_spsr(g->mode) && chance(g, 40);
    arm(g, cond(g) << 28 | 0x010f0000 | spsr << 22 | reg(g) << 12);
}

/* msr of the flags, of the control field in the same mode (ignored in
 * USR mode), of the SPSR */
static void a_msr(struct gen *g)
{
    uint32_t c = cond(g), k = rnd(g, 10);
    if (k < 3) { /* cpsr_f, #imm */
        arm(g, c << 28 | 0x0328f400 | (rnd(g, 256) & flag_mask(g) >> 24));
    } else if (k < 6) { /* and rt, ry, #flags; msr cpsr_f, rt */
        uint32_t rt = reg(g);
        arm(g, 0xe2000400 | reg(g) << 16 | rt << 12 | flag_mask(g) >> 24);
        arm(g, c << 28 | 0x0128f000 | rt);
    } else if (k < 8) { /* cpsr_c or cpsr_fc keeping the mode: I and F */
        uint32_t mode = privileged(g->mode) ? g->mode : modes[rnd(g, 7)];
        uint32_t rt = reg(g), fields = rnd(g, 2) ? 9 : 1;
        arm(g, 0xe3a00000 | rt << 12 | rnd(g, 4) << 6 | mode);
        if (fields == 9)
            arm(g, 0xe3800400 | rt << 16 | rt << 12 | (rnd(g, 256) & flag_mask(g) >> 24));
        arm(g, c << 28 | 0x0120f000 | fields << 16 | rt);
    } else if (has_spsr(g->mode)) { /* spsr_<fields>: a whole valid PSR, or its flags */
        if (chance(g, 30)) {
            arm(g, c << 28 | 0x0368f400 | (rnd(g, 256) & flag_mask(g) >> 24));
        } else {
            uint32_t psr = random_psr(g), rt = reg(g);
            arm(g, 0xe3a00000 | rt << 12 | (psr & 0xff));
            arm(g, 0xe3800400 | rt << 16 | rt << 12 | psr >> 24);
            arm(g, c << 28 | 0x0160f000 | (1 + rnd(g, 15)) << 16 | rt);
        }
    } else {
        arm(g, c << 28 | 0x0328f400 | (rnd(g, 256) & flag_mask(g) >> 24));
    }
}

static void a_svc(struct gen *g)
{
    arm(g, cond(g) << 28 | 0x0f000000 | (chance(g, 20) ? 0x123456 : rnd(g, 1u << 24)));
}

static void a_bkpt(struct gen *g)
{
    uint32_t imm = chance(g, 20) ? 0xab : rnd(g, 0x10000);
    arm(g, 0xe1200070 | (imm >> 4) << 8 | (imm & 15));
}

static void a_pld(struct gen *g)
{
    uint32_t rb = reg(g);
    if (chance(g, 70)) /* a hint: never a fault, even outside memory */
        a_base(g, rb);
    arm(g, 0xf550f000 | rnd(g, 2) << 23 | rb << 16 | rnd(g, 4096));
}

/* ARM946E-S CP15 in a privileged mode: reads of the ID, control and
 * protection registers, and the cache operations that change nothing
 * visible. Left out: writes to the control and protection registers
 * (the interpreter ignores them, QEMU enables the MPU, alignment checks,
 * high vectors), the TCM region registers c9,c1 (QEMU has none) and wait
 * for interrupt (c7,c0,4). */
static void a_cp15(struct gen *g)
{
    /* CRn, CRm, opc2 */
    static const uint8_t reads[][3] = {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {1, 0, 0}, {2, 0, 0}, {2, 0, 1}, {3, 0, 0},
                                       {5, 0, 0}, {5, 0, 1}, {5, 0, 2}, {5, 0, 3}, {6, 0, 0}, {6, 3, 0}, {6, 7, 0},
                                       {9, 0, 0}, {9, 0, 1}, {13, 0, 0}, {13, 0, 1}, {15, 0, 0}};
    static const uint8_t ops[][3] = {{7, 5, 0}, {7, 6, 0}, {7, 10, 4}};
    uint32_t c = cond(g);
    if (chance(g, 80)) {
        const uint8_t *r = reads[rnd(g, sizeof reads / sizeof reads[0])];
        uint32_t rd = chance(g, 5) ? 15 : reg(g); /* mrc to the PC sets the flags from bits 31:28 */
        arm(g, c << 28 | 0x0e100f10 | (uint32_t)r[0] << 16 | rd << 12 | (uint32_t)r[2] << 5 | r[1]);
    } else {
        const uint8_t *r = ops[rnd(g, sizeof ops / sizeof ops[0])];
        arm(g, c << 28 | 0x0e000f10 | (uint32_t)r[0] << 16 | reg(g) << 12 | (uint32_t)r[2] << 5 | r[1]);
    }
}

/* A data-processing instruction with no set-up (immediate or immediately
 * shifted operand) whose Rd is not in AVOID. */
static uint32_t a_dp_word(struct gen *g, unsigned avoid)
{
    uint32_t op = rnd(g, 16), s = op >= 8 && op <= 11 ? 1 : rnd(g, 2);
    uint32_t rd = op >= 8 && op <= 11 ? 0 : reg_not(g, avoid), rn = op == 13 || op == 15 ? 0 : rnd(g, 16);
    uint32_t w = chance(g, 50) ? 1u << 25 | rnd(g, 16) << 8 | rnd(g, 256) : rnd(g, 32) << 7 | rnd(g, 4) << 5 | rnd(g, 16);
    return cond(g) << 28 | w | op << 21 | s << 20 | rn << 16 | rd << 12;
}

/* Self-modifying code: a loop run twice whose first instruction the loop
 * rewrites (a word, or one byte of it) after running it once:
 *   mov rc, #2
 *   L: <slot>
 *   sub rt, pc, #; mov rv, #; orr rv, rv, # (x3); str/strb rv, [rt]
 *   subs rc, rc, #1; bne L */
static void a_smc(struct gen *g)
{
    uint32_t rc = reg(g), rt = reg_not(g, 1u << rc), rv = reg_not(g, 1u << rc | 1u << rt);
    unsigned avoid = 1u << rc | 1u << rt | 1u << rv;
    arm(g, 0xe3a00002 | rc << 12);
    uint32_t slot = arm(g, a_dp_word(g, avoid)), w = a_dp_word(g, avoid);
    uint32_t at = arm(g, 0);
    put32(g, at, 0xe24f0f00 | rt << 12 | (at + 8 - slot) >> 2); /* sub rt, pc, # */
    if (chance(g, 75)) {
        arm(g, 0xe3a00400 | rv << 12 | w >> 24);
        arm(g, 0xe3800800 | rv << 16 | rv << 12 | (w >> 16 & 0xff));
        arm(g, 0xe3800c00 | rv << 16 | rv << 12 | (w >> 8 & 0xff));
        arm(g, 0xe3800000 | rv << 16 | rv << 12 | (w & 0xff));
        arm(g, 0xe5800000 | rt << 16 | rv << 12); /* str rv, [rt] */
    } else {
        /* one byte of the slot: the immediate (or Rm and the shift, bit 4
         * kept clear), or Rd (kept out of AVOID, and 0 in tst..cmn) and
         * the rotation (or shift amount) */
        uint32_t old, k = rnd(g, 2), byte;
        memcpy(&old, &g->s->code[slot - GEN_CODE_BASE], 4);
        if (k == 0) {
            byte = rnd(g, 256) & (old & (1u << 25) ? 0xff : 0xef);
        } else {
            uint32_t op = old >> 21 & 15, rd = op >= 8 && op <= 11 ? 0 : reg_not(g, avoid);
            byte = rd << 4 | rnd(g, 16);
        }
        arm(g, 0xe3a00000 | rv << 12 | byte);
        arm(g, 0xe5c00000 | rt << 16 | rv << 12 | k); /* strb rv, [rt, #k] */
    }
    arm(g, 0xe2500001 | rc << 16 | rc << 12); /* subs rc, rc, #1 */
    uint32_t bne = arm(g, 0x1a000000);
    a_patch_branch(g, bne, slot);
}

/* b, bl, conditional, over filler */
static void a_branch(struct gen *g)
{
    uint32_t b[8], at = arm(g, cond(g) << 28 | 0x0a000000 | rnd(g, 2) << 24);
    unsigned n = filler(g, 4, b);
    a_patch_branch(g, at, b[rnd(g, n)]);
}

/* The same state through a register: add rt, pc, #; bx/blx/mov pc; or a
 * jump table: mov rt, #k; add pc, pc, rt, lsl #2 */
static void a_branch_reg(struct gen *g)
{
    uint32_t b[8], c = cond(g), rt = reg(g), k = rnd(g, g->v5 ? 4 : 3);
    uint32_t adr = arm(g, 0), at = arm(g, 0);
    unsigned n = filler(g, 4, b), i = rnd(g, n);
    if (k == 1 && b[i] < at + 8) /* the table cannot reach the next instruction */
        k = 0;
    if (k == 0)
        put32(g, at, c << 28 | 0x01a0f000 | rt); /* mov pc, rt */
    else if (k == 1)
        put32(g, at, c << 28 | 0x008ff100 | rt); /* add pc, pc, rt, lsl #2 */
    else if (k == 2)
        put32(g, at, c << 28 | 0x012fff10 | rt); /* bx rt */
    else
        put32(g, at, c << 28 | 0x012fff30 | rt); /* blx rt */
    if (k == 1)
        put32(g, adr, 0xe3a00000 | rt << 12 | (b[i] - (at + 8)) >> 2);
    else
        a_patch_adr(g, adr, rt, b[i]);
}

/* ldr pc from memory the instruction before stored the target to, any
 * addressing mode; the same state (bit 0 clear) */
static void a_ldr_pc(struct gen *g, bool to_thumb)
{
    uint32_t b[8], c = to_thumb ? AL : cond(g), rb = reg(g), rt = reg_not(g, 1u << rb);
    uint32_t p = chance(g, 70), u = rnd(g, 2), w = p ? rnd(g, 2) : 0, slot, off;
    a_base(g, rb);
    uint32_t adr = arm(g, 0);
    if (to_thumb)
        arm(g, 0xe3800001 | rt << 16 | rt << 12); /* orr rt, rt, #1 */
    if (chance(g, 40)) { /* [rb, +-rm, lsl #s] with rm = k */
        uint32_t rm = reg_not(g, 1u << rb | 1u << rt), k = rnd(g, 16), s = rnd(g, 3);
        arm(g, 0xe3a00000 | rm << 12 | k << 2);
        off = 1u << 25 | s << 7 | rm;
        slot = k << 2 << s;
    } else {
        off = rnd(g, 256) & ~3u;
        slot = off;
    }
    if (!p)
        slot = 0;
    /* str rt, [rb, #+-slot] */
    arm(g, 0xe5000000 | 1u << 24 | (p ? u : 1) << 23 | rb << 16 | rt << 12 | slot);
    arm(g, c << 28 | 0x04100000 | p << 24 | u << 23 | w << 21 | rb << 16 | 15 << 12 | off);
    unsigned n;
    if (to_thumb) {
        dead(g, rnd(g, 3));
        g->thumb = true;
        b[0] = g->pos;
        n = 1;
    } else {
        n = filler(g, 4, b);
    }
    a_patch_adr(g, adr, rt, b[rnd(g, n)]);
}

/* ldm rb, {..., pc}, the target stored just before */
static void a_ldm_pc(struct gen *g, bool to_thumb)
{
    uint32_t b[8], c = to_thumb ? AL : cond(g), rb = reg(g), rt = reg_not(g, 1u << rb);
    uint32_t pu = rnd(g, 4), w = rnd(g, 2), list = (uint32_t)next64(g) & (uint32_t)next64(g) & 0x7fff;
    if (w)
        list &= ~(1u << rb);
    unsigned count = (unsigned)__builtin_popcount(list) + 1;
    /* where the PC comes from, relative to rb: DA, IA, DB, IB */
    int32_t slot = pu == 0 ? 0 : pu == 1 ? (int32_t)(4 * (count - 1)) : pu == 2 ? -4 : (int32_t)(4 * count);
    a_base(g, rb);
    uint32_t adr = arm(g, 0);
    if (to_thumb)
        arm(g, 0xe3800001 | rt << 16 | rt << 12);
    arm(g, 0xe5000000 | 1u << 24 | (slot >= 0) << 23 | rb << 16 | rt << 12 | (uint32_t)(slot < 0 ? -slot : slot));
    arm(g, c << 28 | 0x08100000 | pu << 23 | w << 21 | rb << 16 | 1u << 15 | list);
    unsigned n;
    if (to_thumb) {
        dead(g, rnd(g, 3));
        n = 0;
    } else {
        n = filler(g, 4, b);
    }
    if (n == 0) {
        g->thumb = to_thumb;
        b[0] = g->pos;
        n = 1;
    }
    a_patch_adr(g, adr, rt, b[rnd(g, n)]);
}

/* ARM to Thumb, unconditional: blx <imm>, bx/blx rt, ldr/ldm pc (v5) */
static void a_to_thumb(struct gen *g)
{
    unsigned k = g->v5 ? rnd(g, 5) : 0;
    if (k == 3) {
        a_ldr_pc(g, true);
        return;
    }
    if (k == 4) {
        a_ldm_pc(g, true);
        return;
    }
    if (k == 0 || k == 1) { /* add rt, pc, #; orr rt, rt, #1; bx/blx rt */
        uint32_t rt = reg(g), adr = arm(g, 0);
        arm(g, 0xe3800001 | rt << 16 | rt << 12);
        arm(g, (k == 0 ? 0xe12fff10 : 0xe12fff30) | rt);
        dead(g, rnd(g, 3));
        a_patch_adr(g, adr, rt, g->pos);
        g->thumb = true;
        return;
    }
    /* blx <imm>: a halfword-aligned target (H) */
    uint32_t at = arm(g, 0);
    dead(g, rnd(g, 3));
    g->thumb = true;
    if (chance(g, 50))
        dead(g, 1);
    uint32_t d = g->pos - (at + 8);
    put32(g, at, 0xfa000000 | (d & 2) << 23 | (d >> 2 & 0x00ffffffu));
}

/* An exception return (movs pc, rt / subs pc, rt, #4 / ldm {..., pc}^) to
 * a random mode and state, the SPSR set just before. */
static void a_exc_return(struct gen *g)
{
    uint32_t mode = chance(g, 40) ? g->mode : modes[rnd(g, 7)];
    uint32_t t = rnd(g, 2), rs = reg(g), adr;
    uint32_t psr = ((uint32_t)next64(g) & flag_mask(g)) | rnd(g, 4) << 6 | t << 5 | mode;
    arm(g, 0xe3a00000 | rs << 12 | (psr & 0xff));
    arm(g, 0xe3800400 | rs << 16 | rs << 12 | psr >> 24);
    arm(g, 0xe160f000 | (chance(g, 50) ? 15 : 9) << 16 | rs); /* msr spsr_fsxc / spsr_fc */
    unsigned k = rnd(g, 3);
    if (k == 2) { /* the target stored where the ldm takes the PC from */
        uint32_t rb = reg(g), rt = reg_not(g, 1u << rb), pu = rnd(g, 4), w = rnd(g, 2);
        uint32_t list = (uint32_t)next64(g) & (uint32_t)next64(g) & 0x7fff;
        if (w)
            list &= ~(1u << rb);
        unsigned count = (unsigned)__builtin_popcount(list) + 1;
        int32_t slot = pu == 0 ? 0 : pu == 1 ? (int32_t)(4 * (count - 1)) : pu == 2 ? -4 : (int32_t)(4 * count);
        a_base(g, rb);
        adr = arm(g, 0);
        arm(g, 0xe5000000 | 1u << 24 | (slot >= 0) << 23 | rb << 16 | rt << 12 |
                   (uint32_t)(slot < 0 ? -slot : slot));
        arm(g, 0xe8500000 | pu << 23 | w << 21 | rb << 16 | 1u << 15 | list);
        dead(g, rnd(g, 3));
        a_patch_adr(g, adr, rt, g->pos);
    } else {
        uint32_t rt = reg(g);
        adr = arm(g, 0);
        if (k == 0)
            arm(g, 0xe1b0f000 | rt); /* movs pc, rt */
        else
            arm(g, 0xe250f004 | rt << 16); /* subs pc, rt, #4 */
        dead(g, rnd(g, 3));
        /* subs: rt = the target + 4 */
        a_patch_adr(g, adr, rt, g->pos + (k == 1 ? 4 : 0));
    }
    g->thumb = t;
    g->mode = mode;
}

/* msr cpsr_c to another mode (privileged modes only), unconditional */
static void a_mode_switch(struct gen *g)
{
    uint32_t mode = modes[rnd(g, 7)], ctl = rnd(g, 4) << 6 | mode;
    if (chance(g, 50)) {
        arm(g, 0xe321f000 | ctl);
    } else {
        uint32_t rt = reg(g);
        arm(g, 0xe3a00000 | rt << 12 | ctl);
        arm(g, 0xe121f000 | rt);
    }
    g->mode = mode;
}

static void arm_item(struct gen *g)
{
    bool top = g->depth == 0;
    for (;;) {
        unsigned k = rnd(g, 100);
        if (k < 24)
            return a_dp(g);
        if (k < 30)
            return a_mul(g);
        if (k < 36) {
            if (g->v5)
                return a_dsp(g);
            continue;
        }
        if (k < 48)
            return a_ldst(g);
        if (k < 55)
            return a_ldst_h(g);
        if (k < 62)
            return a_ldm(g);
        if (k < 64)
            return a_swp(g);
        if (k < 66)
            return a_mrs(g);
        if (k < 70)
            return a_msr(g);
        if (k < 71)
            return a_svc(g);
        if (k < 72) {
            if (g->v5)
                return a_bkpt(g);
            continue;
        }
        if (k < 73) {
            if (g->v5)
                return a_pld(g);
            continue;
        }
        if (k < 74) {
            if (g->v5 && privileged(g->mode))
                return a_cp15(g);
            continue;
        }
        if (k < 75)
            return a_smc(g);
        if (g->depth >= MAX_DEPTH)
            continue;
        if (k < 80)
            return a_branch(g);
        if (k < 84)
            return a_branch_reg(g);
        if (k < 86)
            return a_ldr_pc(g, false);
        if (k < 88)
            return a_ldm_pc(g, false);
        if (!top)
            continue;
        if (k < 93)
            return a_to_thumb(g);
        if (k < 97) {
            if (has_spsr(g->mode))
                return a_exc_return(g);
            continue;
        }
        if (privileged(g->mode))
            return a_mode_switch(g);
    }
}

/* ---- Thumb items ---- */

static void t_alu(struct gen *g)
{
    unsigned k = rnd(g, 4);
    if (k == 0) { /* lsl lsr asr #imm */
        thumb(g, rnd(g, 3) << 11 | rnd(g, 32) << 6 | rnd(g, 8) << 3 | rnd(g, 8));
    } else if (k == 1) { /* add sub, register or imm3 */
        thumb(g, 0x1800 | rnd(g, 4) << 9 | rnd(g, 8) << 6 | rnd(g, 8) << 3 | rnd(g, 8));
    } else if (k == 2) { /* mov cmp add sub #imm8 */
        thumb(g, 0x2000 | rnd(g, 4) << 11 | rnd(g, 8) << 8 | rnd(g, 256));
    } else { /* the sixteen ALU operations */
        uint32_t op = rnd(g, 16), rd = rnd(g, 8), rs = rnd(g, 8);
        if (op == 13 && rs == rd)
            rs = lo_not(g, 1u << rd);
        thumb(g, 0x4000 | op << 6 | rs << 3 | rd);
    }
}

/* add cmp mov with a high register (not into the PC); add rd, pc/sp, #;
 * add sp, #+-imm */
static void t_hi(struct gen *g)
{
    unsigned k = rnd(g, 10);
    if (k < 6) {
        uint32_t op = rnd(g, 3), rd, rm;
        do {
            rd = rnd(g, 15);
            rm = rnd(g, op == 1 ? 15 : 16);
        } while (rd < 8 && rm < 8);
        thumb(g, 0x4400 | op << 8 | (rd >> 3) << 7 | (rm >> 3) << 6 | (rm & 7) << 3 | (rd & 7));
    } else if (k < 9) {
        thumb(g, 0xa000 | rnd(g, 2) << 11 | rnd(g, 8) << 8 | rnd(g, 256));
    } else {
        thumb(g, 0xb000 | rnd(g, 2) << 7 | rnd(g, 128));
    }
}

static void t_ldst(struct gen *g)
{
    unsigned k = rnd(g, 10);
    if (k < 1) { /* ldr rd, [pc, #imm8 * 4] */
        thumb(g, 0x4800 | rnd(g, 8) << 8 | rnd(g, 256));
        return;
    }
    if (k < 2) { /* str ldr [sp, #imm8 * 4] */
        uint32_t rb = rnd(g, 8);
        t_sp(g, rb);
        thumb(g, 0x9000 | rnd(g, 2) << 11 | rnd(g, 8) << 8 | rnd(g, 256));
        return;
    }
    uint32_t rb = rnd(g, 8);
    t_base(g, rb, lo_not(g, 1u << rb));
    if (k < 6) { /* register offset: str strh strb ldrsb ldr ldrh ldrb ldrsh */
        static const unsigned shift[8] = {2, 1, 0, 0, 2, 1, 0, 1};
        uint32_t op = rnd(g, 8), ro = lo_not(g, 1u << rb);
        /* halfwords at odd addresses too (see a_ldst_h) */
        t_index(g, ro, shift[op] == 1 && chance(g, 10) ? 0 : shift[op]);
        thumb(g, 0x5000 | op << 9 | ro << 6 | rb << 3 | rnd(g, 8));
    } else if (k < 8) { /* str ldr strb ldrb [rb, #imm5] */
        thumb(g, 0x6000 | rnd(g, 4) << 11 | rnd(g, 32) << 6 | rb << 3 | rnd(g, 8));
    } else { /* strh ldrh [rb, #imm5 * 2] */
        thumb(g, 0x8000 | rnd(g, 2) << 11 | rnd(g, 32) << 6 | rb << 3 | rnd(g, 8));
    }
}

static void t_ldm(struct gen *g)
{
    uint32_t list, rb = rnd(g, 8);
    if (chance(g, 50)) { /* push pop, without the PC */
        bool pop = rnd(g, 2);
        t_sp(g, rb);
        list = rnd(g, 256);
        if (!list)
            list = 1u << rnd(g, 8);
        thumb(g, (pop ? 0xbc00 : 0xb400 | rnd(g, 2) << 8) | list);
        return;
    }
    bool load = rnd(g, 2);
    t_base(g, rb, lo_not(g, 1u << rb));
    list = rnd(g, 256);
    if ((list >> rb & 1) && (load || (list & ((1u << rb) - 1))))
        list &= ~(1u << rb);
    if (!list)
        list = 1u << lo_not(g, 1u << rb);
    thumb(g, 0xc000 | load << 11 | rb << 8 | list);
}

static void t_svc(struct gen *g)
{
    if (g->v5 && chance(g, 40)) {
        thumb(g, 0xbe00 | (chance(g, 30) ? 0xab : rnd(g, 256))); /* bkpt */
    } else if (!g->v5 && chance(g, 30)) {
        thumb(g, 0xbeab); /* the semihosting bkpt, on either CPU */
    } else {
        thumb(g, 0xdf00 | (chance(g, 30) ? 0xab : rnd(g, 256)));
    }
}

/* A Thumb instruction with no set-up (shift, add/sub, #imm8, the ALU
 * operations) whose Rd is not in AVOID. */
static uint32_t t_alu_word(struct gen *g, unsigned avoid)
{
    uint32_t rd = lo_not(g, avoid), rs = rnd(g, 8);
    switch (rnd(g, 4)) {
    case 0:
        return rnd(g, 3) << 11 | rnd(g, 32) << 6 | rs << 3 | rd;
    case 1:
        return 0x1800 | rnd(g, 4) << 9 | rnd(g, 8) << 6 | rs << 3 | rd;
    case 2:
        return 0x2000 | rnd(g, 4) << 11 | rd << 8 | rnd(g, 256);
    default: {
        uint32_t op = rnd(g, 16);
        if (op == 13 && rs == rd)
            rs = lo_not(g, 1u << rd);
        return 0x4000 | op << 6 | rs << 3 | rd;
    }
    }
}

/* Self-modifying code, Thumb: as a_smc, with a halfword or byte store
 *   movs rc, #2
 *   L: <slot>
 *   mov rt, pc; subs rt, #; movs rv, #; lsls rv, rv, #8; adds rv, #;
 *   strh rv, [rt] (or strb)
 *   subs rc, #1; bne L */
static void t_smc(struct gen *g)
{
    uint32_t rc = rnd(g, 8), rt = lo_not(g, 1u << rc), rv = lo_not(g, 1u << rc | 1u << rt);
    unsigned avoid = 1u << rc | 1u << rt | 1u << rv;
    thumb(g, 0x2002 | rc << 8);
    uint32_t slot = thumb(g, t_alu_word(g, avoid)), h = t_alu_word(g, avoid);
    uint32_t at = thumb(g, 0x4678 | rt);                 /* mov rt, pc: the address + 4 */
    thumb(g, 0x3800 | rt << 8 | (at + 4 - slot));          /* subs rt, # */
    if (chance(g, 70)) {
        thumb(g, 0x2000 | rv << 8 | h >> 8);               /* movs rv, #hi */
        thumb(g, 0x0000 | 8 << 6 | rv << 3 | rv);          /* lsls rv, rv, #8 */
        thumb(g, 0x3000 | rv << 8 | (h & 0xff));           /* adds rv, #lo */
        thumb(g, 0x8000 | rt << 3 | rv);                   /* strh rv, [rt] */
    } else {
        /* the low byte of the slot: its imm8, or (shift, add/sub, ALU
         * forms) all but Rd, which stays out of AVOID */
        uint32_t old = g->s->code[slot - GEN_CODE_BASE] | g->s->code[slot - GEN_CODE_BASE + 1] << 8, b;
        if ((old & 0xe000) == 0x2000) {
            b = rnd(g, 256);
        } else {
            b = (rnd(g, 256) & 0xf8) | (old & 7);
            if ((old & 0xfc00) == 0x4000 && ((old >> 6 & 12) | (b >> 6)) == 13 && (b >> 3 & 7) == (old & 7))
                b ^= 0x40; /* not mul with Rd == Rm: bic instead */
        }
        thumb(g, 0x2000 | rv << 8 | b);
        thumb(g, 0x7000 | rt << 3 | rv);                   /* strb rv, [rt] */
    }
    thumb(g, 0x3801 | rc << 8);                            /* subs rc, #1 */
    uint32_t bne = thumb(g, 0);
    put16(g, bne, 0xd100 | ((slot - (bne + 4)) >> 1 & 0xff));
}

/* b<cond> over filler */
static void t_bcond(struct gen *g)
{
    uint32_t b[8], c = rnd(g, 14), at = thumb(g, 0);
    unsigned n = filler(g, 3, b);
    put16(g, at, 0xd000 | c << 8 | ((b[rnd(g, n)] - (at + 4)) >> 1 & 0xff));
}

/* The same state, unconditional: b, bl, bx rt, mov pc, rt, add pc, rt,
 * pop {..., pc} */
static void t_jump(struct gen *g)
{
    unsigned k = rnd(g, 6);
    if (k == 0) {
        uint32_t at = thumb(g, 0);
        dead(g, rnd(g, 3));
        put16(g, at, 0xe000 | ((g->pos - (at + 4)) >> 1 & 0x7ff));
    } else if (k == 1) { /* bl: the pair */
        uint32_t at = thumb(g, 0);
        thumb(g, 0);
        dead(g, rnd(g, 3));
        uint32_t d = (g->pos - (at + 4)) >> 1;
        put16(g, at, 0xf000 | (d >> 11 & 0x7ff));
        put16(g, at + 2, 0xf800 | (d & 0x7ff));
    } else if (k == 2 || k == 3) { /* adr rt, l; adds rt, #1; bx rt / adr rt, l; mov pc, rt */
        uint32_t rt = rnd(g, 8), adr = thumb(g, 0);
        if (k == 2) {
            thumb(g, 0x3001 | rt << 8);
            thumb(g, 0x4700 | rt << 3);
        } else {
            thumb(g, 0x4687 | rt << 3);
        }
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
    } else if (k == 4) { /* movs rt, #k; add pc, rt */
        uint32_t rt = rnd(g, 8), mov = thumb(g, 0), at = thumb(g, 0x4487 | rt << 3);
        dead(g, 1 + rnd(g, 3)); /* the PC reads as the address + 4 */
        put16(g, mov, 0x2000 | rt << 8 | (g->pos - (at + 4)));
    } else { /* pop {..., pc}, the target (Thumb) stored just before */
        uint32_t rb = rnd(g, 8), rt = lo_not(g, 1u << rb), list = rnd(g, 256);
        t_sp(g, rb);
        uint32_t adr = thumb(g, 0);
        thumb(g, 0x3001 | rt << 8);
        thumb(g, 0x9000 | rt << 8 | (unsigned)__builtin_popcount(list)); /* str rt, [sp, #4n] */
        thumb(g, 0xbd00 | list);
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
    }
}

/* Thumb to ARM, unconditional: bx pc, bx/blx rt, blx <imm>, pop {pc} */
static void t_to_arm(struct gen *g)
{
    unsigned k = g->v5 ? rnd(g, 5) : rnd(g, 2);
    if (k == 0) { /* bx pc from a word-aligned address: to the word after */
        if (g->pos & 2)
            thumb(g, 0x46c0); /* nop */
        thumb(g, 0x4778);
        dead(g, 1);
    } else if (k == 1 || k == 2) { /* adr rt, l; bx/blx rt */
        uint32_t rt = rnd(g, 8), adr = thumb(g, 0);
        thumb(g, (k == 1 ? 0x4700 : 0x4780) | rt << 3);
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
    } else if (k == 3) { /* blx <imm>: the pair, the target word-aligned */
        uint32_t at = thumb(g, 0);
        thumb(g, 0);
        dead(g, rnd(g, 3));
        t_align(g);
        uint32_t d = (g->pos - (at + 4)) >> 1;
        if (d & 1)
            d++;
        put16(g, at, 0xf000 | (d >> 11 & 0x7ff));
        put16(g, at + 2, 0xe800 | (d & 0x7ff));
    } else { /* pop {..., pc} with bit 0 clear */
        uint32_t rb = rnd(g, 8), rt = lo_not(g, 1u << rb), list = rnd(g, 256);
        t_sp(g, rb);
        uint32_t adr = thumb(g, 0);
        thumb(g, 0x9000 | rt << 8 | (unsigned)__builtin_popcount(list));
        thumb(g, 0xbd00 | list);
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
    }
    g->thumb = false;
}

static void thumb_item(struct gen *g)
{
    bool top = g->depth == 0;
    for (;;) {
        unsigned k = rnd(g, 100);
        if (k < 40)
            return t_alu(g);
        if (k < 50)
            return t_hi(g);
        if (k < 70)
            return t_ldst(g);
        if (k < 78)
            return t_ldm(g);
        if (k < 80)
            return t_svc(g);
        if (k < 81)
            return t_smc(g);
        if (g->depth >= MAX_DEPTH - 1) /* a b<cond> reaches 256 bytes only */
            continue;
        if (k < 88)
            return t_bcond(g);
        if (k < 94)
            return t_jump(g);
        if (!top)
            continue;
        return t_to_arm(g);
    }
}

static void m_item(struct gen *g);

static void item(struct gen *g)
{
    if (g->m)
        m_item(g);
    else if (g->thumb)
        thumb_item(g);
    else
        arm_item(g);
}

/* An undefined instruction, on ARMv4T and ARMv5TE alike and in QEMU's
 * ARM946E-S: ARM's permanently undefined space, the ARMv6 media space,
 * ldrex, coprocessors 1-13, ldm/stm with an empty list or the PC as base
 * (UNPREDICTABLE: both engines refuse them); Thumb's b<cond> with cond 14 and the ARMv6
 * miscellaneous forms 0xb2xx, 0xb6xx, 0xb7xx, 0xbaxx. Not 0xb1xx, 0xb3xx,
 * 0xb9xx, 0xbbxx, 0xbfxx: QEMU runs them as Thumb-2's cbz and IT/hints
 * even on the ARM946E-S. */
static void undefined_tail(struct gen *g)
{
    uint32_t x = (uint32_t)next64(g);
    if (g->thumb) {
        static const uint16_t top[] = {0xde00, 0xb200, 0xb600, 0xb700, 0xba00};
        thumb(g, top[rnd(g, 5)] | (x & 0xff));
        return;
    }
    switch (rnd(g, 5)) {
    case 0: /* udf */
        arm(g, 0xe7f000f0 | (x & 0x000fff0f));
        break;
    case 1: /* media: cond 011x xxxx ... xxx1 xxxx, outside udf */
        arm(g, 0xe6000010 | (x & 0x00ffffef));
        break;
    case 2: /* ldrex */
        arm(g, 0xe1900f9f | (x & 0x000ff000) | (x >> 16 & 0xf) << 16);
        break;
    case 3: /* mcr / mrc / cdp to coprocessors 1-13 */
        arm(g, 0xee000000 | (x & 0x00fff0ff) | (1 + rnd(g, 13)) << 8);
        break;
    default: /* ldm / stm with no register, or with the PC as base */
        if (chance(g, 50))
            arm(g, 0xe8000000 | (x & 0x01ff0000));
        else
            arm(g, 0xe80f0000 | (x & 0x01f0ffff) | (x & 0xffff ? 0 : 1));
        break;
    }
}

/* The stream's last instruction: a load, store or branch outside memory
 * (GEN_NOWHERE), or an undefined instruction; unconditional. */
static void fault_tail(struct gen *g)
{
    struct gen_stream *s = g->s;
    if (chance(g, 25)) {
        s->fault = GEN_FAULT_UNDEFINED;
        undefined_tail(g);
        return;
    }
    unsigned k = rnd(g, 3), rb = g->thumb ? rnd(g, 8) : reg(g), rd = g->thumb ? rnd(g, 8) : reg_not(g, 1u << rb);
    uint32_t off;
    s->fault = k == 0 ? GEN_FAULT_READ : k == 1 ? GEN_FAULT_WRITE : GEN_FAULT_FETCH;
    if (g->thumb) {
        thumb(g, 0x2020 | rb << 8);                /* movs rb, #0x20 */
        thumb(g, 0x0000 | 24 << 6 | rb << 3 | rb); /* lsls rb, rb, #24 */
        if (k == 2) {
            thumb(g, chance(g, 50) ? 0x4700 | rb << 3 : 0x4687 | rb << 3); /* bx rb / mov pc, rb */
            s->fault_addr = GEN_NOWHERE;
            return;
        }
        switch (rnd(g, 3)) {
        case 0: /* ldr str [rb, #imm5 * 4] */
            off = rnd(g, 32);
            thumb(g, 0x6000 | (k == 0) << 11 | off << 6 | rb << 3 | rd);
            off *= 4;
            break;
        case 1: /* ldrb strb */
            off = rnd(g, 32);
            thumb(g, 0x7000 | (k == 0) << 11 | off << 6 | rb << 3 | rd);
            break;
        default: /* ldrh strh */
            off = rnd(g, 32);
            thumb(g, 0x8000 | (k == 0) << 11 | off << 6 | rb << 3 | rd);
            off *= 2;
            break;
        }
        s->fault_addr = GEN_NOWHERE + off;
        return;
    }
    arm(g, 0xe3a00202 | rb << 12); /* mov rb, #0x20000000 */
    if (k == 2) {
        arm(g, chance(g, 50) ? 0xe12fff10 | rb : 0xe1a0f000 | rb); /* bx rb / mov pc, rb */
        s->fault_addr = GEN_NOWHERE;
        return;
    }
    uint32_t load = k == 0;
    switch (rnd(g, g->v5 ? 5 : 4)) {
    case 0: /* ldr str ldrb strb [rb, #+imm12] */
        off = rnd(g, 4096) & ~3u;
        arm(g, 0xe5800000 | rnd(g, 2) << 22 | load << 20 | rb << 16 | rd << 12 | off);
        break;
    case 1: /* ldrh strh ldrsb ldrsh [rb, #+imm8] */
        off = rnd(g, 256) & ~1u;
        arm(g, 0xe1c000b0 | load << 20 | (load ? rnd(g, 3) : 0) << 5 | rb << 16 | rd << 12 | (off >> 4) << 8 |
                   (off & 15));
        break;
    case 2: { /* ldmia / stmia rb, {list} */
        uint32_t list = rnd(g, 0x7fff) + 1;
        arm(g, 0xe8800000 | load << 20 | rb << 16 | list);
        off = 0;
        break;
    }
    case 3: /* swp rd, rd, [rb]: the read comes first */
        arm(g, 0xe1000090 | rb << 16 | rd << 12 | rd);
        s->fault = GEN_FAULT_READ;
        off = 0;
        break;
    default: { /* ldrd strd [rb, #+imm8] */
        uint32_t r2 = 2 * rnd(g, 7);
        off = rnd(g, 32) * 8;
        arm(g, 0xe1c000d0 | (load ? 0 : 0x20) | rb << 16 | r2 << 12 | (off >> 4) << 8 | (off & 15));
        break;
    }
    }
    s->fault_addr = GEN_NOWHERE + off;
}

/* ---- Cortex-M streams ----
 *
 * Thumb only, as ARMv6-M, ARMv7-M, ARMv7E-M (+FPv4-SP) and ARMv8-M
 * mainline (+DSP, FPv5-SP) define it (ARM DDI 0419E, DDI 0403E, DDI
 * 0553). Items as above: an instruction with its set-up (a base register
 * pointed into the data region with movw/movt, or movs/lsls/adds on
 * ARMv6-M). An IT item sets up one low base register, then runs an IT
 * block of 1-4 instructions of the classes allowed in it (no set-up
 * inside; none writes that base; the last may be a b.n over filler).
 *
 * Left out as UNPREDICTABLE (DDI 0403E; ARMv6-M and ARMv8-M alike):
 * - SP and PC as any operand of 32-bit data processing, multiplies,
 *   DSP, bitfield, extend, clz/rbit/rev and saturate instructions, and as
 *   Rt/Rt2 of loads and stores; the SP forms (add/sub sp, #imm and
 *   add rd, sp, rm ...) are made only as 16-bit add/sub sp with the SP
 *   kept valid. 16-bit hi-register add/mov/cmp: no SP or PC (cmp with two
 *   low registers is UNPREDICTABLE).
 * - ThumbExpandImm's zero imm8 with a non-zero rotation form
 *   (imm12 = 00xx 0000 0000, xx != 00).
 * - ssat/usat with an ASR shift of 0 on ARMv7-M (it is ssat16/usat16,
 *   ARMv7E-M); sbfx/ubfx with lsb + width > 32; bfi/bfc with msb < lsb.
 * - umull...smlal with RdLo == RdHi.
 * - loads/stores with writeback whose base is Rt (or Rt2); ldrd with
 *   Rt == Rt2; ldm/stm with fewer than 2 registers (32-bit) or with the
 *   base in the list and writeback; the SP in a list; the PC in an stm
 *   list, LR and PC both in an ldm list; strex with Rd the base or Rt.
 * - unaligned ldrd/strd, ldm/stm, ldrex/strex, lda/stl and vldr/vstm
 *   (they fault); unaligned accesses at all on ARMv6-M (they fault there).
 * - IT: firstcond 1111, AL with more than one instruction; in an IT
 *   block: IT, cbz/cbnz, b<cond>, tbb/tbh, bkpt, the unconditional FPv5
 *   instructions (vsel, vmaxnm, vrinta ...), and a branch but as the last.
 * - vldm/vstm of 0 registers or past s31; vmov to two core registers
 *   Rt == Rt2; vmov of s31:s32.
 * Left out because both engines would take an exception (not compared
 * here: lockstep runs take none): svc, wfi/wfe, udf but as a stream's
 * last instruction, bx/pop/ldr pc to an even address, msr to CONTROL
 * setting nPRIV or SPSEL, MSPLIM above the SP (ARMv8-M's stack limit).
 * Unicorn quirks left out: msr psp with bits 1:0 set (QEMU keeps them;
 * the architecture writes R[n]<31:2>:'00'); msr CONTROL clearing FPCA
 * (the next FP instruction creates a new FP context: QEMU loads the whole
 * FPSCR from FPDSCR).
 * Left out for QEMU: the exclusives are only a ldrex and its strex next
 * to each other (or a strex after clrex): QEMU's strex succeeds when the
 * memory still holds the loaded value, not by the local monitor, so a
 * store between them is IMPLEMENTATION DEFINED ground; yield and the
 * other hints but nop (QEMU ends its translation block on yield and sev
 * are nops); the security extension's instructions (sg, bxns, tt: QEMU's
 * M33 has TrustZone and runs Secure, nanoprof's M33 has none), and for
 * that mrs/msr CONTROL on ARMv8-M (QEMU's has SFPA, bit 3, set by
 * lockstep.c so that its FPSCR is kept).
 */

enum { M_V7 = 1, M_DSP = 2, M_FP = 4, M_V8 = 8 };

/* the SP's initial value: the data region's upper half; its offset from
 * there stays within +- M_SP_ROOM */
#define M_SP_INIT (GEN_DATA_BASE + 0xc000u)
#define M_SP_ROOM 0x1800

static bool mhas(struct gen *g, unsigned f)
{
    return (g->march & f) == f;
}

static uint32_t t32(struct gen *g, uint32_t hw1, uint32_t hw2)
{
    uint32_t at = g->pos;
    put16(g, at, hw1);
    put16(g, at + 2, hw2);
    g->pos += 4;
    g->s->insns++;
    return at;
}

/* A register for data: r0-r12 or r14, not one of AVOID (nor g->mavoid:
 * an IT block's base) */
static unsigned m_reg(struct gen *g, uint32_t avoid)
{
    avoid |= g->mavoid | 1u << 13 | 1u << 15;
    unsigned r;
    do
        r = rnd(g, 16);
    while (avoid >> r & 1);
    return r;
}

static unsigned m_lo(struct gen *g, uint32_t avoid)
{
    avoid |= g->mavoid;
    unsigned r;
    do
        r = rnd(g, 8);
    while (avoid >> r & 1);
    return r;
}

/* r = V: movw/movt, or on ARMv6-M movs and shifts and adds (flags change) */
static void m_const(struct gen *g, unsigned r, uint32_t v)
{
    if (mhas(g, M_V7)) {
        uint32_t lo = v & 0xffff, hi = v >> 16;
        t32(g, 0xf240 | (lo >> 11 & 1) << 10 | lo >> 12, (lo >> 8 & 7) << 12 | r << 8 | (lo & 0xff));
        if (hi || chance(g, 30))
            t32(g, 0xf2c0 | (hi >> 11 & 1) << 10 | hi >> 12, (hi >> 8 & 7) << 12 | r << 8 | (hi & 0xff));
        return;
    }
    /* r must be low */
    int top = 3;
    while (top > 0 && !(v >> 8 * top & 0xff))
        top--;
    thumb(g, 0x2000 | r << 8 | (v >> 8 * top & 0xff)); /* movs */
    for (int i = top - 1; i >= 0; i--) {
        thumb(g, 0x0000 | 8 << 6 | r << 3 | r); /* lsls r, r, #8 */
        if (v >> 8 * i & 0xff)
            thumb(g, 0x3000 | r << 8 | (v >> 8 * i & 0xff)); /* adds r, #b */
    }
}

/* RB = an address in the data region with MARGIN bytes either side,
 * aligned to ALIGN; returns it */
static uint32_t m_base(struct gen *g, unsigned rb, uint32_t margin, uint32_t align)
{
    uint32_t a = GEN_DATA_BASE + margin + rnd(g, GEN_DATA_SIZE / 2 - 2 * margin);
    if (!mhas(g, M_V7) && align < 4)
        align = 4; /* ARMv6-M: all aligned (the offsets keep it) */
    a &= ~(align - 1);
    m_const(g, rb, a);
    return a;
}

/* A float's bits: the special patterns (zeros, infinities, NaNs quiet and
 * signalling, denormals, the largest and smallest normals, one) or a
 * random word or a random small number */
static uint32_t fp_value(struct gen *g)
{
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                                       0x7f800001, 0xff812345, 0x7fbfffff, 0x00000001, 0x807fffff, 0x00400000,
                                       0x7f7fffff, 0xff7fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000,
                                       0x4f000000, 0xcf000000, 0x4f800000, 0x3f000000, 0x3fc00000, 0x477fe000};
    unsigned k = rnd(g, 10);
    if (k < 4)
        return special[rnd(g, sizeof special / sizeof special[0])];
    if (k < 7) /* a float near 1..1000, signed */
        return (uint32_t)rnd(g, 2) << 31 | (127 + rnd(g, 10)) << 23 | rnd(g, 1u << 23);
    return (uint32_t)next64(g);
}

/* ---- 16-bit instructions (ARMv6-M and later) ---- */

/* one 16-bit data-processing instruction on low registers (none writes
 * g->mavoid) */
static void m_alu16(struct gen *g)
{
    unsigned rd = m_lo(g, 0), rm = rnd(g, 8), rn = rnd(g, 8);
    switch (rnd(g, 6)) {
    case 0: /* lsls lsrs asrs #imm5 */
        thumb(g, rnd(g, 3) << 11 | rnd(g, 32) << 6 | rm << 3 | rd);
        break;
    case 1: /* adds subs reg / imm3 */
        thumb(g, 0x1800 | rnd(g, 4) << 9 | rm << 6 | rn << 3 | rd);
        break;
    case 2: /* movs cmp adds subs #imm8 */
        thumb(g, 0x2000 | rnd(g, 4) << 11 | rd << 8 | rnd(g, 256));
        break;
    default: /* ands eors lsls lsrs asrs adcs sbcs rors tst rsbs cmp cmn orrs muls bics mvns */
        thumb(g, 0x4000 | rnd(g, 16) << 6 | rm << 3 | rd);
        break;
    }
}

/* add/cmp/mov with high registers, no SP or PC; cmp with one high at least */
static void m_hi16(struct gen *g)
{
    unsigned op = rnd(g, 3), d = m_reg(g, 0), m = m_reg(g, 0);
    if (op == 1 && d < 8 && m < 8)
        d = 8 + rnd(g, 5);
    thumb(g, 0x4400 | op << 8 | (d >> 3) << 7 | m << 3 | (d & 7));
}

/* sxth sxtb uxth uxtb rev rev16 revsh */
static void m_ext16(struct gen *g)
{
    unsigned rd = m_lo(g, 0), rm = rnd(g, 8);
    static const uint16_t ops[] = {0xb200, 0xb240, 0xb280, 0xb2c0, 0xba00, 0xba40, 0xbac0};
    thumb(g, ops[rnd(g, 7)] | rm << 3 | rd);
}

/* ldr rt, [pc, #imm8*4]: the code region ahead */
static void m_lit16(struct gen *g)
{
    thumb(g, 0x4800 | m_lo(g, 0) << 8 | rnd(g, 256));
}

/* 16-bit loads and stores from base RB (in the data region, aligned, at
 * least 256 bytes from its edges); RIDX: a low register holding a small
 * index, or 8 for none */
static void m_ldst16_on(struct gen *g, unsigned rb, unsigned ridx)
{
    unsigned rt = m_lo(g, 0), k = rnd(g, ridx < 8 ? 5 : 4);
    switch (k) {
    case 0: /* str ldr [rb, #imm5*4] */
        thumb(g, 0x6000 | rnd(g, 2) << 11 | rnd(g, 32) << 6 | rb << 3 | rt);
        break;
    case 1: /* strb ldrb */
        thumb(g, 0x7000 | rnd(g, 2) << 11 | rnd(g, 32) << 6 | rb << 3 | rt);
        break;
    case 2: /* strh ldrh */
        thumb(g, 0x8000 | rnd(g, 2) << 11 | rnd(g, 32) << 6 | rb << 3 | rt);
        break;
    case 3: /* str ldr [sp, #imm8*4] */
        thumb(g, 0x9000 | rnd(g, 2) << 11 | rt << 8 | rnd(g, 256));
        break;
    default: /* str strh strb ldrsb ldr ldrh ldrb ldrsh [rb, ridx] */
        thumb(g, 0x5000 | rnd(g, 8) << 9 | ridx << 6 | rb << 3 | rt);
        break;
    }
}

static void m_ldst16(struct gen *g)
{
    unsigned rb = m_lo(g, 0), ri = m_lo(g, 1u << rb);
    m_base(g, rb, 0x400, 4);
    /* a small index: aligned to 4 on ARMv6-M (every size aligned) */
    m_const(g, ri, mhas(g, M_V7) ? rnd(g, 200) : 4 * rnd(g, 50));
    m_ldst16_on(g, rb, ri);
}

/* ldmia rb!, {list} / stmia rb!, {list}: the base in an ldm list means
 * no writeback; in an stm list it must be the lowest (else UNPREDICTABLE) */
static void m_ldm16(struct gen *g)
{
    unsigned rb = m_lo(g, 0), load = rnd(g, 2);
    uint32_t list = (rnd(g, 255) + 1) & ~g->mavoid;
    if (!load && (list >> rb & 1) && (list & ((1u << rb) - 1)))
        list &= ~(1u << rb);
    if (!list)
        list = 1u << (rb ^ 1);
    m_base(g, rb, 0x400, 4);
    thumb(g, 0xc000 | load << 11 | rb << 8 | list);
}

/* push/pop, add/sub sp: SP-changing, outside filler and IT only */
static void m_stack16(struct gen *g)
{
    unsigned k = rnd(g, 3);
    if (k == 2) { /* add sp, #imm7*4 / sub sp, #imm7*4, towards the middle */
        uint32_t n = rnd(g, 128) * 4;
        bool up = g->msp_off + (int)n <= M_SP_ROOM && (g->msp_off - (int)n < -M_SP_ROOM || chance(g, 50));
        thumb(g, 0xb000 | (up ? 0 : 0x80) | n / 4);
        g->msp_off += up ? (int)n : -(int)n;
        return;
    }
    uint32_t list = rnd(g, 512);
    unsigned n = (unsigned)__builtin_popcount(list);
    if (!n)
        list = 1, n = 1;
    bool pop = g->msp_off - 4 * (int)n >= -M_SP_ROOM ? chance(g, 50) : true;
    if (pop && g->msp_off + 4 * (int)n > M_SP_ROOM)
        pop = false;
    if (pop) /* pop {list}: bit 8 is the PC here: left out (see m_jump) */
        list &= 0xff;
    if (!list)
        list = 1;
    n = (unsigned)__builtin_popcount(list);
    thumb(g, (pop ? 0xbc00 : 0xb400) | list);
    g->msp_off += pop ? 4 * (int)n : -4 * (int)n;
}

/* adr rd, l / add rd, sp, #imm8*4 */
static void m_adr16(struct gen *g)
{
    thumb(g, (chance(g, 50) ? 0xa000 : 0xa800) | m_lo(g, 0) << 8 | rnd(g, 256));
}

/* ---- 32-bit Thumb-2 (ARMv7-M and later) ---- */

/* a modified immediate's i:imm3:imm8, the UNPREDICTABLE ones left out */
static uint32_t m_mimm(struct gen *g)
{
    for (;;) {
        uint32_t x = rnd(g, 4096);
        if (!(x >> 10 == 0 && (x >> 8 & 3) && !(x & 0xff)))
            return x;
    }
}

static void m_put_mimm(struct gen *g, uint32_t hw1, uint32_t hw2, uint32_t x)
{
    t32(g, hw1 | (x >> 11) << 10, hw2 | (x >> 8 & 7) << 12 | (x & 0xff));
}

/* data processing (modified immediate) and (shifted register) */
static void m_dp32(struct gen *g)
{
    static const uint8_t ops[] = {0, 1, 2, 3, 4, 8, 10, 11, 13, 14};
    unsigned op = ops[rnd(g, 10)], s = rnd(g, 2), rd = m_reg(g, 0), rn = m_reg(g, 0);
    bool imm = chance(g, 50);
    unsigned form = rnd(g, 8); /* 0: the compare form (Rd 15), 1: mov/mvn (Rn 15) */
    if (form == 0 && (op == 0 || op == 4 || op == 8 || op == 13))
        rd = 15, s = 1; /* tst teq cmn cmp */
    else if (form == 1 && (op == 2 || op == 3))
        rn = 15; /* mov mvn */
    if (imm) {
        m_put_mimm(g, 0xf000 | op << 5 | s << 4 | rn, rd << 8, m_mimm(g));
        return;
    }
    if (!mhas(g, M_DSP) || chance(g, 85)) {
        uint32_t sh = rnd(g, 32), type = rnd(g, 4), rm = m_reg(g, 0);
        t32(g, 0xea00 | op << 5 | s << 4 | rn, (sh >> 2) << 12 | rd << 8 | (sh & 3) << 6 | type << 4 | rm);
    } else { /* pkhbt / pkhtb (tb: ASR) */
        uint32_t sh = rnd(g, 32), tb = rnd(g, 2), rm = m_reg(g, 0);
        rd = m_reg(g, 0), rn = m_reg(g, 0);
        t32(g, 0xeac0 | rn, (sh >> 2) << 12 | rd << 8 | (sh & 3) << 6 | tb << 5 | rm);
    }
}

/* plain binary immediate: addw subw movw movt, ssat usat (16), sbfx ubfx bfi bfc */
static void m_imm32(struct gen *g)
{
    unsigned rd = m_reg(g, 0), rn = m_reg(g, 0), k = rnd(g, 6);
    uint32_t x = rnd(g, 4096);
    switch (k) {
    case 0: /* addw subw */
        m_put_mimm(g, 0xf200 | (chance(g, 50) ? 0x0a0 : 0) | rn, rd << 8, x);
        break;
    case 1: { /* movw movt */
        uint32_t v = rnd(g, 65536);
        t32(g, (chance(g, 50) ? 0xf240 : 0xf2c0) | (v >> 11 & 1) << 10 | v >> 12,
            (v >> 8 & 7) << 12 | rd << 8 | (v & 0xff));
        break;
    }
    case 2: { /* ssat usat, lsl or asr; ssat16 usat16 on DSP */
        uint32_t u = rnd(g, 2), sh = rnd(g, 2), amt = rnd(g, 32), sat = rnd(g, 32);
        if (sh && !amt) {
            if (!mhas(g, M_DSP))
                amt = 1;
            else
                sat &= 15; /* ssat16 #1-16 / usat16 #0-15 */
        }
        t32(g, 0xf300 | u << 7 | sh << 5 | rn, (amt >> 2) << 12 | rd << 8 | (amt & 3) << 6 | sat);
        break;
    }
    case 3: case 4: { /* sbfx ubfx: lsb + width <= 32 */
        uint32_t lsb = rnd(g, 32), w = rnd(g, 32 - lsb);
        t32(g, (k == 3 ? 0xf340 : 0xf3c0) | rn, (lsb >> 2) << 12 | rd << 8 | (lsb & 3) << 6 | w);
        break;
    }
    default: { /* bfi, bfc (Rn 15): msb >= lsb */
        uint32_t lsb = rnd(g, 32), msb = lsb + rnd(g, 32 - lsb);
        t32(g, 0xf360 | (chance(g, 20) ? 15 : rn), (lsb >> 2) << 12 | rd << 8 | (lsb & 3) << 6 | msb);
        break;
    }
    }
}

/* register shifts, extends (the DSP's sxtab16 ... on DSP), clz rbit rev,
 * parallel add/sub, saturating add/sub, sel */
static void m_misc32(struct gen *g)
{
    unsigned rd = m_reg(g, 0), rn = m_reg(g, 0), rm = m_reg(g, 0);
    unsigned k = rnd(g, mhas(g, M_DSP) ? 6 : 3);
    switch (k) {
    case 0: /* lsl lsr asr ror (s) rd, rn, rm */
        t32(g, 0xfa00 | rnd(g, 4) << 5 | rnd(g, 2) << 4 | rn, 0xf000 | rd << 8 | rm);
        break;
    case 1: { /* sxth uxth sxtb uxtb (Rn 15); DSP: the add forms and the 16 ones */
        unsigned op = mhas(g, M_DSP) ? rnd(g, 6) : (unsigned[]){0, 1, 4, 5}[rnd(g, 4)];
        unsigned n = mhas(g, M_DSP) && chance(g, 60) ? rn : 15;
        t32(g, 0xfa00 | op << 4 | n, 0xf080 | rd << 8 | rnd(g, 4) << 4 | rm);
        break;
    }
    case 2: { /* rev rev16 rbit revsh, clz: Rm twice */
        unsigned op = rnd(g, 5);
        if (op < 4)
            t32(g, 0xfa90 | rm, 0xf080 | rd << 8 | op << 4 | rm);
        else
            t32(g, 0xfab0 | rm, 0xf080 | rd << 8 | rm);
        break;
    }
    case 3: case 4: { /* parallel add/sub: op1 000 001 010 100 101 110, signed/unsigned, plain Q H */
        static const uint8_t op1s[] = {0, 1, 2, 4, 5, 6};
        t32(g, 0xfa80 | op1s[rnd(g, 6)] << 4 | rn, 0xf000 | rd << 8 | rnd(g, 2) << 6 | rnd(g, 3) << 4 | rm);
        break;
    }
    default: /* qadd qdadd qsub qdsub, sel */
        if (chance(g, 70))
            t32(g, 0xfa80 | rn, 0xf080 | rd << 8 | rnd(g, 4) << 4 | rm);
        else
            t32(g, 0xfaa0 | rn, 0xf080 | rd << 8 | rm);
        break;
    }
}

/* multiplies: mul mla mls, the long ones, sdiv udiv; DSP: smla<x><y> ... */
static void m_mul32(struct gen *g)
{
    unsigned rd = m_reg(g, 0), rn = m_reg(g, 0), rm = m_reg(g, 0), ra = m_reg(g, 0);
    unsigned k = rnd(g, mhas(g, M_DSP) ? 5 : 3);
    if (k == 0) { /* mul mla mls */
        unsigned op2 = rnd(g, 2);
        t32(g, 0xfb00 | rn, (op2 == 0 && chance(g, 40) ? 15 : ra) << 12 | rd << 8 | op2 << 4 | rm);
    } else if (k == 1) { /* smull umull smlal umlal; sdiv udiv */
        static const uint8_t op1s[] = {0, 2, 4, 6};
        unsigned lo = m_reg(g, 0), hi = m_reg(g, 1u << lo);
        if (chance(g, 30)) /* sdiv udiv: the divisor often small or zero */
            t32(g, (chance(g, 50) ? 0xfb90 : 0xfbb0) | rn, 0xf0f0 | rd << 8 | rm);
        else
            t32(g, 0xfb80 | op1s[rnd(g, 4)] << 4 | rn, lo << 12 | hi << 8 | rm);
    } else if (k == 2 && !g->in_it) { /* a divide with a divisor set just before: 0, 1, -1, small */
        static const uint32_t d[] = {0, 1, 0xffffffff, 2, 3, 7, 0x80000000};
        m_const(g, rm, d[rnd(g, 7)]);
        t32(g, (chance(g, 50) ? 0xfb90 : 0xfbb0) | rn, 0xf0f0 | rd << 8 | rm);
    } else if (k == 2) { /* in an IT block: no set-up */
        t32(g, (chance(g, 50) ? 0xfb90 : 0xfbb0) | rn, 0xf0f0 | rd << 8 | rm);
    } else if (k == 3) { /* DSP 32-bit: smla<x><y> smlad smlaw<y> smlsd smmla smmls usada8 (Ra 15: the mul forms) */
        unsigned op1 = 1 + rnd(g, 7), op2 = rnd(g, op1 == 1 ? 4 : 2);
        if (op1 == 7)
            op2 = 0;
        if (op1 == 6 && ra == 15)
            ra = 0; /* smmls has no Ra 15 form */
        bool mulform = op1 != 6 && chance(g, 40);
        t32(g, 0xfb00 | op1 << 4 | rn, (mulform ? 15 : ra) << 12 | rd << 8 | op2 << 4 | rm);
    } else { /* DSP long: smlal<x><y> smlald smlsld umaal */
        unsigned lo = m_reg(g, 0), hi = m_reg(g, 1u << lo), c = rnd(g, 4);
        static const uint16_t hw1[] = {0xfbc0, 0xfbc0, 0xfbd0, 0xfbe0};
        static const uint8_t op2[] = {0x8, 0xc, 0xc, 0x6};
        unsigned o = op2[c] | (c == 0 ? rnd(g, 4) : c < 3 ? rnd(g, 2) : 0);
        t32(g, hw1[c] | rn, lo << 12 | hi << 8 | o << 4 | rm);
    }
}

/* 32-bit loads and stores of one register, all forms, base RB (aligned to 4,
 * at least 4 KiB from the data region's edges); IT: no writeback of an
 * unaligned amount. RI: an index register (small value) or 16 for none. */
static void m_ldst32_on(struct gen *g, unsigned rb, unsigned ri, bool in_it)
{
    static const uint16_t kinds[] = {0xf800, 0xf820, 0xf840, 0xf900, 0xf920}; /* b h w sb sh */
    unsigned k = rnd(g, 5), load = k >= 3 ? 1 : rnd(g, 2), rt = m_reg(g, 1u << rb);
    uint32_t hw1 = kinds[k] | load << 4 | rb;
    unsigned form = rnd(g, ri < 16 ? 4 : 3);
    if (form == 0) { /* imm12 */
        uint32_t imm = rnd(g, 4096);
        if (!mhas(g, M_V7))
            imm &= ~3u;
        t32(g, hw1 | 0x80, rt << 12 | imm);
    } else if (form == 1 || form == 2) { /* imm8: negative offset, pre-indexed, post-indexed */
        static const uint8_t puw[] = {4, 5, 7, 1, 3};
        uint32_t imm = rnd(g, 256);
        if (in_it)
            imm &= ~3u;
        t32(g, hw1, rt << 12 | 0x800 | puw[rnd(g, 5)] << 8 | imm);
    } else { /* register, lsl #0-3 */
        t32(g, hw1, rt << 12 | rnd(g, 4) << 4 | ri);
    }
}

/* ldrd strd, ldm stm (ia db, writeback or not), ldrex strex (b h w) pairs,
 * literal loads, pld, and the ARMv8-M lda/stl */
static void m_ldst32(struct gen *g)
{
    unsigned rb = m_reg(g, 0), k = rnd(g, mhas(g, M_V8) ? 7 : 6);
    switch (k) {
    case 0: case 1: { /* one register; an index for the register form */
        unsigned ri = m_reg(g, 1u << rb);
        m_base(g, rb, 0x1000, 1);
        m_const(g, ri, rnd(g, 256));
        m_ldst32_on(g, rb, ri, false);
        break;
    }
    case 2: { /* ldrd strd: offset, pre-indexed, post-indexed (P W: 10 11 01), Rt != Rt2, no writeback into them */
        unsigned rt = m_reg(g, 1u << rb), rt2 = m_reg(g, 1u << rb | 1u << rt), f = rnd(g, 3);
        unsigned p = f < 2, w = f > 0;
        m_base(g, rb, 0x400, 4);
        t32(g, 0xe840 | p << 8 | rnd(g, 2) << 7 | w << 5 | rnd(g, 2) << 4 | rb, rt << 12 | rt2 << 8 | rnd(g, 256));
        break;
    }
    case 3: { /* ldm stm ia/db: 2+ registers, no SP, no PC; base in the list only without writeback */
        unsigned load = rnd(g, 2), w = rnd(g, 2), db = rnd(g, 2);
        uint32_t list;
        do
            list = rnd(g, 0x8000) & ~(1u << 13 | (w ? 1u << rb : 0));
        while (__builtin_popcount(list) < 2);
        m_base(g, rb, 0x400, 4);
        t32(g, (db ? 0xe900 : 0xe880) | w << 5 | load << 4 | rb, list);
        break;
    }
    case 4: { /* ldrex strex (b h w): the pair, or a strex after clrex (fails) */
        unsigned sz = rnd(g, 3), rt = m_reg(g, 1u << rb), rd = m_reg(g, 1u << rb | 1u << rt);
        m_base(g, rb, 0x400, 4);
        bool pair = chance(g, 75);
        if (pair) {
            if (sz == 2)
                t32(g, 0xe850 | rb, rt << 12 | 0xf00 | 0); /* ldrex rt, [rb] */
            else
                t32(g, 0xe8d0 | rb, rt << 12 | 0xf4f | sz << 4);
        } else {
            t32(g, 0xf3bf, 0x8f2f); /* clrex */
        }
        unsigned rs = m_reg(g, 1u << rb | 1u << rd); /* the stored value */
        if (sz == 2)
            t32(g, 0xe840 | rb, rs << 12 | rd << 8 | 0);
        else
            t32(g, 0xe8c0 | rb, rs << 12 | 0xf40 | sz << 4 | rd);
        break;
    }
    case 5: { /* literal loads (ahead, or back within the code region), pld */
        static const uint16_t kinds[] = {0xf81f, 0xf83f, 0xf85f, 0xf91f, 0xf93f};
        unsigned rt = m_reg(g, 0);
        uint32_t back = (g->pos & ~3u) - GEN_STREAM;
        if (chance(g, 15)) { /* pld [rb, #imm12] */
            m_base(g, rb, 0x1000, 1);
            t32(g, 0xf890 | rb, 0xf000 | rnd(g, 4096));
        } else if (chance(g, 50) && back > 8) {
            t32(g, kinds[rnd(g, 5)], rt << 12 | rnd(g, back < 4096 ? back : 4096));
        } else {
            t32(g, kinds[rnd(g, 5)] | 0x80, rt << 12 | rnd(g, TAIL_ROOM - 8));
        }
        break;
    }
    default: { /* ARMv8-M lda ldab ldah / stl stlb stlh: aligned */
        unsigned sz = rnd(g, 3), rt = m_reg(g, 1u << rb), load = rnd(g, 2);
        m_base(g, rb, 0x400, 4);
        t32(g, (load ? 0xe8d0 : 0xe8c0) | rb, rt << 12 | 0xf8f | sz << 4);
        break;
    }
    }
}

/* 32-bit push/pop (stmdb sp! / ldmia sp!), 2+ registers, no SP, PC */
static void m_stack32(struct gen *g)
{
    uint32_t list;
    do
        list = rnd(g, 0x8000) & ~(1u << 13);
    while (__builtin_popcount(list) < 2);
    int n = __builtin_popcount(list);
    bool pop = g->msp_off - 4 * n >= -M_SP_ROOM ? chance(g, 50) : true;
    if (pop && g->msp_off + 4 * n > M_SP_ROOM)
        pop = false;
    t32(g, pop ? 0xe8bd : 0xe92d, list);
    g->msp_off += pop ? 4 * n : -4 * n;
}

/* mrs of every readable register; msr APSR (nzcvq, g on DSP), PRIMASK,
 * BASEPRI, FAULTMASK, PSP, CONTROL (only FPCA changes), MSPLIM/PSPLIM
 * (ARMv8-M, below the data region); barriers */
static void m_sys32(struct gen *g)
{
    unsigned r = mhas(g, M_V7) ? m_reg(g, 0) : m_lo(g, 0), k = rnd(g, 4); /* ARMv6-M's m_const: low */
    if (k == 0) {
        static const uint8_t v6[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, 16, 20};
        /* ARMv8-M: not CONTROL, whose SFPA bit QEMU's Secure M33 has */
        static const uint8_t v7[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, 16, 17, 18, 19, 10, 11, 20};
        unsigned sysm = mhas(g, M_V8) ? v7[rnd(g, 15)] : mhas(g, M_V7) ? v7[(unsigned[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                                                                      11, 12, 15}[rnd(g, 14)]]
                                                     : v6[rnd(g, 11)];
        t32(g, 0xf3ef, 0x8000 | r << 8 | sysm);
    } else if (k == 1) {
        unsigned mask = !mhas(g, M_DSP) ? 2 : 1 + rnd(g, 3);
        unsigned sysm = (unsigned[]){0, 1, 2, 3}[rnd(g, 4)];
        if (!mhas(g, M_V7))
            mask = 2;
        t32(g, 0xf380 | r, 0x8000 | mask << 10 | sysm);
    } else if (k == 2) {
        static const uint8_t v6[] = {16, 9, 20};
        /* not FAULTMASK: lockstep runs with it set (lockstep.c) */
        static const uint8_t v7[] = {16, 9, 20, 17, 18, 10, 11};
        static const uint8_t v8[] = {16, 9, 17, 18, 10, 11}; /* not CONTROL (SFPA, above) */
        unsigned sysm = mhas(g, M_V8) ? v8[rnd(g, 6)] : mhas(g, M_V7) ? v7[rnd(g, 5)] : v6[rnd(g, 3)];
        uint32_t v = value(g);
        if (sysm == 20) /* CONTROL: nPRIV and SPSEL stay 0; FPCA stays 1 with an FPU (lockstep.c) */
            v = mhas(g, M_FP) ? 4 : 0;
        if (sysm == 9) /* PSP: bits 1:0 zero (QEMU keeps them: see lockstep_m_findings) */
            v &= ~3u;
        if (sysm == 10 || sysm == 11)
            v = rnd(g, GEN_DATA_BASE);
        m_const(g, r, v);
        t32(g, 0xf380 | r, 0x8800 | sysm);
        /* and read it back */
        t32(g, 0xf3ef, 0x8000 | m_reg(g, 0) << 8 | sysm);
    } else {
        static const uint16_t bar[] = {0x8f4f, 0x8f5f, 0x8f6f};
        t32(g, 0xf3bf, bar[rnd(g, 3)]);
    }
}

/* ---- FP (FPv4-SP, FPv5-SP) ---- */

static void vreg(unsigned s, unsigned *v, unsigned *b)
{
    *v = s >> 1;
    *b = s & 1;
}

/* the three-register arithmetic: vmla vmls vnmls vnmla vmul vnmul vadd vsub vdiv vfnms vfnma vfma vfms */
static void m_fp3(struct gen *g)
{
    static const uint8_t ops[][2] = {{0x0, 0}, {0x0, 1}, {0x1, 0}, {0x1, 1}, {0x2, 0}, {0x2, 1}, {0x3, 0},
                                     {0x3, 1}, {0x8, 0}, {0x9, 0}, {0x9, 1}, {0xa, 0}, {0xa, 1}};
    unsigned k = rnd(g, 13), vd, d, vn, n, vm, m;
    vreg(rnd(g, 32), &vd, &d);
    vreg(rnd(g, 32), &vn, &n);
    vreg(rnd(g, 32), &vm, &m);
    unsigned o = ops[k][0];
    t32(g, 0xee00 | (o >> 3) << 7 | d << 6 | (o & 3) << 4 | vn,
        vd << 12 | 0xa00 | n << 7 | ops[k][1] << 6 | m << 5 | vm);
}

/* the two-register ones: vmov vabs vneg vsqrt vcmp(e) (with zero), vcvt to
 * and from integers (round to zero or by FPSCR), vcvtb/vcvtt, vmov #imm,
 * and on FPv5 vrintz vrintr vrintx */
static void m_fp2(struct gen *g)
{
    unsigned vd, d, vm, m;
    vreg(rnd(g, 32), &vd, &d);
    vreg(rnd(g, 32), &vm, &m);
    static const uint8_t ops[][2] = {{0, 1}, {0, 3}, {1, 1}, {1, 3}, {4, 1}, {4, 3}, {5, 1}, {5, 3},
                                     {8, 1}, {8, 3}, {12, 1}, {12, 3}, {13, 1}, {13, 3}, {2, 1}, {2, 3},
                                     {3, 1}, {3, 3}, {6, 1}, {6, 3}, {7, 1}};
    unsigned k = rnd(g, mhas(g, M_V8) ? 22 : 19);
    if (k == (mhas(g, M_V8) ? 21u : 18u)) { /* vmov.f32 sd, #imm */
        uint32_t imm = rnd(g, 256);
        t32(g, 0xeeb0 | d << 6 | imm >> 4, vd << 12 | 0xa00 | (imm & 15));
        return;
    }
    unsigned opc2 = ops[k][0], o = ops[k][1];
    if (opc2 == 5)
        vm = 0, m = 0; /* vcmp with #0: Vm 0 */
    t32(g, 0xeeb0 | d << 6 | opc2, vd << 12 | 0xa00 | o << 6 | m << 5 | vm);
}

/* vmrs (APSR_nzcv or a register), vmsr fpscr (defined bits only), vmov
 * between core registers and singles */
static void m_fpmov(struct gen *g)
{
    unsigned r = m_reg(g, 0), k = rnd(g, 5), vn, n;
    vreg(rnd(g, 32), &vn, &n);
    switch (k) {
    case 0:
        t32(g, 0xeef1, (chance(g, 50) ? 15u : r) << 12 | 0xa10);
        break;
    case 1: { /* fpscr: flags, AHP DN FZ RMode, the cumulative bits */
        uint32_t v = value(g) & 0xf7c0009fu;
        if (chance(g, 50))
            v &= 0xf000009fu; /* mostly IEEE modes */
        if (g->in_it) { /* no set-up inside an IT block: vmrs instead */
            t32(g, 0xeef1, r << 12 | 0xa10);
            break;
        }
        m_const(g, r, v);
        t32(g, 0xeee1, r << 12 | 0xa10);
        break;
    }
    case 2: case 3: /* vmov sn, rt / vmov rt, sn */
        t32(g, 0xee00 | (k == 3) << 4 | vn, r << 12 | 0xa10 | n << 7);
        break;
    default: { /* vmov sm, sm1, rt, rt2 / vmov rt, rt2, sm, sm1 */
        unsigned s = rnd(g, 31), r2 = m_reg(g, 1u << r), to_core = rnd(g, 2);
        t32(g, 0xec40 | to_core << 4 | r2, r << 12 | 0xa10 | (s & 1) << 5 | s >> 1);
        break;
    }
    }
}

/* vldr vstr, vldm vstm (ia, db!), vpush vpop */
static void m_fpmem(struct gen *g)
{
    unsigned rb = m_reg(g, 0), vd, d, k = rnd(g, 3);
    unsigned first = rnd(g, 32), count = 1 + rnd(g, 32 - first);
    vreg(first, &vd, &d);
    if (k == 0) {
        m_base(g, rb, 0x400, 4);
        t32(g, 0xed00 | rnd(g, 2) << 7 | d << 6 | rnd(g, 2) << 4 | rb, vd << 12 | 0xa00 | rnd(g, 256));
    } else if (k == 1) {
        unsigned db = rnd(g, 2), w = db ? 1 : rnd(g, 2), load = rnd(g, 2);
        m_base(g, rb, 0x400, 4);
        t32(g, 0xec00 | db << 8 | !db << 7 | d << 6 | w << 5 | load << 4 | rb, vd << 12 | 0xa00 | count);
    } else if (g->depth == 0 && !g->in_it) {
        bool pop = g->msp_off - 4 * (int)count >= -M_SP_ROOM ? chance(g, 50) : true;
        if (pop && g->msp_off + 4 * (int)count > M_SP_ROOM)
            pop = false;
        t32(g, (pop ? 0xecbd : 0xed2d) | d << 6, vd << 12 | 0xa00 | count);
        g->msp_off += pop ? 4 * (int)count : -4 * (int)count;
    }
}

/* FPv5: vsel vmaxnm vminnm vrint{a,n,p,m} vcvt{a,n,p,m}: not in IT */
static void m_fpv5(struct gen *g)
{
    unsigned vd, d, vn, n, vm, m, k = rnd(g, 4);
    vreg(rnd(g, 32), &vd, &d);
    vreg(rnd(g, 32), &vn, &n);
    vreg(rnd(g, 32), &vm, &m);
    if (k == 0)
        t32(g, 0xfe00 | d << 6 | rnd(g, 4) << 4 | vn, vd << 12 | 0xa00 | n << 7 | m << 5 | vm);
    else if (k == 1)
        t32(g, 0xfe80 | d << 6 | vn, vd << 12 | 0xa00 | n << 7 | rnd(g, 2) << 6 | m << 5 | vm);
    else if (k == 2)
        t32(g, 0xfeb8 | d << 6 | rnd(g, 4), vd << 12 | 0xa40 | m << 5 | vm);
    else
        t32(g, 0xfebc | d << 6 | rnd(g, 4), vd << 12 | 0xa40 | rnd(g, 2) << 7 | m << 5 | vm);
}

/* ---- items ---- */

static void m_item(struct gen *g);

/* b<cond> / cbz / b<cond>.w over filler, b / b.w / bl over dead code,
 * bx / blx / mov pc / pop {pc} to a forward Thumb address, tbb / tbh */
static void m_jump(struct gen *g)
{
    bool v7 = mhas(g, M_V7);
    unsigned k = rnd(g, v7 ? 10 : 6);
    uint32_t b[8];
    switch (k) {
    case 0: { /* b<cond> over filler */
        uint32_t c = rnd(g, 14), at = thumb(g, 0);
        unsigned n = filler(g, 3, b);
        put16(g, at, 0xd000 | c << 8 | ((b[rnd(g, n)] - (at + 4)) >> 1 & 0xff));
        break;
    }
    case 1: { /* b over dead code */
        uint32_t at = thumb(g, 0);
        dead(g, rnd(g, 3));
        put16(g, at, 0xe000 | ((g->pos - (at + 4)) >> 1 & 0x7ff));
        break;
    }
    case 2: case 3: { /* bl / b.w over dead code, or over filler (bl only: b.w is the v7-M one) */
        bool bl = k == 2 || !v7;
        uint32_t at = t32(g, 0, 0);
        if (chance(g, 50))
            dead(g, rnd(g, 4));
        else
            (void)filler(g, 2, b);
        int32_t off = (int32_t)(g->pos - (at + 4));
        uint32_t s = off < 0, i1 = (uint32_t)off >> 23 & 1, i2 = (uint32_t)off >> 22 & 1;
        put16(g, at, 0xf000 | s << 10 | ((uint32_t)off >> 12 & 0x3ff));
        put16(g, at + 2, (bl ? 0xd000 : 0x9000) | !(i1 ^ s) << 13 | !(i2 ^ s) << 11 | ((uint32_t)off >> 1 & 0x7ff));
        break;
    }
    case 4: { /* adr rt, l; adds rt, #1; bx/blx rt  /  adr rt, l; mov pc, rt */
        uint32_t rt = m_lo(g, 0), adr = thumb(g, 0), how = rnd(g, 3);
        if (how < 2) {
            thumb(g, 0x3001 | rt << 8);
            thumb(g, (how ? 0x4780 : 0x4700) | rt << 3);
        } else {
            thumb(g, 0x4687 | rt << 3);
        }
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
        break;
    }
    case 5: { /* pop {..., pc}: the target stored at the top first (SP-neutral overall) */
        if (g->depth || g->msp_off + 36 > M_SP_ROOM) {
            thumb(g, 0xbf00); /* nop */
            break;
        }
        uint32_t rt = m_lo(g, 0), list = rnd(g, 256);
        unsigned n = (unsigned)__builtin_popcount(list);
        uint32_t adr = thumb(g, 0);
        thumb(g, 0x3001 | rt << 8);                     /* adds rt, #1 */
        thumb(g, 0xb080 | (n + 1));                     /* sub sp, #4(n+1) */
        thumb(g, 0x9000 | rt << 8 | n);                 /* str rt, [sp, #4n] */
        thumb(g, 0xbd00 | list);                        /* pop {list, pc} */
        dead(g, rnd(g, 3));
        t_align(g);
        t_patch_adr(g, adr, rt, g->pos);
        break;
    }
    case 6: { /* cbz / cbnz over filler within 126 bytes */
        unsigned rn = m_lo(g, 0);
        if (chance(g, 50))
            thumb(g, 0x2000 | rn << 8 | rnd(g, 2)); /* movs rn, #0/1 */
        uint32_t at = thumb(g, 0);
        thumb(g, 0xbf00); /* nop: cbz only goes to at + 4 and on */
        unsigned n = filler(g, 2, b), i = rnd(g, n);
        while (i > 0 && b[i] - (at + 4) > 126)
            i--;
        uint32_t off = b[i] - (at + 4);
        put16(g, at, (chance(g, 50) ? 0xb100 : 0xb900) | (off >> 6) << 9 | (off >> 1 & 31) << 3 | rn);
        break;
    }
    case 7: { /* b<cond>.w over filler */
        uint32_t c = rnd(g, 14), at = t32(g, 0, 0);
        unsigned n = filler(g, 3, b);
        uint32_t off = b[rnd(g, n)] - (at + 4);
        put16(g, at, 0xf000 | c << 6 | (off >> 12 & 0x3f));
        put16(g, at + 2, 0x8000 | (off >> 18 & 1) << 13 | (off >> 19 & 1) << 11 | (off >> 1 & 0x7ff));
        break;
    }
    case 8: { /* tbb / tbh [pc, rm], the table just after, to filler */
        unsigned rm = m_reg(g, 0), h = rnd(g, 2), entries = 1 + rnd(g, 4), idx = rnd(g, entries);
        m_const(g, rm, idx);
        uint32_t at = t32(g, 0xe8df, 0xf000 | h << 4 | rm), table = g->pos;
        g->pos += (entries << h) + 1;
        g->pos &= ~1u;
        unsigned n = filler(g, 2, b);
        for (unsigned i = 0; i < entries; i++) {
            uint32_t e = (b[rnd(g, n)] - (at + 4)) >> 1;
            if (h)
                put16(g, table + 2 * i, e);
            else
                g->s->code[table + i - GEN_CODE_BASE] = (uint8_t)e;
        }
        break;
    }
    default: { /* movw/movt rt, l+1; str.w rt, [rb, #off]; ldr.w pc, [rb, #off] */
        unsigned rb = m_reg(g, 0), rt = m_reg(g, 1u << rb);
        uint32_t off = rnd(g, 64) * 4;
        m_base(g, rb, 0x400, 4);
        uint32_t mov = t32(g, 0, 0);
        t32(g, 0, 0);
        t32(g, 0xf8c0 | rb, rt << 12 | off);  /* str.w rt, [rb, #off] */
        t32(g, 0xf8d0 | rb, 15u << 12 | off); /* ldr.w pc, [rb, #off] */
        dead(g, rnd(g, 3));
        uint32_t t = g->pos | 1;
        put16(g, mov, 0xf240 | (t >> 11 & 1) << 10 | (t >> 12 & 15));
        put16(g, mov + 2, (t >> 8 & 7) << 12 | rt << 8 | (t & 0xff));
        put16(g, mov + 4, 0xf2c0 | (t >> 27 & 1) << 10 | t >> 28);
        put16(g, mov + 6, (t >> 24 & 7) << 12 | rt << 8 | (t >> 16 & 0xff));
        break;
    }
    }
}

/* IT: a base set up for the block, then IT and its instructions */
static void m_it(struct gen *g)
{
    unsigned rb = m_lo(g, 0), n = 1 + rnd(g, 4);
    m_base(g, rb, 0x1400, 4);
    uint32_t fc = rnd(g, 15);
    if (fc == 14)
        n = 1;
    uint32_t mask = 1u << (4 - n);
    for (unsigned i = 2; i <= n; i++)
        mask |= (rnd(g, 2) ? (fc & 1) : !(fc & 1)) << (5 - i);
    thumb(g, 0xbf00 | fc << 4 | mask);
    g->mavoid = 1u << rb;
    g->in_it = true;
    for (unsigned i = 0; i < n; i++) {
        bool last = i + 1 == n;
        unsigned k = rnd(g, 16);
        if (last && k == 0 && g->depth < MAX_DEPTH) { /* b over filler, conditional by IT */
            uint32_t b[8], at = thumb(g, 0);
            g->in_it = false, g->mavoid = 0;
            unsigned cnt = filler(g, 2, b);
            put16(g, at, 0xe000 | ((b[rnd(g, cnt)] - (at + 4)) >> 1 & 0x7ff));
            return;
        }
        if (k < 4)
            m_alu16(g);
        else if (k < 5)
            m_hi16(g);
        else if (k < 6)
            m_ldst16_on(g, rb, 8);
        else if (!mhas(g, M_V7) || k < 7)
            m_ext16(g);
        else if (k < 9)
            m_dp32(g);
        else if (k < 10)
            m_imm32(g);
        else if (k < 11)
            m_misc32(g);
        else if (k < 12)
            m_mul32(g);
        else if (k < 13 || !mhas(g, M_FP) || (g->exclude & GEN_X_M_FP))
            m_ldst32_on(g, rb, 16, true);
        else if (k < 14)
            m_fp3(g);
        else if (k < 15)
            m_fp2(g);
        else
            m_fpmov(g);
    }
    g->in_it = false;
    g->mavoid = 0;
}

static void m_item(struct gen *g)
{
    bool v7 = mhas(g, M_V7), top = g->depth == 0;
    unsigned x = g->exclude;
    for (;;) {
        unsigned k = rnd(g, 100);
        if (k < 12) {
            m_alu16(g);
        } else if (k < 15) {
            m_hi16(g);
        } else if (k < 18) {
            m_ext16(g);
        } else if (k < 21) {
            m_ldst16(g);
        } else if (k < 23) {
            m_ldm16(g);
        } else if (k < 25) {
            if (!top)
                continue;
            m_stack16(g);
        } else if (k < 26) {
            m_adr16(g);
        } else if (k < 27) {
            m_lit16(g);
        } else if (k < 29) { /* bkpt: semihosting answered alike */
            thumb(g, 0xbe00 | rnd(g, 256));
        } else if (k < 32) {
            if (x & GEN_X_M_SYS)
                continue;
            m_sys32(g);
        } else if (k < 40) {
            if ((x & GEN_X_M_BRANCH) || g->depth >= MAX_DEPTH)
                continue;
            m_jump(g);
        } else if (!v7) {
            continue;
        } else if (k < 50) {
            m_dp32(g);
        } else if (k < 55) {
            m_imm32(g);
        } else if (k < 61) {
            if ((x & GEN_X_M_DSP) && mhas(g, M_DSP))
                continue;
            m_misc32(g);
        } else if (k < 67) {
            if ((x & GEN_X_M_DSP) && mhas(g, M_DSP))
                continue;
            m_mul32(g);
        } else if (k < 77) {
            if (x & GEN_X_M_LDST)
                continue;
            m_ldst32(g);
        } else if (k < 79) {
            if (!top || (x & GEN_X_M_LDST))
                continue;
            m_stack32(g);
        } else if (k < 85) {
            if (x & GEN_X_M_IT)
                continue;
            m_it(g);
        } else if (!mhas(g, M_FP) || (x & GEN_X_M_FP)) {
            continue;
        } else if (k < 89) {
            m_fp3(g);
        } else if (k < 93) {
            m_fp2(g);
        } else if (k < 96) {
            m_fpmov(g);
        } else if (k < 99) {
            m_fpmem(g);
        } else {
            if (!mhas(g, M_V8))
                continue;
            m_fpv5(g);
        }
        return;
    }
}

/* the last instruction: a load, store or branch to GEN_NOWHERE, or udf */
static void m_fault_tail(struct gen *g)
{
    struct gen_stream *s = g->s;
    if (chance(g, 25)) {
        s->fault = GEN_FAULT_UNDEFINED;
        if (mhas(g, M_V7) && chance(g, 50))
            t32(g, 0xf7f0 | rnd(g, 16), 0xa000 | rnd(g, 4096)); /* udf.w */
        else
            thumb(g, 0xde00 | rnd(g, 256)); /* udf */
        return;
    }
    unsigned k = rnd(g, 3), rb = m_lo(g, 0), rd = m_lo(g, 1u << rb);
    s->fault = k == 0 ? GEN_FAULT_READ : k == 1 ? GEN_FAULT_WRITE : GEN_FAULT_FETCH;
    m_const(g, rb, GEN_NOWHERE | (k == 2));
    if (k == 2) {
        thumb(g, 0x4700 | rb << 3); /* bx rb */
        s->fault_addr = GEN_NOWHERE;
        return;
    }
    uint32_t off = rnd(g, 32) * 4;
    thumb(g, 0x6000 | (k == 0) << 11 | (off / 4) << 6 | rb << 3 | rd); /* ldr/str rd, [rb, #off] */
    s->fault_addr = GEN_NOWHERE + off;
}

static void gen_m_stream(struct gen *g, unsigned items)
{
    struct gen_stream *s = g->s;
    switch (g->isa) {
    case GEN_V6M: g->march = 0; break;
    case GEN_V7M: g->march = M_V7; break;
    case GEN_V7EM: g->march = M_V7 | M_DSP | M_FP; break;
    default: g->march = M_V7 | M_DSP | M_FP | M_V8; break;
    }
    /* the data: random words, a quarter of them floats' special patterns */
    for (uint32_t i = 0; i < GEN_DATA_SIZE; i += 4) {
        uint32_t v = chance(g, 25) ? fp_value(g) : (uint32_t)next64(g);
        memcpy(&s->data[i], &v, 4);
    }
    for (unsigned i = 0; i < 15; i++)
        s->r[i] = value(g);
    s->r[13] = M_SP_INIT;
    s->cpsr = (uint32_t)next64(g) & (mhas(g, M_V7) ? 0xf8000000u : 0xf0000000u);
    if (mhas(g, M_DSP))
        s->cpsr |= rnd(g, 16) << 16;
    s->spsr = 0;
    memset(s->fs, 0, sizeof s->fs);
    s->fpscr = 0;
    if (mhas(g, M_FP)) {
        for (unsigned i = 0; i < 32; i++)
            s->fs[i] = fp_value(g);
        s->fpscr = (uint32_t)next64(g) & 0xf000009fu;
        if (chance(g, 40)) /* DN, FZ, RMode now and then */
            s->fpscr |= (uint32_t)next64(g) & 0x03c00000u;
    }
    g->pos = GEN_STREAM;
    g->thumb = true;
    s->prologue_end = s->start = GEN_STREAM | 1;
    s->r[15] = GEN_STREAM;
    for (unsigned i = 0; i < items && g->pos < GEN_CODE_BASE + GEN_CODE_SIZE - TAIL_ROOM; i++)
        m_item(g);
    if (chance(g, 15))
        m_fault_tail(g);
    s->end = g->pos;
}

/* ---- the stream ---- */

/* The bank prologue (insn_gen.h), ARM, from SVC mode; r0 = GEN_TABLE. */
static const uint32_t prologue[] = {
    0xe321f0d1, /* msr cpsr_c, #0xd1 (FIQ) */
    0xe8b07f00, /* ldmia r0!, {r8-r14} */
    0xe4901004, /* ldr r1, [r0], #4 */
    0xe16ff001, /* msr spsr_fsxc, r1 */
    0xe321f0d2, /* IRQ */
    0xe8b06000, /* ldmia r0!, {r13, r14} */
    0xe4901004, 0xe16ff001,
    0xe321f0d7, /* ABT */
    0xe8b06000, 0xe4901004, 0xe16ff001,
    0xe321f0db, /* UND */
    0xe8b06000, 0xe4901004, 0xe16ff001,
    0xe321f0d3, /* SVC */
    0xe8b06000, 0xe4901004, 0xe16ff001,
    0xe321f0df, /* SYS */
    0xe8b07f00, /* ldmia r0!, {r8-r14} */
    0xe4901004, /* ldr r1, [r0], #4 */
    0xe121f001, /* msr cpsr_c, r1: the stream's mode */
};
/* words the prologue loads */
#define TABLE_WORDS (8 + 4 * 3 + 7 + 1)

void gen_stream(struct gen_stream *s, uint64_t seed, enum gen_isa isa, bool thumb_start, unsigned items,
                unsigned exclude)
{
    struct gen g = {.s = s, .rng = seed, .v5 = isa == GEN_V5TE, .exclude = exclude, .isa = isa};
    memset(s->code, 0, sizeof s->code);
    s->insns = 0;
    s->fault = GEN_FAULT_NONE;
    s->fault_addr = 0;
    if (isa >= GEN_V6M) {
        g.m = true;
        gen_m_stream(&g, items);
        return;
    }
    for (uint32_t i = 0; i < GEN_DATA_SIZE; i += 8) {
        uint64_t v = next64(&g);
        memcpy(&s->data[i], &v, 8);
    }
    for (unsigned i = 0; i < sizeof prologue / sizeof prologue[0]; i++)
        put32(&g, GEN_PROLOGUE + 4 * i, prologue[i]);
    s->prologue_end = GEN_PROLOGUE + sizeof prologue;

    g.mode = modes[rnd(&g, 7)];
    for (unsigned i = 0; i < TABLE_WORDS - 1; i++)
        put32(&g, GEN_TABLE + 4 * i, value(&g));
    /* the SPSRs in the table must be valid PSRs */
    static const unsigned spsr_at[] = {7, 10, 13, 16, 19};
    for (unsigned i = 0; i < 5; i++)
        put32(&g, GEN_TABLE + 4 * spsr_at[i], random_psr(&g));
    put32(&g, GEN_TABLE + 4 * (TABLE_WORDS - 1), 0xc0 | g.mode);

    for (unsigned i = 0; i < 15; i++)
        s->r[i] = value(&g);
    s->cpsr = ((uint32_t)next64(&g) & flag_mask(&g)) | rnd(&g, 4) << 6 | (uint32_t)thumb_start << 5 | g.mode;
    s->spsr = has_spsr(g.mode) ? random_psr(&g) : 0;

    g.pos = GEN_STREAM;
    g.thumb = thumb_start;
    s->start = GEN_STREAM | thumb_start;
    s->r[15] = GEN_STREAM;
    for (unsigned i = 0; i < items && g.pos < GEN_CODE_BASE + GEN_CODE_SIZE - TAIL_ROOM; i++)
        item(&g);
    if (chance(&g, 15))
        fault_tail(&g);
    s->end = g.pos;
}
