/* cpu_m_exec.c - the Cortex-M instruction set (cpu_m.h): np_m_step fetches,
 * decodes and runs one Thumb instruction of ARMv6-M, ARMv7-M or ARMv8-M
 * mainline, hands the DSP and FP encodings to cpu_m_dsp.c and cpu_m_fp.c,
 * keeps ITSTATE, counts the instruction's cycles by the TRM's table and
 * tells the branch hook of each PC write.
 *
 * Faults are precise: every instruction checks all its memory accesses
 * (loads into temporaries, stores probed) before it writes a register, so
 * that a fault leaves the CPU as it was before the instruction.
 *
 * Decoding follows the ARMv7-M ARM's tables (DDI 0403E, A5.2 for the 16-bit
 * encodings, A5.3 for the 32-bit ones); UNPREDICTABLE encodings run as the
 * obvious reading of their pseudocode, or are UNDEFINED where there is none
 * (a 32-bit data-processing write of the PC, an empty register list). */
#include "cpu_internal.h"
#include "cpu_m.h"

/* ---- the cycle model ----------------------------------------------------
 * Cycles of each instruction class with zero-wait-state memory, from the
 * TRMs' instruction timing tables:
 * - Cortex-M3: ARM DDI 0337, "Cortex-M3 instruction set summary" (Table 3-1
 *   in r2p0/r2p1): P (the pipeline refill, 1-3) is taken as 2, B (barrier)
 *   as 0 for DMB/DSB and P for ISB.
 * - Cortex-M4: ARM DDI 0439, Table 3-1: as the M3 but the long multiplies
 *   (single cycle on the M4). The Cortex-M33 uses the M4's numbers.
 * - Cortex-M0: ARM DDI 0432C, Table 3-1 (the fast multiplier).
 * Not modelled: the M3/M4 pipelining of consecutive loads/stores (each
 * after the first costs 1 there; here every one costs `ldr`/`str`), the
 * long multiplies' early termination (the minimum is used: 3 to 5 and 4 to 7
 * on the M3), the refill's dependence on the target's alignment and width. */
struct m_cycles {
    uint8_t alu;       /* data processing, moves, extends, bit fields, IT, hints, cps, svc, bkpt */
    uint8_t failed;    /* an instruction whose condition failed, a branch not taken */
    uint8_t branch;    /* a taken b / b<cond> / cbz / cbnz: 1 + P */
    uint8_t bl;        /* bl */
    uint8_t bx;        /* bx, blx <reg> */
    uint8_t alu_pc;    /* mov pc / add pc (any data-processing write of the PC) */
    uint8_t ldr;       /* a single load (ldr*, ldrex, lda) */
    uint8_t str;       /* a single store (str*, strex, stl) */
    uint8_t ldr_pc;    /* ldr pc: 2 + P */
    uint8_t lsm;       /* ldm/stm/push/pop, ldrd/strd: lsm + N (N registers) */
    uint8_t lsm_pc;    /* more for ldm/pop with the PC: + P */
    uint8_t tb;        /* tbb/tbh: 2 + P */
    uint8_t mul;       /* mul(s) */
    uint8_t mla;       /* mla, mls */
    uint8_t mull;      /* smull, umull */
    uint8_t mlal;      /* smlal, umlal */
    uint8_t div;       /* sdiv/udiv base (see div_cycles) */
    uint8_t mrs, msr;
    uint8_t barrier;   /* dmb, dsb */
    uint8_t isb;
    uint8_t wfi;       /* wfi / wfe, the waiting not counted */
};

static const struct m_cycles cycles_m0 = {
    .alu = 1, .failed = 1, .branch = 3, .bl = 4, .bx = 3, .alu_pc = 3, .ldr = 2, .str = 2, .ldr_pc = 2,
    .lsm = 1, .lsm_pc = 3, /* POP {..., PC}: 4 + N, N the registers besides the PC */
    .tb = 4, .mul = 1, .mla = 1, .mull = 1, .mlal = 1, .div = 2, .mrs = 3, .msr = 3, .barrier = 4,
    .isb = 4, .wfi = 2,
};
static const struct m_cycles cycles_m3 = {
    .alu = 1, .failed = 1, .branch = 3, .bl = 3, .bx = 3, .alu_pc = 3, .ldr = 2, .str = 2, .ldr_pc = 4,
    .lsm = 1, .lsm_pc = 2, .tb = 4, .mul = 1, .mla = 2, .mull = 3, .mlal = 4, .div = 2, .mrs = 1,
    .msr = 1, .barrier = 1, .isb = 3, .wfi = 1,
};
static const struct m_cycles cycles_m4 = {
    .alu = 1, .failed = 1, .branch = 3, .bl = 3, .bx = 3, .alu_pc = 3, .ldr = 2, .str = 2, .ldr_pc = 4,
    .lsm = 1, .lsm_pc = 2, .tb = 4, .mul = 1, .mla = 2, .mull = 1, .mlal = 1, .div = 2, .mrs = 1,
    .msr = 1, .barrier = 1, .isb = 3, .wfi = 1,
};

static inline const struct m_cycles *m_cycles(const struct np_cpu *cpu)
{
    if (!(cpu->m.features & NP_MFEAT_V7M))
        return &cycles_m0;
    return (cpu->m.features & NP_MFEAT_DSP) ? &cycles_m4 : &cycles_m3;
}

/* sdiv/udiv: the TRMs say "2 to 12, data dependent" (the divider retires
 * about four quotient bits a cycle and stops early); approximated as 2 plus
 * a cycle per four significant bits of the quotient's magnitude. */
static unsigned div_cycles(const struct m_cycles *t, uint32_t quotient_magnitude)
{
    unsigned bits = quotient_magnitude ? 32u - (unsigned)__builtin_clz(quotient_magnitude) : 0;
    return t->div + (bits + 3) / 4;
}

/* ---- one step's state ---- */

/* np_m_step's internal results beyond 0 (done) and NP_MF_* (a fault). */
enum { X_SVC = -1, X_WFI = -2, X_EXC_RETURN = -3, X_IT = -4 };

struct step {
    uint32_t pc;       /* the instruction's address */
    uint32_t next;     /* the next instruction's */
    uint32_t target;   /* the new PC when jump */
    unsigned cyc;
    bool jump;
    bool cond;         /* conditional: NP_BRF_COND */
    bool flags16;      /* 16-bit data processing sets flags: outside IT blocks */
    uint8_t kind, reg; /* the branch's */
    uint8_t new_it;    /* X_IT: the new ITSTATE */
    const struct m_cycles *t;
};

/* A register as an operand: the PC reads as the instruction's address + 4. */
static inline uint32_t reg(const struct np_cpu *cpu, const struct step *s, unsigned n)
{
    return n == 15 ? s->pc + 4 : cpu->r[n];
}

static inline void jump(struct step *s, uint32_t to, unsigned kind, unsigned r, unsigned cyc)
{
    s->jump = true;
    s->target = to & ~1u;
    s->kind = (uint8_t)kind;
    s->reg = (uint8_t)r;
    s->cyc = cyc;
}

/* A PC write with interworking (BXWritePC: bx, ldr pc, pop, ldm): an
 * exception return in handler mode, else bit 0 must be set (Thumb). Checks
 * only; the caller does the other effects when it returns 0 or X_EXC_RETURN. */
static inline int bx_check(const struct np_cpu *cpu, uint32_t v)
{
    if (np_m_handler(cpu) && v >= 0xF0000000u)
        return X_EXC_RETURN;
    return (v & 1) ? 0 : NP_MF_INVSTATE;
}

/* Finishes a BXWritePC that bx_check passed. */
static inline int bx_write(struct np_cpu *cpu, struct step *s, int chk, uint32_t v, unsigned kind, unsigned r,
                           unsigned cyc)
{
    if (chk == X_EXC_RETURN) {
        cpu->m.exc_return = v;
        s->cyc = cyc;
        return X_EXC_RETURN;
    }
    jump(s, v, kind, r, cyc);
    return 0;
}

/* ---- flags ---- */

static inline void set_nz(struct np_cpu *cpu, uint32_t res)
{
    cpu->cpsr = (cpu->cpsr & 0x3fffffffu) | (res & 0x80000000u) | ((uint32_t)(res == 0) << 30);
}

static inline void set_nzc(struct np_cpu *cpu, uint32_t res, uint32_t c)
{
    cpu->cpsr = (cpu->cpsr & 0x1fffffffu) | (res & 0x80000000u) | ((uint32_t)(res == 0) << 30) | (c << 29);
}

static inline uint32_t carry(const struct np_cpu *cpu) { return (cpu->cpsr >> 29) & 1; }

/* AddWithCarry, the flags written when S. */
static inline uint32_t add_c(struct np_cpu *cpu, uint32_t a, uint32_t b, uint32_t cin, bool s)
{
    uint64_t wide = (uint64_t)a + b + cin;
    uint32_t res = (uint32_t)wide;
    if (s)
        cpu->cpsr = (cpu->cpsr & 0x0fffffffu) | (res & 0x80000000u) | ((uint32_t)(res == 0) << 30) |
                    ((uint32_t)(wide >> 32) << 29) | ((((a ^ res) & (b ^ res)) >> 31) << 28);
    return res;
}

/* DecodeImmShift and Shift_C of the 32-bit encodings: TYPE, IMM5 as encoded. */
static inline uint32_t shift_imm(uint32_t v, unsigned type, unsigned imm5, uint32_t cin, uint32_t *c)
{
    if (type == 0)
        return np_shift(v, 0, imm5, cin, c);
    if (type == 3 && imm5 == 0)
        return np_shift(v, 4, 1, cin, c); /* rrx */
    return np_shift(v, type, imm5 ? imm5 : 32, cin, c);
}

/* ThumbExpandImm_C: the 12-bit modified immediate I:IMM3:IMM8. */
static inline uint32_t thumb_expand_imm(uint32_t imm12, uint32_t cin, uint32_t *c)
{
    uint32_t b = imm12 & 0xff;
    if ((imm12 >> 10) == 0) {
        *c = cin;
        switch ((imm12 >> 8) & 3) {
        case 0: return b;
        case 1: return b | b << 16;
        case 2: return b << 8 | b << 24;
        default: return b | b << 8 | b << 16 | b << 24;
        }
    }
    uint32_t v = np_ror(0x80 | (imm12 & 0x7f), imm12 >> 7);
    *c = v >> 31;
    return v;
}

/* The data-processing operations of the 32-bit encodings (OP: hw1[8:5]) on
 * A and B with the shifter's carry SHC; flags when S. Returns false for the
 * ones these encodings do not have. */
static inline bool dp32(struct np_cpu *cpu, unsigned op, uint32_t a, uint32_t b, uint32_t shc, bool s,
                        uint32_t *res)
{
    uint32_t r;
    switch (op) {
    case 0: r = a & b; break;         /* and, tst */
    case 1: r = a & ~b; break;        /* bic */
    case 2: r = a | b; break;         /* orr, mov (a = 0) */
    case 3: r = a | ~b; break;        /* orn, mvn (a = 0) */
    case 4: r = a ^ b; break;         /* eor, teq */
    case 8: *res = add_c(cpu, a, b, 0, s); return true;                  /* add, cmn */
    case 10: *res = add_c(cpu, a, b, carry(cpu), s); return true;        /* adc */
    case 11: *res = add_c(cpu, a, ~b, carry(cpu), s); return true;       /* sbc */
    case 13: *res = add_c(cpu, a, ~b, 1, s); return true;                /* sub, cmp */
    case 14: *res = add_c(cpu, ~a, b, 1, s); return true;                /* rsb */
    default: return false;
    }
    if (s)
        set_nzc(cpu, r, shc);
    *res = r;
    return true;
}

/* ---- memory ---- */

/* A load of LEN bytes (SIGNED: sign-extended). */
static inline int load(struct np_cpu *cpu, uint32_t addr, unsigned len, bool is_signed, bool aligned, uint32_t *v)
{
    int f = np_m_read(cpu, addr, len, aligned, v);
    if (f)
        return f;
    if (is_signed)
        *v = len == 1 ? (uint32_t)(int32_t)(int8_t)*v : (uint32_t)(int32_t)(int16_t)*v;
    return 0;
}

/* Before a store of several words at ADDR (N of them): makes sure each will
 * succeed, so that a fault leaves memory unwritten. One region holding them
 * all answers at once; else each word is probed by a read, but for the
 * device space (0xE0000000 up), where reads have effects. */
static int probe_words(struct np_cpu *cpu, uint32_t addr, unsigned n)
{
    if (addr & 3)
        return NP_MF_UNALIGNED;
    uint8_t hint = 0;
    if (np_region_at(cpu->impl, &hint, addr, 4 * n))
        return 0;
    for (unsigned i = 0; i < n; i++, addr += 4) {
        uint32_t v;
        if (addr >= 0xE0000000u)
            continue;
        int f = np_m_read(cpu, addr, 4, true, &v);
        if (f)
            return f == NP_MF_READ ? NP_MF_WRITE : f; /* fault_addr is the address already */
    }
    return 0;
}

/* stm/push: LIST to ascending words from ADDR; rn = WBVAL when WB. */
static int store_multiple(struct np_cpu *cpu, struct step *s, unsigned rn, uint32_t addr, uint32_t list, bool wb,
                          uint32_t wbval)
{
    unsigned n = (unsigned)__builtin_popcount(list);
    int f = probe_words(cpu, addr, n);
    if (f)
        return f;
    for (unsigned i = 0; i < 16; i++) {
        if (!(list >> i & 1))
            continue;
        f = np_m_write(cpu, addr, 4, true, reg(cpu, s, i));
        if (f)
            return f; /* only a device refusing a write: not undone */
        addr += 4;
    }
    if (wb)
        cpu->r[rn] = wbval;
    s->cyc = s->t->lsm + n;
    return 0;
}

/* ldm/pop: LIST from ascending words at ADDR; rn = WBVAL when WB (unless
 * it is loaded: the loaded value wins). */
