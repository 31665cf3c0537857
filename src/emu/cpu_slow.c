/* cpu_slow.c - the instructions the loop runs outside its handlers: data
 * processing that writes the PC, loads to the PC and the rarer addressing
 * forms, ldm/stm with the PC or ^ (and any whose range leaves one region),
 * ldrd/strd, the PSR transfers, CP15 and Thumb's hi-register writes of the
 * PC. Entered with r[15] = the instruction's address and cpsr current;
 * a fault or an undefined case returns before anything changed. */
#include "cpu_internal.h"

#define ARM946_MIDR 0x41059461u   /* ARM946E-S r1p1 (QEMU's value) */
#define ARM946_CTR 0x0f004006u    /* cache type (QEMU's value) */
#define ARM946_SCTLR 0x00000078u  /* the control register at reset */

/* Register N as an operand: the PC reads as the address + 8 (+ 4 Thumb). */
static uint32_t reg(struct np_cpu *cpu, const struct np_dec *e, unsigned n)
{
    if (n == 15)
        return cpu->r[15] + ((e->tag & 1) ? 4 : 8);
    return cpu->r[n];
}

static uint8_t *mem(struct np_cpu *cpu, struct np_dec *e, uint32_t addr, uint32_t len, struct np_region **rp)
{
    struct np_region *r = np_region_at(cpu->impl, &e->hint, addr, len);
    if (!r)
        return NULL;
    if (rp)
        *rp = r;
    return r->data + (addr - r->base);
}

static void store_done(struct np_cpu *cpu, struct np_region *r, uint8_t *p, uint32_t addr, uint32_t len)
{
    np_stored(cpu->impl, r, (uint32_t)(p - r->data), addr, len);
}

static bool privileged(const struct np_cpu *cpu) { return (cpu->cpsr & NP_CPSR_MODE) != NP_MODE_USR; }
static bool has_spsr(const struct np_cpu *cpu)
{
    uint32_t m = cpu->cpsr & NP_CPSR_MODE;
    return m != NP_MODE_USR && m != NP_MODE_SYS;
}

/* The PC after a load into it: ARMv5 interworks on bit 0, ARMv4 stays in
 * the state it is in. */
static void load_pc(struct np_cpu *cpu, uint32_t v)
{
    bool thumb = cpu->cpsr & NP_CPSR_T;
    if (cpu->model == NP_CPU_ARM946ES) {
        thumb = v & 1;
        cpu->cpsr = (cpu->cpsr & ~NP_CPSR_T) | (thumb ? NP_CPSR_T : 0);
    }
    cpu->r[15] = v & (thumb ? ~1u : ~3u);
}

/* An exception return: CPSR = SPSR, then the PC in the restored state. */
static void return_pc(struct np_cpu *cpu, uint32_t v)
{
    np_cpsr_write(cpu, cpu->spsr, 0xffffffffu);
    cpu->r[15] = v & ((cpu->cpsr & NP_CPSR_T) ? ~1u : ~3u);
}

