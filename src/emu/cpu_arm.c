/* cpu_arm.c - the ARM-state decoder: one 32-bit instruction into a struct
 * np_dec (handler, operands, cycles), following the ARM Architecture
 * Reference Manual (DDI 0100) for ARMv4T (ARM7TDMI) and ARMv5TE
 * (ARM946E-S).
 *
 * Encodings the ARM ARM leaves UNPREDICTABLE decode as QEMU runs them
 * where that is cheap to follow (PC reads as the address + 8 everywhere,
 * empty ldm/stm lists and ldm/stm on the PC are undefined, a loaded base
 * wins over write-back); the rest (the PC as a multiply, swp, clz or
 * saturating operand, write-back to the PC) are decoded as undefined
 * instructions, so that a run stops at them rather than goes on from a
 * guess. */
#include "cpu_internal.h"

static void undef(struct np_dec *e)
{
    e->op = NP_OP_UNDEF;
    e->cyc = 0;
}

/* E's handler reads the PC as an operand: r[15] is set first. */
static void via_pcread(struct np_dec *e)
{
    e->cond |= NP_COND_PCREAD;
}

static void slow(struct np_dec *e, unsigned which)
{
    e->op = NP_OP_SLOW;
    e->sh = (uint8_t)which;
}

/* ---- data processing ---- */

static void decode_dp(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    unsigned opc = (insn >> 21) & 15, s = (insn >> 20) & 1, form;
    unsigned rn = (insn >> 16) & 15, rd = (insn >> 12) & 15, rm = insn & 15;
    bool uses_rn = opc != NP_DP_MOV && opc != NP_DP_MVN, writes = np_dp_writes_rd(opc);
    bool regshift = false, shifted = false, reads_pc;
    e->rd = (uint8_t)rd;
    e->rn = (uint8_t)rn;
    e->rm = (uint8_t)rm;
    if (insn & (1u << 25)) {
        unsigned rot = ((insn >> 8) & 15) * 2;
        e->imm = np_ror(insn & 0xff, rot);
        e->sh = rot ? (uint8_t)(e->imm >> 31) : 2;
        form = NP_FORM_IMM;
        reads_pc = uses_rn && rn == 15;
    } else if (insn & 0x10) {
        e->rs = (uint8_t)((insn >> 8) & 15);
        e->sh = (uint8_t)((insn >> 5) & 3);
        e->fl = NP_FL_SHREG;
        form = NP_FORM_GEN;
        regshift = shifted = true;
        reads_pc = (uses_rn && rn == 15) || rm == 15 || e->rs == 15;
    } else {
        unsigned type = (insn >> 5) & 3, amt = (insn >> 7) & 31;
        shifted = amt || type;
        if (type == 0) {
            form = amt ? NP_FORM_LSL : NP_FORM_REG;
            e->sh = (uint8_t)amt;
        } else if (amt && type == 1) {
            form = NP_FORM_LSR;
            e->sh = (uint8_t)amt;
        } else if (amt && type == 2) {
            form = NP_FORM_ASR;
            e->sh = (uint8_t)amt;
        } else {
            form = NP_FORM_GEN;
            e->sh = (uint8_t)(type == 3 && !amt ? 4 : type); /* ror #0 is rrx */
            e->aux = amt ? amt : 32;                           /* lsr/asr #0 are #32 */
        }
        reads_pc = (uses_rn && rn == 15) || rm == 15;
    }
    if (s)
        e->fl |= NP_FL_S;
    bool pcdest = writes && rd == 15;
    bool arith = opc == NP_DP_ADD || opc == NP_DP_SUB || opc == NP_DP_RSB || opc == NP_DP_ADC ||
                 opc == NP_DP_SBC;
    /* ARM7TDMI: 1S, +1I for a register shift, +1S+1N for a PC write;
       ARM9E-S: 1, 2 with a register shift, 3 for an arithmetic PC write
       without shift, else 4 */
    if (pcdest)
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, regshift, (arith && !shifted) ? 3 : 4);
    else
        e->cyc = (uint16_t)np_cyc(cpu, 1, 0, regshift, 1 + regshift);
    if (pcdest) {
        slow(e, NP_SLOW_DP);
        return;
    }
    e->op = (uint16_t)NP_OP_DP_INDEX(opc, form, s);
    if (!reads_pc)
        return;
    /* the PC-relative idioms fold to constants: add/sub rd, pc, #n,
       mov rd, pc; with rd = lr, the call idiom (NP_BRF_LINKED) */
    uint32_t pcv = addr + 8;
    bool konst = false;
    if (!s && form == NP_FORM_IMM && rn == 15 && (opc == NP_DP_ADD || opc == NP_DP_SUB)) {
        e->imm = opc == NP_DP_ADD ? pcv + e->imm : pcv - e->imm;
        konst = true;
    } else if (!s && form == NP_FORM_REG && opc == NP_DP_MOV && rm == 15) {
        e->imm = pcv;
        konst = true;
    }
    if (konst) {
        e->op = rd == 14 ? NP_OP_LINK : NP_OP_MOVK;
        return;
    }
    via_pcread(e);
}