static int load_multiple(struct np_cpu *cpu, struct step *s, unsigned rn, uint32_t addr, uint32_t list, bool wb,
                         uint32_t wbval)
{
    uint32_t v[16];
    unsigned n = 0;
    for (unsigned i = 0; i < 16; i++) {
        if (!(list >> i & 1))
            continue;
        int f = np_m_read(cpu, addr + 4 * n, 4, true, &v[i]);
        if (f)
            return f;
        n++;
    }
    int chk = 0;
    if (list & 0x8000) {
        chk = bx_check(cpu, v[15]);
        if (chk > 0)
            return chk;
    }
    if (wb)
        cpu->r[rn] = wbval;
    for (unsigned i = 0; i < 15; i++)
        if (list >> i & 1)
            cpu->r[i] = v[i];
    s->cyc = s->t->lsm + n;
    if (list & 0x8000)
        return bx_write(cpu, s, chk, v[15], NP_BR_LDM_PC, rn, s->cyc + s->t->lsm_pc);
    return 0;
}

/* A loaded value V into register RT (from an address based on RN): the PC
 * takes the interworking rules. */
static inline int load_to(struct np_cpu *cpu, struct step *s, unsigned rt, unsigned rn, uint32_t v, bool wb,
                          uint32_t wbval)
{
    if (rt == 15) {
        int chk = bx_check(cpu, v);
        if (chk > 0)
            return chk;
        if (wb)
            cpu->r[rn] = wbval;
        return bx_write(cpu, s, chk, v, NP_BR_LDR_PC, rn, s->t->ldr_pc);
    }
    if (wb)
        cpu->r[rn] = wbval;
    cpu->r[rt] = v;
    s->cyc = s->t->ldr;
    return 0;
}

/* ---- the 16-bit encodings ---- */

static int exec16(struct np_cpu *cpu, struct step *s, uint32_t hw)
{
    const struct m_cycles *t = s->t;
    uint32_t *r = cpu->r;
    unsigned rd = hw & 7, rn = (hw >> 3) & 7, rm = (hw >> 6) & 7;
    uint32_t c, v, addr;
    int f;

    s->cyc = t->alu;
    switch (hw >> 11) {
    case 0x00: case 0x01: case 0x02: { /* lsl, lsr, asr #imm5 */
        unsigned type = hw >> 11, imm5 = (hw >> 6) & 31;
        v = shift_imm(r[rn], type, imm5, carry(cpu), &c);
        r[rd] = v;
        if (s->flags16)
            set_nzc(cpu, v, c);
        return 0;
    }
    case 0x03: { /* add/sub register or imm3 */
        uint32_t b = (hw & 0x400) ? rm : r[rm];
        r[rd] = (hw & 0x200) ? add_c(cpu, r[rn], ~b, 1, s->flags16) : add_c(cpu, r[rn], b, 0, s->flags16);
        return 0;
    }
    case 0x04: /* movs rd, #imm8 */
        rd = (hw >> 8) & 7;
        r[rd] = hw & 0xff;
        if (s->flags16)
            set_nz(cpu, r[rd]);
        return 0;
    case 0x05: /* cmp rn, #imm8 */
        add_c(cpu, r[(hw >> 8) & 7], ~(hw & 0xff), 1, true);
        return 0;
    case 0x06: /* adds rdn, #imm8 */
        rd = (hw >> 8) & 7;
        r[rd] = add_c(cpu, r[rd], hw & 0xff, 0, s->flags16);
        return 0;
    case 0x07: /* subs rdn, #imm8 */
        rd = (hw >> 8) & 7;
        r[rd] = add_c(cpu, r[rd], ~(hw & 0xff), 1, s->flags16);
        return 0;
    case 0x08:
        if (!(hw & 0x400)) { /* data processing, register */
            uint32_t a = r[rd], b = r[rn], res;
            bool fl = s->flags16;
            switch ((hw >> 6) & 15) {
            case 0: res = a & b; if (fl) set_nz(cpu, res); r[rd] = res; return 0;
            case 1: res = a ^ b; if (fl) set_nz(cpu, res); r[rd] = res; return 0;
            case 2: case 3: case 4: case 7: { /* lsl, lsr, asr, ror by register */
                static const uint8_t type[16] = {[2] = 0, [3] = 1, [4] = 2, [7] = 3};
                res = np_shift(a, type[(hw >> 6) & 15], b & 0xff, carry(cpu), &c);
                if (fl)
                    set_nzc(cpu, res, c);
                r[rd] = res;
                return 0;
            }
            case 5: r[rd] = add_c(cpu, a, b, carry(cpu), fl); return 0;
            case 6: r[rd] = add_c(cpu, a, ~b, carry(cpu), fl); return 0;
            case 8: set_nz(cpu, a & b); return 0;
            case 9: r[rd] = add_c(cpu, ~b, 0, 1, fl); return 0; /* rsbs rd, rn, #0 */
            case 10: add_c(cpu, a, ~b, 1, true); return 0;
            case 11: add_c(cpu, a, b, 0, true); return 0;
            case 12: res = a | b; if (fl) set_nz(cpu, res); r[rd] = res; return 0;
            case 13: /* muls: C and V as they were */
                res = a * b;
                if (fl)
                    set_nz(cpu, res);
                r[rd] = res;
                s->cyc = t->mul;
                return 0;
            case 14: res = a & ~b; if (fl) set_nz(cpu, res); r[rd] = res; return 0;
            default: res = ~b; if (fl) set_nz(cpu, res); r[rd] = res; return 0;
            }
        }
        /* special data processing and branch exchange: high registers */
        rd = (hw & 7) | ((hw >> 4) & 8);
        rm = (hw >> 3) & 15;
        switch ((hw >> 8) & 3) {
        case 0: /* add rdn, rm: no flags */
            v = reg(cpu, s, rd) + reg(cpu, s, rm);
            if (rd == 15) {
                jump(s, v, NP_BR_MOV_PC, rm, t->alu_pc);
                return 0;
            }
            r[rd] = v;
            return 0;
        case 1: /* cmp rn, rm */
            add_c(cpu, reg(cpu, s, rd), ~reg(cpu, s, rm), 1, true);
            return 0;
        case 2: /* mov rd, rm */
            v = reg(cpu, s, rm);
            if (rd == 15) {
                jump(s, v, NP_BR_MOV_PC, rm, t->alu_pc);
                return 0;
            }
            r[rd] = v;
            return 0;
        default: { /* bx / blx rm */
            if (hw & 7)
                return NP_MF_UNDEFINED;
            v = reg(cpu, s, rm);
            if (hw & 0x80) { /* blx: BLXWritePC, never an exception return */
                if (rm == 15)
                    return NP_MF_UNDEFINED;
                if (!(v & 1))
                    return NP_MF_INVSTATE;
                r[14] = s->next | 1;
                jump(s, v, NP_BR_BLX_REG, rm, t->bx);
                return 0;
            }
            int chk = bx_check(cpu, v);
            if (chk > 0)
                return chk;
            return bx_write(cpu, s, chk, v, NP_BR_BX, rm, t->bx);
        }
        }
    case 0x09: /* ldr rt, [pc, #imm8] */
        addr = ((s->pc + 4) & ~3u) + ((hw & 0xff) << 2);
        if ((f = np_m_read(cpu, addr, 4, false, &v)))
            return f;
        r[(hw >> 8) & 7] = v;
        s->cyc = t->ldr;
        return 0;
    case 0x0a: case 0x0b: { /* load/store, register offset */
        static const uint8_t len[8] = {4, 2, 1, 1, 4, 2, 1, 2};
        unsigned op = (hw >> 9) & 7;
        addr = r[rn] + r[rm];
        if (op < 3) {
            if ((f = np_m_write(cpu, addr, len[op], false, r[rd])))
                return f;
            s->cyc = t->str;
            return 0;
        }
        if ((f = load(cpu, addr, len[op], op == 3 || op == 7, false, &v)))
            return f;
        r[rd] = v;
        s->cyc = t->ldr;
        return 0;
    }
    case 0x0c: /* str rt, [rn, #imm5*4] */
        if ((f = np_m_write(cpu, r[rn] + ((hw >> 4) & 0x7c), 4, false, r[rd])))
            return f;
        s->cyc = t->str;
        return 0;
    case 0x0d: /* ldr */
        if ((f = np_m_read(cpu, r[rn] + ((hw >> 4) & 0x7c), 4, false, &v)))
            return f;
        r[rd] = v;
        s->cyc = t->ldr;
        return 0;
    case 0x0e: /* strb */
        if ((f = np_m_write(cpu, r[rn] + ((hw >> 6) & 31), 1, false, r[rd])))
            return f;
        s->cyc = t->str;
        return 0;
    case 0x0f: /* ldrb */
        if ((f = np_m_read(cpu, r[rn] + ((hw >> 6) & 31), 1, false, &v)))
            return f;
        r[rd] = v;
        s->cyc = t->ldr;
        return 0;
    case 0x10: /* strh */
        if ((f = np_m_write(cpu, r[rn] + ((hw >> 5) & 0x3e), 2, false, r[rd])))
            return f;
        s->cyc = t->str;
        return 0;
    case 0x11: /* ldrh */
        if ((f = np_m_read(cpu, r[rn] + ((hw >> 5) & 0x3e), 2, false, &v)))
            return f;
        r[rd] = v;
        s->cyc = t->ldr;
        return 0;
    case 0x12: /* str rt, [sp, #imm8*4] */
        if ((f = np_m_write(cpu, r[13] + ((hw & 0xff) << 2), 4, false, r[(hw >> 8) & 7])))
            return f;
        s->cyc = t->str;
        return 0;
    case 0x13: /* ldr rt, [sp, #imm8*4] */
        if ((f = np_m_read(cpu, r[13] + ((hw & 0xff) << 2), 4, false, &v)))
            return f;
        r[(hw >> 8) & 7] = v;
        s->cyc = t->ldr;
        return 0;
    case 0x14: /* adr rd, label */
        r[(hw >> 8) & 7] = ((s->pc + 4) & ~3u) + ((hw & 0xff) << 2);
        return 0;
    case 0x15: /* add rd, sp, #imm8*4 */
        r[(hw >> 8) & 7] = r[13] + ((hw & 0xff) << 2);
        return 0;
    case 0x16: case 0x17: /* miscellaneous */
        break;
    case 0x18: { /* stmia rn!, {list} */
        unsigned base = (hw >> 8) & 7;
        uint32_t list = hw & 0xff;
        if (!list)
            return NP_MF_UNDEFINED;
        return store_multiple(cpu, s, base, r[base], list, true, r[base] + 4 * (uint32_t)__builtin_popcount(list));
    }
    case 0x19: { /* ldmia rn(!), {list}: write-back unless rn is in the list */
        unsigned base = (hw >> 8) & 7;
        uint32_t list = hw & 0xff;
        if (!list)
            return NP_MF_UNDEFINED;
        return load_multiple(cpu, s, base, r[base], list, !(list >> base & 1),
                             r[base] + 4 * (uint32_t)__builtin_popcount(list));
    }
    case 0x1a: case 0x1b: { /* b<cond>, udf, svc */
        unsigned cond = (hw >> 8) & 15;
        if (cond == 14)
            return NP_MF_UNDEFINED; /* udf */
        if (cond == 15)
            return X_SVC;
        if (!s->flags16)
            return NP_MF_UNDEFINED; /* in an IT block: UNPREDICTABLE, undefined as QEMU has it */
        s->cond = true;
        if (!np_cond_pass(cond, cpu->cpsr)) {
            s->cyc = t->failed;
            return 0;
        }
        jump(s, s->pc + 4 + ((uint32_t)(int32_t)(int8_t)(hw & 0xff) << 1), NP_BR_B, 15, t->branch);
        return 0;
    }
    case 0x1c: /* b label */
        jump(s, s->pc + 4 + ((uint32_t)((int32_t)(hw << 21) >> 20)), NP_BR_B, 15, t->branch);
        return 0;
    default:
        return NP_MF_UNDEFINED; /* 32-bit prefixes do not come here */
    }

    /* miscellaneous 16-bit instructions: 1011 xxxx */
    bool v7 = cpu->m.features & NP_MFEAT_V7M;
    switch ((hw >> 8) & 15) {
    case 0x0: /* add/sub sp, sp, #imm7*4 */
        if (hw & 0x80)
            r[13] -= (hw & 0x7f) << 2;
        else
            r[13] += (hw & 0x7f) << 2;
        return 0;
    case 0x1: case 0x3: case 0x9: case 0xb: { /* cbz, cbnz */
        if (!v7 || !s->flags16)
            return NP_MF_UNDEFINED; /* in an IT block: UNPREDICTABLE */
        s->cond = true;
        bool nonzero = hw & 0x800;
        if ((r[hw & 7] != 0) != nonzero) {
            s->cyc = t->failed;
            return 0;
        }
        jump(s, s->pc + 4 + (((hw >> 2) & 0x3e) | ((hw >> 3) & 0x40)), NP_BR_B, 15, t->branch);
        return 0;
    }
    case 0x2: /* sxth, sxtb, uxth, uxtb */
        v = r[rn];
        switch ((hw >> 6) & 3) {
        case 0: r[rd] = (uint32_t)(int32_t)(int16_t)v; break;
        case 1: r[rd] = (uint32_t)(int32_t)(int8_t)v; break;
        case 2: r[rd] = v & 0xffff; break;
        default: r[rd] = v & 0xff; break;
        }
        return 0;
    case 0x4: case 0x5: { /* push {list, lr} */
        uint32_t list = (hw & 0xff) | ((hw & 0x100) << 6);
        if (!list)
            return NP_MF_UNDEFINED;
        uint32_t sp = r[13] - 4 * (uint32_t)__builtin_popcount(list);
        return store_multiple(cpu, s, 13, sp, list, true, sp);
    }
    case 0x6: /* cps */
        if ((hw & 0xffec) != 0xb660)
            return NP_MF_UNDEFINED; /* setend and the rest */
        if (np_m_privileged(cpu)) {
            uint32_t disable = (hw >> 4) & 1;
            if (hw & 2)
                cpu->m.primask = disable;
            /* FAULTMASK: ARMv7-M, and not set at priority -1 or -2 (HardFault, NMI) */
            if ((hw & 1) && v7 && (!disable || (cpu->m.ipsr != NP_EXC_NMI && cpu->m.ipsr != NP_EXC_HARDFAULT)))
                cpu->m.faultmask = disable;
        }
        return 0;
    case 0xa: /* rev, rev16, revsh */
        v = r[rn];
        switch ((hw >> 6) & 3) {
        case 0: r[rd] = __builtin_bswap32(v); return 0;
        case 1: r[rd] = ((v >> 8) & 0x00ff00ffu) | ((v << 8) & 0xff00ff00u); return 0;
        case 3: r[rd] = (uint32_t)(int32_t)(int16_t)(((v >> 8) & 0xff) | ((v & 0xff) << 8)); return 0;
        default: return NP_MF_UNDEFINED;
        }
    case 0xc: case 0xd: { /* pop {list, pc} */
        uint32_t list = (hw & 0xff) | ((hw & 0x100) << 7);
        if (!list)
            return NP_MF_UNDEFINED;
        return load_multiple(cpu, s, 13, r[13], list, true, r[13] + 4 * (uint32_t)__builtin_popcount(list));
    }
    case 0xe: /* bkpt: the hook's (semihosting), else a debug event */
        if (cpu->hooks.bkpt && cpu->hooks.bkpt(cpu->hooks.ctx, cpu, hw & 0xff))
            return 0;
        return NP_MF_BKPT;
    case 0xf:
        if (hw & 0xf) { /* it */
            if (!v7 || (hw & 0xf0) == 0xf0 || !s->flags16)
                return NP_MF_UNDEFINED; /* an IT inside an IT block is UNPREDICTABLE */
            s->new_it = (uint8_t)hw;
            return X_IT;
        }
        switch ((hw >> 4) & 15) { /* hints; the unallocated ones are nops */
        case 2: case 3: /* wfe, wfi */
            s->cyc = t->wfi;
            return X_WFI;
        default: /* nop, yield, sev */
            return 0;
        }
    default: /* 0x7, 0x8: unallocated */
        return NP_MF_UNDEFINED;
    }
}