static enum np_slow_result slow_dp(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br, bool *psr)
{
    uint32_t insn = 0, a, b, c = (cpu->cpsr >> 29) & 1, flags = cpu->cpsr;
    np_fetch(cpu, cpu->r[15], 4, &insn); /* in memory: a store to it clears E */
    unsigned opc = (insn >> 21) & 15, rn = (insn >> 16) & 15, rm = insn & 15;
    bool s = insn & (1u << 20), plain = false;
    if (insn & (1u << 25)) {
        b = e->imm;
        if (e->sh != 2)
            c = e->sh;
    } else if (insn & 0x10) {
        b = np_shift(reg(cpu, e, rm), (insn >> 5) & 3, reg(cpu, e, (insn >> 8) & 15) & 0xff, c, &c);
    } else {
        unsigned type = (insn >> 5) & 3, amt = (insn >> 7) & 31;
        plain = !type && !amt;
        if (type == 3 && !amt)
            type = 4;
        else if (!amt && type)
            amt = 32;
        b = np_shift(reg(cpu, e, rm), type, amt, c, &c);
    }
    a = reg(cpu, e, rn);
    if (s && !has_spsr(cpu))
        return NP_SLOW_UNDEF; /* UNPREDICTABLE: no SPSR to restore */
    uint32_t res = np_dp(opc, a, b, c, &flags, false);
    bool mov = opc == NP_DP_MOV || opc == NP_DP_MVN;
    br->reg = (uint8_t)(mov ? ((insn & (1u << 25)) ? 15 : rm) : rn);
    if (s) {
        return_pc(cpu, res);
        *psr = true;
        br->kind = NP_BR_EXC_RETURN;
    } else {
        cpu->r[15] = res & ~3u; /* no interworking before ARMv7 */
        br->kind = opc == NP_DP_MOV && plain ? NP_BR_MOV_PC : NP_BR_DP_PC;
    }
    return NP_SLOW_JUMP;
}

static enum np_slow_result slow_thumb_hi(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br)
{
    uint32_t v = reg(cpu, e, e->rm);
    if (e->rs == 0) /* add pc, rm */
        v += cpu->r[15] + 4;
    cpu->r[15] = v & ~1u;
    br->kind = NP_BR_MOV_PC;
    br->reg = e->rm;
    return NP_SLOW_JUMP;
}

static enum np_slow_result slow_ls(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br)
{
    uint32_t insn = 0, off, addr, v = 0;
    np_fetch(cpu, cpu->r[15], 4, &insn);
    unsigned rn = (insn >> 16) & 15, rd = (insn >> 12) & 15, len;
    bool pre = insn & (1u << 24), up = insn & (1u << 23), wb = (insn & (1u << 21)) || !pre,
         load = insn & (1u << 20), half = ((insn >> 25) & 7) == 0, sign = false;
    if (half) {
        unsigned sh = (insn >> 5) & 3;
        off = (insn & (1u << 22)) ? (((insn >> 4) & 0xf0) | (insn & 0xf)) : reg(cpu, e, insn & 15);
        len = sh == 2 ? 1 : 2;
        sign = sh != 1;
    } else {
        if (insn & (1u << 25)) {
            uint32_t c = (cpu->cpsr >> 29) & 1;
            unsigned type = (insn >> 5) & 3, amt = (insn >> 7) & 31;
            if (type == 3 && !amt)
                type = 4;
            else if (!amt && type)
                amt = 32;
            off = np_shift(reg(cpu, e, insn & 15), type, amt, c, &c);
        } else {
            off = insn & 0xfff;
        }
        len = (insn & (1u << 22)) ? 1 : 4;
    }
    uint32_t base = reg(cpu, e, rn), moved = up ? base + off : base - off;
    addr = pre ? moved : base;
    uint32_t at = len == 4 ? addr & ~3u : addr;
    struct np_region *r = NULL;
    uint8_t *p = mem(cpu, e, at, len, &r);
    if (!p) {
        cpu->fault_addr = at;
        return load ? NP_SLOW_FAULT_READ : NP_SLOW_FAULT_WRITE;
    }
    if (load) {
        if (len == 4)
            v = np_ror(np_ld32(p), (addr & 3) * 8);
        else if (len == 2)
            v = sign ? (uint32_t)(int32_t)(int16_t)np_ld16(p) : np_ld16(p);
        else
            v = sign ? (uint32_t)(int32_t)(int8_t)*p : *p;
        if (wb)
            cpu->r[rn] = moved;
        if (rd == 15) {
            load_pc(cpu, v);
            br->kind = NP_BR_LDR_PC;
            br->reg = (uint8_t)rn;
            return NP_SLOW_JUMP;
        }
        cpu->r[rd] = v;
        return NP_SLOW_NEXT;
    }
    v = reg(cpu, e, rd);
    if (len == 4)
        np_st32(p, v);
    else if (len == 2)
        np_st16(p, v);
    else
        *p = (uint8_t)v;
    store_done(cpu, r, p, at, len);
    if (wb)
        cpu->r[rn] = moved;
    return NP_SLOW_NEXT;
}

