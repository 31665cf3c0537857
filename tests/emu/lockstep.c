/* lockstep.c - the interpreter against Unicorn, one instruction at a time
 * (lockstep.h). */
#define _GNU_SOURCE
#include "lockstep.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_m.h"

/* Unicorn stops when it reaches this address: one with no memory. */
#define UC_UNTIL 0xfffffff0u
/* QEMU's exception numbers (target/arm/cpu.h) as UC_HOOK_INTR tells them */
#define EXCP_UDEF 1
#define EXCP_SWI 2
#define EXCP_BKPT 7
#define EXCP_NOCP 17
#define EXCP_INVSTATE 18
#define EXCP_UNALIGNED 22

/* The whole CPSR is compared. Unicorn's ARM946E-S model keeps the bits
 * ARMv5TE does not have (J, GE, E, A, the IT bits) at zero as long as
 * nothing writes them, and nothing ARMv5TE runs does: no bit needs a
 * mask. */
#define CPSR_COMPARED 0xffffffffu

/* Cortex-M: the xPSR's bits compared, N Z C V Q and GE (where the
 * interpreter's cpsr has them too); its IT bits are compared with
 * cpu->m.itstate apart. The T bit (always 1 while nothing faults) and the
 * IPSR (0: no exception is ever taken in lockstep) are not state a
 * stream can change. */
#define XPSR_FLAGS 0xf80f0000u
#define XPSR_IT 0x0600fc00u
#define XPSR_T (1u << 24)
/* the FPSCR's fields on FPv4-SP/FPv5-SP: N Z C V, AHP DN FZ RMode and
 * the cumulative exception bits (IDC IXC UFC OFC DZC IOC); the rest is
 * RES0 there, and QEMU keeps A-profile fields (Len, Stride, QC) in it */
#define FPSCR_COMPARED 0xf7c0009fu

static const int uc_regs[18] = {
    UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,  UC_ARM_REG_R3,  UC_ARM_REG_R4,  UC_ARM_REG_R5,
    UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8,  UC_ARM_REG_R9,  UC_ARM_REG_R10, UC_ARM_REG_R11,
    UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR, UC_ARM_REG_PC,  UC_ARM_REG_CPSR, UC_ARM_REG_SPSR};

/* Cortex-M: index 16 is the xPSR (uc_regs' CPSR), 17 unused */
static const int uc_regs_m[18] = {
    UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,  UC_ARM_REG_R3,  UC_ARM_REG_R4,  UC_ARM_REG_R5,
    UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8,  UC_ARM_REG_R9,  UC_ARM_REG_R10, UC_ARM_REG_R11,
    UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR, UC_ARM_REG_PC,  UC_ARM_REG_XPSR, UC_ARM_REG_IPSR};

static bool is_m(const struct lockstep *ls)
{
    return np_cpu_is_m(ls->model);
}

/* ITSTATE (IT[7:0]) from the xPSR's split IT bits, and back */
static uint32_t xpsr_it(uint32_t xpsr)
{
    return ((xpsr >> 25) & 3) | ((xpsr >> 10) & 0x3f) << 2;
}

static uint32_t it_xpsr(uint32_t it)
{
    return (it & 3) << 25 | ((it >> 2) & 0x3f) << 10;
}

/* ---- the report ---- */

static void say(struct lockstep *ls, const char *fmt, ...)
{
    size_t n = strlen(ls->report);
    if (n + 1 >= sizeof ls->report)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ls->report + n, sizeof ls->report - n, fmt, ap);
    va_end(ap);
}

static const char *mode_name(uint32_t psr)
{
    switch (psr & 0x1f) {
    case NP_MODE_USR:
        return "usr";
    case NP_MODE_FIQ:
        return "fiq";
    case NP_MODE_IRQ:
        return "irq";
    case NP_MODE_SVC:
        return "svc";
    case NP_MODE_ABT:
        return "abt";
    case NP_MODE_UND:
        return "und";
    case NP_MODE_SYS:
        return "sys";
    default:
        return "bad-mode";
    }
}

/* "0x600000d3 nZCvq IFt svc" */
static const char *psr_text(uint32_t psr, char *buf, size_t size)
{
    snprintf(buf, size, "0x%08x %c%c%c%c%c %c%c%c %s", psr, psr & NP_CPSR_N ? 'N' : 'n', psr & NP_CPSR_Z ? 'Z' : 'z',
             psr & NP_CPSR_C ? 'C' : 'c', psr & NP_CPSR_V ? 'V' : 'v', psr & NP_CPSR_Q ? 'Q' : 'q',
             psr & NP_CPSR_I ? 'I' : 'i', psr & NP_CPSR_F ? 'F' : 'f', psr & NP_CPSR_T ? 'T' : 't', mode_name(psr));
    return buf;
}

/* Cortex-M: "0x610f0800 nZCvq ge=1111 it=0x08" from an xPSR value */
static const char *xpsr_text(uint32_t xpsr, char *buf, size_t size)
{
    snprintf(buf, size, "0x%08x %c%c%c%c%c ge=%u%u%u%u it=0x%02x", xpsr, xpsr & NP_CPSR_N ? 'N' : 'n',
             xpsr & NP_CPSR_Z ? 'Z' : 'z', xpsr & NP_CPSR_C ? 'C' : 'c', xpsr & NP_CPSR_V ? 'V' : 'v',
             xpsr & NP_CPSR_Q ? 'Q' : 'q', xpsr >> 19 & 1, xpsr >> 18 & 1, xpsr >> 17 & 1, xpsr >> 16 & 1,
             xpsr_it(xpsr));
    return buf;
}