/* ---- psr transfers, misc ---- */

static void decode_misc(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    bool v5 = cpu->model == NP_CPU_ARM946ES;
    unsigned rd = (insn >> 12) & 15, rm = insn & 15, rn = (insn >> 16) & 15, rs = (insn >> 8) & 15;
    e->rd = (uint8_t)rd;
    e->rm = (uint8_t)rm;
    e->rn = (uint8_t)rn;
    e->rs = (uint8_t)rs;
    if ((insn & 0x0fbf0fff) == 0x010f0000) { /* mrs */
        if (rd == 15)
            return undef(e);
        e->rn = (insn >> 22) & 1; /* SPSR */
        e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, 2);
        return slow(e, NP_SLOW_MRS);
    }
    if ((insn & 0x0fb0fff0) == 0x0120f000) { /* msr, register */
        e->rn = (insn >> 22) & 1; /* SPSR */
        e->rs = 0;                /* the value is rm's */
        e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, (insn & 0x10000) ? 3 : 1);
        slow(e, NP_SLOW_MSR);
        e->aux = (insn >> 16) & 15; /* fields */
        return;
    }
    if ((insn & 0x0ffffff0) == 0x012fff10) { /* bx */
        e->op = NP_OP_BX;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        if (rm == 15)
            via_pcread(e);
        return;
    }
    if (!v5)
        return undef(e);
    if ((insn & 0x0ffffff0) == 0x012fff30) { /* blx register */
        e->op = NP_OP_BLX_REG;
        e->aux = addr + 4;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        if (rm == 15)
            via_pcread(e);
        return;
    }
    if ((insn & 0x0fff0ff0) == 0x016f0f10) { /* clz */
        if (rd == 15 || rm == 15)
            return undef(e);
        e->op = NP_OP_CLZ;
        e->cyc = 1;
        return;
    }
    if ((insn & 0x0f900ff0) == 0x01000050) { /* qadd, qsub, qdadd, qdsub */
        if (rd == 15 || rm == 15 || rn == 15)
            return undef(e);
        e->op = NP_OP_QADDSUB;
        e->sh = (insn >> 21) & 3;
        e->cyc = 1;
        return;
    }
    if ((insn & 0x0ff000f0) == 0x01200070) { /* bkpt */
        e->op = NP_OP_BKPT;
        e->imm = ((insn >> 4) & 0xfff0) | (insn & 0xf);
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        return;
    }
    if ((insn & 0x0f900090) == 0x01000080) { /* the halfword multiplies */
        unsigned which = (insn >> 21) & 3;
        if (rn == 15 || rm == 15 || rs == 15 || (which != 3 && rd == 15 && !(which == 1 && (insn & 0x20))))
            return undef(e);
        e->op = NP_OP_SMULXY;
        e->rd = (uint8_t)rn; /* rd (rdhi) is bits 19:16 here, rn (rdlo) 15:12 */
        e->rn = (uint8_t)rd;
        e->sh = (uint8_t)which;
        if (which == 1)
            e->aux = ((insn >> 6) & 1) << 1 | ((insn >> 5) & 1) << 2;
        else
            e->aux = ((insn >> 5) & 1) | ((insn >> 6) & 1) << 1;
        e->cyc = which == 2 ? 2 : 1;
        if (which == 2 && rd == rn)
            return undef(e); /* rdlo = rdhi: UNPREDICTABLE */
        return;
    }
    undef(e);
}

/* ---- multiplies, swp, halfword and doubleword transfers ---- */

