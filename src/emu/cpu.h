/* cpu.h - an interpreter of 32-bit ARM code, ARM and Thumb states: ARMv4T
 * as the ARM7TDMI runs it, ARMv5TE as the ARM946E-S does (blx, clz, the
 * saturating and DSP multiplies, ldrd/strd, pld, bkpt), with the
 * processor modes, their banked registers and the exceptions.
 *
 * It is what `nanoprof emu` runs firmware on. It counts every instruction
 * and the cycles each takes by a per-CPU cycle model (docs/emulator.md),
 * and tells a hook of every instruction that writes the PC, with what kind
 * of instruction it was: the profiler decides from that which are calls,
 * returns and jumps (calltrack.c). Semihosting calls (svc, bkpt) go to a
 * second hook. Memory is a few flat regions the caller gives; an access
 * outside them stops the run, as does an undefined instruction.
 *
 * The struct is public so that the hooks and the tests read registers
 * with no call; write them only between runs (np_cpu_set_mode, np_cpu_set_pc
 * keep the banks and the decoded code right). */
#ifndef NP_EMU_CPU_H
#define NP_EMU_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum np_cpu_model {
    NP_CPU_ARM7TDMI,  /* ARMv4T, 3-stage pipeline */
    NP_CPU_ARM946ES,  /* ARMv5TE, 5-stage pipeline */
    /* the Cortex-M CPUs (cpu_m.h): Thumb state only, the M-profile exception model */
    NP_CPU_CORTEX_M0, /* ARMv6-M (M0, M0+) */
    NP_CPU_CORTEX_M3, /* ARMv7-M */
    NP_CPU_CORTEX_M4, /* ARMv7E-M: the DSP extension, and FPv4-SP when the ELF uses it (M4F) */
    NP_CPU_CORTEX_M33 /* ARMv8-M mainline without TrustZone: DSP, FPv5-SP */
};

/* CPSR mode field values. */
enum np_cpu_mode {
    NP_MODE_USR = 0x10,
    NP_MODE_FIQ = 0x11,
    NP_MODE_IRQ = 0x12,
    NP_MODE_SVC = 0x13,
    NP_MODE_ABT = 0x17,
    NP_MODE_UND = 0x1b,
    NP_MODE_SYS = 0x1f
};

/* CPSR bits. */
#define NP_CPSR_N (1u << 31)
#define NP_CPSR_Z (1u << 30)
#define NP_CPSR_C (1u << 29)
#define NP_CPSR_V (1u << 28)
#define NP_CPSR_Q (1u << 27) /* ARMv5TE */
#define NP_CPSR_I (1u << 7)
#define NP_CPSR_F (1u << 6)
#define NP_CPSR_T (1u << 5)
#define NP_CPSR_MODE 0x1fu

/* Exception vectors (offsets from 0). */
enum np_cpu_vector {
    NP_VEC_RESET = 0x00,
    NP_VEC_UNDEF = 0x04,
    NP_VEC_SWI = 0x08,
    NP_VEC_PABT = 0x0c,
    NP_VEC_DABT = 0x10,
    NP_VEC_IRQ = 0x18,
    NP_VEC_FIQ = 0x1c
};

/* What an instruction that wrote the PC was. The class is the decoder's;
 * calls, returns and jumps are the profiler's to decide. */
enum np_branch_kind {
    NP_BR_B,          /* b (ARM), b / b<cond> (Thumb): a PC-relative branch without link */
    NP_BR_BL,         /* bl, blx <imm> (ARMv5), the Thumb bl/blx pair: LR = the return address */
    NP_BR_BLX_REG,    /* blx <reg> (ARMv5): LR = the return address; reg = the register */
    NP_BR_BX,         /* bx <reg>; reg = the register (14 for bx lr) */
    NP_BR_MOV_PC,     /* mov pc, <reg> (ARM), mov/add pc, <hi reg> (Thumb); reg = the register */
    NP_BR_DP_PC,      /* any other data-processing write of the PC (add pc, pc, r0, ...);
                         reg = its first operand register */
    NP_BR_LDR_PC,     /* ldr pc, [...] in any addressing mode; reg = the base register */
    NP_BR_LDM_PC,     /* ldm / pop with the PC in the list; reg = the base register (13: pop) */
    NP_BR_EXC_RETURN, /* a PC write that also copies SPSR to CPSR: subs pc, lr, #4; movs pc, lr;
                         ldm ..., {..., pc}^; reg = the (first operand / base) register */
    NP_BR_EXCEPTION   /* an exception was taken: `to` is its vector, `vector` says which;
                         `from` is the address of the instruction it interrupted or that caused it */
};

