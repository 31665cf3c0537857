/* emu_fake_cpu.c - the few functions of cpu.h that semihosting uses
 * (regions, memory, the PC's Thumb bit), over the regions alone: what
 * test_emu_semihost links when the interpreter is not built. */
#include "cpu.h"
#include <string.h>

int np_cpu_init(struct np_cpu *cpu, enum np_cpu_model model, const struct np_mem_region *mem, unsigned n,
                const struct np_cpu_timing *timing, const struct np_cpu_hooks *hooks)
{
    if (n > NP_CPU_MAX_REGIONS)
        return -1;
    memset(cpu, 0, sizeof *cpu);
    cpu->model = model;
    if (timing)
        cpu->timing = *timing;
    if (hooks)
        cpu->hooks = *hooks;
    memcpy(cpu->mem, mem, n * sizeof *mem);
    cpu->nmem = n;
    cpu->cpsr = NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F;
    cpu->timer_at = UINT64_MAX;
    return 0;
}

void np_cpu_free(struct np_cpu *cpu)
{
    (void)cpu;
}

void np_cpu_set_pc(struct np_cpu *cpu, uint32_t addr)
{
    if (addr & 1)
        cpu->cpsr |= NP_CPSR_T;
    else
        cpu->cpsr &= ~NP_CPSR_T;
    cpu->r[15] = addr & ~1u;
}

uint8_t *np_cpu_mem(struct np_cpu *cpu, uint32_t addr, uint32_t len)
{
    for (unsigned i = 0; i < cpu->nmem; i++) {
        const struct np_mem_region *m = &cpu->mem[i];
        uint32_t off = addr - m->base;
        if (off < m->size && len <= m->size - off)
            return m->data + off;
    }
    return NULL;
}

void np_cpu_wrote(struct np_cpu *cpu, uint32_t addr, uint32_t len)
{
    (void)cpu, (void)addr, (void)len;
}
