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

static void item(struct gen *g)
{
    if (g->thumb)
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
    struct gen g = {.s = s, .rng = seed, .v5 = isa == GEN_V5TE, .exclude = exclude};
    memset(s->code, 0, sizeof s->code);
    s->insns = 0;
    s->fault = GEN_FAULT_NONE;
    s->fault_addr = 0;
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