static enum np_slow_result slow_lsm(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br, bool *psr)
{
    uint32_t list = e->imm, n = (uint32_t)__builtin_popcount(list), base = cpu->r[e->rn];
    uint32_t addr = (base + e->aux) & ~3u, moved = (e->fl & NP_FL_SUB) ? base - 4 * n : base + 4 * n;
    bool load = e->op == NP_OP_LDM || e->op == NP_OP_LDM_PC || (e->op == NP_OP_SLOW && e->rs), wb = e->rd;
    bool user = e->fl & NP_FL_USER, pc = list & 0x8000;
    /* ^: the user bank, or an exception return with the PC: not from
       User mode (undefined, as QEMU), nor from System mode (no SPSR) */
    if (user && (!privileged(cpu) || (load && pc && !has_spsr(cpu)) || (load && !pc && wb)))
        return NP_SLOW_UNDEF;
    for (uint32_t i = 0; i < n; i++)
        if (!mem(cpu, e, addr + 4 * i, 4, NULL)) {
            cpu->fault_addr = addr + 4 * i;
            return load ? NP_SLOW_FAULT_READ : NP_SLOW_FAULT_WRITE;
        }
    if (!load) {
        uint32_t a = addr;
        for (uint32_t l = list; l; l &= l - 1, a += 4) {
            unsigned i = (unsigned)__builtin_ctz(l);
            struct np_region *r = NULL;
            uint8_t *p = mem(cpu, e, a, 4, &r);
            uint32_t v = i == 15 ? reg(cpu, e, 15) : user ? np_user_reg(cpu, i) : cpu->r[i];
            np_st32(p, v);
            store_done(cpu, r, p, a, 4);
        }
        if (wb)
            cpu->r[e->rn] = moved;
        return NP_SLOW_NEXT;
    }
    uint32_t pcv = 0, a = addr;
    if (wb)
        cpu->r[e->rn] = moved; /* a loaded base wins, as QEMU */
    for (uint32_t l = list; l; l &= l - 1, a += 4) {
        unsigned i = (unsigned)__builtin_ctz(l);
        uint32_t v = np_ld32(mem(cpu, e, a, 4, NULL));
        if (i == 15)
            pcv = v;
        else if (user && !pc)
            np_set_user_reg(cpu, i, v);
        else
            cpu->r[i] = v;
    }
    if (!pc)
        return NP_SLOW_NEXT;
    br->reg = e->rn;
    if (user) {
        return_pc(cpu, pcv);
        *psr = true;
        br->kind = NP_BR_EXC_RETURN;
    } else {
        load_pc(cpu, pcv);
        br->kind = NP_BR_LDM_PC;
    }
    return NP_SLOW_JUMP;
}

static enum np_slow_result slow_ldrd(struct np_cpu *cpu, struct np_dec *e)
{
    bool pre = e->aux & 1, wb = (e->aux & 2) || !pre, imm = e->aux & 4;
    uint32_t base = reg(cpu, e, e->rn), off = imm ? e->imm : reg(cpu, e, e->rm);
    if (!imm && (e->fl & NP_FL_SUB))
        off = 0u - off;
    uint32_t moved = base + off, addr = pre ? moved : base;
    struct np_region *r1 = NULL, *r2 = NULL;
    uint8_t *p1 = mem(cpu, e, addr, 4, &r1), *p2 = p1 ? mem(cpu, e, addr + 4, 4, &r2) : NULL;
    if (!p2) {
        cpu->fault_addr = p1 ? addr + 4 : addr;
        return e->rs ? NP_SLOW_FAULT_READ : NP_SLOW_FAULT_WRITE;
    }
    if (e->rs) {
        cpu->r[e->rd] = np_ld32(p1);
        cpu->r[e->rd + 1] = np_ld32(p2);
    } else {
        np_st32(p1, cpu->r[e->rd]);
        store_done(cpu, r1, p1, addr, 4);
        np_st32(p2, cpu->r[e->rd + 1]);
        store_done(cpu, r2, p2, addr + 4, 4);
    }
    /* write-back last, as QEMU */
    if (wb)
        cpu->r[e->rn] = moved;
    return NP_SLOW_NEXT;
}