/* ---- the 32-bit encodings ---- */

/* A DSP encoding (ARMv7E-M), or undefined. */
static int dsp_or_undef(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    unsigned cyc = 1;
    if ((cpu->m.features & NP_MFEAT_DSP) && np_m_dsp(cpu, hw1, hw2, &cyc)) {
        s->cyc = cyc;
        return 0;
    }
    return NP_MF_UNDEFINED;
}

/* Coprocessor space: the FPU's for coprocessors 10 and 11; the rest, or all
 * without an FPU, is a NOCP UsageFault. */
static int coprocessor(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    if (((hw2 >> 9) & 7) != 5 || !(cpu->m.features & NP_MFEAT_FPU))
        return NP_MF_NOCP;
    unsigned cyc = 1;
    int res = np_m_fp(cpu, hw1, hw2, &cyc);
    if (res < 0)
        return -res;
    if (res == 0)
        return NP_MF_UNDEFINED;
    s->cyc = cyc;
    return 0;
}

/* ldm/stm ia/db, push.w/pop.w: 1110 100x x0WL Rn */
static int ls_multiple(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    unsigned rn = hw1 & 15, op = (hw1 >> 7) & 3;
    bool wb = hw1 & 0x20, ld = hw1 & 0x10;
    uint32_t list = hw2, n = (uint32_t)__builtin_popcount(list);
    if (op == 0 || op == 3 || rn == 15 || (list & 0x2000) || n == 0 || (wb && (list >> rn & 1)))
        return NP_MF_UNDEFINED; /* srs/rfe; the UNPREDICTABLE lists and write-backs */
    uint32_t base = cpu->r[rn], start = op == 1 ? base : base - 4 * n;
    uint32_t wbval = op == 1 ? base + 4 * n : base - 4 * n;
    if (ld) {
        if ((list & 0xc000) == 0xc000)
            return NP_MF_UNDEFINED;
        return load_multiple(cpu, s, rn, start, list, wb, wbval);
    }
    if (list & 0x8000)
        return NP_MF_UNDEFINED;
    return store_multiple(cpu, s, rn, start, list, wb, wbval);
}

/* An exclusive or acquire/release access of LEN bytes at ADDR. */
static int load_exclusive(struct np_cpu *cpu, struct step *s, unsigned rt, uint32_t addr, unsigned len, bool excl)
{
    uint32_t v;
    int f = np_m_read(cpu, addr, len, true, &v);
    if (f)
        return f;
    if (excl) {
        cpu->m.excl_addr = addr;
        cpu->m.excl_open = true;
    }
    cpu->r[rt] = v;
    s->cyc = s->t->ldr;
    return 0;
}

static int store_exclusive(struct np_cpu *cpu, struct step *s, unsigned rd, unsigned rt, unsigned rn,
                           uint32_t addr, unsigned len)
{
    if (rd == 13 || rd == 15 || rt == 13 || rt == 15 || rd == rt || rd == rn)
        return NP_MF_UNDEFINED; /* UNPREDICTABLE */
    /* the local monitor: the store happens when an ldrex of the same address
     * opened it and nothing closed it since */
    if (addr & (len - 1))
        return NP_MF_UNALIGNED;
    bool pass = cpu->m.excl_open && cpu->m.excl_addr == addr;
    if (pass) {
        int f = np_m_write(cpu, addr, len, true, cpu->r[rt]);
        if (f)
            return f;
    }
    cpu->m.excl_open = false;
    cpu->r[rd] = !pass;
    s->cyc = s->t->str;
    return 0;
}

/* ldrd/strd, ldrex/strex, tbb/tbh, and ARMv8-M's lda/stl: 1110 100x x1xx */
static int ls_dual_excl(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    uint32_t *r = cpu->r;
    unsigned rn = hw1 & 15, rt = hw2 >> 12, rt2 = (hw2 >> 8) & 15, op1 = (hw1 >> 7) & 3, op2 = (hw1 >> 4) & 3;
    bool v8 = cpu->m.features & NP_MFEAT_V8M;
    int f;

    if (op1 == 0 && op2 == 0) { /* strex rd, rt, [rn, #imm8*4]; ARMv8-M: tt */
        if (v8 && rt == 15 && (hw2 & 0x3f) == 0) {
            r[rt2] = 0; /* tt, ttt: no MPU or security attributes to report */
            return 0;
        }
        return store_exclusive(cpu, s, rt2, rt, rn, r[rn] + ((hw2 & 0xff) << 2), 4);
    }
    if (op1 == 0 && op2 == 1 && rt2 == 15) /* ldrex rt, [rn, #imm8*4] */
        return load_exclusive(cpu, s, rt, r[rn] + ((hw2 & 0xff) << 2), 4, true);
    if ((op1 & 2) || op2 >= 2) { /* ldrd/strd: P = hw1[8], U = hw1[7], W = hw1[5] */
        bool p = hw1 & 0x100, u = hw1 & 0x80, w = hw1 & 0x20, ld = hw1 & 0x10;
        uint32_t imm = (hw2 & 0xff) << 2, base = rn == 15 ? (s->pc + 4) & ~3u : r[rn];
        uint32_t off = u ? base + imm : base - imm, addr = p ? off : base;
        if (rt == 15 || rt2 == 15 || (ld && rt == rt2) || (rn == 15 && (w || !ld)) || (w && (rn == rt || rn == rt2)))
            return NP_MF_UNDEFINED;
        s->cyc = s->t->lsm + 2;
        if (ld) {
            uint32_t lo, hi;
            if ((f = np_m_read(cpu, addr, 4, true, &lo)) || (f = np_m_read(cpu, addr + 4, 4, true, &hi)))
                return f;
            if (w)
                r[rn] = off;
            r[rt] = lo;
            r[rt2] = hi;
            return 0;
        }
        if ((f = probe_words(cpu, addr, 2)))
            return f;
        if ((f = np_m_write(cpu, addr, 4, true, r[rt])) || (f = np_m_write(cpu, addr + 4, 4, true, r[rt2])))
            return f;
        if (w)
            r[rn] = off;
        return 0;
    }
    /* op1 == 1: tbb/tbh, the byte and halfword exclusives, ARMv8-M's acquire/release */
    unsigned op3 = (hw2 >> 4) & 15;
    static const uint8_t len[4] = {1, 2, 4, 4};
    if (op2 == 1) { /* loads */
        if ((op3 == 0 || op3 == 1) && (hw2 & 0xff00) == 0xf000) { /* tbb [rn, rm] / tbh [rn, rm, lsl #1] */
            unsigned rm = hw2 & 15;
            uint32_t v, half = op3;
            if ((f = np_m_read(cpu, reg(cpu, s, rn) + (r[rm] << half), 1u << half, false, &v)))
                return f;
            jump(s, s->pc + 4 + 2 * v, NP_BR_B, rn, s->t->tb);
            return 0;
        }
        if ((hw2 & 0xf0f) != 0xf0f)
            return NP_MF_UNDEFINED; /* (1) bits clear */
        if (op3 == 4 || op3 == 5) /* ldrexb, ldrexh */
            return load_exclusive(cpu, s, rt, r[rn], op3 == 4 ? 1 : 2, true);
        if (v8 && op3 >= 8 && op3 != 11 && op3 != 15) /* lda{b,h}, ldaex{b,h} */
            return load_exclusive(cpu, s, rt, r[rn], len[op3 & 3], op3 >= 12);
        return NP_MF_UNDEFINED;
    }
    if (op2 == 0 && (hw2 & 0xf00) == 0xf00) { /* stores */
        if (op3 == 4 || op3 == 5) /* strexb, strexh */
            return store_exclusive(cpu, s, hw2 & 15, rt, rn, r[rn], op3 == 4 ? 1 : 2);
        if (v8 && op3 >= 12 && op3 != 15) /* stlex{b,h} */
            return store_exclusive(cpu, s, hw2 & 15, rt, rn, r[rn], len[op3 & 3]);
        if (v8 && op3 >= 8 && op3 <= 10) { /* stl{b,h} */
            if ((f = np_m_write(cpu, r[rn], len[op3 & 3], true, r[rt])))
                return f;
            s->cyc = s->t->str;
            return 0;
        }
    }
    return NP_MF_UNDEFINED;
}

/* Data processing, shifted register: 1110 101x xxxx */
static int dp_shifted(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    unsigned op = (hw1 >> 5) & 15, rn = hw1 & 15, rd = (hw2 >> 8) & 15, rm = hw2 & 15;
    bool sf = hw1 & 0x10;
    uint32_t c, res;
    uint32_t b = shift_imm(reg(cpu, s, rm), (hw2 >> 4) & 3, ((hw2 >> 10) & 0x1c) | ((hw2 >> 6) & 3), carry(cpu), &c);
    uint32_t a = ((op == 2 || op == 3) && rn == 15) ? 0 : reg(cpu, s, rn);
    bool test = rd == 15 && sf && (op == 0 || op == 4 || op == 8 || op == 13);
    if (op == 6)
        return dsp_or_undef(cpu, s, hw1, hw2); /* pkhbt/pkhtb */
    if (hw2 & 0x8000)
        return NP_MF_UNDEFINED; /* a (0) bit: UNPREDICTABLE, undefined as QEMU has it */
    if (rd == 15 && !test)
        return NP_MF_UNDEFINED;
    if (!dp32(cpu, op, a, b, c, sf, &res))
        return NP_MF_UNDEFINED;
    if (!test)
        cpu->r[rd] = res;
    return 0;
}

/* Data processing, modified immediate: 11110 x0xx xxx */
static int dp_modified_imm(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    unsigned op = (hw1 >> 5) & 15, rn = hw1 & 15, rd = (hw2 >> 8) & 15;
    bool sf = hw1 & 0x10;
    uint32_t c, res;
    uint32_t b = thumb_expand_imm(((hw1 & 0x400) << 1) | ((hw2 >> 4) & 0x700) | (hw2 & 0xff), carry(cpu), &c);
    uint32_t a = ((op == 2 || op == 3) && rn == 15) ? 0 : reg(cpu, s, rn);
    bool test = rd == 15 && sf && (op == 0 || op == 4 || op == 8 || op == 13);
    if (rd == 15 && !test)
        return NP_MF_UNDEFINED;
    if (!dp32(cpu, op, a, b, c, sf, &res))
        return NP_MF_UNDEFINED;
    if (!test)
        cpu->r[rd] = res;
    return 0;
}

/* ssat/usat of V to BITS (ssat: 1-32, usat: 0-31); sets Q when it saturates. */
static uint32_t saturate(struct np_cpu *cpu, int64_t v, unsigned bits, bool is_signed)
{
    int64_t lo, hi;
    if (is_signed) {
        hi = ((int64_t)1 << (bits - 1)) - 1;
        lo = -hi - 1;
    } else {
        hi = ((int64_t)1 << bits) - 1;
        lo = 0;
    }
    if (v > hi || v < lo) {
        cpu->cpsr |= NP_CPSR_Q;
        v = v > hi ? hi : lo;
    }
    return (uint32_t)v;
}

