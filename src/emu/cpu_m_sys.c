/* cpu_m_sys.c - the Cortex-M system (cpu_m.h): memory and devices, the
 * exception model, NVIC, SCB, SysTick, DWT, the special registers, and
 * np_m_run.
 *
 * Exceptions are taken between instructions, as the ARM ARM's
 * pseudocode has them (ExceptionEntry, ExceptionReturn): the highest
 * priority pending one whose group priority is above the execution
 * priority preempts; a return that finds another pending takes it at
 * once (tail-chaining: the unstacking and stacking the hardware skips
 * leave memory and registers as they would be, only the cycles differ).
 * Late arrival: SysTick coming due while a frame is stacked takes the
 * place of the exception stacking it (take); a return that finds an
 * exception to take chains to it in 6 cycles on the M3 and M4.
 * The FP context (CONTROL.FPCA set) is stacked lazily as FPCCR.LSPEN asks
 * (its reset value): its room reserved, FPCCR.LSPACT and FPCAR set, and
 * s0-s15 and FPSCR written only when the handler runs its first FP
 * instruction (np_m_fp_preserve); a return with LSPACT still set restores
 * nothing. With LSPEN clear, at once. Either way writing or reading the 17
 * words costs 17 cycles, the difference between the 12-cycle entry and
 * the 29 of one that stacks the FP context (ARM AN298).
 *
 * SysTick counts the core's cycles whichever clock CSR.CLKSOURCE picks;
 * DWT.CYCCNT counts them while DWT_CTRL.CYCCNTENA is set (TRCENA is not
 * needed), so a firmware timing itself reads the emulator's cycles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_internal.h"
#include "cpu_m.h"

#define NEXC 512          /* exception numbers: 16 + up to 496 external interrupts */
#define NIRQ_DEFAULT 64   /* external interrupts the NVIC has unless the board says */
#define FPCCR_ASPEN 0x80000000u /* an FP instruction sets CONTROL.FPCA */
#define FPCCR_LSPEN 0x40000000u /* the FP context is stacked lazily */
#define FPCCR_LSPACT 1u         /* room reserved at FPCAR, the registers not yet written */
#define FP_STACK_CYCLES 17      /* s0-s15 and FPSCR written or read: 29 - 12 (AN298) */

struct device {
    uint32_t base, size;
    np_m_device_read read;
    np_m_device_write write;
    void *ctx;
};

struct msys {
    uint8_t hint;                 /* the region the last access hit */
    /* NVIC and the system handlers */
    uint32_t nirq;
    uint8_t prio[NEXC];           /* configurable priorities (4-15 and 16+), as written */
    uint32_t enabled[NEXC / 32], pending[NEXC / 32], active[NEXC / 32];
    unsigned npending;            /* bits set in pending[] */
    uint8_t prio_mask;            /* the implemented priority bits */
    /* SCB */
    uint32_t vtor, aircr_prigroup, scr, ccr, shcsr, cfsr, hfsr, mmfar, bfar, cpacr;
    uint32_t fpccr, fpcar, fpdscr;
    /* SysTick */
    uint32_t st_csr, st_rvr, st_cvr;   /* st_cvr: the value at st_base when running */
    uint64_t st_base, st_next;         /* when it counted from st_cvr; its next 1 -> 0 */
    bool st_countflag;
    /* DWT */
    uint32_t dwt_ctrl, dwt_cyccnt;     /* cyccnt: the value at dwt_base when running */
    uint64_t dwt_base;
    uint32_t demcr;
    /* devices the board adds */
    struct device dev[8];
    unsigned ndev;
    /* what happened, for the run's last line */
    struct np_m_fault_info last;
    bool sleeping;
    /* a return found an exception to take: the next entry is tail-chained
     * (its cycles the chain's); chain_fp: the FP context it returned to was
     * written already, and stays so */
    bool chain, chain_fp;
};

uint32_t np_m_features(enum np_cpu_model model)
{
    switch (model) {
    case NP_CPU_CORTEX_M0: return 0;
    case NP_CPU_CORTEX_M3: return NP_MFEAT_V7M;
    case NP_CPU_CORTEX_M4: return NP_MFEAT_V7M | NP_MFEAT_DSP | NP_MFEAT_FPU;
    case NP_CPU_CORTEX_M33: return NP_MFEAT_V7M | NP_MFEAT_DSP | NP_MFEAT_FPU | NP_MFEAT_V8M;
    default: return 0;
    }
}

static bool v7(const struct np_cpu *cpu) { return cpu->m.features & NP_MFEAT_V7M; }

int np_m_init(struct np_cpu *cpu)
{
    struct msys *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    cpu->sys = s;
    cpu->m.features = np_m_features(cpu->model);
    cpu->cpsr = NP_CPSR_T | NP_MODE_SYS;
    s->nirq = NIRQ_DEFAULT;
    /* 2 priority bits on ARMv6-M, 3 on the others (as the CMSDK and
     * MPS2 images have: __NVIC_PRIO_BITS 3) */
    s->prio_mask = v7(cpu) ? 0xe0 : 0xc0;
    s->ccr = v7(cpu) ? 0x200 : 0x208; /* STKALIGN; ARMv6-M: UNALIGN_TRP too */
    cpu->m.waits = cpu->timing.n_wait || cpu->timing.s_wait;
    if (cpu->m.features & NP_MFEAT_FPU)
        s->fpccr = FPCCR_ASPEN | FPCCR_LSPEN;
    s->st_next = UINT64_MAX;
    return 0;
}

void np_m_free(struct np_cpu *cpu)
{
    free(cpu->sys);
    cpu->sys = NULL;
}

int np_m_add_device(struct np_cpu *cpu, uint32_t base, uint32_t size, np_m_device_read read,
                    np_m_device_write write, void *ctx)
{
    struct msys *s = cpu->sys;
    if (s->ndev == sizeof s->dev / sizeof *s->dev)
        return -1;
    s->dev[s->ndev++] = (struct device){ base, size, read, write, ctx };
    return 0;
}

void np_m_set_irqs(struct np_cpu *cpu, unsigned nirq)
{
    struct msys *s = cpu->sys;
    s->nirq = nirq < NEXC - 16 ? nirq : NEXC - 16;
}

/* ---- registers ---- */

