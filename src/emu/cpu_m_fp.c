/* cpu_m_fp.c - the Cortex-M FPU: FPv4-SP and FPv5-SP (cpu_m.h), the
 * single-precision floating-point extension of ARMv7-M and ARMv8-M (ARM ARM
 * DDI 0403E, A6; ARMv8-M DDI 0553 for FPv5's vsel, vmaxnm/vminnm, vrint*,
 * vcvta/n/p/m). No double-precision arithmetic: the CPUs have none.
 *
 * Values are computed with the host's single-precision arithmetic in the
 * rounding mode of FPSCR.RMode; what the host does differently from the
 * architecture is done here: NaN propagation (the first signalling NaN,
 * quietened, else the first quiet NaN; FPSCR.DN's default NaN), the
 * default NaN of an invalid operation (0x7fc00000, where x86 makes
 * 0xffc00000), flush-to-zero (FPSCR.FZ: denormal inputs read as zero with
 * IDC, results tiny before rounding written as zero with UFC), and
 * underflow, which ARM detects before rounding: it is computed here
 * exactly from the operands. The host's own rounding mode and exception
 * flags are restored after each operation.
 *
 * Cycles: the Cortex-M4 TRM (ARM DDI 0439B), Table 7-1 "FPU instruction
 * set": 1 for vabs, vadd, vsub, vmul, vnmul, vneg, vcmp, vcvt, vmov
 * (immediate, register, core<->single), vmrs, vmsr; 2 for vmov of two
 * core registers; 3 for vmla, vmls, vnmla, vnmls and the fused
 * multiply-adds; 14 for vdiv and vsqrt; 2 for vldr/vstr of a single, 3 of
 * a double; 1 + N for vldm, vstm, vpush, vpop of N words. FPv5's
 * instructions are counted as 1, as the M33 TRM gives no table. */
#include <fenv.h>
#include <math.h>
#include "cpu_internal.h"
#include "cpu_m.h"

/* FPSCR */
#define FPSCR_IOC 0x01u
#define FPSCR_DZC 0x02u
#define FPSCR_OFC 0x04u
#define FPSCR_UFC 0x08u
#define FPSCR_IXC 0x10u
#define FPSCR_IDC 0x80u
#define FPSCR_RMODE_SHIFT 22
#define FPSCR_FZ (1u << 24)
#define FPSCR_DN (1u << 25)
#define FPSCR_AHP (1u << 26)
/* the bits FPv4/FPv5 implement: NZCV, AHP, DN, FZ, RMode, IDC, the flags */
#define FPSCR_WRITABLE 0xf7c0009fu

#define SIGN 0x80000000u
#define DEFAULT_NAN 0x7fc00000u
#define QUIET_BIT 0x00400000u

/* Rounding modes, as FPSCR.RMode numbers them; TIES_AWAY for FPv5's vrinta / vcvta. */
enum rmode { RM_NEAREST, RM_PLUS_INF, RM_MINUS_INF, RM_ZERO, RM_TIES_AWAY };

/* The CPACR check: the system owns CPACR (cpu_m_sys.c). */
static bool fpu_enabled(const struct np_cpu *cpu)
{
    return np_m_fpu_enabled(cpu);
}

/* One instruction's view of FPSCR: its modes, and the exception flags it
 * raised (ORed into FPSCR when it completes). */
struct fpctx {
    uint32_t fpscr;
    uint32_t exc;
};

static inline float f_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline bool is_nan(uint32_t x) { return (x & ~SIGN) > 0x7f800000u; }
static inline bool is_snan(uint32_t x) { return is_nan(x) && !(x & QUIET_BIT); }
static inline bool is_qnan(uint32_t x) { return is_nan(x) && (x & QUIET_BIT); }
static inline bool is_inf(uint32_t x) { return (x & ~SIGN) == 0x7f800000u; }
static inline bool is_zero(uint32_t x) { return (x & ~SIGN) == 0; }
static inline bool is_denormal(uint32_t x) { return (x & 0x7f800000u) == 0 && (x & 0x007fffffu) != 0; }
static inline uint32_t neg(uint32_t x) { return x ^ SIGN; }

static inline enum rmode fpscr_rmode(uint32_t fpscr) { return (enum rmode)((fpscr >> FPSCR_RMODE_SHIFT) & 3); }

