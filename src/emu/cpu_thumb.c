/* cpu_thumb.c - the Thumb-state decoder: the ARMv4T formats (and ARMv5's
 * blx and bkpt) into the same handlers as their ARM equivalents, with the
 * same cycles (ARM DDI 0210: a Thumb instruction costs what the ARM one
 * it stands for does). The bl/blx pair decodes at its first half as one
 * entry when its second half follows (NP_OP_TBL: told once, counted as
 * two); either half alone still runs (a jump into the second half, or a
 * run that stops between them). */
#include "cpu_internal.h"

static void undef(struct np_dec *e)
{
    e->op = NP_OP_UNDEF;
    e->cyc = 0;
}

static void dp(struct np_cpu *cpu, struct np_dec *e, unsigned opc, unsigned form, bool s, unsigned rd,
               unsigned rn, unsigned rm)
{
    e->op = (uint16_t)NP_OP_DP_INDEX(opc, form, s);
    e->rd = (uint8_t)rd;
    e->rn = (uint8_t)rn;
    e->rm = (uint8_t)rm;
    if (s)
        e->fl |= NP_FL_S;
    e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, 1);
}

static void dp_imm(struct np_cpu *cpu, struct np_dec *e, unsigned opc, bool s, unsigned rd, unsigned rn,
                   uint32_t imm)
{
    dp(cpu, e, opc, NP_FORM_IMM, s, rd, rn, 0);
    e->imm = imm;
    e->sh = 2; /* carry unchanged */
}

/* mov rd, rm, <shift> #amt, setting flags (format 1) */
static void shift_imm(struct np_cpu *cpu, struct np_dec *e, unsigned type, unsigned amt, unsigned rd,
                      unsigned rm)
{
    if (type == 0) {
        dp(cpu, e, NP_DP_MOV, amt ? NP_FORM_LSL : NP_FORM_REG, true, rd, 0, rm);
        e->sh = (uint8_t)amt;
    } else if (amt) {
        dp(cpu, e, NP_DP_MOV, type == 1 ? NP_FORM_LSR : NP_FORM_ASR, true, rd, 0, rm);
        e->sh = (uint8_t)amt;
    } else { /* lsr/asr #0 are #32 */
        dp(cpu, e, NP_DP_MOV, NP_FORM_GEN, true, rd, 0, rm);
        e->sh = (uint8_t)type;
        e->aux = 32;
    }
}

static void ls(struct np_cpu *cpu, uint32_t addr, struct np_dec *e, unsigned size, unsigned mode, unsigned rd,
               unsigned rn, unsigned rm, uint32_t imm)
{
    bool load = size != NP_LS_STR && size != NP_LS_STRB && size != NP_LS_STRH;
    e->op = (uint16_t)NP_OP_LS_INDEX(size, mode);
    e->rd = (uint8_t)rd;
    e->rn = (uint8_t)rn;
    e->rm = (uint8_t)rm;
    e->imm = imm;
    if (load)
        e->cyc = (uint16_t)np_cyc(cpu, 1, 1, 1,
                                  1 + np_load_use(cpu, addr, true, rd, size != NP_LS_LDR));
    else
        e->cyc = (uint16_t)np_cyc(cpu, 0, 2, 0, 1);
}