void np_m_set_control_ipsr(struct np_cpu *cpu, uint32_t control, uint32_t ipsr)
{
    np_m_sp_sync(cpu);
    cpu->m.control = control;
    cpu->m.ipsr = ipsr;
    cpu->r[13] = np_m_on_psp(cpu) ? cpu->m.psp : cpu->m.msp;
}

uint32_t np_m_xpsr(const struct np_cpu *cpu)
{
    uint32_t it = cpu->m.itstate;
    return (cpu->cpsr & 0xf80f0000u) | (1u << 24) | ((it & 3) << 25) | ((it >> 2) << 10) | cpu->m.ipsr;
}

void np_m_xpsr_write(struct np_cpu *cpu, uint32_t value, uint32_t mask)
{
    cpu->cpsr = (cpu->cpsr & ~(mask & 0xf80f0000u)) | (value & mask & 0xf80f0000u);
    if (mask & 0x0600fc00u)
        cpu->m.itstate = ((value >> 25) & 3) | (((value >> 10) & 0x3f) << 2);
}

/* ---- priorities and pending exceptions ---- */

static bool bit(const uint32_t *set, unsigned n) { return (set[n / 32] >> (n % 32)) & 1; }

static void set_pending(struct msys *s, unsigned n, bool on)
{
    if (bit(s->pending, n) == on)
        return;
    s->pending[n / 32] ^= 1u << (n % 32);
    if (on)
        s->npending++;
    else
        s->npending--;
}

/* The priority of exception N as configured: Reset -3, NMI -2, HardFault -1. */
static int priority(const struct msys *s, unsigned n)
{
    if (n == NP_EXC_RESET)
        return -3;
    if (n == NP_EXC_NMI)
        return -2;
    if (n == NP_EXC_HARDFAULT)
        return -1;
    return s->prio[n] & s->prio_mask;
}

/* The group priority of a priority: its subpriority bits (AIRCR.PRIGROUP) cleared. */
static int group(const struct msys *s, int p)
{
    if (p < 0)
        return p;
    return p & ~((2 << s->aircr_prigroup) - 1);
}

/* The execution priority: the highest of the active exceptions' and the
 * boosts of PRIMASK, FAULTMASK and BASEPRI; 256 when none. */
static int exec_priority(const struct np_cpu *cpu)
{
    const struct msys *s = cpu->sys;
    int p = 256;
    for (unsigned w = 0; w < NEXC / 32; w++) {
        uint32_t a = s->active[w];
        while (a) {
            unsigned n = w * 32 + (unsigned)__builtin_ctz(a);
            a &= a - 1;
            int g = group(s, priority(s, n));
            if (g < p)
                p = g;
        }
    }
    if (cpu->m.basepri & s->prio_mask) {
        int b = group(s, cpu->m.basepri & s->prio_mask);
        if (b < p)
            p = b;
    }
    if (cpu->m.primask & 1 && p > 0)
        p = 0;
    if (cpu->m.faultmask & 1 && p > -1)
        p = -1;
    return p;
}

static bool enabled(const struct np_cpu *cpu, unsigned n)
{
    const struct msys *s = cpu->sys;
    if (n >= 16)
        return bit(s->enabled, n - 16);
    return true;
}

/* The pending exception to take next: the highest priority, the lowest
 * number among equals; 0 when none can preempt. */
static unsigned to_take(const struct np_cpu *cpu)
{
    const struct msys *s = cpu->sys;
    unsigned best = 0;
    int bp = 1000;
    for (unsigned w = 0; w < NEXC / 32; w++) {
        uint32_t a = s->pending[w];
        while (a) {
            unsigned n = w * 32 + (unsigned)__builtin_ctz(a);
            a &= a - 1;
            if (!enabled(cpu, n) || bit(s->active, n))
                continue;
            int p = priority(s, n);
            if (p < bp) {
                bp = p;
                best = n;
            }
        }
    }
    if (best && group(s, bp) < exec_priority(cpu))
        return best;
    return 0;
}

void np_m_pend_irq(struct np_cpu *cpu, unsigned irq)
{
    struct msys *s = cpu->sys;
    if (irq < s->nirq)
        set_pending(s, 16 + irq, true);
}

/* ---- memory ---- */

static int ppb_read(struct np_cpu *cpu, uint32_t addr, uint32_t *val);
static int ppb_write(struct np_cpu *cpu, uint32_t addr, unsigned len, uint32_t val);

static struct device *device_at(struct msys *s, uint32_t addr, unsigned len)
{
    for (unsigned i = 0; i < s->ndev; i++)
        if ((uint64_t)(addr - s->dev[i].base) + len <= s->dev[i].size)
            return &s->dev[i];
    return NULL;
}

static bool in_ppb(uint32_t addr) { return addr >= 0xe0000000u && addr < 0xe0100000u; }

int np_m_read(struct np_cpu *cpu, uint32_t addr, unsigned len, bool aligned, uint32_t *val)
{
    struct np_cpu_impl *im = cpu->impl;
    struct msys *s = cpu->sys;
    if ((addr & (len - 1)) && (aligned || (s->ccr & 8)))
        return NP_MF_UNALIGNED;
    struct np_region *r = np_region_at(im, &s->hint, addr, len);
    if (NP_LIKELY(r != NULL)) {
        const uint8_t *p = r->data + (addr - r->base);
        *val = len == 4 ? np_ld32(p) : len == 2 ? np_ld16(p) : *p;
        if (NP_UNLIKELY(cpu->m.waits) && addr < NP_M_FLASH_END)
            cpu->cycles += cpu->timing.n_wait; /* a data read from flash */
        return 0;
    }
    if (in_ppb(addr)) {
        /* the PPB is word-accessed (byte reads of priorities are too) */
        uint32_t w;
        if (ppb_read(cpu, addr & ~3u, &w) == 0) {
            *val = (w >> ((addr & 3) * 8)) & (len == 4 ? 0xffffffffu : len == 2 ? 0xffffu : 0xffu);
            return 0;
        }
    } else {
        struct device *d = device_at(s, addr, len);
        if (d && d->read && d->read(d->ctx, cpu, addr - d->base, len, val) == 0)
            return 0;
    }
    cpu->fault_addr = addr;
    return NP_MF_READ;
}

