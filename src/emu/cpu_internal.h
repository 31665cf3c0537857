/* cpu_internal.h - the interpreter's private state: decoded instructions,
 * the decoded-code cache, memory regions and the helpers the run loop
 * (cpu_exec.c), the decoders (cpu_arm.c, cpu_thumb.c), the instructions
 * run outside the loop (cpu_slow.c) and the cycle model (cpu_cycles.c)
 * share.
 *
 * Every instruction is decoded once into a struct np_dec: a handler
 * number, its operands with everything known at decode time folded in
 * (the PC's value, rotated immediates, branch targets) and the cycles it
 * costs when it runs. The entries live in a fixed-size direct-mapped cache
 * indexed by the address (np_cache_at), tagged with the address and the
 * state, so ARM and Thumb code at one address never mix. A store to a
 * 1 KiB page that holds decoded code (a bit per page per region) clears
 * the entries of the bytes it wrote: self-modifying code and code copied
 * to RAM are decoded again. */
#ifndef NP_EMU_CPU_INTERNAL_H
#define NP_EMU_CPU_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "cpu.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the interpreter reads guest memory as little-endian host words"
#endif

#define NP_LIKELY(x) __builtin_expect(!!(x), 1)
#define NP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The decoded-code cache: 2^NP_DEC_BITS entries of 32 bytes (2 MiB). */
#define NP_DEC_BITS 16
#define NP_DEC_SIZE (1u << NP_DEC_BITS)
#define NP_DEC_MASK (NP_DEC_SIZE - 1)
/* Pages whose decoded code a store invalidates. */
#define NP_PAGE_SHIFT 10

#define NP_COND_AL 14
/* np_dec.cond | NP_COND_PCREAD: the instruction reads the PC (r[15] is
 * set to its address + 8, or + 4 in Thumb state, before it runs) */
#define NP_COND_PCREAD 0x10

/* Data-processing opcodes (bits 24:21). */
enum {
    NP_DP_AND, NP_DP_EOR, NP_DP_SUB, NP_DP_RSB, NP_DP_ADD, NP_DP_ADC, NP_DP_SBC, NP_DP_RSC,
    NP_DP_TST, NP_DP_TEQ, NP_DP_CMP, NP_DP_CMN, NP_DP_ORR, NP_DP_MOV, NP_DP_BIC, NP_DP_MVN
};
/* Forms of the second operand of the fast data-processing handlers. */
enum {
    NP_FORM_IMM,  /* imm; sh = its carry out: 0, 1, or 2 (C unchanged) */
    NP_FORM_REG,  /* rm */
    NP_FORM_LSL,  /* rm, lsl #sh (1-31) */
    NP_FORM_LSR,  /* rm, lsr #sh (1-31) */
    NP_FORM_ASR,  /* rm, asr #sh (1-31) */
    NP_FORM_GEN,  /* any other shift: sh = type (0-3, 4 = rrx); by rs when
                     fl & NP_FL_SHREG, else by aux (1-32) */
    NP_FORMS = 8
};
/* Fast load/store handlers: size and sign, then addressing mode. */
enum { NP_LS_LDR, NP_LS_STR, NP_LS_LDRB, NP_LS_STRB, NP_LS_LDRH, NP_LS_STRH, NP_LS_LDRSB, NP_LS_LDRSH };
enum {
    NP_AM_IMM,     /* [rn, #imm] (imm signed) */
    NP_AM_IMMPRE,  /* [rn, #imm]! */
    NP_AM_IMMPOST, /* [rn], #imm */
    NP_AM_REG,     /* [rn, +/-rm, lsl #sh] (fl & NP_FL_SUB: minus) */
    NP_AM_REGPRE,  /* [rn, +/-rm, lsl #sh]! */
    NP_AM_REGPOST, /* [rn], +/-rm, lsl #sh */
    NP_AMS = 8
};