/* the interpreter's xPSR (flags, GE, IT, T) as Unicorn reports it */
static uint32_t np_xpsr(const struct np_cpu *cpu)
{
    return (cpu->cpsr & XPSR_FLAGS) | it_xpsr(cpu->m.itstate) | XPSR_T;
}

static bool mode_has_spsr(uint32_t cpsr)
{
    uint32_t m = cpsr & 0x1f;
    return m != NP_MODE_USR && m != NP_MODE_SYS;
}

/* The instruction at PC as "0x00010400: e0910002  adds r0, r1, r2". */
static void say_insn(struct lockstep *ls, uint32_t pc, bool thumb, unsigned len)
{
    const uint8_t *p = np_cpu_mem(&ls->cpu, pc, len);
    if (!p) {
        say(ls, "  0x%08x: (outside memory)\n", pc);
        return;
    }
    char hex[16];
    if (thumb && len == 4)
        snprintf(hex, sizeof hex, "%04x %04x", p[0] | p[1] << 8, p[2] | p[3] << 8);
    else if (thumb)
        snprintf(hex, sizeof hex, "%04x", p[0] | p[1] << 8);
    else
        snprintf(hex, sizeof hex, "%08x", p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
    cs_insn *insn;
    size_t n = cs_disasm(thumb ? ls->cs_thumb : ls->cs_arm, p, len, pc, 1, &insn);
    if (n) {
        say(ls, "  0x%08x: %-10s %s %s (%s)\n", pc, hex, insn[0].mnemonic, insn[0].op_str, thumb ? "Thumb" : "ARM");
        cs_free(insn, n);
    } else {
        say(ls, "  0x%08x: %-10s (Capstone cannot decode it) (%s)\n", pc, hex, thumb ? "Thumb" : "ARM");
    }
}

/* The length of the instruction at PC: Thumb-2's 32-bit instructions
 * start with a halfword 0xe800 or above (the ARM CPUs' bl/blx halves
 * are two instructions of 2 bytes each). */
static unsigned insn_len(struct lockstep *ls, uint32_t pc, bool thumb)
{
    if (!thumb)
        return 4;
    const uint8_t *p = np_cpu_mem(&ls->cpu, pc, 2);
    return is_m(ls) && p && (p[1] & 0xf8) >= 0xe8 ? 4 : 2;
}

static void say_state(struct lockstep *ls, const char *title, const uint32_t *r, uint32_t cpsr, uint32_t spsr)
{
    char buf[64];
    say(ls, "  %s:\n", title);
    for (unsigned i = 0; i < 16; i++)
        say(ls, "    r%-2u %08x%s", i, r[i], i % 4 == 3 ? "\n" : "");
    if (is_m(ls)) { /* CPSR: the xPSR */
        say(ls, "    xpsr %s\n", xpsr_text(cpsr, buf, sizeof buf));
        return;
    }
    say(ls, "    cpsr %s", psr_text(cpsr, buf, sizeof buf));
    if (mode_has_spsr(cpsr))
        say(ls, "   spsr %s", psr_text(spsr, buf, sizeof buf));
    say(ls, "\n");
}

static void say_recent(struct lockstep *ls)
{
    unsigned n = ls->nrecent < LS_RECENT ? ls->nrecent : LS_RECENT;
    if (n < 2)
        return;
    say(ls, "  the instructions before it:\n");
    for (unsigned i = n; i > 1; i--) {
        unsigned k = (ls->nrecent - i) % LS_RECENT;
        say_insn(ls, ls->recent[k].pc, ls->recent[k].thumb, insn_len(ls, ls->recent[k].pc, ls->recent[k].thumb));
    }
}

/* ---- memory ---- */

static int region_of(const struct lockstep *ls, uint32_t addr, uint32_t len)
{
    for (unsigned i = 0; i < ls->nmem; i++)
        if (addr - ls->mem[i].base < ls->mem[i].size && len <= ls->mem[i].size - (addr - ls->mem[i].base))
            return (int)i;
    return -1;
}

/* Reports the bytes of [ADDR, ADDR+LEN) in region I that differ (the
 * first few), returns how many. */
static unsigned compare_bytes(struct lockstep *ls, unsigned i, uint32_t addr, uint32_t len, bool quiet)
{
    const uint8_t *a = ls->mem[i].np + (addr - ls->mem[i].base), *b = ls->mem[i].uc + (addr - ls->mem[i].base);
    if (!memcmp(a, b, len))
        return 0;
    unsigned bad = 0;
    for (uint32_t k = 0; k < len; k++) {
        if (a[k] == b[k])
            continue;
        if (!quiet && bad < 16)
            say(ls, "    memory 0x%08x: interpreter %02x, unicorn %02x\n", addr + k, a[k], b[k]);
        bad++;
    }
    if (!quiet && bad > 16)
        say(ls, "    ... %u bytes differ in all\n", bad);
    return bad;
}

static unsigned compare_all_memory(struct lockstep *ls)
{
    unsigned bad = 0;
    for (unsigned i = 0; i < ls->nmem && bad < 16; i++)
        bad += compare_bytes(ls, i, ls->mem[i].base, ls->mem[i].size, false);
    return bad;
}

int lockstep_compare_memory(struct lockstep *ls)
{
    ls->report[0] = 0;
    if (!compare_all_memory(ls))
        return 0;
    char head[] = "lockstep: memory differs\n";
    memmove(ls->report + sizeof head - 1, ls->report, strlen(ls->report) + 1);
    memcpy(ls->report, head, sizeof head - 1);
    return -1;
}

/* ---- access for the handlers ---- */

uint32_t lockstep_reg(struct lockstep *ls, enum lockstep_side side, unsigned r)
{
    if (side == LS_NP)
        return ls->cpu.r[r];
    uint32_t v = 0;
    uc_reg_read(ls->uc, (is_m(ls) ? uc_regs_m : uc_regs)[r], &v);
    return v;
}

void lockstep_set_reg(struct lockstep *ls, enum lockstep_side side, unsigned r, uint32_t value)
{
    if (side == LS_NP)
        ls->cpu.r[r] = value;
    else
        uc_reg_write(ls->uc, (is_m(ls) ? uc_regs_m : uc_regs)[r], &value);
}

uint8_t *lockstep_mem(struct lockstep *ls, enum lockstep_side side, uint32_t addr, uint32_t len)
{
    if (side == LS_NP)
        return np_cpu_mem(&ls->cpu, addr, len);
    int i = region_of(ls, addr, len);
    return i < 0 ? NULL : ls->mem[i].uc + (addr - ls->mem[i].base);
}

void lockstep_wrote(struct lockstep *ls, enum lockstep_side side, uint32_t addr, uint32_t len)
{
    /* Unicorn: no code is written from a handler (semihosting reads into
     * data), and its translations stay right for data. */
    if (side == LS_NP)
        np_cpu_wrote(&ls->cpu, addr, len);
}

void lockstep_halt(struct lockstep *ls, enum lockstep_side side)
{
    ls->halted[side] = true;
    if (side == LS_NP)
        np_cpu_halt(&ls->cpu);
    else
        uc_emu_stop(ls->uc);
}

/* ---- hooks ---- */

static int np_svc(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    struct lockstep *ls = ctx;
    (void)cpu;
    int handled = ls->call && ls->call(ls->call_ctx, ls, LS_NP, LS_SVC, imm);
    if (!handled)
        ls->unhandled[LS_NP] = true;
    return handled;
}

static int np_bkpt(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    struct lockstep *ls = ctx;
    (void)cpu;
    int handled = ls->call && ls->call(ls->call_ctx, ls, LS_NP, LS_BKPT, imm);
    if (!handled)
        ls->unhandled[LS_NP] = true;
    return handled;
}

static void np_branch_told(void *ctx, struct np_cpu *cpu, const struct np_branch *b)
{
    struct lockstep *ls = ctx;
    (void)cpu;
    ls->nbranches++;
    ls->branch = *b;
}

static void uc_on_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
    struct lockstep *ls = user;
    (void)uc, (void)type, (void)value;
    if (ls->nwrites < sizeof ls->writes / sizeof ls->writes[0]) {
        ls->writes[ls->nwrites].addr = (uint32_t)addr;
        ls->writes[ls->nwrites].size = (uint32_t)size;
        ls->nwrites++;
    } else {
        ls->writes_lost = true;
    }
}