int np_m_write(struct np_cpu *cpu, uint32_t addr, unsigned len, bool aligned, uint32_t val)
{
    struct np_cpu_impl *im = cpu->impl;
    struct msys *s = cpu->sys;
    if ((addr & (len - 1)) && (aligned || (s->ccr & 8)))
        return NP_MF_UNALIGNED;
    struct np_region *r = np_region_at(im, &s->hint, addr, len);
    if (NP_LIKELY(r != NULL)) {
        uint32_t off = addr - r->base;
        uint8_t *p = r->data + off;
        if (len == 4)
            np_st32(p, val);
        else if (len == 2)
            np_st16(p, val);
        else
            *p = (uint8_t)val;
        np_stored(im, r, off, addr, len);
        return 0;
    }
    if (in_ppb(addr)) {
        if (ppb_write(cpu, addr, len, val) == 0)
            return 0;
    } else {
        struct device *d = device_at(s, addr, len);
        if (d && d->write && d->write(d->ctx, cpu, addr - d->base, len, val) == 0)
            return 0;
    }
    cpu->fault_addr = addr;
    return NP_MF_WRITE;
}

int np_m_fetch16(struct np_cpu *cpu, uint32_t addr, uint32_t *hw)
{
    struct np_cpu_impl *im = cpu->impl;
    struct msys *s = cpu->sys;
    struct np_region *r = np_region_at(im, &s->hint, addr, 2);
    if (!r) {
        cpu->fault_addr = addr;
        return NP_MF_FETCH;
    }
    *hw = np_ld16(r->data + (addr - r->base));
    return 0;
}

/* ---- SysTick and DWT ---- */

/* SysTick counts down from its value at st_base, one a cycle; at 0 it
 * sets COUNTFLAG, pends its exception (TICKINT) and reloads RVR at the
 * next cycle: a period of RVR + 1. */
static uint32_t systick_value(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    if (!(s->st_csr & 1))
        return s->st_cvr;
    uint64_t t = cpu->cycles - s->st_base;
    if (t <= s->st_cvr)
        return (uint32_t)(s->st_cvr - t);
    if (!s->st_rvr)
        return 0;
    uint64_t since = t - s->st_cvr - 1;
    return s->st_rvr - (uint32_t)(since % ((uint64_t)s->st_rvr + 1));
}

/* Its next 1 -> 0 after NOW (UINT64_MAX: none). */
static void systick_plan(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    s->st_next = UINT64_MAX;
    if (!(s->st_csr & 1))
        return;
    uint64_t now = cpu->cycles, t = now - s->st_base;
    if (t < s->st_cvr && s->st_cvr) {
        s->st_next = s->st_base + s->st_cvr;
        return;
    }
    if (!s->st_rvr)
        return;
    uint64_t period = (uint64_t)s->st_rvr + 1, first = s->st_base + s->st_cvr + 1 + s->st_rvr;
    if (now < first)
        s->st_next = first;
    else
        s->st_next = first + ((now - first) / period + 1) * period;
}

/* Its 1 -> 0 transitions up to now. */
static void systick_tick(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    if (cpu->cycles < s->st_next)
        return;
    s->st_countflag = true;
    if (s->st_csr & 2)
        set_pending(s, NP_EXC_SYSTICK, true);
    systick_plan(cpu);
}

static uint32_t cyccnt(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    return (s->dwt_ctrl & 1) ? s->dwt_cyccnt + (uint32_t)(cpu->cycles - s->dwt_base) : s->dwt_cyccnt;
}

/* ---- the system control space ---- */

static uint32_t cpuid(const struct np_cpu *cpu)
{
    switch (cpu->model) {
    case NP_CPU_CORTEX_M0: return 0x410cc200u;
    case NP_CPU_CORTEX_M3: return 0x412fc231u;
    case NP_CPU_CORTEX_M4: return 0x410fc241u;
    default: return 0x410fd213u; /* Cortex-M33 */
    }
}

static uint32_t icsr(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    uint32_t v = cpu->m.ipsr;
    unsigned pend = 0;
    int bp = 1000;
    for (unsigned n = 1; n < NEXC; n++)
        if (bit(s->pending, n) && enabled(cpu, n) && priority(s, n) < bp) {
            bp = priority(s, n);
            pend = n;
        }
    v |= pend << 12;
    bool others = false;
    for (unsigned n = 1; n < NEXC; n++)
        if (bit(s->active, n) && n != cpu->m.ipsr)
            others = true;
    if (!others)
        v |= 1u << 11; /* RETTOBASE */
    for (unsigned n = 16; n < NEXC; n++)
        if (bit(s->pending, n)) {
            v |= 1u << 22; /* ISRPENDING */
            break;
        }
    if (bit(s->pending, NP_EXC_SYSTICK))
        v |= 1u << 26;
    if (bit(s->pending, NP_EXC_PENDSV))
        v |= 1u << 28;
    if (bit(s->pending, NP_EXC_NMI))
        v |= 1u << 31;
    return v;
}