/* Data processing, plain binary immediate: 11110 x1xx xxx */
static int dp_plain_imm(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    unsigned op = (hw1 >> 4) & 31, rn = hw1 & 15, rd = (hw2 >> 8) & 15;
    uint32_t imm12 = ((hw1 & 0x400) << 1) | ((hw2 >> 4) & 0x700) | (hw2 & 0xff);
    unsigned lsb = ((hw2 >> 10) & 0x1c) | ((hw2 >> 6) & 3), wm1 = hw2 & 31;
    uint32_t *r = cpu->r;
    if (rd == 15 || (op >= 0x10 && ((hw1 & 0x400) || (hw2 & 0x20))))
        return NP_MF_UNDEFINED; /* the saturates and bit fields: (0) bits set */
    switch (op) {
    case 0x00: /* addw; adr (add) */
        r[rd] = (rn == 15 ? (s->pc + 4) & ~3u : r[rn]) + imm12;
        return 0;
    case 0x0a: /* subw; adr (sub) */
        r[rd] = (rn == 15 ? (s->pc + 4) & ~3u : r[rn]) - imm12;
        return 0;
    case 0x04: /* movw */
        r[rd] = (rn << 12) | imm12;
        return 0;
    case 0x0c: /* movt */
        r[rd] = (r[rd] & 0xffff) | ((rn << 12) | imm12) << 16;
        return 0;
    case 0x10: case 0x12: { /* ssat rd, #sat, rn, lsl/asr #imm */
        if (op == 0x12 && lsb == 0)
            return dsp_or_undef(cpu, s, hw1, hw2); /* ssat16 */
        int64_t v = op == 0x12 ? (int64_t)((int32_t)r[rn] >> lsb) : (int64_t)(int32_t)(r[rn] << lsb);
        r[rd] = saturate(cpu, v, wm1 + 1, true);
        return 0;
    }
    case 0x18: case 0x1a: { /* usat */
        if (op == 0x1a && lsb == 0)
            return dsp_or_undef(cpu, s, hw1, hw2); /* usat16 */
        int64_t v = op == 0x1a ? (int64_t)((int32_t)r[rn] >> lsb) : (int64_t)(int32_t)(r[rn] << lsb);
        r[rd] = saturate(cpu, v, wm1, false);
        return 0;
    }
    case 0x14: case 0x1c: { /* sbfx, ubfx */
        if (lsb + wm1 > 31)
            return NP_MF_UNDEFINED;
        uint32_t v = r[rn] << (31 - (lsb + wm1));
        r[rd] = op == 0x14 ? (uint32_t)((int32_t)v >> (31 - wm1)) : v >> (31 - wm1);
        return 0;
    }
    case 0x16: { /* bfi; bfc (rn = 15): wm1 is the msb */
        if (wm1 < lsb)
            return NP_MF_UNDEFINED;
        uint32_t mask = (0xffffffffu >> (31 - wm1)) & (0xffffffffu << lsb);
        uint32_t src = rn == 15 ? 0 : r[rn] << lsb;
        r[rd] = (r[rd] & ~mask) | (src & mask);
        return 0;
    }
    default:
        return NP_MF_UNDEFINED;
    }
}

/* Branches and miscellaneous control: 11110 xxxx xxx, hw2 1xxx */
static int branch_misc(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    const struct m_cycles *t = s->t;
    unsigned op1 = (hw2 >> 12) & 5, op = (hw1 >> 4) & 0x7f;
    bool v7 = cpu->m.features & NP_MFEAT_V7M;
    uint32_t sbit = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;

    if (op1 == 5) { /* bl */
        uint32_t i1 = !(j1 ^ sbit), i2 = !(j2 ^ sbit);
        uint32_t imm = (sbit ? 0xff000000u : 0) | i1 << 23 | i2 << 22 | (hw1 & 0x3ff) << 12 | (hw2 & 0x7ff) << 1;
        cpu->r[14] = s->next | 1;
        jump(s, s->pc + 4 + imm, NP_BR_BL, 15, t->bl);
        return 0;
    }
    if (op1 == 1) { /* b.w */
        if (!v7)
            return NP_MF_UNDEFINED;
        uint32_t i1 = !(j1 ^ sbit), i2 = !(j2 ^ sbit);
        uint32_t imm = (sbit ? 0xff000000u : 0) | i1 << 23 | i2 << 22 | (hw1 & 0x3ff) << 12 | (hw2 & 0x7ff) << 1;
        jump(s, s->pc + 4 + imm, NP_BR_B, 15, t->branch);
        return 0;
    }
    if (op1 == 4)
        return NP_MF_UNDEFINED; /* blx <imm>: no ARM state */
    /* op1 == 0 */
    if ((op & 0x38) != 0x38) { /* b<cond>.w */
        if (!v7 || !s->flags16)
            return NP_MF_UNDEFINED; /* in an IT block: UNPREDICTABLE */
        s->cond = true;
        if (!np_cond_pass((hw1 >> 6) & 15, cpu->cpsr)) {
            s->cyc = t->failed;
            return 0;
        }
        uint32_t imm = (sbit ? 0xfff00000u : 0) | j2 << 19 | j1 << 18 | (hw1 & 0x3f) << 12 | (hw2 & 0x7ff) << 1;
        jump(s, s->pc + 4 + imm, NP_BR_B, 15, t->branch);
        return 0;
    }
    switch (op) {
    case 0x38: case 0x39: /* msr <spec_reg>, rn */
        if ((hw2 & 0x2300) != 0 || (!v7 && ((hw2 >> 10) & 3) != 2))
            return NP_MF_UNDEFINED;
        np_m_msr(cpu, hw2 & 0xff, (hw2 >> 10) & 3, cpu->r[hw1 & 15]);
        s->cyc = t->msr;
        return 0;
    case 0x3a: /* hints */
        if (!v7 || (hw2 & 0x700))
            return NP_MF_UNDEFINED;
        switch (hw2 & 0xff) {
        case 2: case 3: /* wfe, wfi */
            s->cyc = t->wfi;
            return X_WFI;
        default: /* nop, yield, sev, dbg and the unallocated hints */
            return 0;
        }
    case 0x3b: /* clrex, dsb, dmb, isb */
        switch ((hw2 >> 4) & 15) {
        case 2:
            if (!v7)
                return NP_MF_UNDEFINED;
            cpu->m.excl_open = false;
            return 0;
        case 4: case 5: /* dsb, dmb: memory is in order here */
            s->cyc = t->barrier;
            return 0;
        case 6: /* isb */
            s->cyc = t->isb;
            return 0;
        default:
            return NP_MF_UNDEFINED;
        }
    case 0x3e: case 0x3f: { /* mrs rd, <spec_reg> */
        unsigned rd = (hw2 >> 8) & 15;
        uint32_t v;
        if (rd == 13 || rd == 15 || (hw2 & 0x2000))
            return NP_MF_UNDEFINED;
        if (np_m_mrs(cpu, hw2 & 0xff, &v))
            return NP_MF_UNDEFINED;
        cpu->r[rd] = v;
        s->cyc = t->mrs;
        return 0;
    }
    default: /* bxj, subs pc, lr, udf.w and the unallocated ones */
        return NP_MF_UNDEFINED;
    }
}

/* Loads and stores of one register: 1111 100x xxxx */
static int ls_single(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    uint32_t *r = cpu->r;
    unsigned size = (hw1 >> 5) & 3, rn = hw1 & 15, rt = hw2 >> 12;
    bool ld = hw1 & 0x10, sign = hw1 & 0x100, wb = false;
    uint32_t addr, wbval = 0, v;
    int f;

    if (size == 3 || (sign && (!ld || size == 2)))
        return NP_MF_UNDEFINED;
    if (rn == 15) { /* literal */
        if (!ld)
            return NP_MF_UNDEFINED;
        uint32_t base = (s->pc + 4) & ~3u, imm = hw2 & 0xfff;
        addr = (hw1 & 0x80) ? base + imm : base - imm;
    } else if (hw1 & 0x80) { /* [rn, #imm12] */
        addr = r[rn] + (hw2 & 0xfff);
    } else if (hw2 & 0x800) { /* [rn, #+/-imm8], [rn, #+/-imm8]!, [rn], #+/-imm8; ldrt family */
        bool p = hw2 & 0x400, u = hw2 & 0x200, w = hw2 & 0x100;
        uint32_t imm = hw2 & 0xff, off = u ? r[rn] + imm : r[rn] - imm;
        if (!p && !w)
            return NP_MF_UNDEFINED;
        addr = p ? off : r[rn];
        wb = w;
        wbval = off;
    } else if ((hw2 & 0xfc0) == 0) { /* [rn, rm, lsl #0-3] */
        unsigned rm = hw2 & 15;
        if (rm == 13 || rm == 15)
            return NP_MF_UNDEFINED;
        addr = r[rn] + (r[rm] << ((hw2 >> 4) & 3));
    } else {
        return NP_MF_UNDEFINED;
    }
    unsigned len = 1u << size;
    if (!ld) {
        if (rt == 15)
            return NP_MF_UNDEFINED;
        if ((f = np_m_write(cpu, addr, len, false, r[rt])))
            return f;
        if (wb)
            r[rn] = wbval;
        s->cyc = s->t->str;
        return 0;
    }
    if (rt == 15 && size != 2)
        return 0; /* pld, pli and the unallocated memory hints: no access */
    if ((f = load(cpu, addr, len, sign, false, &v)))
        return f;
    return load_to(cpu, s, rt, rn, v, wb, wbval);
}

/* Data processing, register: 1111 1010 xxxx, hw2 1111 */
static int dp_register(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    uint32_t *r = cpu->r;
    unsigned op1 = (hw1 >> 4) & 15, op2 = (hw2 >> 4) & 15, rn = hw1 & 15, rd = (hw2 >> 8) & 15, rm = hw2 & 15;
    uint32_t c, v;
    if ((hw2 & 0xf000) != 0xf000 || rd == 15)
        return dsp_or_undef(cpu, s, hw1, hw2);
    if (op1 < 8 && op2 == 0) { /* lsl, lsr, asr, ror rd, rn, rm */
        v = np_shift(r[rn], op1 >> 1, r[rm] & 0xff, carry(cpu), &c);
        r[rd] = v;
        if (op1 & 1)
            set_nzc(cpu, v, c);
        return 0;
    }
    if (op1 < 6 && (op2 & 0xc) == 8 && op1 != 2 && op1 != 3) { /* sxtah, uxtah, sxtab, uxtab; rn = 15: sxth ... */
        v = np_ror(r[rm], (hw2 >> 4 & 3) * 8);
        switch (op1) {
        case 0: v = (uint32_t)(int32_t)(int16_t)v; break;
        case 1: v &= 0xffff; break;
        case 4: v = (uint32_t)(int32_t)(int8_t)v; break;
        default: v &= 0xff; break;
        }
        r[rd] = rn == 15 ? v : r[rn] + v;
        return 0;
    }
    if ((op1 & 0xc) == 8 && (op2 & 0xc) == 8) { /* miscellaneous operations */
        v = r[rm];
        switch ((op1 & 3) << 2 | (op2 & 3)) {
        case 0x4: r[rd] = __builtin_bswap32(v); return 0;                                          /* rev */
        case 0x5: r[rd] = ((v >> 8) & 0x00ff00ffu) | ((v << 8) & 0xff00ff00u); return 0;           /* rev16 */
        case 0x6: /* rbit */
            v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
            v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
            v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
            r[rd] = __builtin_bswap32(v);
            return 0;
        case 0x7: r[rd] = (uint32_t)(int32_t)(int16_t)(((v >> 8) & 0xff) | ((v & 0xff) << 8)); return 0; /* revsh */
        case 0xc: r[rd] = v ? (uint32_t)__builtin_clz(v) : 32; return 0;                          /* clz */
        default: break;
        }
    }
    return dsp_or_undef(cpu, s, hw1, hw2);
}

/* Multiply, multiply accumulate: 1111 1011 0xxx */
static int multiply(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    uint32_t *r = cpu->r;
    unsigned rn = hw1 & 15, ra = hw2 >> 12, rd = (hw2 >> 8) & 15, rm = hw2 & 15;
    if ((hw1 & 0x70) == 0 && (hw2 & 0xe0) == 0 && rd != 15) {
        uint32_t prod = r[rn] * r[rm];
        if ((hw2 & 0x10) == 0 && ra == 15) { /* mul */
            r[rd] = prod;
            s->cyc = s->t->mul;
        } else { /* mla, mls */
            r[rd] = (hw2 & 0x10) ? r[ra] - prod : r[ra] + prod;
            s->cyc = s->t->mla;
        }
        return 0;
    }
    return dsp_or_undef(cpu, s, hw1, hw2);
}

/* Long multiply, long multiply accumulate, divide: 1111 1011 1xxx */
static int long_multiply(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    uint32_t *r = cpu->r;
    unsigned op1 = (hw1 >> 4) & 7, op2 = (hw2 >> 4) & 15, rn = hw1 & 15, lo = hw2 >> 12, hi = (hw2 >> 8) & 15,
             rm = hw2 & 15;
    if ((op1 == 1 || op1 == 3) && op2 == 15) { /* sdiv, udiv: rd = hi; no trap, x / 0 = 0 */
        uint32_t q, n = r[rn], d = r[rm];
        if (lo != 15 || hi == 15)
            return NP_MF_UNDEFINED;
        if (op1 == 1) {
            if (d == 0)
                q = 0;
            else if (n == 0x80000000u && d == 0xffffffffu)
                q = n; /* the overflow wraps */
            else
                q = (uint32_t)((int32_t)n / (int32_t)d);
            s->cyc = div_cycles(s->t, (int32_t)q < 0 ? 0u - q : q);
        } else {
            q = d ? n / d : 0;
            s->cyc = div_cycles(s->t, q);
        }
        r[hi] = q;
        return 0;
    }
    if (op2 == 0 && (op1 == 0 || op1 == 2 || op1 == 4 || op1 == 6) && lo != 15 && hi != 15 && lo != hi) {
        uint64_t res;
        bool is_signed = !(op1 & 2), acc = op1 & 4;
        if (is_signed)
            res = (uint64_t)((int64_t)(int32_t)r[rn] * (int32_t)r[rm]);
        else
            res = (uint64_t)r[rn] * r[rm];
        if (acc)
            res += (uint64_t)r[hi] << 32 | r[lo];
        r[lo] = (uint32_t)res;
        r[hi] = (uint32_t)(res >> 32);
        s->cyc = acc ? s->t->mlal : s->t->mull;
        return 0;
    }
    return dsp_or_undef(cpu, s, hw1, hw2);
}