static enum np_slow_result slow_msr(struct np_cpu *cpu, struct np_dec *e, bool *psr)
{
    uint32_t v = e->rs == 1 ? e->imm : reg(cpu, e, e->rm), mask = 0;
    uint32_t valid = 0xf00000ffu | (cpu->model == NP_CPU_ARM946ES ? NP_CPSR_Q : 0);
    for (unsigned i = 0; i < 4; i++)
        if (e->aux & (1u << i))
            mask |= 0xffu << (8 * i);
    mask &= valid;
    if (e->rn) { /* SPSR */
        if (!privileged(cpu))
            return NP_SLOW_UNDEF;
        if (has_spsr(cpu))
            cpu->spsr = (cpu->spsr & ~mask) | (v & mask);
        return NP_SLOW_NEXT;
    }
    mask &= ~NP_CPSR_T; /* msr does not change the state */
    if (!privileged(cpu))
        mask &= 0xf8000000u;
    np_cpsr_write(cpu, v, mask);
    *psr = true;
    return NP_SLOW_NEXT;
}

static enum np_slow_result slow_cp15(struct np_cpu *cpu, struct np_dec *e)
{
    if (!privileged(cpu))
        return NP_SLOW_UNDEF;
    if (!e->rs) /* mcr: accepted, ignored (no MPU, caches or TCM to set) */
        return NP_SLOW_NEXT;
    uint32_t v = 0;
    unsigned opc2 = e->aux & 7;
    if (e->rn == 0 && e->rm == 0)
        v = opc2 == 1 ? ARM946_CTR : opc2 == 0 ? ARM946_MIDR : 0;
    else if (e->rn == 1 && e->rm == 0 && opc2 == 0)
        v = ARM946_SCTLR;
    if (e->rd == 15) /* mrc to the PC sets the flags */
        cpu->cpsr = (cpu->cpsr & 0x0fffffffu) | (v & 0xf0000000u);
    else
        cpu->r[e->rd] = v;
    return NP_SLOW_NEXT;
}

enum np_slow_result np_exec_slow(struct np_cpu *cpu, struct np_dec *e, struct np_branch *br, unsigned *extra,
                                 bool *psr)
{
    *extra = 0;
    *psr = false;
    br->reg = 15;
    if (e->op == NP_OP_LDM || e->op == NP_OP_STM || e->op == NP_OP_LDM_PC)
        return slow_lsm(cpu, e, br, psr); /* a range leaving one region */
    switch (e->sh) {
    case NP_SLOW_DP: return slow_dp(cpu, e, br, psr);
    case NP_SLOW_LS: return slow_ls(cpu, e, br);
    case NP_SLOW_LSM: return slow_lsm(cpu, e, br, psr);
    case NP_SLOW_LDRD: return slow_ldrd(cpu, e);
    case NP_SLOW_MRS:
        if (e->rn && !privileged(cpu))
            return NP_SLOW_UNDEF;
        cpu->r[e->rd] = e->rn ? cpu->spsr : cpu->cpsr;
        return NP_SLOW_NEXT;
    case NP_SLOW_MSR: return slow_msr(cpu, e, psr);
    case NP_SLOW_CP15: return slow_cp15(cpu, e);
    case NP_SLOW_THUMB_HI: return slow_thumb_hi(cpu, e, br);
    default: return NP_SLOW_UNDEF;
    }
}