/* push/pop/ldmia/stmia: a block transfer of LIST on RN */
static void lsm(struct np_cpu *cpu, uint32_t addr, struct np_dec *e, bool load, bool down, bool wb, unsigned rn,
                uint32_t list)
{
    unsigned n = (unsigned)__builtin_popcount(list);
    if (!list)
        return undef(e); /* UNPREDICTABLE: undefined, as QEMU */
    bool pc = list & 0x8000;
    e->rn = (uint8_t)rn;
    e->imm = list;
    e->sh = (uint8_t)n;
    e->rd = wb;
    e->rs = load;
    e->aux = down ? 0u - 4 * n : 0;
    if (down)
        e->fl |= NP_FL_SUB;
    if (load) {
        unsigned last = 31 - (unsigned)__builtin_clz(list);
        unsigned core = pc ? n + 4 : (n == 1 ? 2 : n) + np_load_use(cpu, addr, true, last, false);
        e->cyc = (uint16_t)np_cyc(cpu, n + pc, 1 + pc, 1, core);
    } else {
        e->cyc = (uint16_t)np_cyc(cpu, n - 1, 2, 0, n == 1 ? 2 : n);
    }
    e->op = load ? (pc ? NP_OP_LDM_PC : NP_OP_LDM) : NP_OP_STM;
    if (cpu->model == NP_CPU_ARM946ES)
        e->fl |= NP_FL_INTERWORK; /* pop {pc} interworks on ARMv5 */
}

static void hi_reg(struct np_cpu *cpu, uint32_t addr, uint32_t hw, struct np_dec *e)
{
    unsigned op = (hw >> 8) & 3, rd = (hw & 7) | ((hw >> 4) & 8), rm = (hw >> 3) & 15;
    bool v5 = cpu->model == NP_CPU_ARM946ES;
    switch (op) {
    case 0: /* add rd, rm */
    case 2: /* mov rd, rm */
        if (rd == 15) {
            e->op = NP_OP_SLOW;
            e->sh = NP_SLOW_THUMB_HI;
            e->rd = 15;
            e->rm = (uint8_t)rm;
            e->rs = (uint8_t)op;
            e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, op == 0 ? 3 : 4);
            return;
        }
        if (op == 2 && rm == 15) { /* mov rd, pc: a constant; mov lr, pc links */
            e->op = rd == 14 ? NP_OP_LINK : NP_OP_MOVK;
            e->rd = (uint8_t)rd;
            e->imm = addr + 4;
            e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, 1);
            return;
        }
        dp(cpu, e, op == 0 ? NP_DP_ADD : NP_DP_MOV, NP_FORM_REG, false, rd, rd, rm);
        break;
    case 1: /* cmp rd, rm */
        dp(cpu, e, NP_DP_CMP, NP_FORM_REG, true, 0, rd, rm);
        break;
    default: /* bx / blx */
        if (hw & 0x80) {
            if (!v5)
                return undef(e);
            e->op = NP_OP_BLX_REG;
            e->aux = (addr + 2) | 1;
        } else {
            e->op = NP_OP_BX;
        }
        e->rm = (uint8_t)rm;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        if (rm == 15)
            e->cond |= NP_COND_PCREAD;
        return;
    }
    if (rd == 15 || rm == 15)
        e->cond |= NP_COND_PCREAD;
}