static bool uc_on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
    struct lockstep *ls = user;
    (void)uc, (void)type, (void)size, (void)value;
    if (!ls->uc_faulted) {
        ls->uc_faulted = true;
        ls->uc_fault_addr = (uint32_t)addr;
    }
    return false;
}

/* svc: the PC is the next instruction's already; bkpt: still the bkpt's.
 * Neither has entered an exception mode (Unicorn leaves that to the hook). */
static void uc_on_intr(uc_engine *uc, uint32_t intno, void *user)
{
    struct lockstep *ls = user;
    uint32_t pc, cpsr;
    uc_reg_read(uc, UC_ARM_REG_PC, &pc);
    uc_reg_read(uc, UC_ARM_REG_CPSR, &cpsr);
    bool thumb = (cpsr & NP_CPSR_T) || is_m(ls);
    /* a Cortex-M's svc takes the SVCall exception (the interpreter's
     * np_m_step leaves it to the system, no hook): never a handler's */
    if ((intno != EXCP_SWI && intno != EXCP_BKPT) || (intno == EXCP_SWI && is_m(ls))) {
        ls->uc_exception = (int)intno;
        uc_emu_stop(uc);
        return;
    }
    uint32_t at = intno == EXCP_SWI ? pc - (thumb ? 2 : 4) : pc, insn = 0, imm;
    const uint8_t *p = lockstep_mem(ls, LS_UC, at, thumb ? 2 : 4);
    if (p)
        insn = thumb ? (uint32_t)(p[0] | p[1] << 8) : (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
    if (intno == EXCP_SWI)
        imm = thumb ? insn & 0xff : insn & 0xffffff;
    else
        imm = thumb ? insn & 0xff : ((insn >> 4) & 0xfff0) | (insn & 0xf);
    int handled = ls->call && ls->call(ls->call_ctx, ls, LS_UC, intno == EXCP_SWI ? LS_SVC : LS_BKPT, imm);
    if (!handled) {
        ls->unhandled[LS_UC] = true;
        uc_emu_stop(uc);
        return;
    }
    if (intno == EXCP_BKPT) { /* on to the next instruction, in the same state */
        uint32_t next = (pc + (thumb ? 2 : 4)) | thumb;
        uc_reg_write(uc, UC_ARM_REG_PC, &next);
    }
}

static void uc_on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user);

/* ---- set-up ---- */

