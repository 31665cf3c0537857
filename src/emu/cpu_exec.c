/* cpu_exec.c - np_cpu_run: the interpreter loop over decoded instructions.
 *
 * One function, threaded with computed gotos: each handler ends with the
 * dispatch of the next instruction (DISPATCH), so the host predicts each
 * handler's successor on its own, and the loop's state (PC, CPSR, the
 * counters) stays in host registers. Between instructions `pc` is the
 * address of the next one; r[15], cpsr and the counters in struct np_cpu
 * are written back (SYNC_OUT) before any hook or out-of-loop code runs and
 * when the run ends. Fast handlers never see the PC as an operand: the
 * decoder folds PC-relative values into constants, marks instructions
 * that read the PC (NP_COND_PCREAD: r[15] = address + 8, or + 4 in Thumb
 * state, is set before they run) and routes those that write it to their
 * own handlers or to np_exec_slow. Each entry holds the address the
 * dispatch jumps to: its handler's, or for conditional instructions and
 * those that read the PC, the code that comes first (set_run).
 *
 * Faults: an instruction that touches memory checks every address before
 * it changes anything; on a fault its counts are taken back (the run
 * stops at it, unexecuted). */
#include "cpu_internal.h"
#include "cpu_m.h"

#define DP_LABEL(opc, form, s) dp_##opc##_##form##_##s
#define DP_ALL(M, opc)                                                                                       \
    M(opc, IMM, 0) M(opc, IMM, 1) M(opc, REG, 0) M(opc, REG, 1) M(opc, LSL, 0) M(opc, LSL, 1)              \
    M(opc, LSR, 0) M(opc, LSR, 1) M(opc, ASR, 0) M(opc, ASR, 1) M(opc, GEN, 0) M(opc, GEN, 1)
#define DP_EACH(M)                                                                                           \
    DP_ALL(M, AND) DP_ALL(M, EOR) DP_ALL(M, SUB) DP_ALL(M, RSB) DP_ALL(M, ADD) DP_ALL(M, ADC)               \
    DP_ALL(M, SBC) DP_ALL(M, RSC) DP_ALL(M, TST) DP_ALL(M, TEQ) DP_ALL(M, CMP) DP_ALL(M, CMN)               \
    DP_ALL(M, ORR) DP_ALL(M, MOV) DP_ALL(M, BIC) DP_ALL(M, MVN)