static int host_round(enum rmode rm)
{
    switch (rm) {
    case RM_PLUS_INF: return FE_UPWARD;
    case RM_MINUS_INF: return FE_DOWNWARD;
    case RM_ZERO: return FE_TOWARDZERO;
    default: return FE_TONEAREST;
    }
}

/* FPUnpack's flush of a denormal input with FPSCR.FZ. */
static uint32_t flush_in(struct fpctx *c, uint32_t x)
{
    if ((c->fpscr & FPSCR_FZ) && is_denormal(x)) {
        c->exc |= FPSCR_IDC;
        return x & SIGN;
    }
    return x;
}

/* The NaN result of an operation whose chosen NaN operand is X. */
static uint32_t nan_result(struct fpctx *c, uint32_t x)
{
    if (is_snan(x))
        c->exc |= FPSCR_IOC;
    x |= QUIET_BIT;
    return (c->fpscr & FPSCR_DN) ? DEFAULT_NAN : x;
}

/* FPProcessNaNs / FPProcessNaNs3: true with *OUT set when an operand is a
 * NaN (the first signalling one wins, then the first quiet one). */
static bool process_nans(struct fpctx *c, const uint32_t *ops, unsigned n, uint32_t *out)
{
    for (unsigned i = 0; i < n; i++)
        if (is_snan(ops[i])) {
            *out = nan_result(c, ops[i]);
            return true;
        }
    for (unsigned i = 0; i < n; i++)
        if (is_qnan(ops[i])) {
            *out = nan_result(c, ops[i]);
            return true;
        }
    return false;
}

enum host_op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA };

/* OP on operands that are flushed and not NaNs, rounded by FPSCR, with the
 * exception flags ARM raises. */
static uint32_t host_arith(struct fpctx *c, enum host_op op, uint32_t a, uint32_t b, uint32_t addend)
{
    fenv_t saved;
    fegetenv(&saved);
    fesetround(host_round(fpscr_rmode(c->fpscr)));
    feclearexcept(FE_ALL_EXCEPT);
    /* volatile: the compiler must neither fold nor move the operation
     * across the rounding mode's change and the flags' test */
    volatile float x = f_of(a), y = f_of(b), z = f_of(addend), r;
    switch (op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV: r = x / y; break;
    case OP_SQRT: r = sqrtf(x); break;
    default: r = fmaf(x, y, z); break;
    }
    int ex = fetestexcept(FE_ALL_EXCEPT);
    uint32_t res = bits_of(r);
    /* tiny before rounding: the exact result is nonzero and below 2^-126 */
    bool tiny = false;
    switch (op) {
    case OP_ADD: case OP_SUB:
        /* a sum of floats that small is exact: tiny iff the result is denormal */
        tiny = is_denormal(res);
        break;
    case OP_MUL: {
        double p = (double)x * (double)y; /* exact: 48 bits */
        tiny = p != 0 && fabs(p) < 0x1p-126;
        break;
    }
    case OP_DIV:
        /* |x / y| < 2^-126 as |x| < 2^-126 |y|, both sides exact in double */
        tiny = !is_zero(a) && !is_inf(b) && !is_zero(b) && fabs((double)x) < 0x1p-126 * fabs((double)y);
        break;
    case OP_FMA: {
        /* rounding toward zero never carries a value across 2^-126 */
        fesetround(FE_TOWARDZERO);
        volatile double dx = x, dy = y, dz = z, e;
        e = fma(dx, dy, dz);
        tiny = e != 0 && fabs(e) < 0x1p-126;
        break;
    }
    default:
        break;
    }
    fesetenv(&saved);
    if (ex & FE_INVALID) {
        c->exc |= FPSCR_IOC;
        return DEFAULT_NAN;
    }
    if (ex & FE_DIVBYZERO)
        c->exc |= FPSCR_DZC;
    if (tiny && (c->fpscr & FPSCR_FZ)) {
        /* flushed: UFC alone, no IXC */
        c->exc |= FPSCR_UFC;
        return res & SIGN;
    }
    if (ex & FE_OVERFLOW)
        c->exc |= FPSCR_OFC;
    if (ex & FE_INEXACT)
        c->exc |= FPSCR_IXC | (tiny ? FPSCR_UFC : 0);
    return res;
}