int lockstep_init(struct lockstep *ls, enum np_cpu_model model, const struct lockstep_region *r, unsigned n,
                  lockstep_call_fn call, void *call_ctx)
{
    memset(ls, 0, sizeof *ls);
    ls->model = model;
    ls->call = call;
    ls->call_ctx = call_ctx;
    ls->full_every = 64;
    ls->uc_exception = -1;
    if (n > NP_CPU_MAX_REGIONS) {
        say(ls, "lockstep: too many regions\n");
        return -1;
    }
    struct np_mem_region np_mem[NP_CPU_MAX_REGIONS];
    for (unsigned i = 0; i < n; i++) {
        if ((r[i].base | r[i].size) & 0xfff || !r[i].size) {
            say(ls, "lockstep: region 0x%08x+0x%x is not whole pages\n", r[i].base, r[i].size);
            return -1;
        }
        ls->mem[i].base = r[i].base;
        ls->mem[i].size = r[i].size;
        ls->mem[i].np = aligned_alloc(4096, r[i].size);
        ls->mem[i].uc = aligned_alloc(4096, r[i].size);
        ls->nmem = i + 1;
        if (!ls->mem[i].np || !ls->mem[i].uc) {
            say(ls, "lockstep: out of memory\n");
            return -1;
        }
        memset(ls->mem[i].np, 0, r[i].size);
        memset(ls->mem[i].uc, 0, r[i].size);
        np_mem[i] = (struct np_mem_region){r[i].base, r[i].size, ls->mem[i].np};
    }
    struct np_cpu_timing timing = {0, 0};
    struct np_cpu_hooks hooks = {.ctx = ls, .svc = np_svc, .bkpt = np_bkpt};
    if (np_cpu_init(&ls->cpu, model, np_mem, n, &timing, &hooks)) {
        say(ls, "lockstep: np_cpu_init failed\n");
        return -1;
    }
    /* Cortex-M: UC_MODE_THUMB without UC_MODE_MCLASS. Unicorn 2.0.1's
     * cpu_arm_init replaces the model by the Cortex-M33 whenever
     * UC_MODE_MCLASS is set (uc_ctl_get_cpu_model says 11 after setting
     * UC_CPU_ARM_CORTEX_M0, and the "M0" runs sdiv, sadd8 and vadd);
     * the M models' own init sets the M profile, so the mode flag is not
     * needed. Unicorn starts them with the FPU enabled (CPACR full access
     * for CP10/CP11: vadd.f32 runs at reset on the M4 and M33). */
    bool m = is_m(ls);
    static const int uc_m_models[] = {UC_CPU_ARM_CORTEX_M0, UC_CPU_ARM_CORTEX_M3, UC_CPU_ARM_CORTEX_M4,
                                      UC_CPU_ARM_CORTEX_M33};
    uc_err err = uc_open(UC_ARCH_ARM, m ? UC_MODE_THUMB : UC_MODE_ARM, &ls->uc);
    if (!err)
        err = uc_ctl_set_cpu_model(ls->uc, m ? uc_m_models[model - NP_CPU_CORTEX_M0] : UC_CPU_ARM_946);
    for (unsigned i = 0; i < n && !err; i++)
        err = uc_mem_map_ptr(ls->uc, r[i].base, r[i].size, UC_PROT_ALL, ls->mem[i].uc);
    uc_hook h;
    if (!err)
        err = uc_hook_add(ls->uc, &h, UC_HOOK_MEM_WRITE, (void *)uc_on_write, ls, 1, 0);
    if (!err)
        err = uc_hook_add(ls->uc, &h, UC_HOOK_INTR, (void *)uc_on_intr, ls, 1, 0);
    if (!err)
        err = uc_hook_add(ls->uc, &h, UC_HOOK_CODE, (void *)uc_on_code, ls, 1, 0);
    if (!err)
        err = uc_hook_add(ls->uc, &h, UC_HOOK_MEM_UNMAPPED, (void *)uc_on_unmapped, ls, 1, 0);
    if (err) {
        say(ls, "lockstep: unicorn: %s\n", uc_strerror(err));
        return -1;
    }
    if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &ls->cs_arm) ||
        cs_open(CS_ARCH_ARM, m ? CS_MODE_THUMB | CS_MODE_MCLASS : CS_MODE_THUMB, &ls->cs_thumb)) {
        say(ls, "lockstep: capstone: cs_open failed\n");
        return -1;
    }
    uint32_t regs[16] = {0};
    if (m) {
        /* the FPU on, as Unicorn has it (the reset value of CPACR is 0:
         * FP instructions would fault with NOCP). Through the SCB's
         * CPACR (0xE000ED88), as firmware would; nothing when the
         * interpreter's system has no SCB yet. */
        ls->has_fp = ls->cpu.m.features & NP_MFEAT_FPU;
        if (ls->has_fp)
            (void)np_m_write(&ls->cpu, 0xe000ed88u, 4, true, 0x00f00000u);
        uint32_t s[32] = {0};
        lockstep_set_state(ls, regs, 0, 0);
        lockstep_set_fp(ls, s, 0);
        return 0;
    }
    /* both engines as np_cpu_init leaves the interpreter */
    lockstep_set_state(ls, regs, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F, 0);
    return 0;
}

void lockstep_free(struct lockstep *ls)
{
    if (ls->uc)
        uc_close(ls->uc);
    if (ls->cs_arm)
        cs_close(&ls->cs_arm);
    if (ls->cs_thumb)
        cs_close(&ls->cs_thumb);
    if (ls->cpu.impl)
        np_cpu_free(&ls->cpu);
    for (unsigned i = 0; i < ls->nmem; i++) {
        free(ls->mem[i].np);
        free(ls->mem[i].uc);
    }
    memset(ls, 0, sizeof *ls);
}