static int exec32(struct np_cpu *cpu, struct step *s, uint32_t hw1, uint32_t hw2)
{
    s->cyc = s->t->alu;
    if (!(cpu->m.features & NP_MFEAT_V7M)) {
        /* ARMv6-M: bl, msr, mrs, dmb, dsb, isb (and udf.w) */
        if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0x8000))
            return branch_misc(cpu, s, hw1, hw2);
        return NP_MF_UNDEFINED;
    }
    switch ((hw1 >> 11) & 3) {
    case 1: /* 11101 */
        if (hw1 & 0x400)
            return coprocessor(cpu, s, hw1, hw2);
        if (hw1 & 0x200)
            return dp_shifted(cpu, s, hw1, hw2);
        if (hw1 & 0x40)
            return ls_dual_excl(cpu, s, hw1, hw2);
        return ls_multiple(cpu, s, hw1, hw2);
    case 2: /* 11110 */
        if (hw2 & 0x8000)
            return branch_misc(cpu, s, hw1, hw2);
        if (hw1 & 0x200)
            return dp_plain_imm(cpu, s, hw1, hw2);
        return dp_modified_imm(cpu, s, hw1, hw2);
    default: /* 11111 */
        if (hw1 & 0x400)
            return coprocessor(cpu, s, hw1, hw2);
        switch ((hw1 >> 7) & 7) {
        case 0: case 1: /* 1111 100x: single loads and stores */
            if ((hw1 & 0x70) == 0x70)
                return NP_MF_UNDEFINED; /* size 3 loads */
            return ls_single(cpu, s, hw1, hw2);
        case 4: /* 1111 1010 0xxx: data processing, register */
        case 5:
            return dp_register(cpu, s, hw1, hw2);
        case 6:
            return multiply(cpu, s, hw1, hw2);
        case 7:
            return long_multiply(cpu, s, hw1, hw2);
        default: /* 1111 1001 1xxx with hw1[8] ... are single loads too */
            return ls_single(cpu, s, hw1, hw2);
        }
    }
}

/* ---- the step ---- */

/* ITAdvance: the next instruction's ITSTATE. */
static inline uint32_t it_advance(uint32_t it)
{
    return (it & 7) == 0 ? 0 : (it & 0xe0) | ((it << 1) & 0x1f);
}

/* Flash wait states (np_cpu_timing): S for each word of this
 * instruction fetched after the word before it (straight-line code), the
 * first word after a jump having cost N with the jump; N for a jump into
 * flash. */
static void flash_fetches(struct np_cpu *cpu, const struct step *s)
{
    uint32_t pc = s->pc, len = s->next - s->pc;
    if (pc < NP_M_FLASH_END) {
        uint32_t first_new = cpu->m.fetch_jumped ? (pc >> 2) + 1 : ((pc - 1) >> 2) + 1, last = (pc + len - 1) >> 2;
        if (last >= first_new)
            cpu->cycles += (uint64_t)cpu->timing.s_wait * (last - first_new + 1);
    }
    cpu->m.fetch_jumped = s->jump;
    if (s->jump && s->target < NP_M_FLASH_END)
        cpu->cycles += cpu->timing.n_wait;
}

enum np_m_result np_m_step(struct np_cpu *cpu)
{
    uint32_t pc = cpu->r[15], hw1, hw2 = 0;
    if (np_m_fetch16(cpu, pc, &hw1)) {
        cpu->m.fault = NP_MF_FETCH;
        return NP_M_FAULT;
    }
    bool wide = hw1 >= 0xe800;
    if (wide && np_m_fetch16(cpu, pc + 2, &hw2)) {
        cpu->m.fault = NP_MF_FETCH;
        return NP_M_FAULT;
    }

    uint32_t it = cpu->m.itstate;
    struct step s;
    s.pc = pc;
    s.next = pc + (wide ? 4 : 2);
    s.jump = false;
    s.cond = (it & 15) != 0;
    s.flags16 = !s.cond;
    s.t = m_cycles(cpu);

    int res;
    if (s.cond && !np_cond_pass(it >> 4, cpu->cpsr) && (hw1 & 0xff00) != 0xbe00) {
        /* a failed condition in an IT block: counted, ITSTATE advances; bkpt
         * is unconditional */
        s.cyc = s.t->failed;
        res = 0;
    } else if (!wide) {
        res = exec16(cpu, &s, hw1);
    } else {
        res = exec32(cpu, &s, hw1, hw2);
    }

    if (NP_UNLIKELY(res > 0)) {
        cpu->m.fault = (uint8_t)res;
        return NP_M_FAULT;
    }
    cpu->m.itstate = res == X_IT ? s.new_it : it_advance(it);
    cpu->insns++;
    cpu->cycles += s.cyc;
    if (NP_UNLIKELY(cpu->m.waits))
        flash_fetches(cpu, &s);
    if (res == X_EXC_RETURN)
        return NP_M_EXC_RETURN;
    if (!s.jump) {
        cpu->r[15] = s.next;
    } else {
        cpu->r[15] = s.target;
        if (cpu->hooks.branch) {
            struct np_branch b = {
                .from = pc, .to = s.target, .kind = s.kind, .reg = s.reg,
                .flags = NP_BRF_THUMB | NP_BRF_FROM_THUMB | (s.cond ? NP_BRF_COND : 0), .vector = 0,
            };
            cpu->hooks.branch(cpu->hooks.ctx, cpu, &b);
        }
    }
    if (res == X_SVC)
        return NP_M_SVC;
    if (res == X_WFI)
        return NP_M_WFI;
    return cpu->halt ? NP_M_HALT : NP_M_OK;
}

/* ---- the decoded-instruction cache: np_m_run_fast ------------------------
 * np_m_step decodes every instruction each time it runs; the run loop
 * mostly goes through np_m_run_fast instead, which decodes an instruction
 * once into a struct np_dec of the ARM side's cache (cpu_internal.h: the
 * same entries, tags (address + 1: Thumb) and invalidation by stores to
 * code pages) and runs the common instructions from it, threaded with
 * computed gotos. Anything else, and any case a handler does not take (an
 * address outside RAM or unaligned, an exception return, a fault), is run
 * by np_m_step from the instruction's start: the handlers check before
 * they change anything, so the reference semantics stay in one place.
 * ITSTATE is dynamic, so entries are decoded as outside IT blocks; an IT
 * block entered by its IT instruction runs them with the condition tested
 * and 16-bit data processing's flags dropped (it_run). Entered any other
 * way (ITSTATE set at the start: an exception return into a block, a run
 * that stopped in one), np_m_run steps it. */

/* Handlers: NP_OP_DP_INDEX's data-processing layout (np_dp, as the ARM
 * side has it: Thumb's operations are ARM's, their shifts too), then the
 * loads and stores by size and addressing mode, then the rest. */
enum {
    M_LD = 256,          /* + size * 4 + mode (M_AM_*): LDR LDRB LDRH LDRSB LDRSH */
    M_ST = M_LD + 20,    /* + size * 4 + mode: STR STRB STRH */
    M_SLOW = M_ST + 12,  /* np_m_step runs it */
    M_NOP,
    M_MOVK,     /* rd = imm */
    M_MOVT,     /* rd = rd[15:0] | imm */
    M_LDRK,     /* rd = the word at imm (a literal) */
    M_EXT,      /* rd = extend(ror(rm, sh)) (+ rn when fl & 4); fl & 3: EXT_* */
    M_BFX,      /* rd = rn << sh >> aux, fl: signed */
    M_MUL,      /* rd = rn * rm; fl: set N Z */
    M_MLA,      /* rd = rs +/- rn * rm; fl: subtract */
    M_MULL,     /* rd (lo), rs (hi) = rn * rm (+ rs:rd); fl: M_SIGNED, M_ACC */
    M_DIV,      /* rd = rn / rm; fl: signed */
    M_LDM,      /* imm = list, sh = count, aux = first address - rn; fl: M_WB, M_DEC */
    M_LDM_PC,
    M_STM,
    M_B,        /* imm = target */
    M_BCOND,    /* rs = condition; imm = target; sh = the cycles a taken one adds */
    M_CBZ,      /* rn; fl: cbnz; imm = target; sh as M_BCOND */
    M_BL,       /* imm = target, aux = LR */
    M_BX,       /* rm */
    M_BLX,      /* rm, aux = LR */
    M_TB,       /* tbb/tbh: base rn (15: imm), index rm, sh = 1 for tbh; aux = the PC base */
    M_IT,       /* imm = the new ITSTATE */
    M_DSP,      /* np_m_dsp's: imm = hw1:hw2 */
    M_COUNT
};
enum { M_AM_IMM, M_AM_PRE, M_AM_POST, M_AM_REG }; /* [rn, #imm], [rn, #imm]!, [rn], #imm, [rn, rm, lsl #sh] */
enum { M_LDR, M_LDRB, M_LDRH, M_LDRSB, M_LDRSH };
enum { M_STR, M_STRB, M_STRH };
enum { EXT_SXTH, EXT_SXTB, EXT_UXTH, EXT_UXTB };
#define M_WB 1
#define M_DEC 2
#define M_SIGNED 1
#define M_ACC 2
/* np_dec.cond holds the instruction's length (2 or 4) here */
#define M_LEN(e) ((e)->cond)

static void d_dp(struct np_dec *e, unsigned opc, unsigned form, bool s, unsigned rd, unsigned rn)
{
    e->op = (uint16_t)NP_OP_DP_INDEX(opc, form, s);
    e->rd = (uint8_t)rd;
    e->rn = (uint8_t)rn;
}

static void d_imm(struct np_dec *e, unsigned opc, bool s, unsigned rd, unsigned rn, uint32_t imm, unsigned carry)
{
    d_dp(e, opc, NP_FORM_IMM, s, rd, rn);
    e->imm = imm;
    e->sh = (uint8_t)carry; /* 2: C unchanged */
}

/* The second operand RM shifted by DecodeImmShift(TYPE, IMM5): its form. */
static unsigned d_shifted(struct np_dec *e, unsigned rm, unsigned type, unsigned imm5)
{
    e->rm = (uint8_t)rm;
    if (type == 0) {
        if (!imm5)
            return NP_FORM_REG;
        e->sh = (uint8_t)imm5;
        return NP_FORM_LSL;
    }
    if (type == 3) { /* ror, or rrx (type 4 of np_shift) */
        e->sh = imm5 ? 3 : 4;
        e->aux = imm5 ? imm5 : 1;
        return NP_FORM_GEN;
    }
    if (!imm5) { /* lsr/asr #32 */
        e->sh = (uint8_t)type;
        e->aux = 32;
        return NP_FORM_GEN;
    }
    e->sh = (uint8_t)imm5;
    return type == 1 ? NP_FORM_LSR : NP_FORM_ASR;
}

static void d_ls(struct np_dec *e, bool ld, unsigned size, unsigned mode, unsigned rt, unsigned rn, uint32_t imm,
                 const struct m_cycles *t)
{
    e->op = (uint16_t)((ld ? M_LD : M_ST) + size * 4 + mode);
    e->rd = (uint8_t)rt;
    e->rn = (uint8_t)rn;
    e->imm = imm;
    e->cyc = ld ? t->ldr : t->str;
}

static void d_lsm(struct np_dec *e, bool ld, unsigned rn, uint32_t list, bool wb, bool dec, const struct m_cycles *t)
{
    unsigned n = (unsigned)__builtin_popcount(list);
    e->op = ld ? ((list & 0x8000) ? M_LDM_PC : M_LDM) : M_STM;
    e->rn = (uint8_t)rn;
    e->imm = list;
    e->sh = (uint8_t)n;
    e->aux = dec ? 0u - 4 * n : 0;
    e->fl = (uint8_t)((wb ? M_WB : 0) | (dec ? M_DEC : 0));
    e->cyc = (uint16_t)(t->lsm + n + ((list & 0x8000) ? t->lsm_pc : 0));
}

static void d_branch(struct np_dec *e, unsigned op, uint32_t target, unsigned cyc)
{
    e->op = (uint16_t)op;
    e->imm = target;
    e->cyc = (uint16_t)cyc;
}

/* The 32-bit data-processing operation OP (hw1[8:5]) as np_dp's, or -1
 * for those run by np_m_step; TEST: rd is 15 with S (tst, teq, cmn, cmp). */
static int d_dp32_opc(unsigned op, unsigned rn, bool test)
{
    switch (op) {
    case 0: return test ? NP_DP_TST : NP_DP_AND;
    case 1: return NP_DP_BIC;
    case 2: return rn == 15 ? NP_DP_MOV : NP_DP_ORR;
    case 3: return rn == 15 ? NP_DP_MVN : -1; /* orn */
    case 4: return test ? NP_DP_TEQ : NP_DP_EOR;
    case 8: return test ? NP_DP_CMN : NP_DP_ADD;
    case 10: return NP_DP_ADC;
    case 11: return NP_DP_SBC;
    case 13: return test ? NP_DP_CMP : NP_DP_SUB;
    case 14: return NP_DP_RSB;
    default: return -1;
    }
}

/* The 16-bit instruction HW at PC, outside IT blocks (16-bit data
 * processing sets the flags); e->op stays M_SLOW for what it leaves to
 * np_m_step. */
