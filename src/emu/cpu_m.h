/* cpu_m.h - the Cortex-M side of the interpreter: ARMv6-M (Cortex-M0/M0+),
 * ARMv7-M (Cortex-M3), ARMv7E-M (Cortex-M4, M4F: DSP and FPv4-SP) and
 * ARMv8-M mainline without TrustZone (Cortex-M33). Private to src/emu.
 *
 * Three parts, each its own file:
 * - cpu_m_exec.c: the instruction set. np_m_step runs one instruction:
 *   Thumb and Thumb-2, IT blocks, the integer instructions of each
 *   architecture, MRS/MSR/CPS, and the cycles each takes by the TRM's
 *   tables. It tells the branch hook of every PC write, as cpu.h says.
 * - cpu_m_dsp.c, cpu_m_fp.c: the DSP extension and the FPU, called by
 *   np_m_step for their encodings.
 * - cpu_m_sys.c: the system: reset from the vector table, exception entry
 *   and return (stacking, EXC_RETURN, priorities, tail-chaining), NVIC,
 *   SCB, SysTick, DWT, the board's devices and the memory map, and
 *   np_m_run, the loop around np_m_step.
 *
 * The architectural registers live in struct np_cpu (cpu.h): r[0..15]
 * with r[13] the active stack pointer and r[15] the address of the next
 * instruction; cpsr holds N Z C V Q (bits 31-27) and GE (19-16) where the
 * xPSR has them, and NP_CPSR_T, so that code shared with the ARM CPUs
 * reads flags and state alike. The rest of the xPSR (IPSR, ITSTATE) and the
 * special registers are in cpu->m. */
#ifndef NP_EMU_CPU_M_H
#define NP_EMU_CPU_M_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cpu.h"

/* Exception numbers (IPSR values). External interrupt n is 16 + n. */
enum {
    NP_EXC_RESET = 1,
    NP_EXC_NMI = 2,
    NP_EXC_HARDFAULT = 3,
    NP_EXC_MEMMANAGE = 4,
    NP_EXC_BUSFAULT = 5,
    NP_EXC_USAGEFAULT = 6,
    NP_EXC_SVCALL = 11,
    NP_EXC_DEBUGMON = 12,
    NP_EXC_PENDSV = 14,
    NP_EXC_SYSTICK = 15,
    NP_EXC_IRQ0 = 16
};

/* What np_m_step did. */
enum np_m_result {
    NP_M_OK = 0,      /* the instruction ran; r[15] is the next one's address */
    NP_M_FAULT,       /* a fault: nothing of the instruction was done (registers, memory,
                         flags as before it; r[15] its address); m.fault says which */
    NP_M_SVC,         /* svc ran: r[15] is the next instruction's address; the SVCall
                         exception is the system's to take */
    NP_M_WFI,         /* wfi / wfe ran (r[15] next): sleep until an exception */
    NP_M_EXC_RETURN,  /* a PC write of an EXC_RETURN value in handler mode: m.exc_return is
                         the value, r[15] is not yet written; the branch is not told */
    NP_M_HALT         /* a hook asked to stop (bkpt semihosting exit, ...); r[15] next */
};

/* m.fault: which fault np_m_step found, and where. */
enum np_m_fault {
    NP_MF_NONE = 0,
    NP_MF_UNDEFINED,  /* UsageFault UNDEFINSTR: an encoding this CPU does not have */
    NP_MF_INVSTATE,   /* UsageFault INVSTATE: bx/blx/ldr pc/pop to an even address */
    NP_MF_UNALIGNED,  /* UsageFault UNALIGNED: an unaligned access that must be aligned */
    NP_MF_DIVBYZERO,  /* UsageFault DIVBYZERO (only with CCR.DIV_0_TRP) */
    NP_MF_NOCP,       /* UsageFault NOCP: an FP instruction with the FPU off or absent */
    NP_MF_READ,       /* BusFault: a data read where nothing is (fault_addr) */
    NP_MF_WRITE,      /* BusFault: a data write where nothing is (fault_addr) */
    NP_MF_FETCH,      /* an instruction fetch where nothing is (fault_addr = r[15]) */
    NP_MF_BKPT        /* bkpt nothing handled (HardFault on a CPU without a debugger) */
};

/* Which CPU features the model has (np_m_features). */
#define NP_MFEAT_V7M 0x01    /* ARMv7-M: Thumb-2 beyond ARMv6-M's few 32-bit instructions,
                                BASEPRI, FAULTMASK, the configurable faults, udiv/sdiv */