static uint32_t fp_binary(struct fpctx *c, enum host_op op, uint32_t a, uint32_t b)
{
    uint32_t ops[2] = {flush_in(c, a), flush_in(c, b)}, r;
    if (process_nans(c, ops, 2, &r))
        return r;
    return host_arith(c, op, ops[0], ops[1], 0);
}

static uint32_t fp_sqrt(struct fpctx *c, uint32_t a)
{
    uint32_t r;
    a = flush_in(c, a);
    if (process_nans(c, &a, 1, &r))
        return r;
    return host_arith(c, OP_SQRT, a, 0, 0);
}

/* FPMulAdd: ADDEND + OP1 * OP2 rounded once. */
static uint32_t fp_muladd(struct fpctx *c, uint32_t addend, uint32_t op1, uint32_t op2)
{
    uint32_t ops[3] = {flush_in(c, addend), flush_in(c, op1), flush_in(c, op2)}, r;
    /* inf * 0 plus a quiet NaN is invalid, not the NaN */
    bool inf_zero = (is_inf(ops[1]) && is_zero(ops[2])) || (is_zero(ops[1]) && is_inf(ops[2]));
    if (is_qnan(ops[0]) && inf_zero) {
        c->exc |= FPSCR_IOC;
        return DEFAULT_NAN;
    }
    if (process_nans(c, ops, 3, &r))
        return r;
    return host_arith(c, OP_FMA, ops[1], ops[2], ops[0]);
}

/* FPCompare: FPSCR's NZCV. QUIET_NAN_EXC (vcmpe): any NaN is invalid. */
static uint32_t fp_compare(struct fpctx *c, uint32_t a, uint32_t b, bool quiet_nan_exc)
{
    a = flush_in(c, a);
    b = flush_in(c, b);
    if (is_nan(a) || is_nan(b)) {
        if (is_snan(a) || is_snan(b) || quiet_nan_exc)
            c->exc |= FPSCR_IOC;
        return 0x3;
    }
    float x = f_of(a), y = f_of(b);
    return x == y ? 0x6 : x < y ? 0x8 : 0x2;
}

/* V rounded to an integral value by RM (V finite). */
static double round_integral(double v, enum rmode rm)
{
    double fl = floor(v), frac = v - fl, r;
    switch (rm) {
    case RM_PLUS_INF: r = ceil(v); break;
    case RM_MINUS_INF: r = fl; break;
    case RM_ZERO: r = trunc(v); break;
    case RM_TIES_AWAY: r = round(v); break;
    default:
        r = frac > 0.5 ? fl + 1 : frac < 0.5 ? fl : (fmod(fl, 2) == 0 ? fl : fl + 1);
        break;
    }
    return r == 0 ? copysign(0.0, v) : r;
}

/* FPToFixed: A * 2^FBITS rounded by RM to a SIZE-bit integer, saturated. */
static uint32_t fp_to_fixed(struct fpctx *c, uint32_t a, unsigned size, unsigned fbits, bool is_unsigned,
                            enum rmode rm)
{
    a = flush_in(c, a);
    if (is_nan(a)) {
        c->exc |= FPSCR_IOC;
        return 0;
    }
    double lo = is_unsigned ? 0 : -ldexp(1, (int)size - 1);
    double hi = is_unsigned ? ldexp(1, (int)size) - 1 : ldexp(1, (int)size - 1) - 1;
    double v = ldexp((double)f_of(a), (int)fbits); /* exact, or infinite */
    double r = isinf(v) ? v : round_integral(v, rm);
    if (r < lo || r > hi) {
        c->exc |= FPSCR_IOC;
        r = r < lo ? lo : hi;
    } else if (r != v) {
        c->exc |= FPSCR_IXC;
    }
    return is_unsigned ? (uint32_t)r : (uint32_t)(int32_t)r;
}

/* FixedToFP: the SIZE-bit integer X / 2^FBITS, rounded by FPSCR. */
static uint32_t fixed_to_fp(struct fpctx *c, uint32_t x, unsigned size, unsigned fbits, bool is_unsigned)
{
    int64_t v = is_unsigned ? (int64_t)(x & (uint32_t)((1ull << size) - 1))
                            : (int64_t)((int32_t)(x << (32 - size)) >> (32 - size));
    fenv_t saved;
    fegetenv(&saved);
    fesetround(host_round(fpscr_rmode(c->fpscr)));
    feclearexcept(FE_ALL_EXCEPT);
    volatile int64_t vv = v;
    volatile float r = (float)vv;
    int ex = fetestexcept(FE_INEXACT);
    fesetenv(&saved);
    if (ex)
        c->exc |= FPSCR_IXC;
    /* scaling by 2^-fbits (at most 2^-32) is exact */
    return bits_of(ldexpf(r, -(int)fbits));
}

