/* lockstep.h - runs the same code in nanoprof's ARM interpreter
 * (src/emu/cpu.h) and in Unicorn, one instruction at a time, and compares
 * everything a program can see after each: r0-r15, the CPSR, the current
 * mode's SPSR and memory. The first difference stops the run with a
 * report: the instruction (address, bytes, Capstone's disassembly), the
 * state before it and each field that differs, as both engines have it.
 *
 * Unicorn runs the ARM946E-S model (UC_CPU_ARM_946): it has no ARM7TDMI,
 * so code compared for the ARM7TDMI must avoid what ARMv4T and ARMv5TE run
 * differently (insn_gen.h says how the random streams do).
 *
 * The Cortex-M models run against Unicorn's model of the same name
 * (UC_CPU_ARM_CORTEX_M0/M3/M4/M33), in thread mode, privileged, on the
 * main stack, no exception ever taken. Compared: r0-r15, the xPSR's N Z C
 * V Q and GE bits (cpu->cpsr's bits 31-27, 19-16), its IT bits
 * (cpu->m.itstate) and, with an FPU (M4, M33), s0-s31 and the FPSCR.
 * There the CPSR of the functions below is an xPSR value (flags, GE and
 * IT bits; the T bit implied), and no SPSR is. A 32-bit Thumb-2
 * instruction is one step; svc takes the SVCall exception on a Cortex-M,
 * which stops the run (no handler is called for it).
 *
 * Unicorn runs freely and a code hook, called before each of its
 * instructions, runs the interpreter over the instruction Unicorn has just
 * run and compares. (Starting Unicorn for one instruction at a time gives
 * the same states but costs some 17 us an instruction on straight-line
 * code, which QEMU translates anew from every start address; the hook
 * costs about 1 us.) Stopping Unicorn from the hook leaves the instruction
 * it was about to run unrun, so the engines stay in step across runs.
 *
 * Each engine has its own copy of every memory region. Memory is compared
 * exactly: after each instruction the bytes Unicorn stored to, and every
 * region in full every `full_every` instructions and at
 * lockstep_compare_memory().
 *
 * svc and bkpt go to one handler for both engines (the interpreter's svc
 * and bkpt hooks, Unicorn's UC_HOOK_INTR), which reads and writes the
 * engine it is called for through lockstep_reg/lockstep_mem: the same
 * function gives both the same answers.
 *
 * With check_branches set, the interpreter's branch hook (cpu.h) is on
 * and checked against where Unicorn went: an instruction after which the
 * PC is not the next one's address must be told, once, from its address
 * to the new PC, with the Thumb flags of before and after it; one that
 * falls through may be told (a branch to the next instruction) the same
 * way, or not. */
#ifndef NP_TEST_LOCKSTEP_H
#define NP_TEST_LOCKSTEP_H

#include <stdbool.h>
#include <stdint.h>
#include <capstone/capstone.h>
#include <unicorn/unicorn.h>
#include "cpu.h"

/* the two engines */
enum lockstep_side { LS_NP, LS_UC };

enum lockstep_call { LS_SVC, LS_BKPT };

struct lockstep;

/* svc or bkpt IMM on SIDE: 1 when handled (the engine goes on with the
 * next instruction), 0 when not (the run stops: the test failed). May
 * call lockstep_halt to end the run after this instruction. */
typedef int (*lockstep_call_fn)(void *ctx, struct lockstep *ls, enum lockstep_side side, enum lockstep_call call,
                                uint32_t imm);

struct lockstep_region {
    uint32_t base, size; /* both multiples of 4 KiB (Unicorn's pages) */
};

enum lockstep_result {
    LS_END,       /* both reached the end address given, equal all the way */
    LS_HALTED,    /* a handler ended the run (lockstep_halt), in both */
    LS_LIMIT,     /* the step limit was reached; the run can go on */
    LS_DIFFERENT, /* the engines differ: report[] says how */
    LS_STOPPED    /* both stopped the same way (a fault at the same address, an
                     undefined instruction), changing nothing: `stop` says
                     which, report[] says how; the run cannot go on */
};

#define LS_RECENT 16