/* Handlers (cpu_exec.c has a label for each). */
enum np_op {
    NP_OP_DP = 0, /* + (dp opcode << 4 | form << 1 | S): 256 slots */
    NP_OP_LS = 256, /* + (size << 3 | mode): 64 slots */
    NP_OP_UNDEF = 320, /* stop: undefined instruction */
    NP_OP_NOP,
    NP_OP_MOVK,     /* rd = imm */
    NP_OP_LINK,     /* lr = imm, and mark LR as written from the PC */
    NP_OP_LDRK,     /* rd = the word at imm (a PC-relative load) */
    NP_OP_MUL,      /* rd = rm * rs (+ rn when fl & NP_FL_ACC); fl & NP_FL_S: flags,
                       fl & NP_FL_MCYC: + the ARM7TDMI's m cycles */
    NP_OP_MULL,     /* rd:rn = rm * rs (+ rd:rn); fl: NP_FL_ACC, NP_FL_SIGNED, NP_FL_S,
                       NP_FL_MCYC */
    NP_OP_SMULXY,   /* the ARMv5TE halfword multiplies: sh = which (see cpu_exec.c) */
    NP_OP_QADDSUB,  /* sh: bit 0 subtract, bit 1 double */
    NP_OP_CLZ,
    NP_OP_LDM,      /* no PC, no ^: imm = list, aux = start offset from rn, sh = count,
                       rd = write back */
    NP_OP_STM,
    NP_OP_LDM_PC,   /* ldm/pop with the PC, no ^: as NP_OP_LDM; fl & NP_FL_INTERWORK */
    NP_OP_SWP,      /* fl & NP_FL_BYTE: swpb */
    NP_OP_B,        /* imm = the target */
    NP_OP_BL,       /* imm = the target; aux = LR */
    NP_OP_BLX_IMM,  /* ARM -> Thumb or Thumb -> ARM, imm = target, aux = LR */
    NP_OP_BX,       /* rm */
    NP_OP_BLX_REG,  /* rm; aux = LR */
    NP_OP_TBL,      /* Thumb bl pair: imm = target, aux = LR; rs = 1 for blx; sh = the
                       cycles of the first half alone */
    NP_OP_TBL_PREFIX,  /* lr = imm */
    NP_OP_TBL_SUFFIX,  /* target = lr + imm; rs = 1 for blx */
    NP_OP_SWI,      /* imm = comment field */
    NP_OP_BKPT,     /* imm = comment field */
    NP_OP_SLOW,     /* run by np_exec_slow (cpu_slow.c): sh = which */
    NP_OP_COUNT
};
#define NP_OP_DP_INDEX(opc, form, s) (NP_OP_DP + ((opc) << 4 | (form) << 1 | (s)))
#define NP_OP_LS_INDEX(size, mode) (NP_OP_LS + ((size) << 3 | (mode)))

/* Instructions np_exec_slow runs (np_dec.sh of NP_OP_SLOW). */
enum {
    NP_SLOW_DP,     /* data processing with the PC as an operand or destination */
    NP_SLOW_LS,     /* load/store in any form the fast handlers do not take */
    NP_SLOW_LSM,    /* ldm/stm with the PC or ^ */
    NP_SLOW_LDRD,   /* ldrd/strd */
    NP_SLOW_MRS,
    NP_SLOW_MSR,
    NP_SLOW_CP15,   /* mcr/mrc p15 on the ARM946E-S */
    NP_SLOW_THUMB_HI /* Thumb hi-register add/mov/cmp with the PC */
};

/* np_dec.fl */
#define NP_FL_S 0x01      /* sets flags */
#define NP_FL_SHREG 0x02  /* NP_FORM_GEN: shift by register */
#define NP_FL_SUB 0x04    /* NP_AM_REG*: subtract the offset */
#define NP_FL_ACC 0x08    /* multiply-accumulate */
#define NP_FL_SIGNED 0x10 /* signed long multiply */
#define NP_FL_BYTE 0x20   /* swp: swpb */
#define NP_FL_MCYC 0x20   /* mul, mull: add the ARM7TDMI's multiplier cycles */
#define NP_FL_INTERWORK 0x20 /* ldm with the PC: bit 0 selects the state (ARMv5) */
#define NP_FL_USER 0x80   /* ldrt/strt; ldm/stm ^ */

/* One decoded instruction (32 bytes). */
struct np_dec {
    uint32_t tag;    /* address + (Thumb ? 1 : 2): never 0, which marks a free entry, and
                        never the same for ARM (2 mod 4) and Thumb (odd) */
    uint16_t op;     /* enum np_op */
    uint16_t cyc;    /* cycles when it runs (its condition passed) */
    const void *run; /* where the loop jumps to run it: op's handler, or the
                        condition test / PC set-up in front of it (cpu_exec.c) */
    uint8_t cond;    /* the condition; | NP_COND_PCREAD */
    uint8_t rd, rn, rm;
    uint8_t rs, sh, fl, hint; /* hint: the region its last data access hit */
    uint32_t imm;
    uint32_t aux;
};
_Static_assert(sizeof(struct np_dec) == 32, "decoded instructions are 32 bytes");