/* FPRoundInt (FPv5 vrint*): EXACT raises IXC when the value changes. */
static uint32_t fp_round_int(struct fpctx *c, uint32_t a, enum rmode rm, bool exact)
{
    uint32_t r;
    a = flush_in(c, a);
    if (process_nans(c, &a, 1, &r))
        return r;
    if (is_inf(a) || is_zero(a))
        return a;
    double v = f_of(a), ri = round_integral(v, rm);
    if (exact && ri != v)
        c->exc |= FPSCR_IXC;
    return bits_of((float)ri);
}

/* FPMaxNum / FPMinNum (FPv5 vmaxnm / vminnm): a quiet NaN loses to a number. */
static uint32_t fp_maxmin_num(struct fpctx *c, uint32_t a, uint32_t b, bool is_max)
{
    a = flush_in(c, a);
    b = flush_in(c, b);
    uint32_t loser = is_max ? 0xff800000u : 0x7f800000u, ops[2], r;
    if (is_qnan(a) && !is_qnan(b))
        a = loser;
    else if (!is_qnan(a) && is_qnan(b))
        b = loser;
    ops[0] = a;
    ops[1] = b;
    if (process_nans(c, ops, 2, &r))
        return r;
    if (is_zero(a) && is_zero(b))
        return is_max ? (a & b) : (a | b);
    float x = f_of(a), y = f_of(b);
    return (is_max ? x > y : x < y) ? a : b;
}

/* ---- half precision (vcvtb, vcvtt) ---- */

/* FPHalfToSingle: every half-precision value is exact in single. */
static uint32_t half_to_single(struct fpctx *c, uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    if (exp == 0x1f && !(c->fpscr & FPSCR_AHP)) {
        if (frac == 0)
            return sign | 0x7f800000u;
        return nan_result(c, sign | 0x7f800000u | (frac << 13));
    }
    if (exp == 0) {
        if (frac == 0)
            return sign;
        /* a denormal half: normalise */
        int e = -14;
        while (!(frac & 0x400)) {
            frac <<= 1;
            e--;
        }
        return sign | (uint32_t)(e + 127) << 23 | (frac & 0x3ff) << 13;
    }
    return sign | (exp - 15 + 127) << 23 | frac << 13;
}

/* FPSingleToHalf, rounded by FPSCR (FPRound with N = 16: no flush of the
 * output, AHP's range without infinities and NaNs). */
