/* cpu_m_dsp.c - the ARMv7E-M DSP extension (cpu_m.h): the instructions
 * ARMv7E-M adds to ARMv7-M (ARM ARM DDI 0403E, A5.3.3, A5.3.11-A5.3.17).
 *
 * Cycles: the Cortex-M4 TRM (ARM DDI 0439B, Table 3-1) gives 1 cycle for
 * every one of them: the parallel add/subtract, saturate, pack/unpack and
 * select instructions, and the DSP multiplies and multiply-accumulates,
 * 32-bit and long (SMLA*, SMLAW*, SMLAD, SMLSD, SMMLA, SMMLS, SMLAL*,
 * SMLALD, SMLSLD, UMAAL), which the M4's single-cycle MAC unit runs. */
#include "cpu_internal.h"
#include "cpu_m.h"

#define GE_SHIFT 16
#define GE_MASK (0xfu << GE_SHIFT)

static inline int32_t sext(uint32_t v, unsigned bits)
{
    return (int32_t)(v << (32 - bits)) >> (32 - bits);
}

static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi, bool *sat)
{
    if (v < lo) { *sat = true; return lo; }
    if (v > hi) { *sat = true; return hi; }
    return v;
}

/* 32-bit signed saturation for qadd and friends. */
static inline uint32_t sat32(int64_t v, bool *sat)
{
    return (uint32_t)clamp64(v, INT32_MIN, INT32_MAX, sat);
}

/* The parallel add/subtract family (A5.3.13, A5.3.14). OP1 (hw1 6:4):
 * 000 add8, 001 add16, 010 asx, 100 sub8, 101 sub16, 110 sax. KIND (hw2
 * 5:4): 0 modular with GE, 1 saturating, 2 halving. */
static int parallel(struct np_cpu *cpu, unsigned op1, unsigned kind, bool is_unsigned, uint32_t n, uint32_t m,
                    uint32_t *rd)
{
    unsigned width, lanes;
    switch (op1) {
    case 0: case 4: width = 8; lanes = 4; break;
    case 1: case 2: case 5: case 6: width = 16; lanes = 2; break;
    default: return 0;
    }
    if (kind > 2)
        return 0;
    uint32_t lane_mask = (1u << width) - 1, result = 0, ge = 0;
    for (unsigned i = 0; i < lanes; i++) {
        /* asx / sax cross the halves of Rm: lane i takes Rm's other half */
        unsigned mi = (op1 == 2 || op1 == 6) ? 1 - i : i;
        uint32_t a = (n >> (i * width)) & lane_mask, b = (m >> (mi * width)) & lane_mask;
        bool sub = op1 == 4 || op1 == 5 || (op1 == 2 && i == 0) || (op1 == 6 && i == 1);
        int64_t x = is_unsigned ? (int64_t)a : sext(a, width);
        int64_t y = is_unsigned ? (int64_t)b : sext(b, width);
        int64_t r = sub ? x - y : x + y;
        bool ge_lane;
        if (is_unsigned)
            ge_lane = sub ? r >= 0 : r >= (int64_t)1 << width;
        else
            ge_lane = r >= 0;
        if (kind == 1) {
            bool sat = false;
            if (is_unsigned)
                r = clamp64(r, 0, lane_mask, &sat);
            else
                r = clamp64(r, -((int64_t)1 << (width - 1)), ((int64_t)1 << (width - 1)) - 1, &sat);
        } else if (kind == 2) {
            r >>= 1; /* arithmetic: the exact value halved, rounded down */
        }
        result |= ((uint32_t)r & lane_mask) << (i * width);
        if (ge_lane)
            ge |= (width == 8 ? 1u : 3u) << (i * (width / 8));
    }
    *rd = result;
    /* only the modular forms write GE */
    if (kind == 0)
        cpu->cpsr = (cpu->cpsr & ~GE_MASK) | (ge << GE_SHIFT);
    return 1;
}

/* Data processing (register), hw1 = 11111010 op1 Rn, hw2 = 1111 Rd op2 Rm
 * (A5.3.12): sxtab16/uxtab16, the parallel family, the miscellaneous group's
 * qadd/qdadd/qsub/qdsub and sel. */