#define NP_MFEAT_DSP 0x02    /* ARMv7E-M DSP extension */
#define NP_MFEAT_FPU 0x04    /* FPv4-SP (M4F) / FPv5-SP (M33): single precision */
#define NP_MFEAT_V8M 0x08    /* ARMv8-M mainline: MSPLIM/PSPLIM, lda/stl, tt, cbz ... */


/* The features of a Cortex-M model; 0 for the ARM CPUs. */
uint32_t np_m_features(enum np_cpu_model model);
static inline bool np_cpu_is_m(enum np_cpu_model model) { return model >= NP_CPU_CORTEX_M0; }

/* Handler mode (an exception is active): a PC write of 0xF0000000 and above
 * is an exception return. */
static inline bool np_m_handler(const struct np_cpu *cpu) { return cpu->m.ipsr != 0; }
/* Privileged: handler mode, or CONTROL.nPRIV clear. */
static inline bool np_m_privileged(const struct np_cpu *cpu)
{
    return cpu->m.ipsr != 0 || !(cpu->m.control & 1);
}
/* The process stack is the active one (thread mode with CONTROL.SPSEL). */
static inline bool np_m_on_psp(const struct np_cpu *cpu) { return cpu->m.ipsr == 0 && (cpu->m.control & 2); }
/* Writes r[13] back to its banked copy (msp or psp). */
static inline void np_m_sp_sync(struct np_cpu *cpu)
{
    if (np_m_on_psp(cpu))
        cpu->m.psp = cpu->r[13];
    else
        cpu->m.msp = cpu->r[13];
}
/* Sets CONTROL (and the mode, through IPSR, is the caller's): the active
 * stack pointer follows SPSEL. Use for every write of CONTROL or IPSR. */
void np_m_set_control_ipsr(struct np_cpu *cpu, uint32_t control, uint32_t ipsr);

/* The xPSR as MRS and the exception stack frame have it (T bit set). */
uint32_t np_m_xpsr(const struct np_cpu *cpu);
/* Writes flags, GE, IPSR-free parts from an xPSR value (exception return,
 * msr APSR_*): MASK selects N Z C V Q (0xf8000000), GE (0x000f0000), the
 * IT bits (0x0600fc00). */
void np_m_xpsr_write(struct np_cpu *cpu, uint32_t value, uint32_t mask);

/* ---- memory, for the instruction set and the FPU ------------------------
 * Each access returns 0, or a fault (NP_MF_READ, NP_MF_WRITE with
 * cpu->fault_addr set, NP_MF_UNALIGNED) and changes nothing. Memory is
 * the regions of np_cpu_init and the system's devices (the PPB at
 * 0xE0000000, the board's); stores into decoded code are taken care of.
 * Alignment: LEN 2 or 4 unaligned is allowed on ARMv7-M and later (unless
 * CCR.UNALIGN_TRP) and faults on ARMv6-M; pass ALIGNED for the accesses that
 * must be aligned on every CPU (ldm/stm, ldrd/strd, ldrex/strex, vldr...). */
int np_m_read(struct np_cpu *cpu, uint32_t addr, unsigned len, bool aligned, uint32_t *val);
int np_m_write(struct np_cpu *cpu, uint32_t addr, unsigned len, bool aligned, uint32_t val);
/* Privileged-only fetch of instruction halfwords; 0 or NP_MF_FETCH. */
int np_m_fetch16(struct np_cpu *cpu, uint32_t addr, uint32_t *hw);

/* ---- the instruction set (cpu_m_exec.c) ---- */

/* Runs the instruction at r[15] (Thumb state, always), counting it in
 * cpu->insns and its cycles in cpu->cycles unless it faults. Calls the
 * branch hook after any PC write but an exception return, the bkpt hook
 * for bkpt (0: NP_M_FAULT with NP_MF_BKPT), nothing for svc (NP_M_SVC). */
enum np_m_result np_m_step(struct np_cpu *cpu);

/* Runs instructions from the decoded-instruction cache, ITSTATE clear,
 * until cpu->insns reaches END, the cycles CYCLE_LIMIT (SysTick's next
 * event), an instruction np_m_step had to run (the last run: what it
 * returned, *AT its address), or a hook halted. Anything that could make
 * an exception pending or takeable (the PPB, devices, msr, cps, svc, an
 * exception return) goes through np_m_step, so none is missed. */
enum np_m_result np_m_run_fast(struct np_cpu *cpu, uint64_t end, uint64_t cycle_limit, uint32_t *at);