int lockstep_load(struct lockstep *ls, uint32_t addr, const void *bytes, uint32_t len)
{
    int i = region_of(ls, addr, len);
    if (i < 0)
        return -1;
    memcpy(ls->mem[i].np + (addr - ls->mem[i].base), bytes, len);
    memcpy(ls->mem[i].uc + (addr - ls->mem[i].base), bytes, len);
    np_cpu_wrote(&ls->cpu, addr, len);
    /* Unicorn keeps code translated from the old bytes otherwise, even
     * code it only looked ahead to */
    uc_ctl_remove_cache(ls->uc, (uint64_t)addr, (uint64_t)addr + len);
    return 0;
}

/* Cortex-M: thread mode, privileged, on the main stack (r13 = MSP), no
 * exception active; XPSR's flags, GE and IT bits. */
static void set_state_m(struct lockstep *ls, const uint32_t r[16], uint32_t xpsr)
{
    struct np_cpu *cpu = &ls->cpu;
    cpu->cpsr = NP_CPSR_T | NP_MODE_SYS | (xpsr & XPSR_FLAGS);
    cpu->m.itstate = xpsr_it(xpsr);
    /* CONTROL.FPCA set with an FPU: the FP context exists already, so
     * that the first FP instruction does not create one (which loads the
     * FPSCR from FPDSCR, and QEMU loads all of it) */
    uint32_t control = ls->has_fp ? 4 : 0, one = 1;
    cpu->m.control = control;
    cpu->m.ipsr = 0;
    /* FAULTMASK set: a fault escalates to HardFault at priority -1 and
     * locks the interpreter up, which stops it at the faulting
     * instruction with nothing changed, as Unicorn stops at it (its hook
     * takes the exception); taking it would stack a frame and read the
     * vector table. Set in Unicorn too where the CPU has FAULTMASK
     * (ARMv7-M on): mrs reads it alike. ARMv6-M has none to read. */
    cpu->m.faultmask = 1;
    if (ls->model != NP_CPU_CORTEX_M0)
        uc_reg_write(ls->uc, UC_ARM_REG_FAULTMASK, &one);
    memcpy(cpu->r, r, 15 * sizeof r[0]);
    cpu->m.msp = r[13];
    np_cpu_set_pc(cpu, r[15] | 1);

    /* Unicorn: writing UC_ARM_REG_XPSR leaves GE alone (2.0.1's
     * xpsr_write mask): GE and the flags go through XPSR_NZCVQG; the
     * IPSR written 0 (no exception) */
    uint32_t x = (xpsr & (XPSR_FLAGS | XPSR_IT)) | XPSR_T, f = xpsr & XPSR_FLAGS, zero = 0;
    uc_reg_write(ls->uc, UC_ARM_REG_XPSR, &x);
    uc_reg_write(ls->uc, UC_ARM_REG_XPSR_NZCVQG, &f);
    uc_reg_write(ls->uc, UC_ARM_REG_IPSR, &zero);
    /* Unicorn's M33 has the security extension and runs Secure: its FP
     * context is new also while CONTROL.SFPA (bit 3) is clear */
    uint32_t uc_control = control | (ls->has_fp && ls->model == NP_CPU_CORTEX_M33 ? 8 : 0);
    uc_reg_write(ls->uc, UC_ARM_REG_CONTROL, &uc_control);
    for (unsigned i = 0; i < 15; i++)
        uc_reg_write(ls->uc, uc_regs_m[i], &r[i]);
    uint32_t pc = r[15] | 1;
    uc_reg_write(ls->uc, UC_ARM_REG_PC, &pc);
}

void lockstep_set_fp(struct lockstep *ls, const uint32_t s[32], uint32_t fpscr)
{
    if (!ls->has_fp)
        return;
    memcpy(ls->cpu.m.s, s, sizeof ls->cpu.m.s);
    ls->cpu.m.fpscr = fpscr;
    for (unsigned i = 0; i < 32; i++)
        uc_reg_write(ls->uc, UC_ARM_REG_S0 + (int)i, &s[i]);
    uc_reg_write(ls->uc, UC_ARM_REG_FPSCR, &fpscr);
}

void lockstep_set_state(struct lockstep *ls, const uint32_t r[16], uint32_t cpsr, uint32_t spsr)
{
    struct np_cpu *cpu = &ls->cpu;
    if (is_m(ls)) {
        (void)spsr;
        set_state_m(ls, r, cpsr);
        return;
    }
    bool thumb = cpsr & NP_CPSR_T;
    if ((cpu->cpsr & NP_CPSR_MODE) != (cpsr & NP_CPSR_MODE))
        np_cpu_set_mode(cpu, (enum np_cpu_mode)(cpsr & NP_CPSR_MODE));
    cpu->cpsr = cpsr;
    cpu->spsr = mode_has_spsr(cpsr) ? spsr : 0;
    memcpy(cpu->r, r, 15 * sizeof r[0]);
    np_cpu_set_pc(cpu, (r[15] & ~1u) | thumb);

    /* Unicorn: the CPSR first (written raw: no banking), then the
     * registers of that mode */
    uc_reg_write(ls->uc, UC_ARM_REG_CPSR, &cpsr);
    for (unsigned i = 0; i < 15; i++)
        uc_reg_write(ls->uc, uc_regs[i], &r[i]);
    uc_reg_write(ls->uc, UC_ARM_REG_SPSR, &spsr);
    uint32_t pc = (r[15] & ~1u) | thumb;
    uc_reg_write(ls->uc, UC_ARM_REG_PC, &pc);
}

/* ---- the run ---- */