static void decode_mul(struct np_cpu *cpu, uint32_t insn, struct np_dec *e)
{
    bool arm7 = cpu->model == NP_CPU_ARM7TDMI, s = insn & (1u << 20), acc = insn & (1u << 21);
    unsigned rd = (insn >> 16) & 15, rn = (insn >> 12) & 15, rs = (insn >> 8) & 15, rm = insn & 15;
    e->rd = (uint8_t)rd;
    e->rn = (uint8_t)rn;
    e->rs = (uint8_t)rs;
    e->rm = (uint8_t)rm;
    e->fl = (uint8_t)((s ? NP_FL_S : 0) | (acc ? NP_FL_ACC : 0));
    if (arm7)
        e->fl |= NP_FL_MCYC; /* the ARM7TDMI adds m cycles by the multiplier */
    if (insn & (1u << 23)) { /* long */
        if (insn & (1u << 22))
            e->fl |= NP_FL_SIGNED;
        if (rd == 15 || rn == 15 || rs == 15 || rm == 15)
            return undef(e);
        e->op = NP_OP_MULL;
        /* ARM7TDMI: 1S+(m+1)I, +1I accumulating; ARM9E-S: 3, 5 with S */
        e->cyc = (uint16_t)np_cyc(cpu, 1, 0, acc ? 2 : 1, s ? 5 : 3);
        return;
    }
    if (insn & (1u << 22))
        return undef(e);
    if (rd == 15 || rs == 15 || rm == 15 || (acc && rn == 15))
        return undef(e);
    e->op = NP_OP_MUL;
    /* ARM7TDMI: 1S+mI, 1S+(m+1)I for mla; ARM9E-S: 2, 4 with S */
    e->cyc = (uint16_t)np_cyc(cpu, 1, 0, acc ? 1 : 0, s ? 4 : 2);
}

/* Fast handler of a word/byte/halfword transfer, or the slow path. */
static void set_ls(uint32_t addr, struct np_dec *e, unsigned size, bool load, bool pre, bool wb,
                   bool regoff, bool fast_shift)
{
    unsigned mode;
    if (!pre && !wb)
        wb = true; /* post-indexed: always written back */
    if (wb && e->rn == 15)
        return undef(e); /* UNPREDICTABLE */
    if (load && e->rd == 15)
        return slow(e, NP_SLOW_LS);
    if (regoff && !fast_shift)
        return slow(e, NP_SLOW_LS);
    if (regoff)
        mode = !pre ? NP_AM_REGPOST : wb ? NP_AM_REGPRE : NP_AM_REG;
    else
        mode = !pre ? NP_AM_IMMPOST : wb ? NP_AM_IMMPRE : NP_AM_IMM;
    e->op = (uint16_t)NP_OP_LS_INDEX(size, mode);
    if (!regoff && e->rn == 15 && size == NP_LS_LDR) {
        /* ldr rd, [pc, #n]: a constant address */
        e->op = NP_OP_LDRK;
        e->imm = addr + 8 + e->imm;
        return;
    }
    if (e->rn == 15 || (regoff && e->rm == 15) || (!load && e->rd == 15))
        via_pcread(e);
}

static unsigned ldr_cycles(struct np_cpu *cpu, uint32_t addr, struct np_dec *e, bool thumb, bool subword,
                           bool scaled)
{
    /* ARM7TDMI: 1S+1N+1I, +1S+1N loading the PC; ARM9E-S: 1 (+1 scaled
       offset, + the load-use interlock), 5 (6 scaled) loading the PC */
    if (e->rd == 15)
        return np_cyc(cpu, 2, 2, 1, scaled ? 6 : 5);
    return np_cyc(cpu, 1, 1, 1, 1 + scaled + np_load_use(cpu, addr, thumb, e->rd, subword));
}

static void decode_extra_ls(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    bool pre = insn & (1u << 24), up = insn & (1u << 23), imm = insn & (1u << 22), wb = insn & (1u << 21),
         load = insn & (1u << 20);
    unsigned sh = (insn >> 5) & 3, size;
    e->rn = (insn >> 16) & 15;
    e->rd = (insn >> 12) & 15;
    e->rm = insn & 15;
    if (!pre && wb)
        return undef(e); /* ldrht & co are ARMv6T2 */
    if (imm) {
        uint32_t off = ((insn >> 4) & 0xf0) | (insn & 0xf);
        e->imm = up ? off : 0u - off;
    } else if (!up) {
        e->fl |= NP_FL_SUB;
    }
    if (!load && sh >= 2) { /* ldrd / strd */
        if (cpu->model != NP_CPU_ARM946ES || (e->rd & 1) || e->rd == 14 || (wb && e->rn == 15) ||
            (!pre && e->rn == 15))
            return undef(e);
        e->rs = sh == 2; /* load */
        e->aux = (pre ? 1u : 0) | (wb ? 2u : 0) | (imm ? 4u : 0);
        /* ARM9E-S: 2 cycles (+1 when the next instruction uses the last word) */
        e->cyc = (uint16_t)np_cyc(cpu, 1, 1, 0,
                                  2 + (sh == 2 ? np_load_use(cpu, addr, false, e->rd + 1u, false) : 0));
        return slow(e, NP_SLOW_LDRD);
    }
    size = !load ? NP_LS_STRH : sh == 1 ? NP_LS_LDRH : sh == 2 ? NP_LS_LDRSB : NP_LS_LDRSH;
    if (load)
        e->cyc = (uint16_t)ldr_cycles(cpu, addr, e, false, true, false);
    else
        e->cyc = (uint16_t)np_cyc(cpu, 0, 2, 0, 1);
    set_ls(addr, e, size, load, pre, wb, !imm, true);
}