struct lockstep {
    enum np_cpu_model model;
    struct np_cpu cpu;
    uc_engine *uc;
    csh cs_arm, cs_thumb;
    bool has_fp; /* Cortex-M with an FPU: s0-s31 and the FPSCR compared */
    bool uc_synced; /* Unicorn has returned: its IT bits are up to date */
    unsigned nmem;
    struct {
        uint32_t base, size;
        uint8_t *np, *uc; /* each engine's bytes */
    } mem[NP_CPU_MAX_REGIONS];
    lockstep_call_fn call;
    void *call_ctx;
    /* Unicorn's stores in the current step */
    struct {
        uint32_t addr, size;
    } writes[32];
    unsigned nwrites;
    bool writes_lost;
    /* the current step's handler results */
    bool halted[2];
    bool unhandled[2];
    int uc_exception; /* an exception Unicorn raised that no handler took, or -1 */
    bool uc_faulted;  /* Unicorn touched unmapped memory at uc_fault_addr */
    uint32_t uc_fault_addr;
    enum np_cpu_stop stop; /* the interpreter's last stop reason */
    /* the run in progress */
    bool pending;     /* Unicorn has run an instruction the interpreter has not */
    bool stopping;    /* the run is over: the hooks do nothing more */
    uint64_t max_steps;
    enum lockstep_result result;
    uint32_t before[16], before_cpsr, before_spsr; /* the interpreter's state before the pending instruction */
    /* the branch hook's reports in the current step */
    bool check_branches;
    unsigned nbranches;
    struct np_branch branch;
    /* counters */
    uint64_t steps;   /* lockstep steps */
    uint64_t insns;   /* interpreter instructions (a Thumb bl pair is one step, two instructions) */
    unsigned full_every;
    /* the last instructions run, for the report */
    struct {
        uint32_t pc;
        bool thumb;
    } recent[LS_RECENT];
    unsigned nrecent;
    char report[16384];
};

/* Sets up both engines for MODEL over the N regions, zero-filled; each
 * engine starts in SVC mode, ARM state (a Cortex-M: thread mode, r0-r15,
 * xPSR, s0-s31 and FPSCR zero, the FPU enabled). CALL (may be NULL) answers svc
 * and bkpt. Returns 0, or -1 with report[] saying why. */
int lockstep_init(struct lockstep *ls, enum np_cpu_model model, const struct lockstep_region *r, unsigned n,
                  lockstep_call_fn call, void *call_ctx);
void lockstep_free(struct lockstep *ls);

/* Copies LEN bytes to ADDR in both engines (between steps); forgets code
 * either has translated or decoded there. Returns 0, or -1 when they are
 * not inside one region. */
int lockstep_load(struct lockstep *ls, uint32_t addr, const void *bytes, uint32_t len);

/* Sets r0-r14, the CPSR (mode included), the current mode's SPSR and the
 * PC (R[15]; the CPSR's T bit says the state) in both engines. Changing
 * the mode this way banks nothing in Unicorn: the registers other modes
 * see then differ between the engines until code sets them (see the bank
 * prologue of insn_gen.h). */
void lockstep_set_state(struct lockstep *ls, const uint32_t r[16], uint32_t cpsr, uint32_t spsr);
/* Cortex-M with an FPU: sets s0-s31 and the FPSCR in both engines
 * (nothing without an FPU). */
void lockstep_set_fp(struct lockstep *ls, const uint32_t s[32], uint32_t fpscr);

/* Runs both engines from the current PC until the PC reaches UNTIL (an
 * address no instruction of the run should be at otherwise), a handler
 * halts, they differ or stop, or MAX_STEPS more steps have run. A step is
 * one instruction, or both halves of a Thumb bl/blx pair (which Unicorn
 * runs as one). */
enum lockstep_result lockstep_run(struct lockstep *ls, uint32_t until, uint64_t max_steps);

/* Compares every region in full now: 0 when equal, else -1 with report[]
 * filled. */
int lockstep_compare_memory(struct lockstep *ls);

/* For handlers: the engine's register R (15: the next instruction's
 * address), set it; a pointer to LEN bytes of its memory at ADDR (NULL
 * when not inside one region); after writing through it, lockstep_wrote. */
uint32_t lockstep_reg(struct lockstep *ls, enum lockstep_side side, unsigned r);
void lockstep_set_reg(struct lockstep *ls, enum lockstep_side side, unsigned r, uint32_t value);
uint8_t *lockstep_mem(struct lockstep *ls, enum lockstep_side side, uint32_t addr, uint32_t len);
void lockstep_wrote(struct lockstep *ls, enum lockstep_side side, uint32_t addr, uint32_t len);
/* From a handler: end the run after this instruction. */
void lockstep_halt(struct lockstep *ls, enum lockstep_side side);

/* The current PC of the interpreter, and whether in Thumb state. */
static inline uint32_t lockstep_pc(const struct lockstep *ls)
{
    return ls->cpu.r[15];
}

#endif