static int ppb_read(struct np_cpu *cpu, uint32_t addr, uint32_t *val)
{
    struct msys *s = cpu->sys;
    uint32_t v = 0;
    if (addr >= 0xe000e100u && addr < 0xe000e180u) /* ISER */
        v = s->enabled[(addr - 0xe000e100u) / 4];
    else if (addr >= 0xe000e180u && addr < 0xe000e200u) /* ICER */
        v = s->enabled[(addr - 0xe000e180u) / 4];
    else if (addr >= 0xe000e200u && addr < 0xe000e300u) { /* ISPR, ICPR */
        unsigned w = ((addr - 0xe000e200u) & 0x7f) / 4;
        for (unsigned i = 0; i < 32; i++)
            if (16 + w * 32 + i < NEXC && bit(s->pending, 16 + w * 32 + i))
                v |= 1u << i;
    } else if (addr >= 0xe000e300u && addr < 0xe000e380u) { /* IABR */
        unsigned w = (addr - 0xe000e300u) / 4;
        for (unsigned i = 0; i < 32; i++)
            if (16 + w * 32 + i < NEXC && bit(s->active, 16 + w * 32 + i))
                v |= 1u << i;
    } else if (addr >= 0xe000e400u && addr < 0xe000e400u + NEXC - 16) { /* IPR */
        unsigned n = 16 + (addr - 0xe000e400u);
        for (unsigned i = 0; i < 4 && n + i < NEXC; i++)
            v |= (uint32_t)(s->prio[n + i] & s->prio_mask) << (8 * i);
    } else if (addr >= 0xe000ed18u && addr < 0xe000ed24u) { /* SHPR1-3 */
        unsigned n = 4 + (addr - 0xe000ed18u);
        for (unsigned i = 0; i < 4; i++)
            v |= (uint32_t)(s->prio[n + i] & s->prio_mask) << (8 * i);
    } else
        switch (addr) {
        case 0xe000e004u: v = (s->nirq + 31) / 32 - 1; break;         /* ICTR */
        case 0xe000e010u:                                                 /* SYST_CSR */
            systick_tick(cpu);
            v = s->st_csr | (s->st_countflag ? 1u << 16 : 0);
            s->st_countflag = false;
            break;
        case 0xe000e014u: v = s->st_rvr; break;
        case 0xe000e018u: v = systick_value(cpu); break;
        case 0xe000e01cu: v = 0x40000000u; break;                        /* SYST_CALIB: NOREF */
        case 0xe000ed00u: v = cpuid(cpu); break;
        case 0xe000ed04u: v = icsr(cpu); break;
        case 0xe000ed08u: v = s->vtor; break;
        case 0xe000ed0cu: v = 0xfa050000u | (s->aircr_prigroup << 8); break;
        case 0xe000ed10u: v = s->scr; break;
        case 0xe000ed14u: v = s->ccr; break;
        case 0xe000ed24u: v = s->shcsr; break;
        case 0xe000ed28u: v = s->cfsr; break;
        case 0xe000ed2cu: v = s->hfsr; break;
        case 0xe000ed34u: v = s->mmfar; break;
        case 0xe000ed38u: v = s->bfar; break;
        case 0xe000ed88u: v = s->cpacr; break;
        case 0xe000edfcu: v = s->demcr; break;
        case 0xe0001000u: v = s->dwt_ctrl | (cpu->model == NP_CPU_CORTEX_M0 ? 0 : 0x40000000u); break;
        case 0xe0001004u: v = cyccnt(cpu); break;
        case 0xe000ef34u: v = s->fpccr; break;
        case 0xe000ef38u: v = s->fpcar; break;
        case 0xe000ef3cu: v = s->fpdscr; break;
        default:
            /* the rest of the PPB (ITM, FPB, the IDs...) reads 0 */
            break;
        }
    *val = v;
    return 0;
}

static int ppb_write(struct np_cpu *cpu, uint32_t addr, unsigned len, uint32_t val)
{
    struct msys *s = cpu->sys;
    /* byte and halfword writes: the priority registers take them, the
     * others as a word with the bytes in place */
    if (len < 4 && ((addr >= 0xe000e400u && addr < 0xe000e400u + NEXC - 16) ||
                    (addr >= 0xe000ed18u && addr < 0xe000ed24u))) {
        unsigned n = addr >= 0xe000ed18u && addr < 0xe000ed24u ? 4 + (addr - 0xe000ed18u)
                                                                : 16 + (addr - 0xe000e400u);
        for (unsigned i = 0; i < len && n + i < NEXC; i++)
            s->prio[n + i] = (uint8_t)(val >> (8 * i));
        return 0;
    }
    val <<= (addr & 3) * 8;
    addr &= ~3u;
    if (addr >= 0xe000e100u && addr < 0xe000e180u)
        s->enabled[(addr - 0xe000e100u) / 4] |= val;
    else if (addr >= 0xe000e180u && addr < 0xe000e200u)
        s->enabled[(addr - 0xe000e180u) / 4] &= ~val;
    else if (addr >= 0xe000e200u && addr < 0xe000e300u) {
        unsigned w = ((addr - 0xe000e200u) & 0x7f) / 4;
        bool on = addr < 0xe000e280u;
        for (unsigned i = 0; i < 32; i++)
            if ((val >> i) & 1 && w * 32 + i < s->nirq)
                set_pending(s, 16 + w * 32 + i, on);
    } else if (addr >= 0xe000e400u && addr < 0xe000e400u + NEXC - 16) {
        unsigned n = 16 + (addr - 0xe000e400u);
        for (unsigned i = 0; i < 4 && n + i < NEXC; i++)
            s->prio[n + i] = (uint8_t)(val >> (8 * i));
    } else if (addr >= 0xe000ed18u && addr < 0xe000ed24u) {
        unsigned n = 4 + (addr - 0xe000ed18u);
        for (unsigned i = 0; i < 4; i++)
            s->prio[n + i] = (uint8_t)(val >> (8 * i));
    } else
        switch (addr) {
        case 0xe000e010u: {
            bool was = s->st_csr & 1;
            uint32_t now = systick_value(cpu);
            s->st_csr = val & 7;
            if ((s->st_csr & 1) && !was) {
                s->st_cvr = now;
                s->st_base = cpu->cycles;
            } else if (!(s->st_csr & 1) && was)
                s->st_cvr = now;
            systick_plan(cpu);
            break;
        }
        case 0xe000e014u: s->st_rvr = val & 0xffffffu; systick_plan(cpu); break;
        case 0xe000e018u: /* any write clears it, and COUNTFLAG */
            s->st_cvr = 0;
            s->st_base = cpu->cycles;
            s->st_countflag = false;
            systick_plan(cpu);
            break;
        case 0xe000ed04u: /* ICSR */
            if (val & (1u << 31))
                set_pending(s, NP_EXC_NMI, true);
            if (val & (1u << 28))
                set_pending(s, NP_EXC_PENDSV, true);
            if (val & (1u << 27))
                set_pending(s, NP_EXC_PENDSV, false);
            if (val & (1u << 26))
                set_pending(s, NP_EXC_SYSTICK, true);
            if (val & (1u << 25))
                set_pending(s, NP_EXC_SYSTICK, false);
            break;
        case 0xe000ed08u: s->vtor = val & ~0x7fu; break;
        case 0xe000ed0cu:
            if ((val >> 16) != 0x05fa)
                break;
            if (v7(cpu))
                s->aircr_prigroup = (val >> 8) & 7;
            if (val & 4) {
                /* SYSRESETREQ: the run ends (a reset is not emulated) */
                s->last = (struct np_m_fault_info){ 0 };
                cpu->halt = true;
            }
            break;
        case 0xe000ed10u: s->scr = val & 0x16; break;
        case 0xe000ed14u: if (v7(cpu)) s->ccr = (val & 0x31a) | 0x200; break;
        case 0xe000ed24u: if (v7(cpu)) s->shcsr = (s->shcsr & ~0x70000u) | (val & 0x70000u); break;
        case 0xe000ed28u: s->cfsr &= ~val; break; /* write one to clear */
        case 0xe000ed2cu: s->hfsr &= ~val; break;
        case 0xe000ed34u: s->mmfar = val; break;
        case 0xe000ed38u: s->bfar = val; break;
        case 0xe000ed88u: if (cpu->m.features & NP_MFEAT_FPU) s->cpacr = val & 0x00f00000u; break;
        case 0xe000edfcu: s->demcr = val; break;
        case 0xe0001000u:
            if (cpu->model == NP_CPU_CORTEX_M0)
                break;
            if ((val & 1) != (s->dwt_ctrl & 1)) {
                s->dwt_cyccnt = cyccnt(cpu);
                s->dwt_base = cpu->cycles;
            }
            s->dwt_ctrl = val & 0x1fff1fffu;
            break;
        case 0xe0001004u: s->dwt_cyccnt = val; s->dwt_base = cpu->cycles; break;
        case 0xe000ef34u: s->fpccr = val & 0xc000033bu; break;
        case 0xe000ef38u: s->fpcar = val & ~7u; break;
        case 0xe000ef3cu: s->fpdscr = val & 0x07c00000u; break;
        default:
            break; /* writes elsewhere in the PPB are ignored */
        }
    return 0;
}