static void decode16(struct np_cpu *cpu, const struct m_cycles *t, uint32_t pc, uint32_t hw, struct np_dec *e)
{
    unsigned rd = hw & 7, rn = (hw >> 3) & 7, rm = (hw >> 6) & 7;
    bool v7 = cpu->m.features & NP_MFEAT_V7M;
    e->cyc = t->alu;
    switch (hw >> 11) {
    case 0x00: case 0x01: case 0x02: /* lsl, lsr, asr #imm5: movs rd, rm, <shift> */
        d_dp(e, NP_DP_MOV, d_shifted(e, rn, hw >> 11, (hw >> 6) & 31), true, rd, 0);
        return;
    case 0x03: /* add/sub register or imm3 */
        if (hw & 0x400)
            d_imm(e, (hw & 0x200) ? NP_DP_SUB : NP_DP_ADD, true, rd, rn, rm, 2);
        else {
            d_dp(e, (hw & 0x200) ? NP_DP_SUB : NP_DP_ADD, NP_FORM_REG, true, rd, rn);
            e->rm = (uint8_t)rm;
        }
        return;
    case 0x04: d_imm(e, NP_DP_MOV, true, (hw >> 8) & 7, 0, hw & 0xff, 2); return;
    case 0x05: d_imm(e, NP_DP_CMP, true, 0, (hw >> 8) & 7, hw & 0xff, 2); return;
    case 0x06: d_imm(e, NP_DP_ADD, true, (hw >> 8) & 7, (hw >> 8) & 7, hw & 0xff, 2); return;
    case 0x07: d_imm(e, NP_DP_SUB, true, (hw >> 8) & 7, (hw >> 8) & 7, hw & 0xff, 2); return;
    case 0x08:
        if (!(hw & 0x400)) { /* data processing, register: rdn, rm */
            static const int8_t opc[16] = { NP_DP_AND, NP_DP_EOR, -1, -1, -1, NP_DP_ADC, NP_DP_SBC, -1,
                                            NP_DP_TST, NP_DP_RSB, NP_DP_CMP, NP_DP_CMN, NP_DP_ORR, -1,
                                            NP_DP_BIC, NP_DP_MVN };
            unsigned op = (hw >> 6) & 15;
            if (op == 9) { /* rsbs rd, rn, #0 */
                d_imm(e, NP_DP_RSB, true, rd, rn, 0, 2);
            } else if (op == 13) { /* muls */
                e->op = M_MUL;
                e->rd = (uint8_t)rd;
                e->rn = (uint8_t)rd;
                e->rm = (uint8_t)rn;
                e->fl = 1;
                e->cyc = t->mul;
            } else if (opc[op] < 0) { /* lsl, lsr, asr, ror by register */
                static const uint8_t type[8] = { [2] = 0, [3] = 1, [4] = 2, [7] = 3 };
                d_dp(e, NP_DP_MOV, NP_FORM_GEN, true, rd, 0);
                e->rm = (uint8_t)rd;
                e->rs = (uint8_t)rn;
                e->sh = type[op];
                e->fl = NP_FL_SHREG;
            } else {
                d_dp(e, (unsigned)opc[op], NP_FORM_REG, true, rd, rd);
                e->rm = (uint8_t)rn;
            }
            return;
        }
        /* high registers: add, cmp, mov, bx, blx */
        rd = (hw & 7) | ((hw >> 4) & 8);
        rm = (hw >> 3) & 15;
        switch ((hw >> 8) & 3) {
        case 0: case 1: case 2:
            if (rd == 15 || rm == 15)
                return;
            d_dp(e, ((hw >> 8) & 3) == 0 ? NP_DP_ADD : ((hw >> 8) & 3) == 1 ? NP_DP_CMP : NP_DP_MOV, NP_FORM_REG,
                 ((hw >> 8) & 3) == 1, rd, rd);
            e->rm = (uint8_t)rm;
            return;
        default:
            if ((hw & 7) || rm == 15)
                return;
            e->op = (hw & 0x80) ? M_BLX : M_BX;
            e->rm = (uint8_t)rm;
            e->aux = (pc + 2) | 1;
            e->cyc = t->bx;
            return;
        }
        return;
    case 0x09: /* ldr rt, [pc, #imm8] */
        e->op = M_LDRK;
        e->rd = (hw >> 8) & 7;
        e->imm = ((pc + 4) & ~3u) + ((hw & 0xff) << 2);
        e->cyc = t->ldr;
        return;
    case 0x0a: case 0x0b: { /* register offset */
        static const uint8_t size[8] = { M_STR, M_STRH, M_STRB, M_LDRSB, M_LDR, M_LDRH, M_LDRB, M_LDRSH };
        unsigned op = (hw >> 9) & 7;
        d_ls(e, op >= 3, size[op], M_AM_REG, rd, rn, 0, t);
        e->rm = (uint8_t)rm;
        return;
    }
    case 0x0c: d_ls(e, false, M_STR, M_AM_IMM, rd, rn, (hw >> 4) & 0x7c, t); return;
    case 0x0d: d_ls(e, true, M_LDR, M_AM_IMM, rd, rn, (hw >> 4) & 0x7c, t); return;
    case 0x0e: d_ls(e, false, M_STRB, M_AM_IMM, rd, rn, (hw >> 6) & 31, t); return;
    case 0x0f: d_ls(e, true, M_LDRB, M_AM_IMM, rd, rn, (hw >> 6) & 31, t); return;
    case 0x10: d_ls(e, false, M_STRH, M_AM_IMM, rd, rn, (hw >> 5) & 0x3e, t); return;
    case 0x11: d_ls(e, true, M_LDRH, M_AM_IMM, rd, rn, (hw >> 5) & 0x3e, t); return;
    case 0x12: d_ls(e, false, M_STR, M_AM_IMM, (hw >> 8) & 7, 13, (hw & 0xff) << 2, t); return;
    case 0x13: d_ls(e, true, M_LDR, M_AM_IMM, (hw >> 8) & 7, 13, (hw & 0xff) << 2, t); return;
    case 0x14: /* adr */
        e->op = M_MOVK;
        e->rd = (hw >> 8) & 7;
        e->imm = ((pc + 4) & ~3u) + ((hw & 0xff) << 2);
        return;
    case 0x15: d_imm(e, NP_DP_ADD, false, (hw >> 8) & 7, 13, (hw & 0xff) << 2, 2); return;
    case 0x16: case 0x17: /* miscellaneous */
        break;
    case 0x18: { /* stmia rn!, {list} */
        uint32_t list = hw & 0xff;
        if (list)
            d_lsm(e, false, (hw >> 8) & 7, list, true, false, t);
        return;
    }
    case 0x19: { /* ldmia rn(!), {list} */
        unsigned base = (hw >> 8) & 7;
        uint32_t list = hw & 0xff;
        if (list)
            d_lsm(e, true, base, list, !(list >> base & 1), false, t);
        return;
    }
    case 0x1a: case 0x1b: { /* b<cond>; udf, svc: np_m_step's */
        unsigned cond = (hw >> 8) & 15;
        if (cond >= 14)
            return;
        d_branch(e, M_BCOND, pc + 4 + ((uint32_t)(int32_t)(int8_t)(hw & 0xff) << 1), t->failed);
        e->rs = (uint8_t)cond;
        e->sh = (uint8_t)(t->branch - t->failed);
        return;
    }
    case 0x1c:
        d_branch(e, M_B, pc + 4 + ((uint32_t)((int32_t)(hw << 21) >> 20)), t->branch);
        return;
    default:
        return;
    }
    switch ((hw >> 8) & 15) {
    case 0x0: /* add/sub sp, sp, #imm7*4 */
        d_imm(e, (hw & 0x80) ? NP_DP_SUB : NP_DP_ADD, false, 13, 13, (hw & 0x7f) << 2, 2);
        return;
    case 0x1: case 0x3: case 0x9: case 0xb: /* cbz, cbnz */
        if (!v7)
            return;
        d_branch(e, M_CBZ, pc + 4 + (((hw >> 2) & 0x3e) | ((hw >> 3) & 0x40)), t->failed);
        e->rn = hw & 7;
        e->fl = (hw & 0x800) ? 1 : 0;
        e->sh = (uint8_t)(t->branch - t->failed);
        return;
    case 0x2: /* sxth, sxtb, uxth, uxtb */
        e->op = M_EXT;
        e->rd = (uint8_t)rd;
        e->rm = (uint8_t)rn;
        e->fl = (hw >> 6) & 3;
        return;
    case 0x4: case 0x5: { /* push */
        uint32_t list = (hw & 0xff) | ((hw & 0x100) << 6);
        if (list)
            d_lsm(e, false, 13, list, true, true, t);
        return;
    }
    case 0xc: case 0xd: { /* pop */
        uint32_t list = (hw & 0xff) | ((hw & 0x100) << 7);
        if (list)
            d_lsm(e, true, 13, list, true, false, t);
        return;
    }
    case 0xf: /* it; nop, yield, sev and the unallocated hints; not wfi, wfe */
        if (hw & 0xf) {
            if (v7 && (hw & 0xf0) != 0xf0) {
                e->op = M_IT;
                e->imm = hw & 0xff;
            }
        } else if (((hw >> 4) & 15) != 2 && ((hw >> 4) & 15) != 3) {
            e->op = M_NOP;
        }
        return;
    default: /* cps, rev, bkpt, ...: np_m_step's */
        return;
    }
}

/* Single loads and stores, 1111 100x: as ls_single. */
static void decode_ls32(const struct m_cycles *t, uint32_t pc, uint32_t hw1, uint32_t hw2, struct np_dec *e)
{
    unsigned size = (hw1 >> 5) & 3, rn = hw1 & 15, rt = hw2 >> 12;
    bool ld = hw1 & 0x10, sign = hw1 & 0x100;
    if (size == 3 || (sign && (!ld || size == 2)) || rt == 15)
        return;
    unsigned sz = ld ? (size == 2 ? M_LDR : size == 1 ? (sign ? M_LDRSH : M_LDRH) : (sign ? M_LDRSB : M_LDRB))
                     : (size == 2 ? M_STR : size == 1 ? M_STRH : M_STRB);
    if (rn == 15) { /* literal: the word loads */
        if (ld && sz == M_LDR) {
            uint32_t base = (pc + 4) & ~3u, imm = hw2 & 0xfff;
            e->op = M_LDRK;
            e->rd = (uint8_t)rt;
            e->imm = (hw1 & 0x80) ? base + imm : base - imm;
            e->cyc = t->ldr;
        }
        return;
    }
    if (hw1 & 0x80) {
        d_ls(e, ld, sz, M_AM_IMM, rt, rn, hw2 & 0xfff, t);
    } else if (hw2 & 0x800) {
        bool p = hw2 & 0x400, u = hw2 & 0x200, w = hw2 & 0x100;
        uint32_t imm = u ? (hw2 & 0xff) : 0u - (hw2 & 0xff);
        if (!p && !w)
            return;
        d_ls(e, ld, sz, !w ? M_AM_IMM : p ? M_AM_PRE : M_AM_POST, rt, rn, imm, t);
    } else if ((hw2 & 0xfc0) == 0) {
        unsigned rm = hw2 & 15;
        if (rm == 13 || rm == 15)
            return;
        d_ls(e, ld, sz, M_AM_REG, rt, rn, 0, t);
        e->rm = (uint8_t)rm;
        e->sh = (hw2 >> 4) & 3;
    }
}

/* An encoding exec32 gives dsp_or_undef: np_m_dsp's with the extension. */
static void d_dsp(const struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, struct np_dec *e)
{
    if (cpu->m.features & NP_MFEAT_DSP) {
        e->op = M_DSP;
        e->imm = hw1 << 16 | hw2;
        e->cyc = 0; /* np_m_dsp says */
    }
}

