/* insn_gen.h - random ARM and Thumb instruction streams, deterministic from
 * a seed, for the lockstep test of the interpreter against Unicorn
 * (test_emu_lockstep_random.c).
 *
 * A stream lives in a code region and works on a data region:
 *
 *   GEN_PROLOGUE  ARM code that loads every banked register of every mode
 *                 (FIQ r8-r14, the r13/r14/SPSR of IRQ ABT UND SVC, the
 *                 USR/SYS r8-r14) from the table and switches to the
 *                 stream's mode; it ends at GEN_PROLOGUE_END. Run from SVC
 *                 mode in ARM state with r0 = GEN_TABLE. It makes the
 *                 registers no mode can see from the others equal in both
 *                 engines, whatever an earlier stream left there.
 *   GEN_TABLE     the values it loads (random)
 *   GEN_STREAM    the random instructions; the stream is over when the PC
 *                 reaches `end` (every branch goes forward, so it does)
 *   GEN_DATA_*    random bytes; every load and store goes there (its base
 *                 register is set up by the instructions just before it),
 *                 except a stream's last, which may go to GEN_NOWHERE
 *   GEN_NOWHERE   no memory: a stream may end with a load, store or branch
 *                 there, every byte of it outside memory (or with an
 *                 undefined instruction)
 *
 * After the prologue the caller sets r0-r15, the CPSR flags, I, F and T
 * bits and the SPSR to the stream's initial values (the mode is the
 * prologue's). */
#ifndef NP_TEST_INSN_GEN_H
#define NP_TEST_INSN_GEN_H

#include <stdbool.h>
#include <stdint.h>

#define GEN_CODE_BASE 0x00010000u
#define GEN_CODE_SIZE 0x00010000u
#define GEN_PROLOGUE GEN_CODE_BASE
#define GEN_TABLE (GEN_CODE_BASE + 0x200u)
#define GEN_STREAM (GEN_CODE_BASE + 0x400u)
#define GEN_DATA_BASE 0x00100000u
#define GEN_DATA_SIZE 0x00010000u
#define GEN_NOWHERE 0x20000000u

/* What the streams may contain. */
enum gen_isa {
    GEN_V4T,  /* ARMv4T only, and nothing whose result differs between v4T and v5TE */
    GEN_V5TE, /* ARMv5TE as the ARM946E-S implements it */
    /* the Cortex-M architectures (Thumb only; see "Cortex-M streams") */
    GEN_V6M,  /* ARMv6-M: Cortex-M0 */
    GEN_V7M,  /* ARMv7-M: Cortex-M3 */
    GEN_V7EM, /* ARMv7E-M with FPv4-SP: Cortex-M4F */
    GEN_V8M   /* ARMv8-M mainline with the DSP extension and FPv5-SP: Cortex-M33 */
};

/* Instruction classes a caller may leave out of the streams
 * (gen_stream's EXCLUDE): for a known difference still open, so that the
 * rest stays compared. */
enum gen_class {
    GEN_X_HALFWORD_MUL = 1u << 0, /* smla<x><y> smlaw<y> smulw<y> smlal<x><y> smul<x><y> */
    /* Cortex-M streams */
    GEN_X_M_IT = 1u << 1,    /* IT blocks */
    GEN_X_M_DSP = 1u << 2,   /* the DSP extension's instructions */
    GEN_X_M_FP = 1u << 3,    /* FP instructions */
    GEN_X_M_LDST = 1u << 4,  /* 32-bit loads and stores (ldm/stm, ldrd/strd, ldrex/strex included) */
    GEN_X_M_BRANCH = 1u << 5, /* branches (b, bl, bx, cbz, tbb, pop pc ...) */
    GEN_X_M_SYS = 1u << 6     /* mrs, msr, barriers */
};

/* Cortex-M streams (GEN_V6M ... GEN_V8M). No prologue: prologue_end is
 * `start`, and the caller sets r0-r15, the xPSR (`cpsr`: N Z C V Q and GE,
 * no IT block), s0-s31 and the FPSCR (fs, fpscr: with an FPU) to the
 * stream's before running it from `start`, in thread mode, privileged, on
 * the main stack. The SP points into the data region (its upper half) and
 * stays there: push/pop and add/sub sp are balanced around it. Every
 * memory access but a faulting last one goes to the data region (the
 * pc-relative loads read the code region). No svc (an exception on a
 * Cortex-M), no exception at all. insn_gen.c lists what is left out and
 * why. */

/* How a stream ends: at `end`, or stopped by its last instruction, which
 * must change nothing: an access outside memory, or an undefined
 * instruction. */
enum gen_fault { GEN_FAULT_NONE, GEN_FAULT_READ, GEN_FAULT_WRITE, GEN_FAULT_FETCH, GEN_FAULT_UNDEFINED };

struct gen_stream {
    uint8_t code[GEN_CODE_SIZE]; /* the code region's image */
    uint8_t data[GEN_DATA_SIZE]; /* the data region's image */
    uint32_t prologue_end;       /* the prologue is over when the PC is here */
    uint32_t start;              /* the stream's first instruction; bit 0: Thumb */
    uint32_t end;                /* the stream is over when the PC is here */
    uint32_t r[16];              /* the stream's initial r0-r14 (r[15] = start & ~1) */
    uint32_t cpsr;               /* its initial CPSR, mode included (Cortex-M: the xPSR) */
    uint32_t spsr;               /* its mode's SPSR (0 in USR and SYS) */
    unsigned insns;              /* instructions emitted (a Thumb bl pair counts 2) */
    enum gen_fault fault;        /* how the stream stops */
    uint32_t fault_addr;         /* the address it faults at (not for GEN_FAULT_UNDEFINED) */
    uint32_t fs[32], fpscr;      /* Cortex-M with an FPU: the initial s0-s31 and FPSCR */
};

/* Fills S with a stream of about ITEMS instruction groups (an instruction
 * with the set-up it needs), from SEED, without the classes in EXCLUDE
 * (enum gen_class). THUMB: the stream starts in Thumb state (it switches
 * state on the way, where the ISA allows; always Thumb for a Cortex-M
 * ISA). */
void gen_stream(struct gen_stream *s, uint64_t seed, enum gen_isa isa, bool thumb, unsigned items, unsigned exclude);

/* The answers of the streams' svc and bkpt instructions, the same in both
 * engines: what r0 becomes. */
static inline uint32_t gen_svc_result(uint32_t r0, uint32_t imm)
{
    return (r0 ^ imm) * 0x9e3779b1u + 1;
}
static inline uint32_t gen_bkpt_result(uint32_t r0, uint32_t imm)
{
    return (r0 + imm) * 0x85ebca6bu ^ 0x5bd1e995u;
}

#endif
