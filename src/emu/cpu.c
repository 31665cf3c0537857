/* cpu.c - the interpreter's set-up, processor modes and banked registers,
 * exception entry, guest memory and the decoded-code cache's upkeep (the
 * loop is cpu_exec.c, the decoders cpu_arm.c and cpu_thumb.c). */
#include <stdlib.h>
#include <strings.h>
#include "cpu_internal.h"
#include "cpu_m.h"

/* ---- modes and banks ---- */

unsigned np_cpu_bank(enum np_cpu_mode mode)
{
    switch (mode) {
    case NP_MODE_FIQ: return 1;
    case NP_MODE_IRQ: return 2;
    case NP_MODE_SVC: return 3;
    case NP_MODE_ABT: return 4;
    case NP_MODE_UND: return 5;
    default: return 0;
    }
}

bool np_mode_valid(uint32_t mode)
{
    switch (mode) {
    case NP_MODE_USR: case NP_MODE_FIQ: case NP_MODE_IRQ: case NP_MODE_SVC:
    case NP_MODE_ABT: case NP_MODE_UND: case NP_MODE_SYS:
        return true;
    default:
        return false;
    }
}

/* Moves r8-r14 and the SPSR between r[] and the banks for a switch from
 * the current mode to MODE (the CPSR's mode field is the caller's). */
static void switch_banks(struct np_cpu *cpu, uint32_t mode)
{
    uint32_t old = cpu->cpsr & NP_CPSR_MODE;
    unsigned ob = np_cpu_bank(old), nb = np_cpu_bank(mode);
    if (old == mode)
        return;
    if (old == NP_MODE_FIQ) {
        memcpy(cpu->fiq_r8_12, &cpu->r[8], sizeof cpu->fiq_r8_12);
        memcpy(&cpu->r[8], cpu->usr_r8_12, sizeof cpu->usr_r8_12);
    } else if (mode == NP_MODE_FIQ) {
        memcpy(cpu->usr_r8_12, &cpu->r[8], sizeof cpu->usr_r8_12);
        memcpy(&cpu->r[8], cpu->fiq_r8_12, sizeof cpu->fiq_r8_12);
    }
    if (ob == nb)
        return;
    cpu->bank_r13[ob] = cpu->r[13];
    cpu->bank_r14[ob] = cpu->r[14];
    cpu->bank_spsr[ob] = cpu->spsr;
    cpu->r[13] = cpu->bank_r13[nb];
    cpu->r[14] = cpu->bank_r14[nb];
    cpu->spsr = nb ? cpu->bank_spsr[nb] : 0;
}

void np_cpu_set_mode(struct np_cpu *cpu, enum np_cpu_mode mode)
{
    if (!np_mode_valid(mode))
        return;
    switch_banks(cpu, mode);
    cpu->cpsr = (cpu->cpsr & ~NP_CPSR_MODE) | mode;
}

void np_cpsr_write(struct np_cpu *cpu, uint32_t value, uint32_t mask)
{
    uint32_t v = (cpu->cpsr & ~mask) | (value & mask);
    /* an invalid mode is UNPREDICTABLE: the mode stays (as QEMU does) */
    if (!np_mode_valid(v & NP_CPSR_MODE))
        v = (v & ~NP_CPSR_MODE) | (cpu->cpsr & NP_CPSR_MODE);
    switch_banks(cpu, v & NP_CPSR_MODE);
    cpu->cpsr = v;
}

void np_exception_enter(struct np_cpu *cpu, unsigned vector, uint32_t lr)
{
    uint32_t mode, old = cpu->cpsr, f = 0;
    switch (vector) {
    case NP_VEC_UNDEF: mode = NP_MODE_UND; break;
    case NP_VEC_PABT: case NP_VEC_DABT: mode = NP_MODE_ABT; break;
    case NP_VEC_IRQ: mode = NP_MODE_IRQ; break;
    case NP_VEC_FIQ: mode = NP_MODE_FIQ; f = NP_CPSR_F; break;
    case NP_VEC_RESET: mode = NP_MODE_SVC; f = NP_CPSR_F; break;
    default: mode = NP_MODE_SVC; break;
    }
    switch_banks(cpu, mode);
    cpu->spsr = old;
    cpu->r[14] = lr;
    cpu->cpsr = (old & ~(NP_CPSR_MODE | NP_CPSR_T)) | mode | NP_CPSR_I | f;
    cpu->r[15] = vector;
}