/* np_branch.flags */
#define NP_BRF_THUMB 0x01      /* the CPU is in Thumb state after the branch */
#define NP_BRF_FROM_THUMB 0x02 /* the instruction was a Thumb one */
#define NP_BRF_LINKED 0x04     /* the instruction executed just before it wrote LR from the PC
                                  (mov lr, pc / add lr, pc, #n / sub lr, pc, #n): LR holds a return
                                  address, as for the indirect call idioms */
#define NP_BRF_COND 0x08       /* the instruction was conditional (and its condition held) */
#define NP_BRF_EXC_M 0x10      /* NP_BR_EXCEPTION of a Cortex-M: `from` is the address the exception
                                  returns to, `vector` the exception number's low 8 bits */

/* One executed instruction that wrote the PC (not-taken conditional
 * branches are not told). Told after it executed: registers, CPSR, the
 * mode and the counters are those after it. */
struct np_branch {
    uint32_t from;    /* the instruction's address; for the Thumb bl/blx pair, its first half's */
    uint32_t to;      /* the new PC (bit 0 clear) */
    uint8_t kind;     /* enum np_branch_kind */
    uint8_t reg;      /* see the kinds; 15 when none */
    uint8_t flags;    /* NP_BRF_* */
    uint8_t vector;   /* NP_BR_EXCEPTION: enum np_cpu_vector */
    uint32_t sp;      /* NP_BR_EXCEPTION of a Cortex-M (NP_BRF_EXC_M): the stack pointer the
                         code it interrupted has when it returns; 0 otherwise */
};

/* Why np_cpu_run returned. */
enum np_cpu_stop {
    NP_STOP_LIMIT = 0,  /* the instruction limit was reached */
    NP_STOP_HALT,       /* a hook asked to stop (np_cpu_halt): a semihosting exit, an error */
    NP_STOP_UNDEFINED,  /* an undefined instruction (or one of another architecture):
                           pc = its address; nothing was executed */
    NP_STOP_FETCH,      /* an instruction fetch outside memory: pc = fault_addr */
    NP_STOP_READ,       /* a data read outside memory: fault_addr; pc = the instruction */
    NP_STOP_WRITE       /* a data write outside memory: fault_addr; pc = the instruction */
};

#define NP_CPU_MAX_REGIONS 8

/* A range of guest memory backed by host memory: readable, writable and
 * executable alike. Regions do not overlap. */
struct np_mem_region {
    uint32_t base;
    uint32_t size;
    uint8_t *data;    /* SIZE bytes, owned by the caller */
};

/* Cycle model parameters (docs/emulator.md). On a Cortex-M they are its
 * flash's, the Code region below NP_M_FLASH_END: N for each non-sequential
 * access (a jump's or an exception's instruction fetch, a data read, the
 * vector read), S for each 32-bit word of straight-line code fetched. */
struct np_cpu_timing {
    unsigned n_wait;  /* wait states added to every non-sequential access (0: zero-wait memory) */
    unsigned s_wait;  /* wait states added to every sequential access */
};
#define NP_M_FLASH_END 0x20000000u

/* The Cortex-M CPUs' registers beyond r[] and cpsr (cpu_m.h). */
struct np_cpu_m_state {
    uint32_t msp, psp;          /* the banked stack pointers; the active one is r[13], and
                                   its copy here is stale until np_m_sp_sync */
    uint32_t msplim, psplim;    /* ARMv8-M */
    uint32_t primask, faultmask, basepri, control;
    uint32_t ipsr;              /* the exception being handled; 0 in thread mode */
    uint32_t itstate;           /* ITSTATE as the ARM ARM has it (IT[7:0]); 0 outside IT blocks */
    uint32_t excl_addr;         /* the local exclusive monitor: ldrex's address */
    bool excl_open;
    uint32_t features;          /* NP_MFEAT_* */
    /* the FPU: s0-s31 (d0-d15 as pairs), FPSCR */
    uint32_t s[32];
    uint32_t fpscr;
    bool waits;                 /* flash wait states (np_cpu.timing): every instruction stepped */
    bool fetch_jumped;          /* the next fetch is a jump's: non-sequential */
    /* np_m_step's report */
    uint8_t fault;              /* enum np_m_fault, with NP_M_FAULT */
    uint32_t exc_return;        /* with NP_M_EXC_RETURN */
};

struct np_cpu;

struct np_cpu_hooks {
    void *ctx;
    /* Every instruction that wrote the PC, and every exception taken.
     * NULL: none told (the fastest run). */
    void (*branch)(void *ctx, struct np_cpu *cpu, const struct np_branch *b);
    /* svc / swi with its comment field IMM (24 bits in ARM state, 8 in
     * Thumb), before the exception would be taken. Return 1 when handled
     * (semihosting: the CPU goes on with the next instruction, no
     * exception), 0 to take the SWI exception. NULL: always 0. */
    int (*svc)(void *ctx, struct np_cpu *cpu, uint32_t imm);
    /* bkpt IMM (ARMv5, and Thumb bkpt 0xab semihosting on either CPU):
     * 1 when handled (go on with the next instruction); 0: a prefetch
     * abort on the ARM946E-S, an undefined instruction on the ARM7TDMI. */
    int (*bkpt)(void *ctx, struct np_cpu *cpu, uint32_t imm);
    /* Called once cycles >= timer_at (checked at least once per executed
     * basic block), before the next instruction. It sets timer_at again
     * (UINT64_MAX: never) and may raise irq_line. NULL: no timer. */
    void (*timer)(void *ctx, struct np_cpu *cpu);
};

struct np_cpu {
    /* ---- architectural state ---- */
    uint32_t r[16];             /* the current mode's view; r[15] = the next instruction's address
                                   between instructions (not the pipeline's +8/+4) */
    uint32_t cpsr;
    uint32_t spsr;              /* the current mode's (0 in USR/SYS) */
    /* banked copies of the registers not currently in r[]: index by np_cpu_bank() */
    uint32_t bank_r13[6], bank_r14[6], bank_spsr[6];
    uint32_t fiq_r8_12[5], usr_r8_12[5];
    /* ---- counters ---- */
    uint64_t insns;             /* instructions executed (a Thumb bl/blx pair counts as two) */
    uint64_t cycles;            /* by the cycle model */
    /* ---- interrupts ---- */
    bool irq_line;              /* an IRQ is raised: taken before the next instruction when
                                   CPSR.I is clear (the line stays up until cleared) */
    uint64_t timer_at;          /* see hooks.timer; UINT64_MAX: off */
    /* ---- why the run stopped ---- */
    uint32_t fault_addr;
    /* ---- configuration (np_cpu_init) ---- */
    enum np_cpu_model model;
    struct np_cpu_timing timing;
    struct np_cpu_hooks hooks;
    struct np_mem_region mem[NP_CPU_MAX_REGIONS];
    unsigned nmem;
    /* the Cortex-M registers (models NP_CPU_CORTEX_*) */
    struct np_cpu_m_state m;
    /* the interpreter's own state (decoded code, ...); the Cortex-M system's */
    void *impl;
    void *sys;
    bool halt;                  /* set by np_cpu_halt */
};

/* Sets up CPU for MODEL over the regions MEM[0..N-1] (copied; the data
 * stay the caller's). The CPU starts in SVC mode, ARM state, IRQ and FIQ
 * masked, r[] zero, at pc 0. Returns 0, or -1 (out of memory, N too big,
 * overlapping regions). */
int np_cpu_init(struct np_cpu *cpu, enum np_cpu_model model, const struct np_mem_region *mem, unsigned n,
                const struct np_cpu_timing *timing, const struct np_cpu_hooks *hooks);
void np_cpu_free(struct np_cpu *cpu);

/* Sets the PC to ADDR; bit 0 set selects Thumb state. */
void np_cpu_set_pc(struct np_cpu *cpu, uint32_t addr);
/* Switches to MODE, banking registers as an exception or msr would. */
void np_cpu_set_mode(struct np_cpu *cpu, enum np_cpu_mode mode);
/* The bank index of MODE for the bank_* arrays (USR and SYS share 0). */
unsigned np_cpu_bank(enum np_cpu_mode mode);

/* Runs until MAX_INSNS more instructions have executed or a stop reason
 * arises; returns the reason. An instruction that stops the run with a
 * fault is not counted and changes nothing. */
enum np_cpu_stop np_cpu_run(struct np_cpu *cpu, uint64_t max_insns);
/* From a hook: stop np_cpu_run after the current instruction (NP_STOP_HALT). */
static inline void np_cpu_halt(struct np_cpu *cpu) { cpu->halt = true; }

/* Guest memory for the hooks: a host pointer to LEN bytes at ADDR when
 * they lie in one region, else NULL. Writing through it is allowed
 * (semihosting reads into guest memory): call np_cpu_wrote afterwards so
 * that code decoded there is decoded again. */
uint8_t *np_cpu_mem(struct np_cpu *cpu, uint32_t addr, uint32_t len);
void np_cpu_wrote(struct np_cpu *cpu, uint32_t addr, uint32_t len);

/* "ARM7TDMI", "ARM946E-S". */
const char *np_cpu_model_name(enum np_cpu_model model);
/* "arm7tdmi" / "arm946e-s" -> model; -1 when unknown. */
int np_cpu_model_parse(const char *name);
/* The instruction at ADDR (Thumb when THUMB) as text, for error
 * messages ("ldr r0, [r1, #4]"), into BUF; falls back to its hex value. */
const char *np_cpu_disasm(struct np_cpu *cpu, uint32_t addr, bool thumb, char *buf, size_t size);

#endif
