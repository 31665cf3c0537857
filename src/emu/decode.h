/* decode.h - what an ARM or Thumb instruction does to the flow of
 * control, decoded by Capstone: for sources that see which addresses ran
 * but not how (a QEMU execution log), so that the call tracker is told of
 * each PC write as the interpreter tells it (cpu.h, struct np_branch).
 *
 * Capstone is loaded when first needed (dlopen of its SONAME): linked
 * into the command, its tables' 78,000 relocations cost every start of
 * `nanoprof` (so of `nanoprof record`) about 1 ms. */
#ifndef NP_EMU_DECODE_H
#define NP_EMU_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One instruction, as far as the flow of control goes. */
struct np_insn_flow {
    uint32_t addr;
    uint32_t target;   /* direct: where it goes when taken (bit 0 clear) */
    uint8_t size;      /* bytes */
    uint8_t writes_pc; /* it may write the PC: kind and reg say how */
    uint8_t kind;      /* enum np_branch_kind (cpu.h) */
    uint8_t reg;       /* as struct np_branch's; 15 when none */
    uint8_t cond;      /* conditional: it may fall through instead */
    uint8_t direct;    /* its target is TARGET */
    uint8_t raises;    /* svc, udf: it raises an exception (the next is a handler) */
    uint8_t ends_block; /* QEMU ends a translation block after it (isb, msr, cps, wfi,
                           wfe, sev, yield, bkpt): the CPU's state may change */
    uint8_t bkpt;      /* bkpt: semihosting's call on a Cortex-M */
};

/* Decodes up to MAX instructions of CODE (LEN bytes at ADDR; Thumb code
 * of a Cortex-M when MCLASS), in order, into OUT, stopping after the first
 * one that writes the PC or raises an exception. Returns how many; 0
 * when the first cannot be decoded; -1 when Capstone is not there. */
int np_decode_flow(const uint8_t *code, size_t len, uint32_t addr, bool thumb, bool mclass,
                   struct np_insn_flow *out, int max);

/* One instruction as text ("pop {r4, pc}") into BUF; NULL when Capstone
 * is not there or cannot decode it. 4-byte Thumb instructions are only
 * taken as the bl/blx pair unless THUMB2. */
const char *np_decode_text(const uint8_t *code, size_t len, uint32_t addr, bool thumb, bool thumb2, char *buf,
                           size_t size);

#endif