uint32_t np_user_reg(struct np_cpu *cpu, unsigned n)
{
    uint32_t mode = cpu->cpsr & NP_CPSR_MODE;
    if (n < 8 || mode == NP_MODE_USR || mode == NP_MODE_SYS)
        return cpu->r[n];
    if (n <= 12)
        return mode == NP_MODE_FIQ ? cpu->usr_r8_12[n - 8] : cpu->r[n];
    return n == 13 ? cpu->bank_r13[0] : cpu->bank_r14[0];
}

void np_set_user_reg(struct np_cpu *cpu, unsigned n, uint32_t v)
{
    uint32_t mode = cpu->cpsr & NP_CPSR_MODE;
    if (n < 8 || mode == NP_MODE_USR || mode == NP_MODE_SYS)
        cpu->r[n] = v;
    else if (n <= 12)
        *(mode == NP_MODE_FIQ ? &cpu->usr_r8_12[n - 8] : &cpu->r[n]) = v;
    else
        *(n == 13 ? &cpu->bank_r13[0] : &cpu->bank_r14[0]) = v;
}

void np_cpu_set_pc(struct np_cpu *cpu, uint32_t addr)
{
    if (addr & 1) {
        cpu->cpsr |= NP_CPSR_T;
        cpu->r[15] = addr & ~1u;
    } else {
        cpu->cpsr &= ~NP_CPSR_T;
        cpu->r[15] = addr & ~3u;
    }
}

/* ---- set-up ---- */

int np_cpu_init(struct np_cpu *cpu, enum np_cpu_model model, const struct np_mem_region *mem, unsigned n,
                const struct np_cpu_timing *timing, const struct np_cpu_hooks *hooks)
{
    memset(cpu, 0, sizeof *cpu);
    if (n > NP_CPU_MAX_REGIONS || model > NP_CPU_CORTEX_M33)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t lo = mem[i].base, hi = lo + mem[i].size;
        if (hi > (1ull << 32) || (mem[i].size && !mem[i].data))
            return -1;
        for (unsigned j = 0; j < i; j++) {
            uint64_t lo2 = mem[j].base, hi2 = lo2 + mem[j].size;
            if (lo < hi2 && lo2 < hi)
                return -1;
        }
    }
    struct np_cpu_impl *im = calloc(1, sizeof *im);
    if (!im)
        return -1;
    /* calloc: the cache's pages cost nothing until code is decoded into
       them; a zero tag is an empty entry */
    im->cache = calloc(NP_DEC_SIZE + 2, sizeof *im->cache); /* + 2 never-used entries: see NEXT */
    if (!im->cache) {
        free(im);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        struct np_region *r = &im->reg[im->nreg];
        if (!mem[i].size)
            continue;
        r->base = mem[i].base;
        r->size = mem[i].size;
        r->data = mem[i].data;
        r->code = calloc(((uint64_t)r->size >> (NP_PAGE_SHIFT + 3)) + 2, 1);
        if (!r->code) {
            for (unsigned j = 0; j < im->nreg; j++)
                free(im->reg[j].code);
            free(im->cache);
            free(im);
            return -1;
        }
        cpu->mem[im->nreg] = mem[i];
        im->nreg++;
    }
    cpu->nmem = im->nreg;
    cpu->model = model;
    if (timing)
        cpu->timing = *timing;
    if (hooks)
        cpu->hooks = *hooks;
    cpu->impl = im;
    cpu->cpsr = NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F;
    cpu->timer_at = UINT64_MAX;
    im->link_at = UINT64_MAX;
    im->fail_cycles = np_cyc(cpu, 1, 0, 0, 1);
    im->exc_cycles = np_cyc(cpu, 2, 1, 0, 3);
    if (np_cpu_is_m(model) && np_m_init(cpu) != 0) {
        np_cpu_free(cpu);
        return -1;
    }
    return 0;
}

void np_cpu_free(struct np_cpu *cpu)
{
    struct np_cpu_impl *im = cpu->impl;
    if (!im)
        return;
    np_m_free(cpu);
    for (unsigned i = 0; i < im->nreg; i++)
        free(im->reg[i].code);
    free(im->cache);
    free(im);
    cpu->impl = NULL;
}

/* ---- memory ---- */

struct np_region *np_region_find(struct np_cpu_impl *im, uint8_t *hint, uint32_t addr, uint32_t len)
{
    for (unsigned i = 0; i < im->nreg; i++) {
        struct np_region *r = &im->reg[i];
        if ((uint64_t)(uint32_t)(addr - r->base) + len <= r->size) {
            *hint = (uint8_t)i;
            return r;
        }
    }
    return NULL;
}

uint8_t *np_cpu_mem(struct np_cpu *cpu, uint32_t addr, uint32_t len)
{
    struct np_cpu_impl *im = cpu->impl;
    struct np_region *r = np_region_find(im, &im->scratch_hint, addr, len);
    return r ? r->data + (addr - r->base) : NULL;
}