static bool is_bl_prefix(struct lockstep *ls, uint32_t pc)
{
    const uint8_t *p = np_cpu_mem(&ls->cpu, pc, 2);
    return p && (p[1] & 0xf8) == 0xf0;
}

static const char *np_stop_name(enum np_cpu_stop stop)
{
    static const char *names[] = {"the limit", "a halt", "an undefined instruction", "a fetch outside memory",
                                  "a read outside memory", "a write outside memory"};
    return (unsigned)stop < sizeof names / sizeof names[0] ? names[stop] : "?";
}

/* r0-r15, the CPSR and the SPSR against Unicorn's (UCR: uc_regs' order);
 * says what differs, returns how many differ. */
static unsigned compare_regs(struct lockstep *ls, const uint32_t *ucr)
{
    struct np_cpu *cpu = &ls->cpu;
    unsigned bad = 0;
    for (unsigned i = 0; i < 16; i++)
        if (cpu->r[i] != ucr[i]) {
            say(ls, "    r%-2u  interpreter %08x, unicorn %08x\n", i, cpu->r[i], ucr[i]);
            bad++;
        }
    char b1[64], b2[64];
    if (is_m(ls)) {
        /* the xPSR: flags and GE against cpsr, IT against m.itstate. In
         * a code hook Unicorn's IT bits are stale: QEMU keeps ITSTATE in
         * the translator and writes it back to the CPU only where an
         * exception may follow and at the end of a run (after "itte pl"
         * the hook reads 0). They are compared once Unicorn has returned;
         * IT blocks are compared through what their instructions do. */
        uint32_t ours = np_xpsr(cpu), mask = XPSR_FLAGS | (ls->uc_synced ? XPSR_IT : 0);
        if ((ours ^ ucr[16]) & mask) {
            say(ls, "    xpsr interpreter %s\n         unicorn     %s\n", xpsr_text(ours, b1, sizeof b1),
                xpsr_text(ucr[16], b2, sizeof b2));
            bad++;
        }
        if (!ls->has_fp)
            return bad;
        uint32_t fs[33];
        for (unsigned i = 0; i < 32; i++)
            uc_reg_read(ls->uc, UC_ARM_REG_S0 + (int)i, &fs[i]);
        uc_reg_read(ls->uc, UC_ARM_REG_FPSCR, &fs[32]);
        for (unsigned i = 0; i < 32; i++)
            if (cpu->m.s[i] != fs[i]) {
                say(ls, "    s%-2u  interpreter %08x, unicorn %08x\n", i, cpu->m.s[i], fs[i]);
                bad++;
            }
        if ((cpu->m.fpscr ^ fs[32]) & FPSCR_COMPARED) {
            say(ls, "    fpscr interpreter %08x, unicorn %08x\n", cpu->m.fpscr, fs[32]);
            bad++;
        }
        return bad;
    }
    if ((cpu->cpsr ^ ucr[16]) & CPSR_COMPARED) {
        say(ls, "    cpsr interpreter %s\n         unicorn     %s\n", psr_text(cpu->cpsr, b1, sizeof b1),
            psr_text(ucr[16], b2, sizeof b2));
        bad++;
    }
    if (mode_has_spsr(cpu->cpsr) && mode_has_spsr(ucr[16]) && cpu->spsr != ucr[17]) {
        say(ls, "    spsr interpreter %s\n         unicorn     %s\n", psr_text(cpu->spsr, b1, sizeof b1),
            psr_text(ucr[17], b2, sizeof b2));
        bad++;
    }
    return bad;
}

/* Whether condition COND holds for the flags of CPSR */
static bool cond_holds(uint32_t cpsr, unsigned cond)
{
    bool n = cpsr >> 31 & 1, z = cpsr >> 30 & 1, c = cpsr >> 29 & 1, v = cpsr >> 28 & 1, r;
    switch (cond >> 1) {
    case 0: r = z; break;
    case 1: r = c; break;
    case 2: r = n; break;
    case 3: r = v; break;
    case 4: r = c && !z; break;
    case 5: r = n == v; break;
    case 6: r = !z && n == v; break;
    default: return true;
    }
    return cond & 1 ? !r : r;
}

/* Before Unicorn runs the instruction at the interpreter's PC. */
static void before_insn(struct lockstep *ls)
{
    struct np_cpu *cpu = &ls->cpu;
    memcpy(ls->before, cpu->r, sizeof ls->before);
    ls->before_cpsr = is_m(ls) ? np_xpsr(cpu) : cpu->cpsr;
    ls->before_spsr = cpu->spsr;
    ls->recent[ls->nrecent % LS_RECENT].pc = cpu->r[15];
    ls->recent[ls->nrecent % LS_RECENT].thumb = cpu->cpsr & NP_CPSR_T;
    ls->nrecent++;
    ls->nwrites = 0;
    ls->writes_lost = false;
    ls->halted[0] = ls->halted[1] = false;
    ls->unhandled[0] = ls->unhandled[1] = false;
    ls->uc_exception = -1;
    ls->nbranches = 0;
    ls->pending = true;
}

/* Unicorn has run the pending instruction (ERR: how it ended): the
 * interpreter runs it, and the two are compared. Sets ls->result and
 * returns false when the run is over. */
