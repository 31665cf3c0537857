/* cpu_cycles.c - the cycle model's helpers (docs/emulator.md, "Cycle
 * model"): S/N/I cycles with wait states on the ARM7TDMI, core cycles plus
 * bus wait states and load-use interlocks on the ARM946E-S. The decoders
 * put each instruction's cycles in its np_dec; what depends on values
 * (the ARM7TDMI's multiplier cycles) is added when it runs. */
#include "cpu_internal.h"

unsigned np_cyc(const struct np_cpu *cpu, unsigned s, unsigned n, unsigned i, unsigned core)
{
    if (cpu->model == NP_CPU_ARM7TDMI)
        return s * (1 + cpu->timing.s_wait) + n * (1 + cpu->timing.n_wait) + i;
    return core + s * cpu->timing.s_wait + n * cpu->timing.n_wait;
}

/* The registers an ARM instruction reads, a superset where the encoding
 * leaves it open (enough for the interlocks). */
static uint32_t arm_reads(uint32_t insn)
{
    uint32_t rn = 1u << ((insn >> 16) & 15), rd = 1u << ((insn >> 12) & 15), rs = 1u << ((insn >> 8) & 15),
             rm = 1u << (insn & 15);
    if ((insn >> 28) == 0xf)
        return 0;
    switch ((insn >> 25) & 7) {
    case 0:
        if ((insn & 0x0ffffff0) == 0x012fff10 || (insn & 0x0ffffff0) == 0x012fff30)
            return rm;
        if ((insn & 0x0f0000f0) == 0x00000090) /* multiplies: rd for the long accumulates */
            return rm | rs | rd | ((insn & 0x00a00000) == 0x00a00000 ? rn : 0);
        if ((insn & 0x0fb00ff0) == 0x01000090) /* swp */
            return rn | rm;
        if ((insn & 0x90) == 0x90) /* halfword and doubleword transfers */
            return rn | ((insn & (1u << 22)) ? 0 : rm) | ((insn & (1u << 20)) ? 0 : rd);
        return ((((insn >> 21) & 15) == NP_DP_MOV || ((insn >> 21) & 15) == NP_DP_MVN) ? 0 : rn) | rm |
               ((insn & 0x10) ? rs : 0);
    case 1:
        return rn;
    case 2:
        return rn | ((insn & (1u << 20)) ? 0 : rd);
    case 3:
        return rn | rm | ((insn & (1u << 20)) ? 0 : rd);
    case 4:
        return rn | ((insn & (1u << 20)) ? 0 : (insn & 0xffff));
    case 7:
        return (insn & (1u << 24)) ? 0 : rd;
    default:
        return 0;
    }
}

static uint32_t thumb_reads(uint32_t hw)
{
    uint32_t r0 = 1u << (hw & 7), r3 = 1u << ((hw >> 3) & 7), r6 = 1u << ((hw >> 6) & 7),
             r8 = 1u << ((hw >> 8) & 7);
    switch (hw >> 13) {
    case 0:
        if ((hw >> 11) == 3)
            return r3 | r6;
        return r3;
    case 1:
        return (hw >> 11) == 4 ? 0 : r8;
    case 2:
        if ((hw >> 10) == 0x10)
            return r0 | r3;
        if ((hw >> 10) == 0x11)
            return (1u << ((hw & 7) | ((hw >> 4) & 8))) | (1u << ((hw >> 3) & 15));
        if ((hw >> 11) == 9)
            return 0;
        return r3 | r6 | (((hw >> 9) & 7) < 3 ? r0 : 0);
    case 3:
    case 4:
        if ((hw >> 12) == 9)
            return (1u << 13) | ((hw & 0x0800) ? 0 : r8);
        return r3 | ((hw & 0x0800) ? 0 : r0);
    case 5:
        if ((hw >> 12) == 0xa)
            return (hw & 0x0800) ? 1u << 13 : 0;
        return (1u << 13) | (hw & 0x1ff);
    case 6:
        if ((hw >> 12) == 0xc)
            return r8 | (hw & 0xff);
        return 0;
    default:
        return (hw >> 11) == 0x1f ? 1u << 14 : 0;
    }
}

/* The registers the instruction at ADDR reads; 0 when it cannot be read. */
static uint32_t next_reads(struct np_cpu *cpu, uint32_t addr, bool thumb)
{
    uint32_t insn;
    if (!np_fetch(cpu, addr, thumb ? 2 : 4, &insn))
        return 0;
    return thumb ? thumb_reads(insn) : arm_reads(insn);
}

unsigned np_load_use(struct np_cpu *cpu, uint32_t addr, bool thumb, unsigned reg, bool subword)
{
    if (cpu->model != NP_CPU_ARM946ES || reg == 15)
        return 0;
    if (!(next_reads(cpu, addr + (thumb ? 2 : 4), thumb) & (1u << reg)))
        return 0;
    return subword ? 2 : 1;
}