static uint32_t single_to_half(struct fpctx *c, uint32_t a)
{
    bool ahp = c->fpscr & FPSCR_AHP;
    a = flush_in(c, a);
    uint32_t sign = (a >> 16) & 0x8000u;
    if (is_nan(a)) {
        if (ahp) {
            /* no NaNs: a zero of the NaN's sign (ARMv8's FPConvert says the sign) */
            c->exc |= FPSCR_IOC;
            return sign;
        }
        if (is_snan(a))
            c->exc |= FPSCR_IOC;
        if (c->fpscr & FPSCR_DN)
            return 0x7e00;
        return sign | 0x7e00 | ((a >> 13) & 0x1ff);
    }
    if (is_inf(a)) {
        if (ahp) {
            c->exc |= FPSCR_IOC;
            return sign | 0x7fff;
        }
        return sign | 0x7c00;
    }
    if (is_zero(a))
        return sign;
    /* the value as mant * 2^exp, mant with its top bit at 23 */
    int exp = (int)((a >> 23) & 0xff);
    uint64_t mant = a & 0x7fffff;
    if (exp == 0) {
        exp = 1;
        while (!(mant & 0x800000)) {
            mant <<= 1;
            exp--;
        }
    } else {
        mant |= 0x800000;
    }
    int unbiased = exp - 127; /* value = mant * 2^(unbiased - 23) */
    int biased = unbiased < -14 ? 0 : unbiased + 15;
    int quantum = biased == 0 ? -24 : unbiased - 10; /* the weight of the result's last bit */
    int shift = quantum - (unbiased - 23);            /* >= 13 */
    uint64_t int_mant, rem, halfway;
    if (shift >= 40) {
        int_mant = 0;
        rem = 1;
        halfway = 2; /* far below half an ulp, not zero */
    } else {
        int_mant = mant >> shift;
        rem = mant & ((1ull << shift) - 1);
        halfway = 1ull << (shift - 1);
    }
    bool error = rem != 0, up;
    switch (fpscr_rmode(c->fpscr)) {
    case RM_NEAREST: up = rem > halfway || (rem == halfway && (int_mant & 1)); break;
    case RM_PLUS_INF: up = error && !sign; break;
    case RM_MINUS_INF: up = error && sign; break;
    default: up = false; break;
    }
    if (biased == 0 && error)
        c->exc |= FPSCR_UFC;
    if (up) {
        int_mant++;
        if (biased == 0 && int_mant == 0x400)
            biased = 1; /* rounded up to the smallest normal */
        if (int_mant == 0x800) {
            biased++;
            int_mant >>= 1;
        }
    }
    uint32_t result;
    if (!ahp && biased >= 31) {
        enum rmode rm = fpscr_rmode(c->fpscr);
        bool to_inf = rm == RM_NEAREST || (rm == RM_PLUS_INF && !sign) || (rm == RM_MINUS_INF && sign);
        result = sign | (to_inf ? 0x7c00 : 0x7bff);
        c->exc |= FPSCR_OFC;
        error = true;
    } else if (ahp && biased >= 32) {
        c->exc |= FPSCR_IOC;
        return sign | 0x7fff;
    } else {
        result = sign | (uint32_t)biased << 10 | (uint32_t)(int_mant & 0x3ff);
    }
    if (error)
        c->exc |= FPSCR_IXC;
    return result;
}

/* VFPExpandImm for a single. */
static uint32_t expand_imm(unsigned imm8)
{
    uint32_t b6 = (imm8 >> 6) & 1;
    return (uint32_t)(imm8 >> 7) << 31 | (b6 ^ 1) << 30 | (b6 ? 0x1fu << 25 : 0) | (uint32_t)(imm8 & 0x3f) << 19;
}

/* ---- memory ---- */

/* The value of the PC as an operand (vldr's literal form): the
 * instruction's address + 4. np_m_step calls with r[15] still the
 * instruction's address ("runs the instruction at r[15]"). */
static uint32_t pc_operand(const struct np_cpu *cpu)
{
    return cpu->r[15] + 4;
}

/* N words between s[FIRST..] and memory at ADDR; nothing changed on a
 * fault (stores are probed first, but for the PPB and the system space,
 * whose reads have side effects). */
static int transfer(struct np_cpu *cpu, uint32_t addr, unsigned first, unsigned n, bool load)
{
    uint32_t tmp[32];
    if (load) {
        for (unsigned i = 0; i < n; i++) {
            int e = np_m_read(cpu, addr + 4 * i, 4, true, &tmp[i]);
            if (e)
                return -e;
        }
        memcpy(&cpu->m.s[first], tmp, 4 * n);
        return 1;
    }
    if (n > 1)
        for (unsigned i = 0; i < n; i++) {
            uint32_t a = addr + 4 * i, dummy;
            if (a < 0xe0000000u) {
                int e = np_m_read(cpu, a, 4, true, &dummy);
                if (e)
                    return -(e == NP_MF_READ ? NP_MF_WRITE : e);
            }
        }
    for (unsigned i = 0; i < n; i++) {
        int e = np_m_write(cpu, addr + 4 * i, 4, true, cpu->m.s[first + i]);
        if (e)
            return -e;
    }
    return 1;
}