bool np_m_fpu_enabled(const struct np_cpu *cpu)
{
    const struct msys *s = cpu->sys;
    unsigned cp10 = (s->cpacr >> 20) & 3;
    return cp10 == 3 || (cp10 == 1 && np_m_privileged(cpu));
}

/* ---- special registers ---- */

int np_m_mrs(struct np_cpu *cpu, unsigned sysm, uint32_t *val)
{
    uint32_t xpsr = np_m_xpsr(cpu);
    np_m_sp_sync(cpu);
    switch (sysm) {
    case 0: *val = xpsr & 0xf80f0000u; return 0;             /* APSR */
    case 1: *val = xpsr & 0xf80f01ffu; return 0;              /* IAPSR */
    case 2: *val = xpsr & 0xf80f0000u; return 0;              /* EAPSR */
    case 3: *val = xpsr & 0xf80f01ffu; return 0;              /* XPSR */
    case 5: *val = cpu->m.ipsr; return 0;                     /* IPSR */
    case 6: *val = 0; return 0;                               /* EPSR reads 0 */
    case 7: *val = cpu->m.ipsr; return 0;                     /* IEPSR */
    }
    if (!np_m_privileged(cpu) && sysm != 20) {
        *val = 0;
        return 0;
    }
    switch (sysm) {
    case 8: *val = cpu->m.msp; return 0;
    case 9: *val = cpu->m.psp; return 0;
    case 10: *val = cpu->m.msplim; return !(cpu->m.features & NP_MFEAT_V8M);
    case 11: *val = cpu->m.psplim; return !(cpu->m.features & NP_MFEAT_V8M);
    case 16: *val = cpu->m.primask & 1; return 0;
    case 17: *val = cpu->m.basepri; return !v7(cpu);
    case 18: *val = cpu->m.basepri; return !v7(cpu);
    case 19: *val = cpu->m.faultmask & 1; return !v7(cpu);
    case 20: *val = cpu->m.control; return 0;
    }
    return 1;
}

void np_m_msr(struct np_cpu *cpu, unsigned sysm, unsigned mask, uint32_t val)
{
    if (sysm < 8) {
        /* APSR: mask bit 1 the flags (nzcvq), bit 0 GE (DSP) */
        uint32_t m = ((mask & 2) ? 0xf8000000u : 0) | ((mask & 1) && (cpu->m.features & NP_MFEAT_DSP) ? 0x000f0000u : 0);
        if (sysm <= 3)
            np_m_xpsr_write(cpu, val, m);
        return;
    }
    if (!np_m_privileged(cpu))
        return;
    switch (sysm) {
    case 8: np_m_sp_sync(cpu); cpu->m.msp = val & ~3u; np_m_set_control_ipsr(cpu, cpu->m.control, cpu->m.ipsr); break;
    case 9: np_m_sp_sync(cpu); cpu->m.psp = val & ~3u; np_m_set_control_ipsr(cpu, cpu->m.control, cpu->m.ipsr); break;
    case 10: if (cpu->m.features & NP_MFEAT_V8M) cpu->m.msplim = val & ~7u; break;
    case 11: if (cpu->m.features & NP_MFEAT_V8M) cpu->m.psplim = val & ~7u; break;
    case 16: cpu->m.primask = val & 1; break;
    case 17: if (v7(cpu)) cpu->m.basepri = val & 0xff; break;
    case 18: /* BASEPRI_MAX: only raises the priority */
        if (v7(cpu) && (val & 0xff) && ((val & 0xff) < cpu->m.basepri || cpu->m.basepri == 0))
            cpu->m.basepri = val & 0xff;
        break;
    case 19: if (v7(cpu) && cpu->m.ipsr != NP_EXC_NMI) cpu->m.faultmask = val & 1; break;
    case 20: {
        /* nPRIV (not on ARMv6-M's M0) and, in thread mode, SPSEL; FPCA with an FPU */
        uint32_t c = cpu->m.control;
        if (v7(cpu))
            c = (c & ~1u) | (val & 1);
        if (cpu->m.ipsr == 0)
            c = (c & ~2u) | (val & 2);
        if (cpu->m.features & NP_MFEAT_FPU)
            c = (c & ~4u) | (val & 4);
        np_m_set_control_ipsr(cpu, c, cpu->m.ipsr);
        break;
    }
    }
}

/* ---- exception entry and return ---- */

static unsigned entry_cycles(const struct np_cpu *cpu) { return cpu->model == NP_CPU_CORTEX_M0 ? 16 : 12; }
static unsigned return_cycles(const struct np_cpu *cpu) { return cpu->model == NP_CPU_CORTEX_M0 ? 16 : 10; }
/* A return to another exception's entry, where the M3 and M4 skip the
 * unstacking and stacking (the M0's TRM gives no figure: its return and
 * entry are counted) */
#define TAIL_CHAIN_CYCLES 6
static bool chains(const struct np_cpu *cpu) { return cpu->model != NP_CPU_CORTEX_M0; }

/* SysTick's 1 -> 0 due before cycle AT, told now: it came while an
 * exception's frame was stacked or unstacked (true when so). */