#define DP_TABLE(opc, form, s)                                                                               \
    [NP_OP_DP_INDEX(NP_DP_##opc, NP_FORM_##form, s)] = &&DP_LABEL(opc, form, s),
#define DP_HANDLER(opc, form, s)                                                                             \
    DP_LABEL(opc, form, s) : {                                                                               \
        uint32_t b_, c_ = (cpsr >> 29) & 1;                                                                  \
        OPERAND_##form(b_, c_);                                                                              \
        uint32_t r_ = np_dp(NP_DP_##opc, R[e->rn], b_, c_, &cpsr, s);                                        \
        if (np_dp_writes_rd(NP_DP_##opc))                                                                    \
            R[e->rd] = r_;                                                                                   \
        NEXT();                                                                                              \
    }

/* ---- loads and stores ---- */
#define LS_LABEL(size, mode) ls_##size##_##mode
#define LS_ALL(M, size)                                                                                      \
    M(size, IMM) M(size, IMMPRE) M(size, IMMPOST) M(size, REG) M(size, REGPRE) M(size, REGPOST)
#define LS_EACH(M)                                                                                           \
    LS_ALL(M, LDR) LS_ALL(M, STR) LS_ALL(M, LDRB) LS_ALL(M, STRB) LS_ALL(M, LDRH) LS_ALL(M, STRH)          \
    LS_ALL(M, LDRSB) LS_ALL(M, LDRSH)
#define LS_TABLE(size, mode) [NP_OP_LS_INDEX(NP_LS_##size, NP_AM_##mode)] = &&LS_LABEL(size, mode),

/* The address and the written-back base of each addressing mode. */
#define AM_OFFSET() ((e->fl & NP_FL_SUB) ? 0u - (R[e->rm] << e->sh) : R[e->rm] << e->sh)
#define AM_IMM(a, w) (a = R[e->rn] + e->imm, w = 0)
#define AM_IMMPRE(a, w) (a = R[e->rn] + e->imm, w = a)
#define AM_IMMPOST(a, w) (a = R[e->rn], w = a + e->imm)
#define AM_REG(a, w) (a = R[e->rn] + AM_OFFSET(), w = 0)
#define AM_REGPRE(a, w) (a = R[e->rn] + AM_OFFSET(), w = a)
#define AM_REGPOST(a, w) (a = R[e->rn], w = a + AM_OFFSET())
#define AM_WB_IMM 0
#define AM_WB_IMMPRE 1
#define AM_WB_IMMPOST 1
#define AM_WB_REG 0
#define AM_WB_REGPRE 1
#define AM_WB_REGPOST 1

/* Loads: the value, then write-back, then the register (a loaded base wins,
 * as in QEMU). Word loads rotate an unaligned word (ARMv4/v5); halfwords
 * are read where they are (UNPREDICTABLE when unaligned: QEMU's choice). */
#define LOAD_LDR(a, v)                                                                                       \
    do {                                                                                                     \
        uint32_t w_ = (a) & ~3u;                                                                             \
        struct np_region *g_ = np_region_at(im, &e->hint, w_, 4);                                            \
        if (NP_UNLIKELY(!g_)) {                                                                              \
            fault = w_;                                                                                      \
            goto fault_read;                                                                                 \
        }                                                                                                    \
        v = np_ror(np_ld32(g_->data + (w_ - g_->base)), ((a) & 3) * 8);                                      \
    } while (0)
#define LOAD_SIZED(a, v, len, expr)                                                                          \
    do {                                                                                                     \
        struct np_region *g_ = np_region_at(im, &e->hint, a, len);                                           \
        if (NP_UNLIKELY(!g_)) {                                                                              \
            fault = a;                                                                                       \
            goto fault_read;                                                                                 \
        }                                                                                                    \
        const uint8_t *p_ = g_->data + ((a) - g_->base);                                                     \
        v = (expr);                                                                                          \
    } while (0)
#define LOAD_LDRB(a, v) LOAD_SIZED(a, v, 1, *p_)
#define LOAD_LDRH(a, v) LOAD_SIZED(a, v, 2, np_ld16(p_))
#define LOAD_LDRSB(a, v) LOAD_SIZED(a, v, 1, (uint32_t)(int32_t)(int8_t)*p_)
#define LOAD_LDRSH(a, v) LOAD_SIZED(a, v, 2, (uint32_t)(int32_t)(int16_t)np_ld16(p_))
#define STORE_SIZED(a, len, put)                                                                             \
    do {                                                                                                     \
        struct np_region *g_ = np_region_at(im, &e->hint, a, len);                                           \
        if (NP_UNLIKELY(!g_)) {                                                                              \
            fault = a;                                                                                       \
            goto fault_write;                                                                                \
        }                                                                                                    \
        uint32_t o_ = (a) - g_->base;                                                                        \
        uint8_t *p_ = g_->data + o_;                                                                         \
        put;                                                                                                 \
        np_stored(im, g_, o_, a, len);                                                                       \
    } while (0)
/* Word stores ignore the address's low bits (ARMv4/v5). */
#define STORE_STR(a, v) STORE_SIZED((a) & ~3u, 4, np_st32(p_, v))
#define STORE_STRB(a, v) STORE_SIZED(a, 1, *p_ = (uint8_t)(v))
#define STORE_STRH(a, v) STORE_SIZED(a, 2, np_st16(p_, v))
#define LS_KIND_LDR 0
#define LS_KIND_LDRB 0
#define LS_KIND_LDRH 0
#define LS_KIND_LDRSB 0
#define LS_KIND_LDRSH 0
#define LS_KIND_STR 1
#define LS_KIND_STRB 1
#define LS_KIND_STRH 1
#define LS_ACCESS_0(size, a, v) LOAD_##size(a, v)
#define LS_ACCESS_1(size, a, v) STORE_##size(a, v)
#define LS_ACCESS_(kind, size, a, v) LS_ACCESS_##kind(size, a, v)
#define LS_ACCESS(kind, size, a, v) LS_ACCESS_(kind, size, a, v)
#define LS_HANDLER(size, mode)                                                                               \
    LS_LABEL(size, mode) : {                                                                                 \
        uint32_t a_, w_, v_;                                                                                 \
        AM_##mode(a_, w_);                                                                                   \
        if (LS_KIND_##size) {                                                                                \
            v_ = R[e->rd];                                                                                   \
            LS_ACCESS(LS_KIND_##size, size, a_, v_);                                                         \
            if (AM_WB_##mode)                                                                                \
                R[e->rn] = w_;                                                                               \
        } else {                                                                                             \
            LS_ACCESS(LS_KIND_##size, size, a_, v_);                                                         \
            if (AM_WB_##mode)                                                                                \
                R[e->rn] = w_;                                                                               \
            R[e->rd] = v_;                                                                                   \
        }                                                                                                    \
        (void)w_;                                                                                            \
        NEXT();                                                                                              \
    }

/* ---- state ---- */
#define SET_T(t)                                                                                             \
    do {                                                                                                     \
        T = (t);                                                                                             \
        ilen = T ? 2 : 4;                                                                                    \
        toff = T ? 1 : 2;                                                                                    \
        estep = T ? sizeof(struct np_dec) : 2 * sizeof(struct np_dec);                                     \
    } while (0)
#define SYNC_OUT()                                                                                           \
    do {                                                                                                     \
        R[15] = pc;                                                                                          \
        cpu->cpsr = cpsr;                                                                                    \
        cpu->insns = INSNS;                                                                                  \
        cpu->cycles = cycles;                                                                                \
    } while (0)
#define LOAD_STATE()                                                                                         \
    do {                                                                                                     \
        pc = R[15];                                                                                          \
        cpsr = cpu->cpsr;                                                                                    \
        SET_T((cpsr >> 5) & 1);                                                                              \
    } while (0)
/* The instruction at pc. */
#define DISPATCH()                                                                                           \
    do {                                                                                                     \
        if (NP_UNLIKELY(!left))                                                                              \
            goto out_limit;                                                                                  \
        e = &cache[(pc >> 1) & NP_DEC_MASK];                                                                 \
        if (NP_UNLIKELY(e->tag != pc + toff))                                                                \
            goto miss;                                                                                       \
        RUN_E();                                                                                             \
    } while (0)
/* The next instruction in sequence: its entry follows E's (past the
 * cache's end, one of the two spare entries, which never match). */
#define NEXT()                                                                                               \
    do {                                                                                                     \
        pc += ilen;                                                                                          \
        if (NP_UNLIKELY(!left))                                                                              \
            goto out_limit;                                                                                  \
        e = (struct np_dec *)((char *)e + estep);                                                            \
        if (NP_UNLIKELY(e->tag != pc + toff))                                                                \
            goto miss_seq;                                                                                   \
        RUN_E();                                                                                             \
    } while (0)
/* A taken PC write of KIND: told to the branch hook. */
#define TAKEN(kind, reg, flags)                                                                              \
    do {                                                                                                     \
        br_kind = (kind);                                                                                    \
        br_reg = (reg);                                                                                      \
        br_flags = (flags);                                                                                  \
        goto taken;                                                                                          \
    } while (0)
#define DEC_ADDR(e) np_tag_addr((e)->tag)
/* Instructions run so far: the count at the start plus those run here. */
#define INSNS (end - left)

_Static_assert(NP_BRF_THUMB == 1 && NP_BRF_FROM_THUMB == 2 && NP_BRF_LINKED == 4 && NP_BRF_COND == 8,
               "the branch flags are built bit by bit");

enum np_cpu_stop np_cpu_run(struct np_cpu *cpu, uint64_t max_insns)
{
    if (np_cpu_is_m(cpu->model))
        return np_m_run(cpu, max_insns);
    static const void *const ops[NP_OP_COUNT] = {
        DP_EACH(DP_TABLE) LS_EACH(LS_TABLE)
        [NP_OP_UNDEF] = &&op_undef,
        [NP_OP_NOP] = &&op_nop,
        [NP_OP_MOVK] = &&op_movk,
        [NP_OP_LINK] = &&op_link,
        [NP_OP_LDRK] = &&op_ldrk,
        [NP_OP_MUL] = &&op_mul,
        [NP_OP_MULL] = &&op_mull,
        [NP_OP_SMULXY] = &&op_smulxy,
        [NP_OP_QADDSUB] = &&op_qaddsub,
        [NP_OP_CLZ] = &&op_clz,
        [NP_OP_LDM] = &&op_ldm,
        [NP_OP_STM] = &&op_stm,
        [NP_OP_LDM_PC] = &&op_ldm_pc,
        [NP_OP_SWP] = &&op_swp,
        [NP_OP_B] = &&op_b,
        [NP_OP_BL] = &&op_bl,
        [NP_OP_BLX_IMM] = &&op_blx_imm,
        [NP_OP_BX] = &&op_bx,
        [NP_OP_BLX_REG] = &&op_blx_reg,
        [NP_OP_TBL] = &&op_tbl,
        [NP_OP_TBL_PREFIX] = &&op_tbl_prefix,
        [NP_OP_TBL_SUFFIX] = &&op_tbl_suffix,
        [NP_OP_SWI] = &&op_swi,
        [NP_OP_BKPT] = &&op_bkpt,
        [NP_OP_SLOW] = &&op_slow,
    };
    struct np_cpu_impl *const im = cpu->impl;
    struct np_dec *const cache = im->cache;
    uint32_t *const R = cpu->r;
    void (*const branch_fn)(void *, struct np_cpu *, const struct np_branch *) = cpu->hooks.branch;
    void *const ctx = cpu->hooks.ctx;
    /* left: instructions still to run; the count is INSNS */
    uint64_t left = max_insns, cycles = cpu->cycles, end = cpu->insns + max_insns;
    const bool has_timer = cpu->hooks.timer;
    uint64_t timer_at = has_timer ? cpu->timer_at : UINT64_MAX;
    uint64_t link_at = im->link_at;
    uint32_t pc, cpsr, T, ilen, toff, fault = 0;
    size_t estep; /* bytes from an entry to the next instruction's */
    unsigned br_kind = 0, br_reg = 15, br_flags = 0;
    enum np_cpu_stop stop;
    struct np_dec *e = NULL;
    struct np_branch b;
    int psr_changed;
    uint32_t exc_vector = 0, exc_lr = 0, exc_from = 0;

    cpu->halt = false;
    LOAD_STATE();
    if (max_insns == 0)
        return NP_STOP_LIMIT;
    goto check_events;

    DP_EACH(DP_HANDLER)
    LS_EACH(LS_HANDLER)

op_nop:
    NEXT();

op_pcread:
    R[15] = DEC_ADDR(e) + (T ? 4 : 8);
    goto *ops[e->op];

op_cond:
    if (!np_cond_pass(e->cond, cpsr))
        goto cond_failed;
    goto *ops[e->op];

op_cond_pcread:
    if (!np_cond_pass(e->cond & 15, cpsr))
        goto cond_failed;
    R[15] = DEC_ADDR(e) + (T ? 4 : 8);
    goto *ops[e->op];

op_movk:
    R[e->rd] = e->imm;
    NEXT();

op_link:
    R[14] = e->imm;
    link_at = INSNS;
    NEXT();

op_ldrk: {
    uint32_t v;
    LOAD_SIZED(e->imm, v, 4, np_ld32(p_));
    R[e->rd] = v;
    NEXT();
}

op_mul: {
    uint32_t rs = R[e->rs], r = R[e->rm] * rs;
    if (e->fl & NP_FL_ACC)
        r += R[e->rn];
    if (e->fl & NP_FL_MCYC)
        cycles += np_mul_m(rs, true);
    if (e->fl & NP_FL_S)
        cpsr = (cpsr & 0x3fffffffu) | (r & 0x80000000u) | ((uint32_t)(r == 0) << 30);
    R[e->rd] = r;
    NEXT();
}

op_mull: {
    uint32_t rs = R[e->rs];
    uint64_t r;
    if (e->fl & NP_FL_SIGNED)
        r = (uint64_t)((int64_t)(int32_t)R[e->rm] * (int32_t)rs);
    else
        r = (uint64_t)R[e->rm] * rs;
    if (e->fl & NP_FL_ACC)
        r += ((uint64_t)R[e->rd] << 32) | R[e->rn];
    if (e->fl & NP_FL_MCYC)
        cycles += np_mul_m(rs, e->fl & NP_FL_SIGNED);
    if (e->fl & NP_FL_S)
        cpsr = (cpsr & 0x3fffffffu) | ((uint32_t)(r >> 32) & 0x80000000u) | ((uint32_t)(r == 0) << 30);
    R[e->rn] = (uint32_t)r;
    R[e->rd] = (uint32_t)(r >> 32);
    NEXT();
}

op_smulxy: {
    /* sh: 0 smla<x><y>, 1 smlaw<y> / smulw<y>, 2 smlal<x><y>, 3 smul<x><y>;
       aux bit 0: x (top half of rm), bit 1: y (top half of rs), bit 2:
       smulw<y> (no accumulate) */
    int32_t x = (int16_t)(R[e->rm] >> ((e->aux & 1) ? 16 : 0));
    int32_t y = (int16_t)(R[e->rs] >> ((e->aux & 2) ? 16 : 0));
    switch (e->sh) {
    case 0: {
        int32_t p = x * y, a = (int32_t)R[e->rn], r;
        if (__builtin_add_overflow(p, a, &r))
            cpsr |= NP_CPSR_Q;
        R[e->rd] = (uint32_t)r;
        break;
    }
    case 1: {
        int32_t p = (int32_t)(((int64_t)(int32_t)R[e->rm] * y) >> 16), r = p;
        if (!(e->aux & 4) && __builtin_add_overflow(p, (int32_t)R[e->rn], &r))
            cpsr |= NP_CPSR_Q;
        R[e->rd] = (uint32_t)r;
        break;
    }
    case 2: {
        uint64_t acc = ((uint64_t)R[e->rd] << 32) | R[e->rn];
        acc += (uint64_t)(int64_t)(x * y);
        R[e->rn] = (uint32_t)acc;
        R[e->rd] = (uint32_t)(acc >> 32);
        break;
    }
    default:
        R[e->rd] = (uint32_t)(x * y);
        break;
    }
    NEXT();
}

op_qaddsub: {
    /* rd = sat(rm +/- (double ? sat(2 * rn) : rn)) */
    int32_t m = (int32_t)R[e->rm], n = (int32_t)R[e->rn], r;
    if (e->sh & 2) {
        if (__builtin_add_overflow(n, n, &r)) {
            r = n < 0 ? INT32_MIN : INT32_MAX;
            cpsr |= NP_CPSR_Q;
        }
        n = r;
    }
    if ((e->sh & 1) ? __builtin_sub_overflow(m, n, &r) : __builtin_add_overflow(m, n, &r)) {
        r = r < 0 ? INT32_MAX : INT32_MIN;
        cpsr |= NP_CPSR_Q;
    }
    R[e->rd] = (uint32_t)r;
    NEXT();
}

op_clz: {
    uint32_t m = R[e->rm];
    R[e->rd] = m ? (uint32_t)__builtin_clz(m) : 32;
    NEXT();
}

op_ldm: {
    /* imm: the list; sh: its count; aux: lowest address - rn; rd: write
       back; fl & NP_FL_SUB: the base goes down */
    uint32_t base = R[e->rn], addr = (base + e->aux) & ~3u, n = e->sh;
    struct np_region *g = np_region_at(im, &e->hint, addr, 4 * n);
    if (NP_UNLIKELY(!g))
        goto op_slow;
    if (e->rd)
        R[e->rn] = (e->fl & NP_FL_SUB) ? base - 4 * n : base + 4 * n;
    const uint8_t *p = g->data + (addr - g->base);
    for (uint32_t list = e->imm; list; list &= list - 1, p += 4)
        R[(unsigned)__builtin_ctz(list)] = np_ld32(p);
    NEXT();
}

op_ldm_pc: {
    /* the common return: the PC is the last word */
    uint32_t base = R[e->rn], addr = (base + e->aux) & ~3u, n = e->sh;
    struct np_region *g = np_region_at(im, &e->hint, addr, 4 * n);
    if (NP_UNLIKELY(!g))
        goto op_slow;
    if (e->rd)
        R[e->rn] = (e->fl & NP_FL_SUB) ? base - 4 * n : base + 4 * n;
    const uint8_t *p = g->data + (addr - g->base);
    for (uint32_t list = e->imm & 0x7fff; list; list &= list - 1, p += 4)
        R[(unsigned)__builtin_ctz(list)] = np_ld32(p);
    uint32_t v = np_ld32(p);
    if (e->fl & NP_FL_INTERWORK) {
        SET_T(v & 1);
        cpsr = (cpsr & ~NP_CPSR_T) | (T << 5);
    }
    pc = v & (T ? ~1u : ~3u);
    TAKEN(NP_BR_LDM_PC, e->rn, 0);
}

op_stm: {
    uint32_t base = R[e->rn], addr = (base + e->aux) & ~3u, n = e->sh;
    struct np_region *g = np_region_at(im, &e->hint, addr, 4 * n);
    if (NP_UNLIKELY(!g))
        goto op_slow;
    uint32_t off = addr - g->base;
    uint8_t *p = g->data + off;
    for (uint32_t list = e->imm; list; list &= list - 1, p += 4)
        np_st32(p, R[(unsigned)__builtin_ctz(list)]);
    np_stored(im, g, off, addr, 4 * n);
    if (e->rd)
        R[e->rn] = (e->fl & NP_FL_SUB) ? base - 4 * n : base + 4 * n;
    NEXT();
}

op_swp: {
    uint32_t a = R[e->rn], v, w = (e->fl & NP_FL_BYTE) ? a : a & ~3u, len = (e->fl & NP_FL_BYTE) ? 1 : 4;
    struct np_region *g = np_region_at(im, &e->hint, w, len);
    if (NP_UNLIKELY(!g)) {
        fault = w;
        goto fault_read;
    }
    uint32_t off = w - g->base;
    uint8_t *p = g->data + off;
    if (e->fl & NP_FL_BYTE) {
        v = *p;
        *p = (uint8_t)R[e->rm];
    } else {
        /* as ldr: an unaligned word rotates (ARMv4/v5) */
        v = np_ror(np_ld32(p), (a & 3) * 8);
        np_st32(p, R[e->rm]);
    }
    np_stored(im, g, off, w, len);
    R[e->rd] = v;
    NEXT();
}

op_b:
    pc = e->imm;
    TAKEN(NP_BR_B, 15, 0);

op_bl:
    R[14] = e->aux;
    pc = e->imm;
    TAKEN(NP_BR_BL, 15, 0);

op_blx_imm:
    R[14] = e->aux;
    pc = e->imm;
    SET_T(T ^ 1);
    cpsr ^= NP_CPSR_T;
    TAKEN(NP_BR_BL, 15, 0);

op_bx: {
    uint32_t v = R[e->rm];
    SET_T(v & 1);
    cpsr = (cpsr & ~NP_CPSR_T) | (T << 5);
    pc = v & (T ? ~1u : ~3u);
    TAKEN(NP_BR_BX, e->rm, 0);
}

op_blx_reg: {
    uint32_t v = R[e->rm];
    R[14] = e->aux;
    SET_T(v & 1);
    cpsr = (cpsr & ~NP_CPSR_T) | (T << 5);
    pc = v & (T ? ~1u : ~3u);
    TAKEN(NP_BR_BLX_REG, e->rm, 0);
}

op_tbl:
    if (NP_UNLIKELY(!left)) {
        /* room for one instruction only: the first half alone */
        uint32_t hw = 0;
        np_fetch(cpu, pc, 2, &hw);
        cycles -= e->cyc - e->sh;
        R[14] = pc + 4 + (uint32_t)((int32_t)(hw << 21) >> 9);
        NEXT();
    }
    left--;
    R[14] = e->aux;
    pc = e->imm;
    if (e->rs) {
        SET_T(0);
        cpsr &= ~NP_CPSR_T;
    }
    TAKEN(NP_BR_BL, 15, 0);

op_tbl_prefix:
    R[14] = e->imm;
    NEXT();

op_tbl_suffix: {
    uint32_t target = R[14] + e->imm;
    R[14] = e->aux;
    if (e->rs) {
        SET_T(0);
        cpsr &= ~NP_CPSR_T;
        pc = target & ~3u;
    } else {
        pc = target & ~1u;
    }
    br_kind = NP_BR_BL;
    br_reg = 15;
    br_flags = 0;
    goto taken_suffix;
}

op_swi: {
    uint32_t addr = DEC_ADDR(e);
    pc = addr + ilen;
    if (cpu->hooks.svc) {
        SYNC_OUT();
        if (cpu->hooks.svc(ctx, cpu, e->imm))
            goto after_hook;
    }
    if (cpu->halt) {
        SYNC_OUT();
        stop = NP_STOP_HALT;
        goto out;
    }
    exc_vector = NP_VEC_SWI;
    exc_lr = pc;
    exc_from = addr;
    goto exception;
}

op_bkpt: {
    uint32_t addr = DEC_ADDR(e);
    pc = addr + ilen;
    if (cpu->hooks.bkpt) {
        SYNC_OUT();
        if (cpu->hooks.bkpt(ctx, cpu, e->imm))
            goto after_hook;
    }
    if (cpu->halt) {
        SYNC_OUT();
        stop = NP_STOP_HALT;
        goto out;
    }
    pc = addr;
    if (cpu->model != NP_CPU_ARM946ES)
        goto op_undef;
    exc_vector = NP_VEC_PABT;
    exc_lr = addr + 4;
    exc_from = addr;
    goto exception;
}

op_slow: {
    struct np_branch br;
    unsigned extra = 0;
    bool psr = false;
    R[15] = pc;
    cpu->cpsr = cpsr;
    enum np_slow_result res = np_exec_slow(cpu, e, &br, &extra, &psr);
    switch (res) {
    case NP_SLOW_NEXT:
        cycles += extra;
        cpsr = cpu->cpsr;
        SET_T((cpsr >> 5) & 1);
        pc += (e->tag & 1) ? 2 : 4;
        if (psr)
            goto check_events;
        DISPATCH();
    case NP_SLOW_JUMP:
        cycles += extra;
        cpsr = cpu->cpsr;
        SET_T((cpsr >> 5) & 1);
        pc = R[15];
        if (psr) {
            /* an exception return: the IRQ it unmasks comes after */
            br_kind = br.kind;
            br_reg = br.reg;
            br_flags = 0;
            goto taken_psr;
        }
        TAKEN(br.kind, br.reg, 0);
    case NP_SLOW_FAULT_READ:
        fault = cpu->fault_addr;
        goto fault_read;
    case NP_SLOW_FAULT_WRITE:
        fault = cpu->fault_addr;
        goto fault_write;
    default:
        goto op_undef;
    }
}

op_undef:
    /* nothing executed: the user sees the instruction */
    left++;
    cycles -= e->cyc;
    pc = DEC_ADDR(e);
    SYNC_OUT();
    stop = NP_STOP_UNDEFINED;
    goto out;

fault_read:
    stop = NP_STOP_READ;
    goto fault_common;
fault_write:
    stop = NP_STOP_WRITE;
fault_common:
    left++;
    cycles -= e->cyc;
    pc = DEC_ADDR(e);
    cpu->fault_addr = fault;
    SYNC_OUT();
    goto out;

cond_failed:
    cycles = cycles + im->fail_cycles - e->cyc; /* 64-bit: fail_cycles may be the smaller */
    NEXT();

miss_seq:
    e = &cache[(pc >> 1) & NP_DEC_MASK];
    if (e->tag == pc + toff)
        RUN_E();
miss:
    if (NP_UNLIKELY(!np_decode(cpu, pc, T, e))) {
        cpu->fault_addr = pc;
        SYNC_OUT();
        stop = NP_STOP_FETCH;
        goto out;
    }
    /* set_run: where the dispatch jumps to */
    if ((e->cond & 15) != NP_COND_AL)
        e->run = (e->cond & NP_COND_PCREAD) ? &&op_cond_pcread : &&op_cond;
    else
        e->run = (e->cond & NP_COND_PCREAD) ? &&op_pcread : ops[e->op];
    DISPATCH();

    /* ---- branches, hooks, exceptions ---- */
    {
    taken_psr:
        psr_changed = 1;
        goto taken_common;
    taken:
        psr_changed = 0;
    taken_common:
        if (branch_fn) {
            b.from = DEC_ADDR(e);
            b.to = pc;
            b.kind = (uint8_t)br_kind;
            b.reg = (uint8_t)br_reg;
            /* NP_BRF_THUMB is 1, NP_BRF_FROM_THUMB 2 (a Thumb tag's bit 0),
               NP_BRF_LINKED 4, NP_BRF_COND 8 */
            b.flags = (uint8_t)(br_flags | T | (e->tag & 1) << 1 | (uint32_t)(link_at + 1 == INSNS) << 2 |
                                (uint32_t)((e->cond & 15) != NP_COND_AL) << 3);
            b.vector = 0;
            SYNC_OUT();
            branch_fn(ctx, cpu, &b);
            goto after_hook;
        }
        if (psr_changed || NP_UNLIKELY(cycles >= timer_at))
            goto check_events;
        DISPATCH();
    taken_suffix:
        /* a bl suffix run alone: told from the first half's address */
        if (branch_fn) {
            b.from = DEC_ADDR(e) - 2;
            b.to = pc;
            b.kind = NP_BR_BL;
            b.reg = 15;
            b.flags = (uint8_t)((T ? NP_BRF_THUMB : 0) | NP_BRF_FROM_THUMB);
            b.vector = 0;
            SYNC_OUT();
            branch_fn(ctx, cpu, &b);
            goto after_hook;
        }
        if (NP_UNLIKELY(cycles >= timer_at))
            goto check_events;
        DISPATCH();

    exception:
        /* SWI or prefetch abort taken (the instruction's cycles are the
           entry's): told after the entry */
        {
            bool was_thumb = T;
            SYNC_OUT();
            np_exception_enter(cpu, exc_vector, exc_lr);
            LOAD_STATE();
            link_at = UINT64_MAX;
            if (branch_fn) {
                b.from = exc_from;
                b.to = pc;
                b.kind = NP_BR_EXCEPTION;
                b.reg = 15;
                b.flags = was_thumb ? NP_BRF_FROM_THUMB : 0;
                b.vector = (uint8_t)exc_vector;
                SYNC_OUT();
                branch_fn(ctx, cpu, &b);
                goto after_hook;
            }
            goto check_events;
        }

    after_hook:
        if (cpu->halt) {
            stop = NP_STOP_HALT;
            goto out;
        }
        if (has_timer)
            timer_at = cpu->timer_at;
        if (NP_UNLIKELY(cycles >= timer_at) || NP_UNLIKELY(cpu->irq_line))
            goto check_events;
        DISPATCH();

    check_events:
        if (NP_UNLIKELY(cycles >= timer_at)) {
            SYNC_OUT();
            cpu->hooks.timer(ctx, cpu);
            timer_at = cpu->timer_at;
            if (cpu->halt) {
                stop = NP_STOP_HALT;
                goto out;
            }
        }
        if (cpu->irq_line && !(cpsr & NP_CPSR_I)) {
            /* the IRQ comes before the next instruction, which it
               interrupts: LR_irq = its address + 4 */
            bool was_thumb = T;
            uint32_t from = pc;
            cycles += im->exc_cycles;
            SYNC_OUT();
            np_exception_enter(cpu, NP_VEC_IRQ, pc + 4);
            LOAD_STATE();
            link_at = UINT64_MAX;
            if (branch_fn) {
                b.from = from;
                b.to = pc;
                b.kind = NP_BR_EXCEPTION;
                b.reg = 15;
                b.flags = was_thumb ? NP_BRF_FROM_THUMB : 0;
                b.vector = NP_VEC_IRQ;
                SYNC_OUT();
                branch_fn(ctx, cpu, &b);
                goto after_hook;
            }
            goto check_events;
        }
        DISPATCH();
    }

out_limit:
    SYNC_OUT();
    stop = NP_STOP_LIMIT;
out:
    im->link_at = link_at;
    return stop;
}