/* The DSP extension (cpu_m_dsp.c): runs the 32-bit instruction
 * HW1:HW2 when it is one of ARMv7E-M's DSP instructions (the parallel add
 * and subtract, saturating, packing, SIMD select, sum of absolute
 * differences, the signed multiplies smla*, smlal*, smuad, smlsd, smmul...,
 * usat16/ssat16, sxtab16...), with its condition passed. Returns 1 when it
 * was one (done, registers and GE/Q flags written), 0 when not (nothing
 * done). *CYC: its cycles. */
int np_m_dsp(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc);
/* The FPU (cpu_m_fp.c): the same for the coprocessor-10/11 encodings
 * (vadd.f32 ... vldm/vstm/vpush/vpop, vmov, vmrs/vmsr, vcvt). Returns 1
 * done, 0 not an FP instruction, or -F for a fault F (NP_MF_NOCP when
 * CPACR disables the FPU, a memory fault of vldr/vstr). */
int np_m_fp(struct np_cpu *cpu, uint32_t hw1, uint32_t hw2, unsigned *cyc);

/* ---- the system (cpu_m_sys.c) ---- */

/* CPACR gives this code the FPU (CP10: full access, or privileged access
 * and the code is privileged). */
bool np_m_fpu_enabled(const struct np_cpu *cpu);
/* Before an FP instruction: the FP context an exception left to stack
 * lazily (FPCCR.LSPACT) written at FPCAR. 0, or the write's fault. */
int np_m_fp_preserve(struct np_cpu *cpu);

/* A device of the board: reads and writes of LEN bytes at OFF from its
 * base. A read returns 0 and the value, or non-zero for a bus error. */
typedef int (*np_m_device_read)(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t *val);
typedef int (*np_m_device_write)(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t val);
/* Adds a device at [BASE, BASE+SIZE) (outside the memory regions): 0, or
 * -1 when there are too many. NIRQ: the NVIC's external interrupts
 * (np_m_set_irqs). */
int np_m_add_device(struct np_cpu *cpu, uint32_t base, uint32_t size, np_m_device_read read,
                    np_m_device_write write, void *ctx);
void np_m_set_irqs(struct np_cpu *cpu, unsigned nirq);
/* Pends external interrupt IRQ (a device's line). */
void np_m_pend_irq(struct np_cpu *cpu, unsigned irq);

/* Reset as the hardware does it: VTOR = VTOR, MSP from its word 0, the PC
 * from word 1, thread mode, privileged, on the MSP. Returns 0, or the
 * fault (NP_MF_READ: the vector table is not in memory; NP_MF_INVSTATE:
 * the reset vector's bit 0 is clear). */
int np_m_reset(struct np_cpu *cpu, uint32_t vtor);

/* The last fault the firmware took, or that stopped the run: for its
 * one-line report. */
struct np_m_fault_info {
    unsigned exception;     /* the exception it raised (NP_EXC_*), after escalation */
    uint8_t fault;          /* enum np_m_fault */
    uint32_t pc;            /* the instruction */
    uint32_t addr;          /* the data address (NP_MF_READ, NP_MF_WRITE) */
    bool lockup;            /* it could not be taken: the CPU locked up (the run stops) */
    bool taken;             /* a handler ran for it */
};
const struct np_m_fault_info *np_m_last_fault(const struct np_cpu *cpu);
/* Names: "HardFault", "SysTick", "IRQ5", ...; and what a fault was:
 * "undefined instruction", "read of unmapped memory", ... */
const char *np_m_exception_name(unsigned exc, char *buf, size_t size);
const char *np_m_fault_name(unsigned fault);
/* Nothing pending can preempt the code running now, and SysTick will not
 * pend anything that could: a `b .` here is where the firmware stops. */
bool np_m_waits_forever(const struct np_cpu *cpu);
/* The run stopped with the CPU asleep (wfi) and nothing to wake it. */
bool np_m_asleep(const struct np_cpu *cpu);

/* From np_cpu_init / np_cpu_free: the system's state, reset. */
int np_m_init(struct np_cpu *cpu);
void np_m_free(struct np_cpu *cpu);
/* np_cpu_run for the Cortex-M models. */
enum np_cpu_stop np_m_run(struct np_cpu *cpu, uint64_t max_insns);

/* A special register for mrs/msr (SYSm): 0 when this CPU and privilege may
 * read it. */
int np_m_mrs(struct np_cpu *cpu, unsigned sysm, uint32_t *val);
void np_m_msr(struct np_cpu *cpu, unsigned sysm, unsigned mask, uint32_t val);

#endif