static bool systick_due_by(struct np_cpu *cpu, uint64_t at)
{
    struct msys *s = cpu->sys;
    if (s->st_next >= at)
        return false;
    uint64_t now = cpu->cycles;
    cpu->cycles = s->st_next;
    systick_tick(cpu);
    cpu->cycles = now;
    return true;
}

/* The PC set by an exception's entry or return: a non-sequential fetch,
 * from flash its wait states. */
static void flash_jump(struct np_cpu *cpu)
{
    if (NP_UNLIKELY(cpu->m.waits)) {
        cpu->m.fetch_jumped = true;
        if (cpu->r[15] < NP_M_FLASH_END)
            cpu->cycles += cpu->timing.n_wait;
    }
}

/* s0-s15 and FPSCR written at ADDR: 0 or the fault. */
static int fp_stack(struct np_cpu *cpu, uint32_t addr)
{
    for (unsigned i = 0; i < 16; i++)
        if (np_m_write(cpu, addr + 4 * i, 4, true, cpu->m.s[i]))
            return NP_MF_WRITE;
    if (np_m_write(cpu, addr + 0x40, 4, true, cpu->m.fpscr))
        return NP_MF_WRITE;
    cpu->cycles += FP_STACK_CYCLES;
    return 0;
}

int np_m_fp_preserve(struct np_cpu *cpu)
{
    struct msys *s = cpu->sys;
    if (!(s->fpccr & FPCCR_LSPACT))
        return 0;
    int f = fp_stack(cpu, s->fpcar);
    if (!f)
        s->fpccr &= ~FPCCR_LSPACT;
    return f;
}

/* Pushes the exception frame of a return to RET and enters exception N's
 * handler. 0, or a fault of the stacking or the vector read (the run
 * stops: the CPU would lock up or escalate again). */
static int enter(struct np_cpu *cpu, unsigned n, uint32_t ret)
{
    struct msys *s = cpu->sys;
    bool psp = np_m_on_psp(cpu), fp = (cpu->m.control & 4) && (cpu->m.features & NP_MFEAT_FPU);
    uint32_t sp = cpu->r[13], interrupted_sp = sp;
    uint32_t size = fp ? 0x68 : 0x20;
    uint32_t xpsr = np_m_xpsr(cpu);
    uint32_t frame = sp - size;
    if ((s->ccr & 0x200) || !v7(cpu)) {
        if (frame & 4) {
            frame -= 4;
            xpsr |= 1u << 9;
        }
    } else if (frame & 3) {
        frame &= ~3u;
    }
    uint32_t words[8] = { cpu->r[0], cpu->r[1], cpu->r[2], cpu->r[3], cpu->r[12], cpu->r[14], ret & ~1u, xpsr };
    for (unsigned i = 0; i < 8; i++) {
        int f = np_m_write(cpu, frame + 4 * i, 4, true, words[i]);
        if (f)
            return f;
    }
    if (fp && s->chain_fp) {
        /* tail-chained: the context is in the frame already */
    } else if (fp && (s->fpccr & FPCCR_LSPEN)) {
        /* room kept; LSPACT, and USER, THREAD and the faults that could be
         * taken (HFRDY, MMRDY, BFRDY) as the context was */
        int p = exec_priority(cpu);
        bool mm = (s->shcsr & 0x10000) && p > group(s, priority(s, NP_EXC_MEMMANAGE));
        bool bf = (s->shcsr & 0x20000) && p > group(s, priority(s, NP_EXC_BUSFAULT));
        s->fpccr = (s->fpccr & ~0x17bu) | FPCCR_LSPACT | (np_m_privileged(cpu) ? 0 : 2) | (cpu->m.ipsr ? 0 : 8) |
                   (p > -1 ? 0x10 : 0) | (mm ? 0x20 : 0) | (bf ? 0x40 : 0);
        s->fpcar = frame + 0x20;
    } else if (fp) {
        int f = fp_stack(cpu, frame + 0x20);
        if (f)
            return f;
    }
    uint32_t handler;
    int f = np_m_read(cpu, s->vtor + 4 * n, 4, true, &handler);
    if (f)
        return f;
    cpu->r[13] = frame;
    np_m_sp_sync(cpu);
    uint32_t exc_return;
    if (cpu->m.features & NP_MFEAT_V8M)
        exc_return = 0xffffffa0u | (fp ? 0 : 0x10) | (cpu->m.ipsr ? 0 : 8) | (psp ? 4 : 0);
    else
        exc_return = 0xffffffe1u | (fp ? 0 : 0x10) | (cpu->m.ipsr ? 0 : 8) | (psp ? 4 : 0);
    cpu->r[14] = exc_return;
    set_pending(s, n, false);
    s->active[n / 32] |= 1u << (n % 32);
    cpu->m.itstate = 0;
    cpu->m.excl_open = false;
    np_m_set_control_ipsr(cpu, cpu->m.control & ~6u, n);
    cpu->r[15] = handler & ~1u;
    cpu->cycles += s->chain ? TAIL_CHAIN_CYCLES : entry_cycles(cpu);
    flash_jump(cpu);
    s->chain = s->chain_fp = false;
    s->sleeping = false;
    if (cpu->hooks.branch) {
        struct np_branch b = { ret & ~1u, handler & ~1u, NP_BR_EXCEPTION, 15,
                               NP_BRF_THUMB | NP_BRF_FROM_THUMB | NP_BRF_EXC_M, (uint8_t)n, interrupted_sp };
        cpu->hooks.branch(cpu->hooks.ctx, cpu, &b);
    }
    if (!(handler & 1))
        return NP_MF_INVSTATE;
    return 0;
}