/* A memory region, with the pages that hold decoded code. */
struct np_region {
    uint32_t base, size;
    uint8_t *data;
    uint8_t *code;   /* a bit per 1 KiB page */
};

struct np_cpu_impl {
    struct np_dec *cache;
    struct np_region reg[NP_CPU_MAX_REGIONS];
    unsigned nreg;
    unsigned fail_cycles;   /* an instruction whose condition failed */
    unsigned exc_cycles;    /* exception entry */
    uint64_t link_at;       /* insns after the last mov lr, pc (NP_BRF_LINKED) */
    uint8_t scratch_hint;   /* region hint of accesses not tied to an instruction */
};


static inline uint32_t np_tag(uint32_t addr, bool thumb) { return addr + (thumb ? 1u : 2u); }
static inline uint32_t np_tag_addr(uint32_t tag) { return tag - 2 + (tag & 1); }
static inline struct np_dec *np_cache_at(struct np_cpu_impl *im, uint32_t addr)
{
    return &im->cache[(addr >> 1) & NP_DEC_MASK];
}

/* ---- memory ---- */

struct np_region *np_region_find(struct np_cpu_impl *im, uint8_t *hint, uint32_t addr, uint32_t len);

/* The region holding [ADDR, ADDR+LEN), trying *HINT first; NULL if none. */
static inline struct np_region *np_region_at(struct np_cpu_impl *im, uint8_t *hint, uint32_t addr, uint32_t len)
{
    struct np_region *r = &im->reg[*hint];
    if (NP_LIKELY((uint64_t)(uint32_t)(addr - r->base) + len <= r->size))
        return r;
    return np_region_find(im, hint, addr, len);
}

static inline uint32_t np_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint32_t np_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void np_st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void np_st16(uint8_t *p, uint32_t v) { uint16_t h = (uint16_t)v; memcpy(p, &h, 2); }

static inline bool np_code_page(const struct np_region *r, uint32_t off)
{
    return (r->code[off >> (NP_PAGE_SHIFT + 3)] >> ((off >> NP_PAGE_SHIFT) & 7)) & 1;
}

/* Clears the decoded entries of the instructions overlapping [ADDR, ADDR+LEN). */
void np_invalidate(struct np_cpu_impl *im, uint32_t addr, uint32_t len);

/* After a store of LEN bytes at offset OFF of R (ADDR in guest terms). */
static inline void np_stored(struct np_cpu_impl *im, const struct np_region *r, uint32_t off, uint32_t addr,
                             uint32_t len)
{
    if (NP_UNLIKELY(np_code_page(r, off) || np_code_page(r, off + len - 1)))
        np_invalidate(im, addr, len);
}

static inline uint32_t np_ror(uint32_t v, unsigned n)
{
    n &= 31;
    return n ? (v >> n) | (v << (32 - n)) : v;
}

/* ---- flags and data processing ---- */

static inline bool np_cond_pass(unsigned cond, uint32_t cpsr)
{
    /* bit NZCV of entry COND: the condition holds */
    static const uint16_t table[16] = {
        0xf0f0, 0x0f0f, 0xcccc, 0x3333, 0xff00, 0x00ff, 0xaaaa, 0x5555,
        0x0c0c, 0xf3f3, 0xaa55, 0x55aa, 0x0a05, 0xf5fa, 0xffff, 0x0000
    };
    return (table[cond] >> (cpsr >> 28)) & 1;
}

/* The shifter operand of a shift of type TYPE (0 LSL, 1 LSR, 2 ASR, 3 ROR,
 * 4 RRX) by AMT, as the ARM ARM defines it for register-specified shifts
 * (AMT 0-255) and for immediate ones given as 1-32; *C: the carry out. */
static inline uint32_t np_shift(uint32_t v, unsigned type, unsigned amt, uint32_t cin, uint32_t *c)
{
    switch (type) {
    case 0:
        if (amt == 0) { *c = cin; return v; }
        if (amt < 32) { *c = (v >> (32 - amt)) & 1; return v << amt; }
        *c = amt == 32 ? v & 1 : 0;
        return 0;
    case 1:
        if (amt == 0) { *c = cin; return v; }
        if (amt < 32) { *c = (v >> (amt - 1)) & 1; return v >> amt; }
        *c = amt == 32 ? v >> 31 : 0;
        return 0;
    case 2:
        if (amt == 0) { *c = cin; return v; }
        if (amt < 32) { *c = (v >> (amt - 1)) & 1; return (uint32_t)((int32_t)v >> amt); }
        *c = v >> 31;
        return (uint32_t)((int32_t)v >> 31);
    case 3:
        if (amt == 0) { *c = cin; return v; }
        if ((amt & 31) == 0) { *c = v >> 31; return v; }
        *c = (v >> ((amt & 31) - 1)) & 1;
        return np_ror(v, amt);
    default:
        *c = v & 1;
        return (v >> 1) | (cin << 31);
    }
}