/* Extension register load/store (A6.5) and the 64-bit moves, hw1 = 1110 110x. */
static int load_store(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    bool p = hw1 & 0x100, u = hw1 & 0x80, w = hw1 & 0x20, load = hw1 & 0x10, dbl = hw2 & 0x100;
    unsigned d_bit = (hw1 >> 6) & 1, vd = hw2 >> 12, imm8 = hw2 & 0xff, rn = hw1 & 0xf;
    if ((hw1 & 0xffe0) == 0xec40) {
        /* vmov between two core registers and two singles or a double */
        if ((hw2 & 0xd0) != 0x10)
            return 0;
        unsigned rt = hw2 >> 12, rt2 = hw1 & 0xf, m_bit = (hw2 >> 5) & 1, vm = hw2 & 0xf;
        if (dbl && m_bit)
            return 0; /* d16-d31: none */
        unsigned sm = dbl ? vm * 2 : vm * 2 + m_bit;
        if (sm == 31 || rt == 15 || rt2 == 15 || (load && rt == rt2))
            return 0;
        if (load) {
            cpu->r[rt] = cpu->m.s[sm];
            cpu->r[rt2] = cpu->m.s[sm + 1];
        } else {
            cpu->m.s[sm] = cpu->r[rt];
            cpu->m.s[sm + 1] = cpu->r[rt2];
        }
        *cyc = 2;
        return 1;
    }
    unsigned first = dbl ? vd * 2 : vd * 2 + d_bit;
    if (dbl && d_bit)
        return 0;
    if (p && !w) {
        /* vldr / vstr */
        uint32_t base = rn == 15 ? pc_operand(cpu) & ~3u : cpu->r[rn];
        uint32_t addr = u ? base + imm8 * 4 : base - imm8 * 4;
        *cyc = dbl ? 3 : 2;
        return transfer(cpu, addr, first, dbl ? 2 : 1, load);
    }
    if (p == u || rn == 15)
        return 0; /* P = U with W: undefined; the PC as a base: unpredictable */
    /* vldm / vstm (ia, db!), vpush, vpop; a double list of odd imm8 is
     * FLDMX/FSTMX: imm8 / 2 doubles, the base moved by imm8 words */
    unsigned words = dbl ? imm8 & ~1u : imm8;
    if (words == 0 || first + words > 32)
        return 0;
    uint32_t base = cpu->r[rn], start = u ? base : base - imm8 * 4;
    int r = transfer(cpu, start, first, words, load);
    if (r < 0)
        return r;
    if (w)
        cpu->r[rn] = u ? base + imm8 * 4 : base - imm8 * 4;
    *cyc = 1 + words;
    return 1;
}

/* 8, 16 and 32-bit transfers between core and FP registers (A6.6), hw1 = 1110 1110, hw2 bit 4 set. */
static int core_transfer(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    unsigned a = (hw1 >> 5) & 7, rt = hw2 >> 12;
    bool to_core = hw1 & 0x10, c = hw2 & 0x100;
    if (hw2 & 0xf)
        return 0;
    *cyc = 1;
    if (!c && a == 0 && !(hw2 & 0x60)) {
        /* vmov between a core register and a single */
        unsigned sn = (hw1 & 0xf) * 2 + ((hw2 >> 7) & 1);
        if (rt == 15 || rt == 13)
            return 0;
        if (to_core)
            cpu->r[rt] = cpu->m.s[sn];
        else
            cpu->m.s[sn] = cpu->r[rt];
        return 1;
    }
    if (!c && a == 7 && !(hw2 & 0xe0)) {
        if ((hw1 & 0xf) != 1)
            return 0; /* only FPSCR on the M profile */
        if (to_core) {
            if (rt == 15) /* vmrs APSR_nzcv, fpscr */
                cpu->cpsr = (cpu->cpsr & 0x0fffffffu) | (cpu->m.fpscr & 0xf0000000u);
            else if (rt != 13)
                cpu->r[rt] = cpu->m.fpscr;
            else
                return 0;
        } else {
            if (rt == 15 || rt == 13)
                return 0;
            cpu->m.fpscr = cpu->r[rt] & FPSCR_WRITABLE;
        }
        return 1;
    }
    if (c && (a & 6) == 0 && !(hw2 & 0x60)) {
        /* vmov between a core register and a 32-bit scalar dN[x] */
        if ((hw2 & 0x80) || rt == 15 || rt == 13)
            return 0; /* d16-d31: none */
        unsigned s = (hw1 & 0xf) * 2 + (a & 1);
        if (to_core)
            cpu->r[rt] = cpu->m.s[s];
        else
            cpu->m.s[s] = cpu->r[rt];
        return 1;
    }
    return 0;
}