static bool after_insn(struct lockstep *ls, uc_err err)
{
    struct np_cpu *cpu = &ls->cpu;
    uint32_t pc = ls->before[15];
    bool m = is_m(ls), thumb = m || (ls->before_cpsr & NP_CPSR_T);
    unsigned len = insn_len(ls, pc, thumb);
    ls->pending = false;

    /* the interpreter: one instruction; a bl/blx prefix and its suffix */
    uint64_t insns0 = cpu->insns, want = 1;
    cpu->hooks.branch = ls->check_branches ? np_branch_told : NULL;
    enum np_cpu_stop stop = np_cpu_run(cpu, 1);
    if (!m && thumb && stop == NP_STOP_LIMIT && is_bl_prefix(ls, pc) && (pc & 0x3ff) < 0x3fd) {
        /* QEMU runs the pair as one 32-bit instruction unless the prefix
         * ends a page (of 1 KiB before ARMv7) */
        len = 4;
        want = 2;
        if (cpu->insns - insns0 == 1)
            stop = np_cpu_run(cpu, 1);
    }
    uint32_t fall = pc + len; /* where the PC goes when nothing branches */
    if (m && stop == NP_STOP_LIMIT) {
        /* Unicorn 2.0.1 calls no code hook for an instruction of an IT
         * block whose condition fails (QEMU skips it before the hook):
         * its step takes the instructions after this one that the IT
         * block skips, up to the next one it runs */
        uint32_t uc_pc = 0;
        uc_reg_read(ls->uc, UC_ARM_REG_PC, &uc_pc);
        while (stop == NP_STOP_LIMIT && cpu->m.itstate && cpu->r[15] != uc_pc &&
               !cond_holds(cpu->cpsr, cpu->m.itstate >> 4)) {
            fall += insn_len(ls, cpu->r[15], true);
            want++;
            stop = np_cpu_run(cpu, 1);
        }
    }
    uint64_t ran = cpu->insns - insns0;
    ls->stop = stop;
    ls->steps++;
    ls->insns += ran;

    uint32_t ucr[18], *ucp[18];
    for (unsigned i = 0; i < 18; i++)
        ucp[i] = &ucr[i];
    uc_reg_read_batch(ls->uc, (int *)(m ? uc_regs_m : uc_regs), (void **)ucp, 18);

    ls->report[0] = 0;
    unsigned bad = 0;
    bool np_ran = stop == NP_STOP_LIMIT || stop == NP_STOP_HALT;
    bool uc_ran = err == UC_ERR_OK && ls->uc_exception < 0 && !ls->unhandled[LS_UC];
    bool both_stopped = false;
    if (!np_ran || !uc_ran || ls->unhandled[LS_NP]) {
        say(ls, "    the interpreter stopped with %s", np_stop_name(stop));
        if (stop >= NP_STOP_FETCH)
            say(ls, " at 0x%08x", cpu->fault_addr);
        say(ls, "%s; unicorn: %s", ls->unhandled[LS_NP] ? " (an svc/bkpt no handler took)" : "",
            uc_strerror(err));
        if (ls->uc_exception >= 0)
            say(ls, " (exception %d)", ls->uc_exception);
        if (ls->unhandled[LS_UC])
            say(ls, " (an svc/bkpt no handler took)");
        say(ls, "\n");
        bad++;
        /* a Cortex-M's usage faults reach the hook as QEMU's exceptions:
         * UDEF, NOCP, INVSTATE, UNALIGNED; the interpreter stops with an
         * undefined instruction for each */
        bool uc_usage = m && (ls->uc_exception == EXCP_UDEF || ls->uc_exception == EXCP_NOCP ||
                              ls->uc_exception == EXCP_INVSTATE || ls->uc_exception == EXCP_UNALIGNED);
        both_stopped = !np_ran && !uc_ran &&
                       ((stop == NP_STOP_UNDEFINED &&
                         (err == UC_ERR_INSN_INVALID || err == UC_ERR_EXCEPTION || uc_usage)) ||
                        (stop == NP_STOP_READ && err == UC_ERR_READ_UNMAPPED) ||
                        (stop == NP_STOP_WRITE && err == UC_ERR_WRITE_UNMAPPED) ||
                        (stop == NP_STOP_FETCH && err == UC_ERR_FETCH_UNMAPPED));
        if (both_stopped) {
            /* the same fault, and nothing changed: the instruction is
             * not run (Unicorn's state is the one before it too) */
            if (stop != NP_STOP_UNDEFINED && (!ls->uc_faulted || ls->uc_fault_addr != cpu->fault_addr)) {
                say(ls, "    fault address: interpreter 0x%08x, unicorn 0x%08x\n", cpu->fault_addr,
                    ls->uc_fault_addr);
                both_stopped = false;
            }
            if (ran) {
                say(ls, "    the interpreter counted the instruction it stopped at\n");
                both_stopped = false;
            }
            if (compare_regs(ls, ucr))
                both_stopped = false;
            for (unsigned i = 0; i < 16 && both_stopped; i++)
                if (ls->before[i] != cpu->r[i]) {
                    say(ls, "    r%u changed (0x%08x to 0x%08x)\n", i, ls->before[i], cpu->r[i]);
                    both_stopped = false;
                }
            if (compare_all_memory(ls))
                both_stopped = false;
        }
    } else {
        if (ran != want) {
            say(ls, "    instructions counted: %llu (expected %llu)\n", (unsigned long long)ran,
                (unsigned long long)want);
            bad++;
        }
        if ((stop == NP_STOP_HALT) != ls->halted[LS_UC] || ls->halted[LS_NP] != ls->halted[LS_UC]) {
            say(ls, "    halted: interpreter %s, unicorn %s\n", stop == NP_STOP_HALT ? "yes" : "no",
                ls->halted[LS_UC] ? "yes" : "no");
            bad++;
        }
        bad += compare_regs(ls, ucr);
        if (ls->check_branches) {
            const struct np_branch *b = &ls->branch;
            bool moved = ucr[15] != (m ? fall : pc + len), uc_thumb = m ? (ucr[16] & XPSR_T) != 0 : (ucr[16] & NP_CPSR_T) != 0;
            /* a bl/blx suffix run alone (its prefix ended a page) is told
             * from the prefix */
            const uint8_t *h = np_cpu_mem(cpu, pc, 2);
            uint32_t from = !m && thumb && h && (h[1] & 0xe8) == 0xe8 ? pc - 2 : pc;
            if (ls->nbranches > 1 || (moved && !ls->nbranches)) {
                say(ls, "    the branch hook was told %u times (the PC went from 0x%08x to 0x%08x)\n", ls->nbranches,
                    pc, ucr[15]);
                bad++;
            } else if (ls->nbranches &&
                       (b->from != from || b->to != ucr[15] || !(b->flags & NP_BRF_THUMB) != !uc_thumb ||
                        !(b->flags & NP_BRF_FROM_THUMB) != !thumb)) {
                say(ls, "    the branch hook was told from 0x%08x to 0x%08x, flags 0x%x (kind %u reg %u); "
                        "unicorn went from 0x%08x (%s) to 0x%08x (%s)\n",
                    b->from, b->to, b->flags, b->kind, b->reg, pc, thumb ? "Thumb" : "ARM", ucr[15],
                    uc_thumb ? "Thumb" : "ARM");
                bad++;
            }
        }
        for (unsigned i = 0; i < ls->nwrites; i++) {
            int k = region_of(ls, ls->writes[i].addr, ls->writes[i].size);
            if (k < 0) {
                say(ls, "    unicorn stored outside memory at 0x%08x\n", ls->writes[i].addr);
                bad++;
            } else {
                bad += compare_bytes(ls, (unsigned)k, ls->writes[i].addr, ls->writes[i].size, false);
            }
        }
        if (!bad && (ls->writes_lost || (ls->full_every && ls->steps % ls->full_every == 0)))
            bad += compare_all_memory(ls);
    }
    if (!bad) {
        if (!ls->halted[LS_NP])
            return true;
        ls->result = LS_HALTED;
        return false;
    }

    /* the report: what differs is in report[] already; put the rest
     * around it */
    char *diff = strdup(ls->report);
    ls->report[0] = 0;
    const char *uc_name = m ? np_cpu_model_name(ls->model) : "ARM946E-S";
    if (both_stopped)
        say(ls, "lockstep: %s and Unicorn (%s) both stopped at step %llu (instruction %llu):\n",
            np_cpu_model_name(ls->model), uc_name, (unsigned long long)ls->steps, (unsigned long long)ls->insns);
    else
        say(ls, "lockstep: %s and Unicorn (%s) differ after step %llu (instruction %llu):\n",
            np_cpu_model_name(ls->model), uc_name, (unsigned long long)ls->steps, (unsigned long long)ls->insns);
    say_insn(ls, pc, thumb, len);
    say_state(ls, "before it (both)", ls->before, ls->before_cpsr, ls->before_spsr);
    say(ls, "  %s:\n%s", both_stopped ? "how" : "differences after it", diff ? diff : "");
    free(diff);
    say_state(ls, "the interpreter after it", cpu->r, m ? np_xpsr(cpu) : cpu->cpsr, cpu->spsr);
    say_recent(ls);
    ls->result = both_stopped ? LS_STOPPED : LS_DIFFERENT;
    return false;
}