static void decode_ls(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    bool reg = insn & (1u << 25), pre = insn & (1u << 24), up = insn & (1u << 23), byte = insn & (1u << 22),
         wb = insn & (1u << 21), load = insn & (1u << 20), fast_shift = true, scaled = false;
    e->rn = (insn >> 16) & 15;
    e->rd = (insn >> 12) & 15;
    e->rm = insn & 15;
    if (!pre && wb)
        e->fl |= NP_FL_USER; /* ldrt/strt: no privilege checks here, post-indexed */
    if (!reg) {
        e->imm = up ? (insn & 0xfff) : 0u - (insn & 0xfff);
    } else {
        unsigned type = (insn >> 5) & 3, amt = (insn >> 7) & 31;
        if (!up)
            e->fl |= NP_FL_SUB;
        e->sh = (uint8_t)amt;
        e->aux = type | amt << 8; /* for the slow path */
        fast_shift = type == 0;
        scaled = amt || type;
    }
    unsigned size = load ? (byte ? NP_LS_LDRB : NP_LS_LDR) : (byte ? NP_LS_STRB : NP_LS_STR);
    if (load)
        e->cyc = (uint16_t)ldr_cycles(cpu, addr, e, false, byte, scaled);
    else /* ARM7TDMI: 2N; ARM9E-S: 1, 2 with a scaled offset */
        e->cyc = (uint16_t)np_cyc(cpu, 0, 2, 0, 1 + scaled);
    if (!pre && e->rn == 15)
        return undef(e);
    set_ls(addr, e, size, load, pre, wb, reg, fast_shift);
}

/* ---- block transfers ---- */

static void decode_lsm(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    bool pre = insn & (1u << 24), up = insn & (1u << 23), user = insn & (1u << 22), wb = insn & (1u << 21),
         load = insn & (1u << 20);
    uint32_t list = insn & 0xffff;
    unsigned n = (unsigned)__builtin_popcount(list);
    e->rn = (insn >> 16) & 15;
    /* an empty list and a PC base: UNPREDICTABLE, undefined in QEMU */
    if (!list || e->rn == 15)
        return undef(e);
    e->imm = list;
    e->sh = (uint8_t)n;
    e->rd = wb;
    e->rs = load;
    e->aux = up ? (pre ? 4 : 0) : (pre ? 0u - 4 * n : 0u - 4 * (n - 1));
    if (!up)
        e->fl |= NP_FL_SUB;
    if (user)
        e->fl |= NP_FL_USER;
    bool pc = list & 0x8000;
    if (load) {
        /* ARM7TDMI: nS+1N+1I, +1S+1N with the PC; ARM9E-S: n (2 for one
           register; +1 when the next instruction uses the last one), n+4
           with the PC */
        unsigned last = 31 - (unsigned)__builtin_clz(list);
        unsigned core = pc ? n + 4 : (n == 1 ? 2 : n) + np_load_use(cpu, addr, false, last, false);
        e->cyc = (uint16_t)np_cyc(cpu, n + pc, 1 + pc, 1, core);
    } else {
        /* ARM7TDMI: (n-1)S+2N; ARM9E-S: n, 2 for one register */
        e->cyc = (uint16_t)np_cyc(cpu, n - 1, 2, 0, n == 1 ? 2 : n);
    }
    if (user)
        return slow(e, NP_SLOW_LSM);
    e->op = load ? (pc ? NP_OP_LDM_PC : NP_OP_LDM) : NP_OP_STM;
    if (cpu->model == NP_CPU_ARM946ES)
        e->fl |= NP_FL_INTERWORK;
    if (!load && pc)
        via_pcread(e); /* stores the address + 8, as QEMU */
}

/* ---- coprocessors ---- */