/* Floating-point data processing (A6.4), hw1 = 1110 1110, hw2 bit 4 clear. */
static int data_processing(struct np_cpu *cpu, struct fpctx *c, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    if (hw2 & 0x100)
        return 0; /* double precision: none */
    unsigned opc1 = ((hw1 >> 5) & 4) | ((hw1 >> 4) & 3), opc2 = hw1 & 0xf, opc3 = (hw2 >> 6) & 3;
    bool op = hw2 & 0x40;
    unsigned d = ((hw2 >> 12) & 0xf) * 2 + ((hw1 >> 6) & 1);
    unsigned n = opc2 * 2 + ((hw2 >> 7) & 1);
    unsigned m = (hw2 & 0xf) * 2 + ((hw2 >> 5) & 1);
    uint32_t *s = cpu->m.s;
    bool v8 = cpu->m.features & NP_MFEAT_V8M;
    *cyc = 1;
    switch (opc1) {
    case 0: case 1: {
        /* vmla, vmls, vnmls, vnmla: the product rounded, then the sum */
        uint32_t prod = fp_binary(c, OP_MUL, s[n], s[m]);
        uint32_t acc = opc1 == 1 ? neg(s[d]) : s[d];
        s[d] = fp_binary(c, OP_ADD, acc, op ? neg(prod) : prod);
        *cyc = 3;
        return 1;
    }
    case 2:
        s[d] = fp_binary(c, OP_MUL, s[n], s[m]);
        if (op)
            s[d] = neg(s[d]); /* vnmul */
        return 1;
    case 3:
        s[d] = fp_binary(c, op ? OP_SUB : OP_ADD, s[n], s[m]);
        return 1;
    case 4:
        if (op)
            return 0;
        s[d] = fp_binary(c, OP_DIV, s[n], s[m]);
        *cyc = 14;
        return 1;
    case 5: /* vfnms (op 0): -d + n*m; vfnma (op 1): -d - n*m */
        s[d] = fp_muladd(c, neg(s[d]), op ? neg(s[n]) : s[n], s[m]);
        *cyc = 3;
        return 1;
    case 6: /* vfma (op 0), vfms (op 1) */
        s[d] = fp_muladd(c, s[d], op ? neg(s[n]) : s[n], s[m]);
        *cyc = 3;
        return 1;
    default:
        break;
    }
    /* opc1 = 1x11: the other data-processing instructions */
    if (!(opc3 & 1)) {
        if (hw2 & 0xa0)
            return 0;
        s[d] = expand_imm(opc2 << 4 | (hw2 & 0xf)); /* vmov immediate */
        return 1;
    }
    bool top = hw2 & 0x80; /* vcvtt; vcmpe; the signedness or rounding of vcvt */
    switch (opc2) {
    case 0: s[d] = top ? s[m] & ~SIGN : s[m]; return 1;  /* vmov register, vabs */
    case 1:
        if (top) {
            s[d] = fp_sqrt(c, s[m]);
            *cyc = 14;
        } else {
            s[d] = neg(s[m]);
        }
        return 1;
    case 2: /* vcvtb / vcvtt.f32.f16 */
        s[d] = half_to_single(c, top ? s[m] >> 16 : s[m] & 0xffff);
        return 1;
    case 3: { /* vcvtb / vcvtt.f16.f32 */
        uint32_t h = single_to_half(c, s[m]);
        s[d] = top ? (s[d] & 0xffff) | h << 16 : (s[d] & 0xffff0000u) | h;
        return 1;
    }
    case 4: case 5: {
        uint32_t b = 0;
        if (opc2 == 5) {
            if (hw2 & 0x2f)
                return 0;
        } else {
            b = s[m];
        }
        uint32_t nzcv = fp_compare(c, s[d], b, top);
        c->fpscr = (c->fpscr & 0x0fffffffu) | nzcv << 28;
        return 1;
    }
    case 6: /* FPv5 vrintr (FPSCR's mode) / vrintz, no IXC */
        if (!v8)
            return 0;
        s[d] = fp_round_int(c, s[m], top ? RM_ZERO : fpscr_rmode(c->fpscr), false);
        return 1;
    case 7: /* FPv5 vrintx: FPSCR's mode, IXC */
        if (!v8 || top)
            return 0;
        s[d] = fp_round_int(c, s[m], fpscr_rmode(c->fpscr), true);
        return 1;
    case 8: /* vcvt.f32.s32 (op bit 7 set) / .u32 */
        s[d] = fixed_to_fp(c, s[m], 32, 0, !top);
        return 1;
    case 12: case 13: /* vcvt{r}.u32 / .s32.f32: bit 7 set rounds toward zero */
        s[d] = fp_to_fixed(c, s[m], 32, 0, opc2 == 12, top ? RM_ZERO : fpscr_rmode(c->fpscr));
        return 1;
    case 10: case 11: case 14: case 15: {
        /* vcvt between a single and fixed point in place: hw1 bit 2 to
         * fixed, bit 0 unsigned; sx (hw2 bit 7): 32 bits, else 16 */
        unsigned size = top ? 32 : 16, imm5 = ((hw2 & 0xf) << 1) | ((hw2 >> 5) & 1);
        if (imm5 > size)
            return 0;
        unsigned fbits = size - imm5;
        bool is_unsigned = opc2 & 1;
        if (opc2 & 4) {
            uint32_t r = fp_to_fixed(c, s[d], size, fbits, is_unsigned, RM_ZERO);
            s[d] = size == 16 && !is_unsigned ? (uint32_t)(int32_t)(int16_t)r : r;
        } else {
            s[d] = fixed_to_fp(c, s[d], size, fbits, is_unsigned);
        }
        return 1;
    }
    default:
        return 0;
    }
}