/* The 32-bit instruction HW1:HW2 at PC, as exec32 has them. */
static void decode32(struct np_cpu *cpu, const struct m_cycles *t, uint32_t pc, uint32_t hw1, uint32_t hw2,
                     struct np_dec *e)
{
    bool v7 = cpu->m.features & NP_MFEAT_V7M;
    e->cyc = t->alu;
    if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0x8000)) { /* branches and miscellaneous control */
        unsigned op1 = (hw2 >> 12) & 5, op = (hw1 >> 4) & 0x7f;
        uint32_t sbit = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
        uint32_t i1 = !(j1 ^ sbit), i2 = !(j2 ^ sbit);
        uint32_t imm24 = (sbit ? 0xff000000u : 0) | i1 << 23 | i2 << 22 | (hw1 & 0x3ff) << 12 | (hw2 & 0x7ff) << 1;
        if (op1 == 5) {
            d_branch(e, M_BL, pc + 4 + imm24, t->bl);
            e->aux = (pc + 4) | 1;
        } else if (v7 && op1 == 1) {
            d_branch(e, M_B, pc + 4 + imm24, t->branch);
        } else if (v7 && op1 == 0 && (op & 0x38) != 0x38) {
            uint32_t imm = (sbit ? 0xfff00000u : 0) | j2 << 19 | j1 << 18 | (hw1 & 0x3f) << 12 | (hw2 & 0x7ff) << 1;
            d_branch(e, M_BCOND, pc + 4 + imm, t->failed);
            e->rs = (uint8_t)((hw1 >> 6) & 15);
            e->sh = (uint8_t)(t->branch - t->failed);
        }
        return;
    }
    if (!v7)
        return;
    unsigned rn = hw1 & 15, rd = (hw2 >> 8) & 15, rm = hw2 & 15;
    switch ((hw1 >> 11) & 3) {
    case 1: /* 11101 */
        if (hw1 & 0x400)
            return;
        if (hw1 & 0x200) { /* data processing, shifted register */
            unsigned op = (hw1 >> 5) & 15;
            bool sf = hw1 & 0x10, test = rd == 15 && sf && (op == 0 || op == 4 || op == 8 || op == 13);
            int opc = d_dp32_opc(op, rn, test);
            if (opc < 0 || (hw2 & 0x8000) || (rd == 15 && !test) || rm == 15 || (rn == 15 && op != 2 && op != 3))
                return;
            unsigned form = d_shifted(e, rm, (hw2 >> 4) & 3, ((hw2 >> 10) & 0x1c) | ((hw2 >> 6) & 3));
            d_dp(e, (unsigned)opc, form, sf, rd, rn == 15 ? 0 : rn);
            return;
        }
        if (hw1 & 0x40) { /* tbb/tbh; ldrd/strd and the exclusives: np_m_step's */
            unsigned op3 = (hw2 >> 4) & 15;
            if (((hw1 >> 7) & 3) == 1 && ((hw1 >> 4) & 3) == 1 && op3 <= 1 && (hw2 & 0xff00) == 0xf000 &&
                rm != 13 && rm != 15) {
                e->op = M_TB;
                e->rn = (uint8_t)rn;
                e->rm = (uint8_t)rm;
                e->sh = (uint8_t)op3;
                e->imm = pc + 4;
                e->aux = pc + 4;
                e->cyc = t->tb;
            }
            return;
        }
        { /* ldm/stm, push.w/pop.w */
            unsigned op = (hw1 >> 7) & 3;
            bool wb = hw1 & 0x20, ld = hw1 & 0x10;
            uint32_t list = hw2;
            if (op == 0 || op == 3 || rn == 15 || (list & 0x2000) || !list || (wb && (list >> rn & 1)))
                return;
            if (ld ? (list & 0xc000) == 0xc000 : (list & 0x8000) != 0)
                return;
            d_lsm(e, ld, rn, list, wb, op != 1, t);
            return;
        }
    case 2: /* 11110, hw2[15] clear */
        if (hw1 & 0x200) { /* plain binary immediate */
            unsigned op = (hw1 >> 4) & 31;
            uint32_t imm12 = ((hw1 & 0x400) << 1) | ((hw2 >> 4) & 0x700) | (hw2 & 0xff);
            unsigned lsb = ((hw2 >> 10) & 0x1c) | ((hw2 >> 6) & 3), wm1 = hw2 & 31;
            if (rd == 15)
                return;
            switch (op) {
            case 0x00: case 0x0a: /* addw, subw; adr */
                if (rn == 15) {
                    e->op = M_MOVK;
                    e->rd = (uint8_t)rd;
                    e->imm = op ? ((pc + 4) & ~3u) - imm12 : ((pc + 4) & ~3u) + imm12;
                } else {
                    d_imm(e, op ? NP_DP_SUB : NP_DP_ADD, false, rd, rn, imm12, 2);
                }
                return;
            case 0x04: /* movw */
                e->op = M_MOVK;
                e->rd = (uint8_t)rd;
                e->imm = (rn << 12) | imm12;
                return;
            case 0x0c: /* movt */
                e->op = M_MOVT;
                e->rd = (uint8_t)rd;
                e->imm = ((rn << 12) | imm12) << 16;
                return;
            case 0x14: case 0x1c: /* sbfx, ubfx */
                if ((hw1 & 0x400) || (hw2 & 0x20) || lsb + wm1 > 31 || rn == 15)
                    return;
                e->op = M_BFX;
                e->rd = (uint8_t)rd;
                e->rn = (uint8_t)rn;
                e->sh = (uint8_t)(31 - (lsb + wm1));
                e->aux = 31 - wm1;
                e->fl = op == 0x14;
                return;
            default:
                return;
            }
        } else { /* modified immediate */
            unsigned op = (hw1 >> 5) & 15;
            bool sf = hw1 & 0x10, test = rd == 15 && sf && (op == 0 || op == 4 || op == 8 || op == 13);
            int opc = d_dp32_opc(op, rn, test);
            uint32_t c;
            if (opc < 0 || (rd == 15 && !test) || (rn == 15 && op != 2 && op != 3))
                return;
            uint32_t v = thumb_expand_imm(((hw1 & 0x400) << 1) | ((hw2 >> 4) & 0x700) | (hw2 & 0xff), 2, &c);
            d_imm(e, (unsigned)opc, sf, rd, rn == 15 ? 0 : rn, v, c);
        }
        return;
    default: /* 11111 */
        if (hw1 & 0x400)
            return;
        switch ((hw1 >> 7) & 7) {
        case 0: case 1: case 2: case 3:
            if (((hw1 >> 7) & 7) < 2 && (hw1 & 0x70) == 0x70)
                return;
            decode_ls32(t, pc, hw1, hw2, e);
            return;
        case 4: case 5: { /* data processing, register */
            unsigned op1 = (hw1 >> 4) & 15, op2 = (hw2 >> 4) & 15;
            if ((hw2 & 0xf000) != 0xf000 || rd == 15 || rm == 15)
                return;
            if (op1 < 8 && op2 == 0) { /* lsl, lsr, asr, ror rd, rn, rm */
                if (rn == 15)
                    return;
                d_dp(e, NP_DP_MOV, NP_FORM_GEN, op1 & 1, rd, 0);
                e->rm = (uint8_t)rn;
                e->rs = (uint8_t)rm;
                e->sh = (uint8_t)(op1 >> 1);
                e->fl = NP_FL_SHREG;
            } else if ((op1 == 0 || op1 == 1 || op1 == 4 || op1 == 5) && (op2 & 0xc) == 8) { /* extends */
                static const uint8_t kind[6] = { EXT_SXTH, EXT_UXTH, 0, 0, EXT_SXTB, EXT_UXTB };
                e->op = M_EXT;
                e->rd = (uint8_t)rd;
                e->rn = (uint8_t)rn;
                e->rm = (uint8_t)rm;
                e->sh = (uint8_t)((hw2 >> 4 & 3) * 8);
                e->fl = (uint8_t)(kind[op1] | (rn == 15 ? 0 : 4));
            }
            return;
        }
        case 6: { /* mul, mla, mls; the DSP multiplies */
            unsigned ra = hw2 >> 12;
            if ((hw1 & 0x70) || (hw2 & 0xe0) || rd == 15) {
                d_dsp(cpu, hw1, hw2, e);
                return;
            }
            if (rn == 15 || rm == 15)
                return;
            e->rd = (uint8_t)rd;
            e->rn = (uint8_t)rn;
            e->rm = (uint8_t)rm;
            if (!(hw2 & 0x10) && ra == 15) {
                e->op = M_MUL;
                e->cyc = t->mul;
            } else if (ra != 15) {
                e->op = M_MLA;
                e->rs = (uint8_t)ra;
                e->fl = (hw2 & 0x10) ? 1 : 0;
                e->cyc = t->mla;
            }
            return;
        }
        default: { /* long multiply, divide */
            unsigned op1 = (hw1 >> 4) & 7, op2 = (hw2 >> 4) & 15, lo = hw2 >> 12, hi = rd;
            bool div = (op1 == 1 || op1 == 3) && op2 == 15;
            if (!div && !(op2 == 0 && !(op1 & 1) && lo != 15 && hi != 15 && lo != hi)) {
                d_dsp(cpu, hw1, hw2, e);
                return;
            }
            if (rn == 15 || rm == 15)
                return;
            if (div) {
                if (lo != 15 || hi == 15)
                    return;
                e->op = M_DIV;
                e->rd = (uint8_t)hi;
                e->rn = (uint8_t)rn;
                e->rm = (uint8_t)rm;
                e->fl = op1 == 1;
                e->cyc = 0; /* data dependent: the handler's */
            } else if (op2 == 0 && !(op1 & 1) && lo != 15 && hi != 15 && lo != hi) {
                e->op = M_MULL;
                e->rd = (uint8_t)lo;
                e->rs = (uint8_t)hi;
                e->rn = (uint8_t)rn;
                e->rm = (uint8_t)rm;
                e->fl = (uint8_t)(((op1 & 2) ? 0 : M_SIGNED) | ((op1 & 4) ? M_ACC : 0));
                e->cyc = (op1 & 4) ? t->mlal : t->mull;
            }
            return;
        }
        }
    }
}

/* A decoded entry's code pages: a store there clears it. */
static void mark_code(struct np_cpu_impl *im, uint32_t addr)
{
    struct np_region *r = np_region_at(im, &im->scratch_hint, addr, 1);
    if (r) {
        uint32_t off = addr - r->base;
        r->code[off >> (NP_PAGE_SHIFT + 3)] |= (uint8_t)(1u << ((off >> NP_PAGE_SHIFT) & 7));
    }
}

/* Decodes the instruction at PC into E (e->run is the caller's); false
 * when it cannot be fetched from one region (np_m_step says the fault). */
static bool m_decode(struct np_cpu *cpu, const struct m_cycles *t, uint32_t pc, struct np_dec *e)
{
    struct np_cpu_impl *im = cpu->impl;
    struct np_region *r = np_region_at(im, &im->scratch_hint, pc, 2);
    if (!r)
        return false;
    uint32_t hw1 = np_ld16(r->data + (pc - r->base)), hw2 = 0;
    bool wide = hw1 >= 0xe800;
    if (wide) {
        r = np_region_at(im, &im->scratch_hint, pc, 4);
        if (!r)
            return false;
        hw2 = np_ld16(r->data + (pc + 2 - r->base));
    }
    memset(e, 0, sizeof *e);
    e->op = M_SLOW;
    M_LEN(e) = wide ? 4 : 2;
    if (wide)
        decode32(cpu, t, pc, hw1, hw2, e);
    else
        decode16(cpu, t, pc, hw1, e);
    if (e->op == M_SLOW)
        e->cyc = 0;
    mark_code(im, pc);
    mark_code(im, pc + M_LEN(e) - 1);
    e->tag = pc + 1;
    return true;
}

/* ---- the handlers ---- */
#define MDP_LABEL(opc, form, s) mdp_##opc##_##form##_##s
#define MDP_ALL(M, opc)                                                                                      \
    M(opc, IMM, 0) M(opc, IMM, 1) M(opc, REG, 0) M(opc, REG, 1) M(opc, LSL, 0) M(opc, LSL, 1)              \
    M(opc, LSR, 0) M(opc, LSR, 1) M(opc, ASR, 0) M(opc, ASR, 1) M(opc, GEN, 0) M(opc, GEN, 1)
#define MDP_EACH(M)                                                                                          \
    MDP_ALL(M, AND) MDP_ALL(M, EOR) MDP_ALL(M, SUB) MDP_ALL(M, RSB) MDP_ALL(M, ADD) MDP_ALL(M, ADC)         \
    MDP_ALL(M, SBC) MDP_ALL(M, TST) MDP_ALL(M, TEQ) MDP_ALL(M, CMP) MDP_ALL(M, CMN)                         \
    MDP_ALL(M, ORR) MDP_ALL(M, MOV) MDP_ALL(M, BIC) MDP_ALL(M, MVN)