static void decode_cp(struct np_cpu *cpu, uint32_t insn, struct np_dec *e)
{
    /* mcr/mrc p15 on the ARM946E-S; no other coprocessor exists */
    if (cpu->model != NP_CPU_ARM946ES || (insn & 0x0f000010) != 0x0e000010 || ((insn >> 8) & 15) != 15)
        return undef(e);
    e->rd = (insn >> 12) & 15;
    e->rn = (insn >> 16) & 15; /* CRn */
    e->rm = insn & 15;         /* CRm */
    e->rs = (insn >> 20) & 1;  /* mrc */
    e->aux = ((insn >> 21) & 7) << 4 | ((insn >> 5) & 7); /* opcode_1, opcode_2 */
    e->cyc = (uint16_t)(e->rs ? 3 : 2);
    slow(e, NP_SLOW_CP15);
}

void np_decode_arm(struct np_cpu *cpu, uint32_t addr, uint32_t insn, struct np_dec *e)
{
    bool v5 = cpu->model == NP_CPU_ARM946ES;
    unsigned cond = insn >> 28;
    e->cond = (uint8_t)cond;
    if (cond == 0xf) {
        /* ARMv4: UNPREDICTABLE, undefined (QEMU); ARMv5: unconditional */
        e->cond = NP_COND_AL;
        if (!v5)
            return undef(e);
        if ((insn & 0x0e000000) == 0x0a000000) { /* blx <imm> */
            int32_t off = (int32_t)(insn << 8) >> 6;
            e->op = NP_OP_BLX_IMM;
            e->imm = addr + 8 + (uint32_t)off + ((insn >> 23) & 2);
            e->aux = addr + 4;
            e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
            return;
        }
        if ((insn & 0x0d70f000) == 0x0550f000) { /* pld: no cache here */
            e->op = NP_OP_NOP;
            e->cyc = 1;
            return;
        }
        return undef(e);
    }
    switch ((insn >> 25) & 7) {
    case 0:
        if ((insn & 0x0fc000f0) == 0x00000090 || (insn & 0x0f8000f0) == 0x00800090)
            return decode_mul(cpu, insn, e);
        if ((insn & 0x0fb00ff0) == 0x01000090) { /* swp, swpb */
            e->rn = (insn >> 16) & 15;
            e->rd = (insn >> 12) & 15;
            e->rm = insn & 15;
            if (e->rn == 15 || e->rd == 15 || e->rm == 15)
                return undef(e);
            e->op = NP_OP_SWP;
            if (insn & (1u << 22))
                e->fl = NP_FL_BYTE;
            e->cyc = (uint16_t)np_cyc(cpu, 1, 2, 1, 2);
            return;
        }
        if ((insn & 0x90) == 0x90) {
            if (insn & 0x60)
                return decode_extra_ls(cpu, addr, insn, e);
            return undef(e);
        }
        if ((insn & 0x01900000) == 0x01000000) /* tst/teq/cmp/cmn without S */
            return decode_misc(cpu, addr, insn, e);
        return decode_dp(cpu, addr, insn, e);
    case 1:
        if ((insn & 0x01900000) == 0x01000000) {
            if ((insn & 0x0fb0f000) == 0x0320f000) { /* msr, immediate */
                e->rn = (insn >> 22) & 1; /* SPSR */
                e->imm = np_ror(insn & 0xff, ((insn >> 8) & 15) * 2);
                e->rs = 1; /* the value is imm */
                e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, (insn & 0x10000) ? 3 : 1);
                slow(e, NP_SLOW_MSR);
                e->aux = (insn >> 16) & 15; /* fields */
                return;
            }
            return undef(e);
        }
        return decode_dp(cpu, addr, insn, e);
    case 2:
        return decode_ls(cpu, addr, insn, e);
    case 3:
        if (insn & 0x10)
            return undef(e); /* media instructions: ARMv6 */
        return decode_ls(cpu, addr, insn, e);
    case 4:
        return decode_lsm(cpu, addr, insn, e);
    case 5: {
        int32_t off = (int32_t)(insn << 8) >> 6;
        e->imm = addr + 8 + (uint32_t)off;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        if (insn & (1u << 24)) {
            e->op = NP_OP_BL;
            e->aux = addr + 4;
        } else {
            e->op = NP_OP_B;
        }
        return;
    }
    case 6:
        return undef(e); /* ldc/stc: no coprocessor takes them */
    default:
        if (insn & (1u << 24)) {
            e->op = NP_OP_SWI;
            e->imm = insn & 0xffffff;
            e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
            return;
        }
        return decode_cp(cpu, insn, e);
    }
}