/* The exception return of EXC_RETURN value V by the instruction at FROM. */
static int exc_return(struct np_cpu *cpu, uint32_t v, uint32_t from)
{
    struct msys *s = cpu->sys;
    unsigned n = cpu->m.ipsr;
    s->active[n / 32] &= ~(1u << (n % 32));
    bool thread = v & 8, psp = v & 4, fp = !(v & 0x10) && (cpu->m.features & NP_MFEAT_FPU);
    np_m_sp_sync(cpu);
    uint32_t frame = psp ? cpu->m.psp : cpu->m.msp, w[8];
    for (unsigned i = 0; i < 8; i++) {
        int f = np_m_read(cpu, frame + 4 * i, 4, true, &w[i]);
        if (f)
            return f;
    }
    bool fp_read = false;
    if (fp && (s->fpccr & FPCCR_LSPACT)) {
        s->fpccr &= ~FPCCR_LSPACT; /* never written: the registers hold the context still */
    } else if (fp) {
        for (unsigned i = 0; i < 16; i++)
            if (np_m_read(cpu, frame + 0x20 + 4 * i, 4, true, &cpu->m.s[i]))
                return NP_MF_READ;
        if (np_m_read(cpu, frame + 0x60, 4, true, &cpu->m.fpscr))
            return NP_MF_READ;
        fp_read = true;
    }
    uint32_t sp = frame + (fp ? 0x68 : 0x20) + ((w[7] >> 9) & 1) * 4;
    if (psp)
        cpu->m.psp = sp;
    else
        cpu->m.msp = sp;
    cpu->r[0] = w[0];
    cpu->r[1] = w[1];
    cpu->r[2] = w[2];
    cpu->r[3] = w[3];
    cpu->r[12] = w[4];
    cpu->r[14] = w[5];
    np_m_xpsr_write(cpu, w[7], 0xf80f0000u | 0x0600fc00u);
    uint32_t control = (cpu->m.control & ~6u) | (thread && psp ? 2 : 0) | (fp ? 4 : 0);
    cpu->m.ipsr = thread ? 0 : (w[7] & 0x1ff);
    cpu->m.control = control;
    cpu->r[13] = np_m_on_psp(cpu) ? cpu->m.psp : cpu->m.msp;
    cpu->m.excl_open = false;
    cpu->r[15] = w[6] & ~1u;
    flash_jump(cpu);
    /* an exception to take now (one pending, or SysTick coming due while
     * the frame would be unstacked): the return is the chain to it */
    bool tick = (s->st_csr & 2) && group(s, priority(s, NP_EXC_SYSTICK)) < exec_priority(cpu);
    if (chains(cpu) && ((tick && systick_due_by(cpu, cpu->cycles + return_cycles(cpu))) || to_take(cpu))) {
        s->chain = true;
        s->chain_fp = fp_read;
    } else {
        cpu->cycles += return_cycles(cpu) + (fp_read ? FP_STACK_CYCLES : 0);
    }
    if (cpu->hooks.branch) {
        struct np_branch b = { from, cpu->r[15], NP_BR_EXC_RETURN, 14, NP_BRF_THUMB | NP_BRF_FROM_THUMB, 0,
                               cpu->r[13] };
        cpu->hooks.branch(cpu->hooks.ctx, cpu, &b);
    }
    return 0;
}

/* ---- faults ---- */

static unsigned fault_exception(unsigned fault)
{
    switch (fault) {
    case NP_MF_READ: case NP_MF_WRITE: case NP_MF_FETCH: return NP_EXC_BUSFAULT;
    case NP_MF_BKPT: return NP_EXC_HARDFAULT;
    default: return NP_EXC_USAGEFAULT;
    }
}

/* The fault F of the instruction at r[15]: the exception it raises after
 * escalation, or 0 when the CPU locks up. Sets the fault status registers. */
static unsigned raise_fault(struct np_cpu *cpu, unsigned f)
{
    struct msys *s = cpu->sys;
    unsigned n = fault_exception(f);
    s->last = (struct np_m_fault_info){ n, (uint8_t)f, cpu->r[15], cpu->fault_addr, false, false };
    if (n == NP_EXC_USAGEFAULT) {
        static const uint8_t ufsr_bit[] = { [NP_MF_UNDEFINED] = 0, [NP_MF_INVSTATE] = 1, [NP_MF_NOCP] = 3,
                                            [NP_MF_UNALIGNED] = 8, [NP_MF_DIVBYZERO] = 9 };
        s->cfsr |= 1u << (16 + ufsr_bit[f]);
    } else if (n == NP_EXC_BUSFAULT) {
        if (f == NP_MF_FETCH)
            s->cfsr |= 1u << 8; /* IBUSERR */
        else {
            s->cfsr |= (1u << 9) | (1u << 15); /* PRECISERR, BFARVALID */
            s->bfar = cpu->fault_addr;
        }
    }
    int ep = exec_priority(cpu);
    bool on = n == NP_EXC_HARDFAULT || (v7(cpu) && (s->shcsr >> (16 + n - NP_EXC_MEMMANAGE)) & 1);
    if (!on || group(s, priority(s, n)) >= ep) {
        n = NP_EXC_HARDFAULT;
        s->hfsr |= 1u << 30; /* FORCED */
        s->last.exception = n;
    }
    if (n == NP_EXC_HARDFAULT && ep <= -1) {
        s->last.lockup = true;
        return 0;
    }
    return n;
}

/* ---- the run ---- */

int np_m_reset(struct np_cpu *cpu, uint32_t vtor)
{
    struct msys *s = cpu->sys;
    s->vtor = vtor;
    uint32_t sp, pc;
    if (np_m_read(cpu, vtor, 4, true, &sp) || np_m_read(cpu, vtor + 4, 4, true, &pc))
        return NP_MF_READ;
    cpu->m.msp = sp & ~3u;
    cpu->m.control = 0;
    cpu->m.ipsr = 0;
    cpu->r[13] = cpu->m.msp;
    cpu->r[14] = 0xffffffffu;
    cpu->r[15] = pc & ~1u;
    cpu->cpsr = NP_CPSR_T | NP_MODE_SYS;
    return (pc & 1) ? 0 : NP_MF_INVSTATE;
}

const struct np_m_fault_info *np_m_last_fault(const struct np_cpu *cpu)
{
    return &((const struct msys *)cpu->sys)->last;
}

bool np_m_waits_forever(const struct np_cpu *cpu)
{
    const struct msys *s = cpu->sys;
    if (s->npending && to_take(cpu))
        return false;
    bool tick = (s->st_csr & 3) == 3 && s->st_next != UINT64_MAX;
    return !tick || group(s, priority(s, NP_EXC_SYSTICK)) >= exec_priority(cpu);
}

bool np_m_asleep(const struct np_cpu *cpu)
{
    return ((const struct msys *)cpu->sys)->sleeping;
}