/* Data-processing operation OPC on A and B (SHC: the shifter carry out);
 * with S, the flags in *CPSR. Returns the result (ignored for the tests
 * and compares). Constant OPC and S fold to the one operation. */
static inline __attribute__((always_inline)) uint32_t
np_dp(unsigned opc, uint32_t a, uint32_t b, uint32_t shc, uint32_t *cpsr, bool s)
{
    uint32_t res, c = 0, v = 0, cin = (*cpsr >> 29) & 1;
    bool logical = false;
    switch (opc) {
    case NP_DP_AND: case NP_DP_TST: res = a & b; logical = true; break;
    case NP_DP_EOR: case NP_DP_TEQ: res = a ^ b; logical = true; break;
    case NP_DP_ORR: res = a | b; logical = true; break;
    case NP_DP_MOV: res = b; logical = true; break;
    case NP_DP_BIC: res = a & ~b; logical = true; break;
    case NP_DP_MVN: res = ~b; logical = true; break;
    case NP_DP_SUB: case NP_DP_CMP:
        res = a - b;
        c = a >= b;
        v = ((a ^ b) & (a ^ res)) >> 31;
        break;
    case NP_DP_RSB:
        res = b - a;
        c = b >= a;
        v = ((b ^ a) & (b ^ res)) >> 31;
        break;
    case NP_DP_ADD: case NP_DP_CMN:
        res = a + b;
        c = res < a;
        v = ((a ^ res) & (b ^ res)) >> 31;
        break;
    case NP_DP_ADC: {
        uint64_t r = (uint64_t)a + b + cin;
        res = (uint32_t)r;
        c = (uint32_t)(r >> 32);
        v = ((a ^ res) & (b ^ res)) >> 31;
        break;
    }
    case NP_DP_SBC: {
        res = a - b - (cin ^ 1);
        c = (uint64_t)a >= (uint64_t)b + (cin ^ 1);
        v = ((a ^ b) & (a ^ res)) >> 31;
        break;
    }
    default: { /* RSC */
        res = b - a - (cin ^ 1);
        c = (uint64_t)b >= (uint64_t)a + (cin ^ 1);
        v = ((b ^ a) & (b ^ res)) >> 31;
        break;
    }
    }
    if (s) {
        if (logical)
            *cpsr = (*cpsr & 0x1fffffffu) | (res & 0x80000000u) | ((uint32_t)(res == 0) << 30) | (shc << 29);
        else
            *cpsr = (*cpsr & 0x0fffffffu) | (res & 0x80000000u) | ((uint32_t)(res == 0) << 30) | (c << 29) |
                    (v << 28);
    }
    return res;
}

/* ---- second operands of the data-processing handlers ----
 * (the ARM loop's, cpu_exec.c, and the Cortex-M's, cpu_m_exec.c: E the
 * decoded instruction, R the registers) */
#define OPERAND_IMM(b, c)                                                                                    \
    do {                                                                                                     \
        b = e->imm;                                                                                          \
        if (e->sh != 2)                                                                                      \
            c = e->sh;                                                                                       \
    } while (0)
#define OPERAND_REG(b, c) b = R[e->rm]
#define OPERAND_LSL(b, c)                                                                                    \
    do {                                                                                                     \
        uint32_t m_ = R[e->rm];                                                                              \
        b = m_ << e->sh;                                                                                     \
        c = (m_ >> (32 - e->sh)) & 1;                                                                        \
    } while (0)
#define OPERAND_LSR(b, c)                                                                                    \
    do {                                                                                                     \
        uint32_t m_ = R[e->rm];                                                                              \
        b = m_ >> e->sh;                                                                                     \
        c = (m_ >> (e->sh - 1)) & 1;                                                                         \
    } while (0)
#define OPERAND_ASR(b, c)                                                                                    \
    do {                                                                                                     \
        uint32_t m_ = R[e->rm];                                                                              \
        b = (uint32_t)((int32_t)m_ >> e->sh);                                                                \
        c = (m_ >> (e->sh - 1)) & 1;                                                                         \
    } while (0)