static int dp_register(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2)
{
    if ((hw2 & 0xf000) != 0xf000)
        return 0;
    unsigned op1 = (hw1 >> 4) & 0xf, op2 = (hw2 >> 4) & 0xf;
    unsigned rn = hw1 & 0xf, rd = (hw2 >> 8) & 0xf, rm = hw2 & 0xf;
    uint32_t n = cpu->r[rn], m = cpu->r[rm];
    if ((op1 == 2 || op1 == 3) && (op2 & 0xc) == 8) {
        /* sxtab16 / uxtab16 (sxtb16 / uxtb16 with Rn = 15): bytes 0 and 2 of
         * the rotated Rm, extended to halfwords */
        uint32_t rot = np_ror(m, (op2 & 3) * 8);
        bool is_signed = op1 == 2;
        uint32_t lo = is_signed ? (uint32_t)sext(rot & 0xff, 8) : rot & 0xff;
        uint32_t hi = is_signed ? (uint32_t)sext((rot >> 16) & 0xff, 8) : (rot >> 16) & 0xff;
        if (rn != 15) {
            lo += n;
            hi += n >> 16;
        }
        cpu->r[rd] = (lo & 0xffff) | (hi << 16);
        return 1;
    }
    if ((op1 & 8) && (op2 & 0x8) == 0) {
        uint32_t r;
        if (!parallel(cpu, op1 & 7, op2 & 3, (op2 & 4) != 0, n, m, &r))
            return 0;
        cpu->r[rd] = r;
        return 1;
    }
    if (op1 == 8 && (op2 & 0xc) == 8) {
        /* qadd, qdadd, qsub, qdsub: Rd = Rm +/- (doubled, saturated) Rn */
        bool sat = false;
        int64_t b = (int32_t)n;
        if (op2 & 1)
            b = (int32_t)sat32(2 * b, &sat);
        int64_t r = (op2 & 2) ? (int64_t)(int32_t)m - b : (int64_t)(int32_t)m + b;
        cpu->r[rd] = sat32(r, &sat);
        if (sat)
            cpu->cpsr |= NP_CPSR_Q;
        return 1;
    }
    if (op1 == 0xa && op2 == 8) {
        /* sel: each byte from Rn where its GE bit is set, else from Rm */
        uint32_t ge = (cpu->cpsr >> GE_SHIFT) & 0xf, r = 0;
        for (unsigned i = 0; i < 4; i++)
            r |= (((ge >> i) & 1) ? n : m) & (0xffu << (i * 8));
        cpu->r[rd] = r;
        return 1;
    }
    return 0;
}

/* A halfword of V, signed: the top one when TOP. */
static inline int64_t half(uint32_t v, bool top)
{
    return (int16_t)(top ? v >> 16 : v);
}

/* Multiply, multiply accumulate and absolute difference, hw1 = 111110110
 * op1 Rn, hw2 = Ra Rd 00 op2 Rm (A5.3.16). */
static int multiply(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2)
{
    if (hw2 & 0xc0)
        return 0;
    unsigned op1 = (hw1 >> 4) & 7, op2 = (hw2 >> 4) & 3;
    unsigned rn = hw1 & 0xf, ra = hw2 >> 12, rd = (hw2 >> 8) & 0xf, rm = hw2 & 0xf;
    uint32_t n = cpu->r[rn], m = cpu->r[rm], a = cpu->r[ra];
    bool acc = ra != 15, sat = false;
    int64_t r;
    switch (op1) {
    case 1: /* smla<x><y> / smul<x><y>: N = op2 bit 1, M = bit 0 */
        r = half(n, op2 & 2) * half(m, op2 & 1);
        if (acc) {
            r += (int32_t)a;
            sat = r != (int32_t)r;
        }
        break;
    case 2: case 4: { /* smlad / smuad, smlsd / smusd; X swaps Rm's halves */
        if (op2 & 2)
            return 0;
        uint32_t mx = (op2 & 1) ? np_ror(m, 16) : m;
        int64_t p1 = half(n, false) * half(mx, false), p2 = half(n, true) * half(mx, true);
        r = op1 == 2 ? p1 + p2 : p1 - p2;
        if (acc)
            r += (int32_t)a;
        /* Q from the exact sum, as the ARM ARM's pseudocode has it: p1 + p2 =
         * 2^31 brought back in range by Ra sets no Q (QEMU before 8.0, and
         * so Unicorn 2, sets it) */
        sat = r != (int32_t)r;
        break;
    }
    case 3: /* smlaw<y> / smulw<y>: the top 32 bits of the 48-bit product */
        if (op2 & 2)
            return 0;
        r = ((int64_t)(int32_t)n * half(m, op2 & 1)) >> 16;
        if (acc) {
            r += (int32_t)a;
            sat = r != (int32_t)r;
        }
        break;
    case 5: case 6: { /* smmla / smmul, smmls; R rounds the top word */
        if (op2 & 2)
            return 0;
        /* modulo 2^64: only bits 63:32 of the exact value are kept */
        uint64_t p = (uint64_t)((int64_t)(int32_t)n * (int32_t)m);
        uint64_t acc64 = acc || op1 == 6 ? (uint64_t)a << 32 : 0;
        uint64_t v = op1 == 6 ? acc64 - p : acc64 + p;
        if (op2 & 1)
            v += 0x80000000u;
        cpu->r[rd] = (uint32_t)(v >> 32);
        return 1;
    }
    case 7: { /* usada8 / usad8 */
        if (op2 != 0)
            return 0;
        uint32_t sum = 0;
        for (unsigned i = 0; i < 32; i += 8) {
            int d = (int)((n >> i) & 0xff) - (int)((m >> i) & 0xff);
            sum += (uint32_t)(d < 0 ? -d : d);
        }
        cpu->r[rd] = sum + (acc ? a : 0);
        return 1;
    }
    default: /* mla, mls, mul: ARMv7-M's */
        return 0;
    }
    cpu->r[rd] = (uint32_t)r;
    if (sat)
        cpu->cpsr |= NP_CPSR_Q;
    return 1;
}