/* FPv5's instructions in the hw1 = 1111 1110 space: vsel, vmaxnm /
 * vminnm, vrinta/n/p/m, vcvta/n/p/m. */
static int fpv5(struct np_cpu *cpu, struct fpctx *c, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    if (!(cpu->m.features & NP_MFEAT_V8M) || (hw2 & 0x110))
        return 0;
    unsigned d = ((hw2 >> 12) & 0xf) * 2 + ((hw1 >> 6) & 1);
    unsigned n = (hw1 & 0xf) * 2 + ((hw2 >> 7) & 1);
    unsigned m = (hw2 & 0xf) * 2 + ((hw2 >> 5) & 1);
    uint32_t *s = cpu->m.s;
    static const enum rmode directed[4] = {RM_TIES_AWAY, RM_NEAREST, RM_PLUS_INF, RM_MINUS_INF};
    *cyc = 1;
    if ((hw1 & 0xff80) == 0xfe00) {
        if (hw2 & 0x40)
            return 0;
        /* vsel: eq, vs, ge, gt of the APSR */
        static const unsigned cond[4] = {0x0, 0x6, 0xa, 0xc};
        s[d] = np_cond_pass(cond[(hw1 >> 4) & 3], cpu->cpsr) ? s[n] : s[m];
        return 1;
    }
    if ((hw1 & 0xffb0) == 0xfe80) {
        s[d] = fp_maxmin_num(c, s[n], s[m], !(hw2 & 0x40));
        return 1;
    }
    if ((hw1 & 0xffbc) == 0xfeb8 && (hw2 & 0xc0) == 0x40) {
        s[d] = fp_round_int(c, s[m], directed[hw1 & 3], false);
        return 1;
    }
    if ((hw1 & 0xffbc) == 0xfebc && (hw2 & 0x40)) {
        s[d] = fp_to_fixed(c, s[m], 32, 0, !(hw2 & 0x80), directed[hw1 & 3]);
        return 1;
    }
    return 0;
}

int np_m_fp(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc)
{
    /* coprocessors 10 and 11 only */
    if ((hw2 & 0x0e00) != 0x0a00)
        return 0;
    bool ls = (hw1 & 0xfe00) == 0xec00, ee = (hw1 & 0xff00) == 0xee00, fe = (hw1 & 0xff00) == 0xfe00;
    if (!ls && !ee && !fe)
        return 0;
    if (!(cpu->m.features & NP_MFEAT_FPU) || !fpu_enabled(cpu))
        return -NP_MF_NOCP;
    int f = np_m_fp_preserve(cpu);
    if (f)
        return -f;
    struct fpctx c = {cpu->m.fpscr, 0};
    int r;
    if (ls)
        r = load_store(cpu, hw1, hw2, cyc);
    else if (ee && (hw2 & 0x10))
        r = core_transfer(cpu, hw1, hw2, cyc);
    else if (ee)
        r = data_processing(cpu, &c, hw1, hw2, cyc);
    else
        r = fpv5(cpu, &c, hw1, hw2, cyc);
    if (r == 1) {
        if (ee && !(hw2 & 0x10))
            cpu->m.fpscr = c.fpscr | c.exc;
        else if (fe)
            cpu->m.fpscr |= c.exc;
        cpu->m.control |= 4; /* CONTROL.FPCA: the FP context is active */
    }
    return r;
}