#define OPERAND_GEN(b, c)                                                                                    \
    do {                                                                                                     \
        unsigned amt_ = (e->fl & NP_FL_SHREG) ? (R[e->rs] & 0xff) : e->aux;                                  \
        b = np_shift(R[e->rm], e->sh, amt_, c, &c);                                                          \
    } while (0)

/* Runs decoded instruction E in either loop (cpu_exec.c, cpu_m_exec.c):
 * counted, timed, and on to where E->run leads (a conditional
 * instruction's condition is tested there first). */
#define RUN_E()                                                                                              \
    do {                                                                                                     \
        left--;                                                                                              \
        cycles += e->cyc;                                                                                    \
        goto *e->run;                                                                                        \
    } while (0)

static inline bool np_dp_writes_rd(unsigned opc) { return opc < NP_DP_TST || opc > NP_DP_CMN; }
static inline bool np_dp_logical(unsigned opc)
{
    return opc == NP_DP_AND || opc == NP_DP_EOR || opc == NP_DP_TST || opc == NP_DP_TEQ || opc == NP_DP_ORR ||
           opc == NP_DP_MOV || opc == NP_DP_BIC || opc == NP_DP_MVN;
}

/* ---- modes ---- */

bool np_mode_valid(uint32_t mode);
/* Writes the CPSR with VALUE under MASK, switching register banks when the
 * mode changes (an invalid new mode leaves the mode as it was). */
void np_cpsr_write(struct np_cpu *cpu, uint32_t value, uint32_t mask);
/* Takes exception VECTOR: banks, SPSR, LR = LR, mode, I (and F), ARM
 * state, r[15] = the vector. */
void np_exception_enter(struct np_cpu *cpu, unsigned vector, uint32_t lr);
/* User-mode r8-r14 for ldm/stm ^. */
uint32_t np_user_reg(struct np_cpu *cpu, unsigned n);
void np_set_user_reg(struct np_cpu *cpu, unsigned n, uint32_t v);

/* ---- decoding ---- */

/* Decodes the instruction at ADDR in the given state into E (the tag
 * included; E->run is the caller's). Returns false when it cannot be
 * fetched. */
bool np_decode(struct np_cpu *cpu, uint32_t addr, bool thumb, struct np_dec *e);
void np_decode_arm(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e);
void np_decode_thumb(struct np_cpu *cpu, uint32_t addr, uint32_t hw, struct np_dec *e);
/* Reads the instruction at ADDR for the decoder (false: not in memory). */
bool np_fetch(struct np_cpu *cpu, uint32_t addr, unsigned len, uint32_t *insn);

/* ---- the cycle model (cpu_cycles.c, docs/emulator.md) ---- */

/* Cycles of S sequential, N non-sequential and I internal cycles on the
 * ARM7TDMI; on the ARM946E-S, CORE cycles plus the wait states of S and N
 * bus accesses. */
unsigned np_cyc(const struct np_cpu *cpu, unsigned s, unsigned n, unsigned i, unsigned core);
/* ARM7TDMI multiplier cycles m for multiplier operand RS. */
static inline unsigned np_mul_m(uint32_t rs, bool is_signed)
{
    if ((rs >> 8) == 0 || (is_signed && (rs >> 8) == 0xffffff))
        return 1;
    if ((rs >> 16) == 0 || (is_signed && (rs >> 16) == 0xffff))
        return 2;
    if ((rs >> 24) == 0 || (is_signed && (rs >> 24) == 0xff))
        return 3;
    return 4;
}
/* Cycles of the ARM946E-S interlock after a load of REG (SUBWORD: a byte
 * or halfword) at ADDR. */
unsigned np_load_use(struct np_cpu *cpu, uint32_t addr, bool thumb, unsigned reg, bool subword);

/* ---- instructions run outside the loop (cpu_slow.c) ---- */

enum np_slow_result {
    NP_SLOW_NEXT,        /* go on with the next instruction */
    NP_SLOW_JUMP,        /* the PC was written: r[15] = target, *br filled */
    NP_SLOW_FAULT_READ,  /* fault_addr set, nothing changed */
    NP_SLOW_FAULT_WRITE,
    NP_SLOW_UNDEF        /* nothing changed */
};
/* Runs E (NP_OP_SLOW) with r[15] = its address and cpsr up to date.
 * *EXTRA: cycles to add; *PSR: the CPSR was written (banks, IRQ mask). */
enum np_slow_result np_exec_slow(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br, unsigned *extra,
                                 bool *psr);

#endif