const char *np_m_exception_name(unsigned exc, char *buf, size_t size)
{
    static const char *const names[16] = { "Thread", "Reset", "NMI", "HardFault", "MemManage", "BusFault",
                                           "UsageFault", "SecureFault", "Reserved8", "Reserved9", "Reserved10",
                                           "SVCall", "DebugMonitor", "Reserved13", "PendSV", "SysTick" };
    if (exc < 16)
        return names[exc];
    snprintf(buf, size, "IRQ%u", exc - 16);
    return buf;
}

const char *np_m_fault_name(unsigned fault)
{
    switch (fault) {
    case NP_MF_UNDEFINED: return "undefined instruction";
    case NP_MF_INVSTATE: return "a branch to an address with bit 0 clear";
    case NP_MF_UNALIGNED: return "an unaligned access";
    case NP_MF_DIVBYZERO: return "a division by zero";
    case NP_MF_NOCP: return "an FP instruction with the FPU off";
    case NP_MF_READ: return "a read where no memory is";
    case NP_MF_WRITE: return "a write where no memory is";
    case NP_MF_FETCH: return "an instruction fetch where no memory is";
    case NP_MF_BKPT: return "a bkpt no debugger took";
    default: return "no fault";
    }
}

static enum np_cpu_stop stop_of(unsigned f)
{
    switch (f) {
    case NP_MF_READ: return NP_STOP_READ;
    case NP_MF_WRITE: return NP_STOP_WRITE;
    case NP_MF_FETCH: return NP_STOP_FETCH;
    default: return NP_STOP_UNDEFINED;
    }
}

/* Takes exception N returning to RET; a fault of the entry itself (a
 * stack or a vector table outside memory) stops the run: that stop, or
 * NP_STOP_LIMIT to go on. */
static enum np_cpu_stop take(struct np_cpu *cpu, unsigned n, uint32_t ret)
{
    struct msys *s = cpu->sys;
    /* late arrival: SysTick coming due while N's frame is stacked, and
     * able to preempt N, takes its place (N, pending still, is
     * tail-chained after it) */
    if (n != NP_EXC_SYSTICK && bit(s->pending, n) && (s->st_csr & 2) && !bit(s->active, NP_EXC_SYSTICK) &&
        group(s, priority(s, NP_EXC_SYSTICK)) < group(s, priority(s, n)) &&
        systick_due_by(cpu, cpu->cycles + (s->chain ? TAIL_CHAIN_CYCLES : entry_cycles(cpu))))
        n = NP_EXC_SYSTICK;
    int f = enter(cpu, n, ret);
    if (f == NP_MF_INVSTATE) {
        /* the handler's address has bit 0 clear: its first instruction faults */
        unsigned h = raise_fault(cpu, NP_MF_INVSTATE);
        if (!h)
            return NP_STOP_UNDEFINED;
        return take(cpu, h, cpu->r[15]);
    }
    if (f) {
        s->last = (struct np_m_fault_info){ n, (uint8_t)f, ret, cpu->fault_addr, true, false };
        return stop_of(f);
    }
    if (n >= NP_EXC_HARDFAULT && n <= NP_EXC_USAGEFAULT && s->last.exception == n)
        s->last.taken = true;
    return NP_STOP_LIMIT;
}

enum np_cpu_stop np_m_run(struct np_cpu *cpu, uint64_t max_insns)
{
    struct msys *s = cpu->sys;
    cpu->halt = false;
    uint64_t end = cpu->insns + max_insns;
    while (cpu->insns < end) {
        if (cpu->cycles >= s->st_next)
            systick_tick(cpu);
        if (NP_UNLIKELY(s->npending)) {
            unsigned n = to_take(cpu);
            if (n) {
                enum np_cpu_stop st = take(cpu, n, cpu->r[15]);
                if (st != NP_STOP_LIMIT)
                    return st;
                if (cpu->halt)
                    return NP_STOP_HALT;
                continue;
            }
        }
        if (s->sleeping) {
            /* asleep until an exception can be taken: the time jumps to the
             * next SysTick, or the run ends when nothing will come */
            if (s->st_next == UINT64_MAX || !(s->st_csr & 2))
                return NP_STOP_HALT;
            cpu->cycles = s->st_next;
            continue;
        }
        /* the decoded code runs until an event; with ITSTATE already set
           (an exception returned into an IT block), a step at a time */
        uint32_t at = cpu->r[15];
        /* (flash wait states: every instruction stepped, its fetches counted) */
        enum np_m_result r = cpu->m.itstate || cpu->m.waits ? np_m_step(cpu)
                                                            : np_m_run_fast(cpu, end, s->st_next, &at);
        switch (r) {
        case NP_M_OK:
            break;
        case NP_M_HALT:
            return NP_STOP_HALT;
        case NP_M_SVC: {
            /* taken at once, or escalated when it cannot preempt */
            set_pending(s, NP_EXC_SVCALL, true);
            if (group(s, priority(s, NP_EXC_SVCALL)) >= exec_priority(cpu)) {
                set_pending(s, NP_EXC_SVCALL, false);
                s->last = (struct np_m_fault_info){ NP_EXC_HARDFAULT, NP_MF_NONE, at, 0, false, false };
                if (exec_priority(cpu) <= -1) {
                    s->last.lockup = true;
                    return NP_STOP_UNDEFINED;
                }
                s->hfsr |= 1u << 30;
                enum np_cpu_stop st = take(cpu, NP_EXC_HARDFAULT, cpu->r[15]);
                if (st != NP_STOP_LIMIT)
                    return st;
            } else {
                enum np_cpu_stop st = take(cpu, NP_EXC_SVCALL, cpu->r[15]);
                if (st != NP_STOP_LIMIT)
                    return st;
            }
            break;
        }
        case NP_M_WFI:
            if (!to_take(cpu))
                s->sleeping = true;
            break;
        case NP_M_EXC_RETURN: {
            int f = exc_return(cpu, cpu->m.exc_return, at);
            if (f) {
                s->last = (struct np_m_fault_info){ cpu->m.ipsr, (uint8_t)f, at, cpu->fault_addr, true, false };
                return stop_of(f);
            }
            break;
        }
        case NP_M_FAULT: {
            unsigned n = raise_fault(cpu, cpu->m.fault);
            if (!n)
                return stop_of(cpu->m.fault);
            enum np_cpu_stop st = take(cpu, n, cpu->r[15]);
            if (st != NP_STOP_LIMIT)
                return st;
            break;
        }
        }
        if (cpu->halt)
            return NP_STOP_HALT;
    }
    return NP_STOP_LIMIT;
}