#define MDP_TABLE(opc, form, s) [NP_OP_DP_INDEX(NP_DP_##opc, NP_FORM_##form, s)] = &&MDP_LABEL(opc, form, s),
#define MDP_HANDLER(opc, form, s)                                                                            \
    MDP_LABEL(opc, form, s) : {                                                                              \
        uint32_t b_, c_ = (cpsr >> 29) & 1;                                                                  \
        OPERAND_##form(b_, c_);                                                                             \
        uint32_t r_ = np_dp(NP_DP_##opc, R[e->rn], b_, c_, &cpsr, s);                                        \
        if (np_dp_writes_rd(NP_DP_##opc))                                                                    \
            R[e->rd] = r_;                                                                                   \
        NEXT();                                                                                              \
    }

/* Loads and stores: aligned, in a region, else np_m_step's. */
#define MAM_IMM(a, w) (a = R[e->rn] + e->imm, w = 0)
#define MAM_PRE(a, w) (a = R[e->rn] + e->imm, w = a)
#define MAM_POST(a, w) (a = R[e->rn], w = a + e->imm)
#define MAM_REG(a, w) (a = R[e->rn] + (R[e->rm] << e->sh), w = 0)
#define MAM_WB_IMM 0
#define MAM_WB_PRE 1
#define MAM_WB_POST 1
#define MAM_WB_REG 0
#define MLD_EACH(M, X)                                                                                       \
    M(X, LDR, 4, np_ld32(p_)) M(X, LDRB, 1, *p_) M(X, LDRH, 2, np_ld16(p_))                                 \
    M(X, LDRSB, 1, (uint32_t)(int32_t)(int8_t)*p_) M(X, LDRSH, 2, (uint32_t)(int32_t)(int16_t)np_ld16(p_))
#define MST_EACH(M, X)                                                                                       \
    M(X, STR, 4, np_st32(p_, v_)) M(X, STRB, 1, *p_ = (uint8_t)v_) M(X, STRH, 2, np_st16(p_, v_))
#define MLS_MODES(X, size, len, acc) X(size, len, acc, IMM) X(size, len, acc, PRE) X(size, len, acc, POST) X(size, len, acc, REG)
#define MLD_TABLE(size, len, acc, mode) [M_LD + M_##size * 4 + M_AM_##mode] = &&mls_##size##_##mode,
#define MST_TABLE(size, len, acc, mode) [M_ST + M_##size * 4 + M_AM_##mode] = &&mls_##size##_##mode,
#define MLD_HANDLER(size, len, acc, mode)                                                                    \
    mls_##size##_##mode : {                                                                                  \
        uint32_t a_, w_;                                                                                     \
        MAM_##mode(a_, w_);                                                                                  \
        struct np_region *g_;                                                                                \
        if (NP_UNLIKELY((a_ & (len - 1)) || !(g_ = np_region_at(im, &e->hint, a_, len))))                   \
            goto slow;                                                                                       \
        const uint8_t *p_ = g_->data + (a_ - g_->base);                                                      \
        uint32_t v_ = (acc);                                                                                 \
        if (MAM_WB_##mode)                                                                                   \
            R[e->rn] = w_;                                                                                   \
        (void)w_;                                                                                            \
        R[e->rd] = v_;                                                                                       \
        NEXT();                                                                                              \
    }
#define MST_HANDLER(size, len, acc, mode)                                                                    \
    mls_##size##_##mode : {                                                                                  \
        uint32_t a_, w_;                                                                                     \
        MAM_##mode(a_, w_);                                                                                  \
        struct np_region *g_;                                                                                \
        if (NP_UNLIKELY((a_ & (len - 1)) || !(g_ = np_region_at(im, &e->hint, a_, len))))                   \
            goto slow;                                                                                       \
        uint32_t o_ = a_ - g_->base, v_ = R[e->rd];                                                          \
        uint8_t *p_ = g_->data + o_;                                                                         \
        acc;                                                                                                 \
        np_stored(im, g_, o_, a_, len);                                                                      \
        if (MAM_WB_##mode)                                                                                   \
            R[e->rn] = w_;                                                                                   \
        (void)w_;                                                                                            \
        NEXT();                                                                                              \
    }
#define MLD_ALL(X, size, len, acc) MLS_MODES(X, size, len, acc)

/* Between instructions `pc` is the address of the one running or next;
 * r[15], cpsr and the counters are written back before np_m_step, a hook,
 * or the return. */
#define SYNC_OUT()                                                                                           \
    do {                                                                                                     \
        R[15] = pc;                                                                                          \
        cpu->cpsr = cpsr;                                                                                    \
        cpu->insns = end - left;                                                                             \
        cpu->cycles = cycles;                                                                                \
    } while (0)
#define DISPATCH()                                                                                           \
    do {                                                                                                     \
        if (NP_UNLIKELY(cycles >= climit))                                                                   \
            goto out;                                                                                        \
        e = &cache[(pc >> 1) & NP_DEC_MASK];                                                                 \
        if (NP_UNLIKELY(e->tag != pc + 1))                                                                   \
            goto miss;                                                                                       \
        RUN_E();                                                                                             \
    } while (0)
/* The next instruction in sequence: its entry is LEN / 2 on (past the
 * cache's end, one of the two spare entries, which never match). */
#define NEXT()                                                                                               \
    do {                                                                                                     \
        unsigned len_ = M_LEN(e);                                                                            \
        pc += len_;                                                                                          \
        if (NP_UNLIKELY(cycles >= climit))                                                                   \
            goto out;                                                                                        \
        e += len_ >> 1;                                                                                      \
        if (NP_UNLIKELY(e->tag != pc + 1))                                                                   \
            goto miss_seq;                                                                                   \
        RUN_E();                                                                                             \
    } while (0)
#define TAKEN(to, kind, reg, flags)                                                                          \
    do {                                                                                                     \
        br_to = (to);                                                                                        \
        br_kind = (kind);                                                                                    \
        br_reg = (reg);                                                                                      \
        br_flags = (flags);                                                                                  \
        goto taken;                                                                                          \
    } while (0)
/* A PC write with interworking np_m_step needs not see: a Thumb address
 * that is no exception return. */
#define PLAIN_BX(v) (((v) & 1) && !((v) >= 0xF0000000u && cpu->m.ipsr != 0))

enum np_m_result np_m_run_fast(struct np_cpu *cpu, uint64_t end, uint64_t cycle_limit, uint32_t *at)
{
    static const void *const ops[M_COUNT] = {
        MDP_EACH(MDP_TABLE)
        MLD_EACH(MLD_ALL, MLD_TABLE)
        MST_EACH(MLD_ALL, MST_TABLE)
        [M_SLOW] = &&m_slow,
        [M_NOP] = &&m_nop,
        [M_MOVK] = &&m_movk,
        [M_MOVT] = &&m_movt,
        [M_LDRK] = &&m_ldrk,
        [M_EXT] = &&m_ext,
        [M_BFX] = &&m_bfx,
        [M_MUL] = &&m_mul,
        [M_MLA] = &&m_mla,
        [M_MULL] = &&m_mull,
        [M_DIV] = &&m_div,
        [M_LDM] = &&m_ldm,
        [M_LDM_PC] = &&m_ldm_pc,
        [M_STM] = &&m_stm,
        [M_B] = &&m_b,
        [M_BCOND] = &&m_bcond,
        [M_CBZ] = &&m_cbz,
        [M_BL] = &&m_bl,
        [M_BX] = &&m_bx,
        [M_BLX] = &&m_blx,
        [M_TB] = &&m_tb,
        [M_IT] = &&m_it,
        [M_DSP] = &&m_dsp,
    };
    struct np_cpu_impl *const im = cpu->impl;
    struct np_dec *const cache = im->cache;
    uint32_t *const R = cpu->r;
    const struct m_cycles *const t = m_cycles(cpu);
    void (*const branch_fn)(void *, struct np_cpu *, const struct np_branch *) = cpu->hooks.branch;
    void *const ctx = cpu->hooks.ctx;
    uint64_t left = end - cpu->insns, cycles = cpu->cycles;
    /* one test per instruction: every instruction takes a cycle or more, so
       the cycles reach cycles + left no later than the count reaches end;
       `out` tells the two apart (0 in IT blocks: `out` after each) */
    uint64_t climit = cycle_limit < cycles + left ? cycle_limit : cycles + left;
    uint32_t pc = R[15], cpsr = cpu->cpsr, br_to = 0;
    uint32_t it = 0; /* ITSTATE of the instruction at pc, in an IT block */
    unsigned br_kind = 0, br_reg = 15, br_flags = 0;
    struct np_dec *e;

    /* the first instruction runs whatever the limits: the caller checked them */
    e = &cache[(pc >> 1) & NP_DEC_MASK];
    if (e->tag != pc + 1)
        goto miss;
    RUN_E();

    MDP_EACH(MDP_HANDLER)
    MLD_EACH(MLD_ALL, MLD_HANDLER)
    MST_EACH(MLD_ALL, MST_HANDLER)

m_nop:
    NEXT();

m_movk:
    R[e->rd] = e->imm;
    NEXT();

m_movt:
    R[e->rd] = (R[e->rd] & 0xffff) | e->imm;
    NEXT();

m_ldrk: {
    struct np_region *g;
    if (NP_UNLIKELY((e->imm & 3) || !(g = np_region_at(im, &e->hint, e->imm, 4))))
        goto slow;
    R[e->rd] = np_ld32(g->data + (e->imm - g->base));
    NEXT();
}

m_ext: {
    uint32_t v = np_ror(R[e->rm], e->sh);
    switch (e->fl & 3) {
    case EXT_SXTH: v = (uint32_t)(int32_t)(int16_t)v; break;
    case EXT_SXTB: v = (uint32_t)(int32_t)(int8_t)v; break;
    case EXT_UXTH: v &= 0xffff; break;
    default: v &= 0xff; break;
    }
    R[e->rd] = (e->fl & 4) ? R[e->rn] + v : v;
    NEXT();
}

m_bfx: {
    uint32_t v = R[e->rn] << e->sh;
    R[e->rd] = e->fl ? (uint32_t)((int32_t)v >> e->aux) : v >> e->aux;
    NEXT();
}

m_mul: {
    uint32_t v = R[e->rn] * R[e->rm];
    if (e->fl)
        cpsr = (cpsr & 0x3fffffffu) | (v & 0x80000000u) | ((uint32_t)(v == 0) << 30);
    R[e->rd] = v;
    NEXT();
}

m_mla: {
    uint32_t p = R[e->rn] * R[e->rm];
    R[e->rd] = e->fl ? R[e->rs] - p : R[e->rs] + p;
    NEXT();
}

m_mull: {
    uint64_t v;
    if (e->fl & M_SIGNED)
        v = (uint64_t)((int64_t)(int32_t)R[e->rn] * (int32_t)R[e->rm]);
    else
        v = (uint64_t)R[e->rn] * R[e->rm];
    if (e->fl & M_ACC)
        v += (uint64_t)R[e->rs] << 32 | R[e->rd];
    R[e->rd] = (uint32_t)v;
    R[e->rs] = (uint32_t)(v >> 32);
    NEXT();
}

m_div: {
    uint32_t q, n = R[e->rn], d = R[e->rm];
    if (e->fl) {
        if (d == 0)
            q = 0;
        else if (n == 0x80000000u && d == 0xffffffffu)
            q = n;
        else
            q = (uint32_t)((int32_t)n / (int32_t)d);
        cycles += div_cycles(t, (int32_t)q < 0 ? 0u - q : q);
    } else {
        q = d ? n / d : 0;
        cycles += div_cycles(t, q);
    }
    R[e->rd] = q;
    NEXT();
}

m_ldm: {
    uint32_t base = R[e->rn], addr = base + e->aux, n = e->sh;
    struct np_region *g;
    if (NP_UNLIKELY((addr & 3) || !(g = np_region_at(im, &e->hint, addr, 4 * n))))
        goto slow;
    const uint8_t *p = g->data + (addr - g->base);
    if (e->fl & M_WB)
        R[e->rn] = (e->fl & M_DEC) ? base - 4 * n : base + 4 * n;
    for (uint32_t list = e->imm; list; list &= list - 1, p += 4)
        R[__builtin_ctz(list)] = np_ld32(p);
    NEXT();
}

m_ldm_pc: {
    uint32_t base = R[e->rn], addr = base + e->aux, n = e->sh;
    struct np_region *g;
    if (NP_UNLIKELY((addr & 3) || !(g = np_region_at(im, &e->hint, addr, 4 * n))))
        goto slow;
    const uint8_t *p = g->data + (addr - g->base);
    uint32_t v = np_ld32(p + 4 * (n - 1));
    if (NP_UNLIKELY(!PLAIN_BX(v)))
        goto slow;
    if (e->fl & M_WB)
        R[e->rn] = (e->fl & M_DEC) ? base - 4 * n : base + 4 * n;
    for (uint32_t list = e->imm & 0x7fff; list; list &= list - 1, p += 4)
        R[__builtin_ctz(list)] = np_ld32(p);
    TAKEN(v & ~1u, NP_BR_LDM_PC, e->rn, 0);
}

m_stm: {
    uint32_t base = R[e->rn], addr = base + e->aux, n = e->sh;
    struct np_region *g;
    if (NP_UNLIKELY((addr & 3) || !(g = np_region_at(im, &e->hint, addr, 4 * n))))
        goto slow;
    uint32_t off = addr - g->base;
    uint8_t *p = g->data + off;
    for (uint32_t list = e->imm; list; list &= list - 1, p += 4)
        np_st32(p, R[__builtin_ctz(list)]);
    np_stored(im, g, off, addr, 4 * n);
    if (e->fl & M_WB)
        R[e->rn] = (e->fl & M_DEC) ? base - 4 * n : base + 4 * n;
    NEXT();
}

m_b:
    TAKEN(e->imm, NP_BR_B, 15, 0);

m_bcond:
    if (!np_cond_pass(e->rs, cpsr))
        NEXT();
    cycles += e->sh;
    TAKEN(e->imm, NP_BR_B, 15, NP_BRF_COND);

m_cbz:
    if ((R[e->rn] != 0) != e->fl)
        NEXT();
    cycles += e->sh;
    TAKEN(e->imm, NP_BR_B, 15, NP_BRF_COND);

m_bl:
    R[14] = e->aux;
    TAKEN(e->imm, NP_BR_BL, 15, 0);

m_bx: {
    uint32_t v = R[e->rm];
    if (NP_UNLIKELY(!PLAIN_BX(v)))
        goto slow;
    TAKEN(v & ~1u, NP_BR_BX, e->rm, 0);
}

m_blx: {
    uint32_t v = R[e->rm];
    if (NP_UNLIKELY(!(v & 1)))
        goto slow;
    R[14] = e->aux;
    TAKEN(v & ~1u, NP_BR_BLX_REG, e->rm, 0);
}

m_tb: {
    uint32_t a = (e->rn == 15 ? e->imm : R[e->rn]) + (R[e->rm] << e->sh), len = 1u << e->sh;
    struct np_region *g;
    if (NP_UNLIKELY((a & (len - 1)) || !(g = np_region_at(im, &e->hint, a, len))))
        goto slow;
    const uint8_t *p = g->data + (a - g->base);
    uint32_t v = e->sh ? np_ld16(p) : *p;
    TAKEN(e->aux + 2 * v, NP_BR_B, e->rn, 0);
}

taken:
    if (branch_fn) {
        /* in an IT block: conditional, and ITSTATE advanced as the hook sees it */
        struct np_branch b = { pc, br_to, (uint8_t)br_kind, (uint8_t)br_reg,
                               (uint8_t)(NP_BRF_THUMB | NP_BRF_FROM_THUMB | br_flags | (it ? NP_BRF_COND : 0)), 0,
                               0 };
        pc = br_to;
        SYNC_OUT();
        cpu->m.itstate = it_advance(it);
        branch_fn(ctx, cpu, &b);
        if (cpu->halt) {
            *at = b.from;
            return NP_M_OK; /* np_m_run sees the halt */
        }
    } else {
        pc = br_to;
    }
    DISPATCH();

miss_seq:
    e = &cache[(pc >> 1) & NP_DEC_MASK];
    if (e->tag == pc + 1)
        RUN_E();
miss:
    if (NP_UNLIKELY(!m_decode(cpu, t, pc, e)))
        goto step;
    e->run = ops[e->op];
    RUN_E();

m_it:
    /* the block's instructions come back to `out` after each (climit 0) */
    it = e->imm;
    climit = 0;
    pc += 2;
    goto it_run;

m_dsp: {
    unsigned cyc = 1;
    R[15] = pc; /* as np_m_step has it while it runs */
    cpu->cpsr = cpsr;
    if (!np_m_dsp(cpu, e->imm >> 16, e->imm & 0xffff, &cyc))
        goto slow;
    cpsr = cpu->cpsr;
    cycles += cyc; /* 1: never 0, as climit needs */
    NEXT();
}

slow:
    /* a case the handler leaves to np_m_step: nothing of it done */
    left++;
    cycles -= e->cyc;
    goto step;
m_slow:
    left++;
step:
    SYNC_OUT();
    cpu->m.itstate = it;
    *at = pc;
    return np_m_step(cpu);

out:
    if (it) {
        /* an instruction of an IT block ran: ITAdvance */
        it = it_advance(it);
        goto it_run;
    }
    if (left && cycles < cycle_limit) {
        climit = cycle_limit < cycles + left ? cycle_limit : cycles + left;
        DISPATCH();
    }
    SYNC_OUT();
    *at = pc;
    return NP_M_OK;

it_run:
    /* the instruction at pc with ITSTATE it (as np_m_step: the condition
       first; 16-bit data processing without flags; in IT blocks b<cond>,
       cbz, it are np_m_step's to refuse) */
    if (!it) {
        cpu->m.itstate = 0;
        climit = cycle_limit < cycles + left ? cycle_limit : cycles + left;
        DISPATCH();
    }
    if (NP_UNLIKELY(!left || cycles >= cycle_limit)) {
        SYNC_OUT();
        cpu->m.itstate = it; /* np_m_run steps the rest */
        *at = pc;
        return NP_M_OK;
    }
    e = &cache[(pc >> 1) & NP_DEC_MASK];
    if (e->tag != pc + 1) {
        if (NP_UNLIKELY(!m_decode(cpu, t, pc, e)))
            goto step;
        e->run = ops[e->op];
    }
    if (e->op == M_SLOW || e->op == M_BCOND || e->op == M_CBZ || e->op == M_IT || e->op == M_MUL)
        goto step; /* bkpt runs whatever the condition */
    if (!np_cond_pass(it >> 4, cpsr)) {
        left--;
        cycles += t->failed;
        pc += M_LEN(e);
        it = it_advance(it);
        goto it_run;
    }
    left--;
    cycles += e->cyc;
    if (M_LEN(e) == 2 && e->op < M_LD && (e->op & 1)) {
        unsigned opc = e->op >> 4;
        if (opc != NP_DP_TST && opc != NP_DP_TEQ && opc != NP_DP_CMP && opc != NP_DP_CMN)
            goto *ops[e->op & ~1u]; /* flags only outside IT blocks */
    }
    goto *e->run;
}
