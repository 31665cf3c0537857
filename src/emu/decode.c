/* decode.c - instructions decoded by Capstone (decode.h). */
#include "decode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <capstone/capstone.h>
#include "cpu.h"

static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*option)(csh, cs_opt_type, size_t);
    size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
    cs_insn *(*malloc)(csh);
    bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
    void (*free)(cs_insn *, size_t);
    cs_err (*close)(csh *);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
    void *h = dlopen(NP_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    *(void **)&cs.open = dlsym(h, "cs_open");
    *(void **)&cs.option = dlsym(h, "cs_option");
    *(void **)&cs.disasm = dlsym(h, "cs_disasm");
    *(void **)&cs.malloc = dlsym(h, "cs_malloc");
    *(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
    *(void **)&cs.free = dlsym(h, "cs_free");
    *(void **)&cs.close = dlsym(h, "cs_close");
    if (!cs.open || !cs.option || !cs.disasm || !cs.malloc || !cs.disasm_iter || !cs.free || !cs.close)
        cs.open = NULL;
}

static bool cs_ready(void)
{
    pthread_once(&cs_once, cs_load);
    return cs.open != NULL;
}

static int mode_of(bool thumb, bool mclass)
{
    return thumb ? CS_MODE_THUMB | (mclass ? CS_MODE_MCLASS : 0) : CS_MODE_ARM;
}

/* Capstone's register as r0-r15, 15 when none */
static uint8_t reg_number(unsigned r)
{
    switch (r) {
    case ARM_REG_SP: return 13;
    case ARM_REG_LR: return 14;
    case ARM_REG_PC: return 15;
    default: return r >= ARM_REG_R0 && r <= ARM_REG_R12 ? (uint8_t)(r - ARM_REG_R0) : 15;
    }
}

static void classify(const cs_insn *in, struct np_insn_flow *f)
{
    const cs_arm *a = &in->detail->arm;
    f->addr = (uint32_t)in->address;
    f->size = (uint8_t)in->size;
    f->reg = 15;
    f->cond = a->cc != ARM_CC_AL && a->cc != ARM_CC_INVALID;
    bool pc_dest = false, pc_in_list = false;
    for (int i = 0; i < a->op_count; i++)
        if (a->operands[i].type == ARM_OP_REG && a->operands[i].reg == ARM_REG_PC &&
            (a->operands[i].access & CS_AC_WRITE))
            *(i == 0 ? &pc_dest : &pc_in_list) = true;
    const cs_arm_op *op0 = a->op_count ? &a->operands[0] : NULL;
    switch (in->id) {
    case ARM_INS_BL:
    case ARM_INS_BLX:
        f->writes_pc = 1;
        if (op0 && op0->type == ARM_OP_IMM) {
            f->kind = NP_BR_BL;
            f->direct = 1;
            f->target = (uint32_t)op0->imm & ~1u;
        } else {
            f->kind = NP_BR_BLX_REG;
            f->reg = op0 ? reg_number(op0->reg) : 15;
        }
        return;
    case ARM_INS_BX:
        f->writes_pc = 1;
        f->kind = NP_BR_BX;
        f->reg = op0 ? reg_number(op0->reg) : 15;
        return;
    case ARM_INS_B:
    case ARM_INS_CBZ:
    case ARM_INS_CBNZ: {
        /* (the target is the last operand: cbz's register comes first) */
        const cs_arm_op *t = a->op_count ? &a->operands[a->op_count - 1] : NULL;
        f->writes_pc = 1;
        f->kind = NP_BR_B;
        f->cond |= in->id != ARM_INS_B;
        if (t && t->type == ARM_OP_IMM) {
            f->direct = 1;
            f->target = (uint32_t)t->imm & ~1u;
        }
        return;
    }
    case ARM_INS_TBB:
    case ARM_INS_TBH:
        f->writes_pc = 1;
        f->kind = NP_BR_B; /* a jump table: a jump */
        return;
    case ARM_INS_SVC:
    case ARM_INS_UDF:
        f->raises = 1;
        return;
    case ARM_INS_ISB:
    case ARM_INS_MSR:
    case ARM_INS_CPS:
    case ARM_INS_WFI:
    case ARM_INS_WFE:
    case ARM_INS_SEV:
    case ARM_INS_YIELD:
        f->ends_block = 1;
        return;
    case ARM_INS_BKPT:
        f->ends_block = f->bkpt = 1;
        return;
    default:
        break;
    }
    if (pc_in_list || (pc_dest && (in->id == ARM_INS_POP || in->id == ARM_INS_LDM))) {
        f->writes_pc = 1;
        f->kind = NP_BR_LDM_PC;
        f->reg = in->id == ARM_INS_POP ? 13 : op0 ? reg_number(op0->reg) : 15;
    } else if (pc_dest) {
        f->writes_pc = 1;
        const cs_arm_op *op1 = a->op_count > 1 ? &a->operands[1] : NULL;
        if (in->id == ARM_INS_LDR) {
            f->kind = NP_BR_LDR_PC;
            f->reg = op1 && op1->type == ARM_OP_MEM ? reg_number(op1->mem.base) : 15;
        } else {
            f->kind = in->id == ARM_INS_MOV && op1 && op1->type == ARM_OP_REG ? NP_BR_MOV_PC : NP_BR_DP_PC;
            f->reg = op1 && op1->type == ARM_OP_REG ? reg_number(op1->reg) : 15;
        }
    }
}

int np_decode_flow(const uint8_t *code, size_t len, uint32_t addr, bool thumb, bool mclass,
                   struct np_insn_flow *out, int max)
{
    if (!cs_ready())
        return -1;
    csh h;
    if (cs.open(CS_ARCH_ARM, mode_of(thumb, mclass), &h) != CS_ERR_OK)
        return -1;
    cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
    /* one at a time, up to the first PC write: a handle keeps an IT
     * block's state from one to the next */
    cs_insn *in = cs.malloc(h);
    uint64_t at = addr;
    int k = 0;
    while (in && k < max && cs.disasm_iter(h, &code, &len, &at, in)) {
        struct np_insn_flow *f = &out[k++];
        memset(f, 0, sizeof *f);
        classify(in, f);
        if (f->writes_pc || f->raises)
            break;
    }
    if (in)
        cs.free(in, 1);
    cs.close(&h);
    return in ? k : -1;
}

const char *np_decode_text(const uint8_t *code, size_t len, uint32_t addr, bool thumb, bool thumb2, char *buf,
                           size_t size)
{
    if (!size || !cs_ready())
        return NULL;
    csh h;
    const char *text = NULL;
    if (cs.open(CS_ARCH_ARM, mode_of(thumb, false), &h) != CS_ERR_OK)
        return NULL;
    cs_insn *in;
    if (cs.disasm(h, code, len, addr, 1, &in) == 1) {
        if (!thumb || thumb2 || in->size == 2 || (code[1] & 0xf8) == 0xf0) {
            snprintf(buf, size, "%s%s%s", in->mnemonic, in->op_str[0] ? " " : "", in->op_str);
            text = buf;
        }
        cs.free(in, 1);
    }
    cs.close(&h);
    return text;
}