void np_invalidate(struct np_cpu_impl *im, uint32_t addr, uint32_t len)
{
    /* Thumb entries from 2 bytes before (a bl pair decoded at its first
       half covers 4 bytes), ARM entries from the word */
    uint32_t h = (addr & ~1u) - 2, nh = (addr + len - h + 1) / 2;
    for (uint32_t i = 0; i < nh; i++, h += 2) {
        struct np_dec *e = np_cache_at(im, h);
        if (e->tag == np_tag(h, true))
            e->tag = 0;
    }
    uint32_t w = addr & ~3u, nw = (addr + len - w + 3) / 4;
    for (uint32_t i = 0; i < nw; i++, w += 4) {
        struct np_dec *e = np_cache_at(im, w);
        if (e->tag == np_tag(w, false))
            e->tag = 0;
    }
}

void np_cpu_wrote(struct np_cpu *cpu, uint32_t addr, uint32_t len)
{
    struct np_cpu_impl *im = cpu->impl;
    if (!len)
        return;
    uint64_t lo = addr, hi = lo + len;
    for (unsigned i = 0; i < im->nreg; i++) {
        struct np_region *r = &im->reg[i];
        uint64_t a = lo > r->base ? lo : r->base, b = hi < (uint64_t)r->base + r->size ? hi : r->base + r->size;
        /* page by page: only pages holding decoded code cost anything */
        while (a < b) {
            uint32_t off = (uint32_t)(a - r->base);
            uint64_t page_end = r->base + (((uint64_t)off >> NP_PAGE_SHIFT) + 1) * (1u << NP_PAGE_SHIFT);
            uint64_t stop = page_end < b ? page_end : b;
            if (np_code_page(r, off))
                np_invalidate(im, (uint32_t)a, (uint32_t)(stop - a));
            a = stop;
        }
    }
}

bool np_fetch(struct np_cpu *cpu, uint32_t addr, unsigned len, uint32_t *insn)
{
    struct np_cpu_impl *im = cpu->impl;
    struct np_region *r = np_region_at(im, &im->scratch_hint, addr, len);
    if (!r)
        return false;
    *insn = len == 4 ? np_ld32(r->data + (addr - r->base)) : np_ld16(r->data + (addr - r->base));
    return true;
}

static void mark_code(struct np_cpu_impl *im, uint32_t addr)
{
    struct np_region *r = np_region_at(im, &im->scratch_hint, addr, 1);
    if (r) {
        uint32_t off = addr - r->base;
        r->code[off >> (NP_PAGE_SHIFT + 3)] |= (uint8_t)(1u << ((off >> NP_PAGE_SHIFT) & 7));
    }
}

bool np_decode(struct np_cpu *cpu, uint32_t addr, bool thumb, struct np_dec *e)
{
    uint32_t insn;
    if (!np_fetch(cpu, addr, thumb ? 2 : 4, &insn))
        return false;
    memset(e, 0, sizeof *e);
    e->cond = NP_COND_AL;
    if (thumb)
        np_decode_thumb(cpu, addr, insn, e);
    else
        np_decode_arm(cpu, addr, insn, e);
    /* a store to these pages now clears the entry (a Thumb pair's second
       half may lie on the next page) */
    mark_code(cpu->impl, addr);
    mark_code(cpu->impl, addr + 3);
    e->tag = np_tag(addr, thumb);
    return true;
}

/* ---- names ---- */

const char *np_cpu_model_name(enum np_cpu_model model)
{
    static const char *const names[] = { "ARM7TDMI", "ARM946E-S", "Cortex-M0", "Cortex-M3", "Cortex-M4",
                                         "Cortex-M33" };
    return (unsigned)model < sizeof names / sizeof *names ? names[model] : "?";
}

int np_cpu_model_parse(const char *name)
{
    if (!strcasecmp(name, "arm7tdmi"))
        return NP_CPU_ARM7TDMI;
    if (!strcasecmp(name, "arm946e-s"))
        return NP_CPU_ARM946ES;
    if (!strcasecmp(name, "cortex-m0") || !strcasecmp(name, "cortex-m0+") || !strcasecmp(name, "cortex-m0plus"))
        return NP_CPU_CORTEX_M0;
    if (!strcasecmp(name, "cortex-m3"))
        return NP_CPU_CORTEX_M3;
    if (!strcasecmp(name, "cortex-m4") || !strcasecmp(name, "cortex-m4f"))
        return NP_CPU_CORTEX_M4;
    if (!strcasecmp(name, "cortex-m33"))
        return NP_CPU_CORTEX_M33;
    return -1;
}