/* Long multiply, long multiply accumulate and divide, hw1 = 111110111 op1
 * Rn, hw2 = RdLo RdHi op2 Rm (A5.3.17): smlal<x><y>, smlald, smlsld, umaal. */
static int long_multiply(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2)
{
    unsigned op1 = (hw1 >> 4) & 7, op2 = (hw2 >> 4) & 0xf;
    unsigned rn = hw1 & 0xf, rdlo = hw2 >> 12, rdhi = (hw2 >> 8) & 0xf, rm = hw2 & 0xf;
    uint32_t n = cpu->r[rn], m = cpu->r[rm];
    uint64_t acc = (uint64_t)cpu->r[rdhi] << 32 | cpu->r[rdlo];
    uint64_t r;
    if (op1 == 4 && (op2 & 0xc) == 8) {
        r = acc + (uint64_t)(half(n, op2 & 2) * half(m, op2 & 1));
    } else if ((op1 == 4 || op1 == 5) && (op2 & 0xe) == 0xc) {
        uint32_t mx = (op2 & 1) ? np_ror(m, 16) : m;
        int64_t p1 = half(n, false) * half(mx, false), p2 = half(n, true) * half(mx, true);
        r = acc + (uint64_t)(op1 == 4 ? p1 + p2 : p1 - p2);
    } else if (op1 == 6 && op2 == 6) {
        /* umaal: cannot overflow 64 bits */
        r = (uint64_t)n * m + cpu->r[rdhi] + cpu->r[rdlo];
    } else {
        return 0;
    }
    cpu->r[rdlo] = (uint32_t)r;
    cpu->r[rdhi] = (uint32_t)(r >> 32);
    return 1;
}

/* ssat16 / usat16 (A5.3.3: plain binary immediate, shift 0 and sh = 1). */
static int saturate16(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2)
{
    if ((hw2 & 0x70c0) != 0)
        return 0; /* a shift: ssat / usat, ARMv7-M's */
    bool is_unsigned = (hw1 & 0x80) != 0;
    unsigned rn = hw1 & 0xf, rd = (hw2 >> 8) & 0xf, sat_imm = hw2 & 0x1f;
    if (sat_imm & 0x10)
        return 0; /* bit 4 is (0) in both encodings */
    uint32_t n = cpu->r[rn], r = 0;
    bool sat = false;
    for (unsigned i = 0; i < 2; i++) {
        int64_t v = half(n, i == 1);
        if (is_unsigned)
            v = clamp64(v, 0, ((int64_t)1 << sat_imm) - 1, &sat);
        else
            v = clamp64(v, -((int64_t)1 << sat_imm), ((int64_t)1 << sat_imm) - 1, &sat);
        r |= ((uint32_t)v & 0xffff) << (16 * i);
    }
    cpu->r[rd] = r;
    if (sat)
        cpu->cpsr |= NP_CPSR_Q;
    return 1;
}

/* pkhbt / pkhtb (A5.3.11: data processing (shifted register), op 0110, S 0). */
static int pack(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2)
{
    if ((hw2 & 0x8010) != 0)
        return 0;
    unsigned rn = hw1 & 0xf, rd = (hw2 >> 8) & 0xf, rm = hw2 & 0xf;
    unsigned imm = ((hw2 >> 10) & 0x1c) | ((hw2 >> 6) & 3);
    uint32_t n = cpu->r[rn], m = cpu->r[rm];
    if (hw2 & 0x20) {
        /* pkhtb: asr #imm, 0 meaning 32 */
        uint32_t lo = (uint32_t)((int32_t)m >> (imm ? imm : 31));
        cpu->r[rd] = (n & 0xffff0000u) | (lo & 0xffff);
    } else {
        cpu->r[rd] = (n & 0xffff) | ((m << imm) & 0xffff0000u);
    }
    return 1;
}

int np_m_dsp(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    if (!(cpu->m.features & NP_MFEAT_DSP))
        return 0;
    int done;
    if ((hw1 & 0xff80) == 0xfa80 || (hw1 & 0xffe0) == 0xfa20)
        done = dp_register(cpu, hw1, hw2);
    else if ((hw1 & 0xff80) == 0xfb00)
        done = multiply(cpu, hw1, hw2);
    else if ((hw1 & 0xff80) == 0xfb80)
        done = long_multiply(cpu, hw1, hw2);
    else if ((hw1 & 0xff70) == 0xf320 && !(hw2 & 0x8000))
        done = saturate16(cpu, hw1, hw2);
    else if ((hw1 & 0xfff0) == 0xeac0)
        done = pack(cpu, hw1, hw2);
    else
        done = 0;
    if (done)
        *cyc = 1;
    return done;
}