/* Before each instruction Unicorn runs. */
static void uc_on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    struct lockstep *ls = user;
    (void)addr, (void)size;
    if (ls->stopping)
        return;
    ls->uc_synced = false;
    if (ls->pending && !after_insn(ls, UC_ERR_OK)) {
        ls->stopping = true;
        uc_emu_stop(uc);
        return;
    }
    if (ls->steps >= ls->max_steps) {
        ls->stopping = true;
        ls->result = LS_LIMIT;
        uc_emu_stop(uc);
        return;
    }
    ls->uc_faulted = false;
    before_insn(ls);
}

enum lockstep_result lockstep_run(struct lockstep *ls, uint32_t until, uint64_t max_steps)
{
    uint32_t pc = ls->cpu.r[15], thumb = (ls->cpu.cpsr & NP_CPSR_T) ? 1 : 0;
    ls->pending = false;
    ls->stopping = false;
    ls->max_steps = ls->steps + max_steps;
    ls->result = LS_END;
    ls->report[0] = 0;
    ls->uc_faulted = false;
    uc_err err = uc_emu_start(ls->uc, pc | thumb, until, 0, 0);
    ls->uc_synced = true; /* Unicorn's whole state is written back now */
    if (ls->stopping)
        return ls->result;
    if (ls->pending) {
        /* the last instruction; a fetch from outside memory is the next
         * one's */
        bool fetch = err == UC_ERR_FETCH_UNMAPPED || err == UC_ERR_FETCH_PROT;
        if (!after_insn(ls, fetch ? UC_ERR_OK : err))
            return ls->result;
        if (fetch) {
            before_insn(ls);
            after_insn(ls, err);
            return ls->result;
        }
    } else if (err) {
        before_insn(ls);
        after_insn(ls, err);
        return ls->result;
    }
    if (ls->cpu.r[15] != until) {
        ls->report[0] = 0;
        say(ls, "lockstep: unicorn stopped at 0x%08x (%s) before the end 0x%08x\n", ls->cpu.r[15],
            uc_strerror(err), until);
        return LS_DIFFERENT;
    }
    return LS_END;
}