void np_decode_thumb(struct np_cpu *cpu, uint32_t addr, uint32_t hw, struct np_dec *e)
{
    static const uint8_t alu_ops[16] = {
        NP_DP_AND, NP_DP_EOR, NP_DP_MOV, NP_DP_MOV, NP_DP_MOV, NP_DP_ADC, NP_DP_SBC, NP_DP_MOV,
        NP_DP_TST, NP_DP_RSB, NP_DP_CMP, NP_DP_CMN, NP_DP_ORR, 0, NP_DP_BIC, NP_DP_MVN
    };
    static const uint8_t reg_sizes[8] = {
        NP_LS_STR, NP_LS_STRH, NP_LS_STRB, NP_LS_LDRSB, NP_LS_LDR, NP_LS_LDRH, NP_LS_LDRB, NP_LS_LDRSH
    };
    bool v5 = cpu->model == NP_CPU_ARM946ES;
    unsigned r0 = hw & 7, r3 = (hw >> 3) & 7, r6 = (hw >> 6) & 7, r8 = (hw >> 8) & 7;
    switch (hw >> 11) {
    case 0: case 1: case 2:
        return shift_imm(cpu, e, hw >> 11, (hw >> 6) & 31, r0, r3);
    case 3: /* add/sub rd, rn, rm / #imm3 */
        if (hw & 0x400)
            return dp_imm(cpu, e, (hw & 0x200) ? NP_DP_SUB : NP_DP_ADD, true, r0, r3, r6);
        return dp(cpu, e, (hw & 0x200) ? NP_DP_SUB : NP_DP_ADD, NP_FORM_REG, true, r0, r3, r6);
    case 4: return dp_imm(cpu, e, NP_DP_MOV, true, r8, 0, hw & 0xff);
    case 5: return dp_imm(cpu, e, NP_DP_CMP, true, 0, r8, hw & 0xff);
    case 6: return dp_imm(cpu, e, NP_DP_ADD, true, r8, r8, hw & 0xff);
    case 7: return dp_imm(cpu, e, NP_DP_SUB, true, r8, r8, hw & 0xff);
    case 8:
        if (hw & 0x400)
            return hi_reg(cpu, addr, hw, e);
        {
            unsigned op = (hw >> 6) & 15;
            if (op == 13) { /* mul rd, rm: rd = rm * rd, the multiplier rd */
                e->op = NP_OP_MUL;
                e->rd = (uint8_t)r0;
                e->rm = (uint8_t)r3;
                e->rs = (uint8_t)r0;
                e->fl |= NP_FL_S;
                if (cpu->model == NP_CPU_ARM7TDMI)
                    e->fl |= NP_FL_MCYC;
                e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, 4);
                return;
            }
            if (op == 9) /* neg: rsbs rd, rm, #0 */
                return dp_imm(cpu, e, NP_DP_RSB, true, r0, r3, 0);
            if (op == 2 || op == 3 || op == 4 || op == 7) { /* shifts by register */
                dp(cpu, e, NP_DP_MOV, NP_FORM_GEN, true, r0, 0, r0);
                e->rs = (uint8_t)r3;
                e->sh = (uint8_t)(op == 7 ? 3 : op - 2);
                e->fl |= NP_FL_SHREG;
                e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 1, 2);
                return;
            }
            unsigned opc = alu_ops[op];
            return dp(cpu, e, opc, NP_FORM_REG, true, r0, r0, r3);
        }
    case 9: /* ldr rd, [pc, #imm8 * 4] */
        ls(cpu, addr, e, NP_LS_LDR, NP_AM_IMM, r8, 15, 0, 0);
        e->op = NP_OP_LDRK;
        e->imm = ((addr + 4) & ~3u) + (hw & 0xff) * 4;
        return;
    case 10: case 11: /* register offset */
        return ls(cpu, addr, e, reg_sizes[(hw >> 9) & 7], NP_AM_REG, r0, r3, r6, 0);
    case 12: return ls(cpu, addr, e, NP_LS_STR, NP_AM_IMM, r0, r3, 0, ((hw >> 6) & 31) * 4);
    case 13: return ls(cpu, addr, e, NP_LS_LDR, NP_AM_IMM, r0, r3, 0, ((hw >> 6) & 31) * 4);
    case 14: return ls(cpu, addr, e, NP_LS_STRB, NP_AM_IMM, r0, r3, 0, (hw >> 6) & 31);
    case 15: return ls(cpu, addr, e, NP_LS_LDRB, NP_AM_IMM, r0, r3, 0, (hw >> 6) & 31);
    case 16: return ls(cpu, addr, e, NP_LS_STRH, NP_AM_IMM, r0, r3, 0, ((hw >> 6) & 31) * 2);
    case 17: return ls(cpu, addr, e, NP_LS_LDRH, NP_AM_IMM, r0, r3, 0, ((hw >> 6) & 31) * 2);
    case 18: return ls(cpu, addr, e, NP_LS_STR, NP_AM_IMM, r8, 13, 0, (hw & 0xff) * 4);
    case 19: return ls(cpu, addr, e, NP_LS_LDR, NP_AM_IMM, r8, 13, 0, (hw & 0xff) * 4);
    case 20: /* add rd, pc, #imm: a constant */
        e->op = NP_OP_MOVK;
        e->rd = (uint8_t)r8;
        e->imm = ((addr + 4) & ~3u) + (hw & 0xff) * 4;
        e->cyc = (uint16_t)np_cyc(cpu, 1, 0, 0, 1);
        return;
    case 21: return dp_imm(cpu, e, NP_DP_ADD, false, r8, 13, (hw & 0xff) * 4);
    case 22: case 23:
        if ((hw & 0xff00) == 0xb000)
            return dp_imm(cpu, e, (hw & 0x80) ? NP_DP_SUB : NP_DP_ADD, false, 13, 13, (hw & 0x7f) * 4);
        if ((hw & 0xfe00) == 0xb400) /* push */
            return lsm(cpu, addr, e, false, true, true, 13, (hw & 0xff) | ((hw & 0x100) << 6));
        if ((hw & 0xfe00) == 0xbc00) /* pop */
            return lsm(cpu, addr, e, true, false, true, 13, (hw & 0xff) | ((hw & 0x100) << 7));
        if ((hw & 0xff00) == 0xbe00) { /* bkpt: semihosting on either CPU */
            e->op = NP_OP_BKPT;
            e->imm = hw & 0xff;
            e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
            return;
        }
        return undef(e);
    case 24: /* stmia rb!, {list}: write-back, the original base stored */
        return lsm(cpu, addr, e, false, false, true, r8, hw & 0xff);
    case 25: /* ldmia rb!, {list}: no write-back when rb is loaded */
        return lsm(cpu, addr, e, true, false, !((hw >> r8) & 1), r8, hw & 0xff);
    case 26: case 27: {
        unsigned cond = (hw >> 8) & 15;
        if (cond == 14)
            return undef(e);
        if (cond == 15) {
            e->op = NP_OP_SWI;
            e->imm = hw & 0xff;
            e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
            return;
        }
        e->op = NP_OP_B;
        e->cond = (uint8_t)cond;
        e->imm = addr + 4 + (uint32_t)((int32_t)(int8_t)(hw & 0xff) * 2);
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        return;
    }
    case 28:
        e->op = NP_OP_B;
        e->imm = addr + 4 + (uint32_t)(((int32_t)(hw << 21) >> 21) * 2);
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        return;
    case 29: /* blx suffix alone */
        if (!v5)
            return undef(e);
        e->op = NP_OP_TBL_SUFFIX;
        e->rs = 1;
        e->imm = (hw & 0x7ff) * 2;
        e->aux = (addr + 2) | 1;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        return;
    case 30: { /* bl/blx prefix: with its suffix when it follows */
        uint32_t hi = addr + 4 + (uint32_t)((int32_t)(hw << 21) >> 9), next;
        unsigned c1 = np_cyc(cpu, 1, 0, 0, 1), c2 = np_cyc(cpu, 2, 1, 0, 3);
        if (np_fetch(cpu, addr + 2, 2, &next) && ((next >> 11) == 31 || (v5 && (next >> 11) == 29))) {
            bool blx = (next >> 11) == 29;
            e->op = NP_OP_TBL;
            e->rs = blx;
            e->imm = hi + (next & 0x7ff) * 2;
            if (blx)
                e->imm &= ~3u;
            e->aux = (addr + 4) | 1;
            e->cyc = (uint16_t)(c1 + c2);
            e->sh = (uint8_t)(c1 > 255 ? 255 : c1);
            return;
        }
        e->op = NP_OP_TBL_PREFIX;
        e->imm = hi;
        e->cyc = (uint16_t)c1;
        return;
    }
    default: /* bl suffix alone */
        e->op = NP_OP_TBL_SUFFIX;
        e->imm = (hw & 0x7ff) * 2;
        e->aux = (addr + 2) | 1;
        e->cyc = (uint16_t)np_cyc(cpu, 2, 1, 0, 3);
        return;
    }
}
