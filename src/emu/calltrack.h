/* calltrack.h - rebuilds the call tree of emulated firmware from the
 * instructions that write the PC.
 *
 * The CPU tells every PC write with its class (cpu.h, struct np_branch);
 * this decides which are calls, which are returns and which are jumps,
 * keeps a stack of open calls per thread, and tells its output of each
 * call's entry and exit with the cycle and instruction counters.
 *
 * Calls: bl, blx (immediate and register), and any other PC write made
 * right after `mov lr, pc` / `add lr, pc, #n` (NP_BRF_LINKED: the indirect
 * call idioms, `bx rd`, `ldr pc, [...]`, `mov pc, rd`); IRQ, FIQ, SWI and
 * abort entries. A call whose first instructions jump on at once (at most
 * NP_CALLTRACK_VENEER_INSNS instructions, from inside its first
 * NP_CALLTRACK_VENEER_BYTES bytes, without linking or moving the stack
 * pointer, to a function start) went through a veneer
 * or an exception vector: it is one call of where the jump lands. A Thumb
 * bl whose target is not a function start and lies in the function it is
 * in is a long jump, not a call (the functions come from the ELF symbols).
 *
 * Returns: a PC write of a return form (bx, mov pc, ldr pc, ldm/pop with
 * the PC, an exception return) whose target is the return address of an
 * open call with the stack pointer back where it was when that call was
 * made. A return to a call further up than the innermost closes the calls
 * in between first: they missed their return, and are told as
 * re-synchronised (the views mark them "(?)"). An exception return
 * (subs pc, lr / movs pc, lr / ldm ^) closes the innermost exception's
 * call, and the calls opened inside it as re-synchronised. Exceptions are
 * calls nested under what they interrupted.
 *
 * Everything else is a jump: b, data-processing writes such as jump
 * tables, tail calls through a register, returns to addresses no open call
 * has (a longjmp: the calls it skipped are closed when their caller
 * returns).
 *
 * Threads: a return-form PC write that matches no open call of the
 * running thread, but the innermost open call of a suspended thread
 * (return address and stack pointer), switches to that thread: its stack
 * was left there by the context switch. One that matches nothing while the
 * stack pointer has left the running thread's stack starts a new thread
 * (its first call: the function it lands in, when that is a function
 * start; named after it, or as np_calltrack_funcs.thread_name says). With a context-switch function named (np_calltrack_options
 * .switch_fn), only returns from it switch, and any return from it that is
 * not the running thread's own does. The thread switched from keeps its
 * open calls; the one switched to is told how long it was out. */
#ifndef NP_EMU_CALLTRACK_H
#define NP_EMU_CALLTRACK_H

#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"

#define NP_CALLTRACK_VENEER_INSNS 4
#define NP_CALLTRACK_VENEER_BYTES 16
/* Open calls kept per thread: deeper ones are counted, not kept (the
 * model keeps as many, NP_MODEL_MAX_STACK). */
#define NP_CALLTRACK_MAX_DEPTH (1u << 20)
/* Threads a run may have: an RTOS has tens; thousands are a firmware that
 * moves its stack pointer and jumps to a function's start again and again,
 * each taken for a new thread (and the time to match returns growing with
 * them). The run stops there, said (stats.thread_limit). */
#define NP_CALLTRACK_MAX_THREADS 4096u
/* How far the stack pointer may stray from a call's before a return is
 * taken as another thread's: a return restores it exactly; a stack of
 * another thread lies further away than this. */
#define NP_CALLTRACK_SP_SLACK 64u

/* Where the calls go. Counters are the CPU's after the instruction that
 * made the event. Each returns 0 to go on, non-zero to stop the run. */
struct np_calltrack_out {
    void *ctx;
    int (*thread)(void *ctx, uint32_t tid, const char *name);
    int (*enter)(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t address);
    int (*exit)(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns);
    /* the N innermost open calls end here, having missed their return */
    int (*resync)(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t n);
    /* TID runs again, having been switched out since (out_cycles, out_insns) */
    int (*resume)(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint64_t out_cycles,
                  uint64_t out_insns);
};

/* What the tracker needs to know of the firmware's functions. */
struct np_calltrack_funcs {
    void *ctx;
    /* The start of the function holding ADDR (bit 0 clear), or 0 when no
     * function holds it. */
    uint32_t (*func_of)(void *ctx, uint32_t addr);
    /* ADDR's function name, for naming threads; NULL when unknown. */
    const char *(*name_of)(void *ctx, uint32_t addr);
    /* Optional: the name of the thread CPU runs now, as an RTOS's kernel
     * keeps it in memory (NULL: none), asked when a thread starts, before
     * name_of; its context THREAD_CTX. */
    const char *(*thread_name)(void *thread_ctx, struct np_cpu *cpu);
    void *thread_ctx;
};

struct np_calltrack_options {
    uint32_t switch_fn;       /* the context-switch function's address, or 0 */
    bool keep_args;           /* keep r0-r3 as each call found them (np_calltrack_entry_args) */
};

/* What the tracker found, for the closing line and the tests. */
struct np_calltrack_stats {
    uint64_t calls, returns, jumps;
    uint64_t resynced;        /* calls closed by re-synchronisation */
    uint64_t exceptions;      /* exception entries */
    uint64_t long_jumps;      /* Thumb bl taken as a long jump */
    uint64_t veneers;         /* calls that went through a veneer or a vector */
    uint64_t switches;        /* thread switches */
    uint64_t too_deep;        /* calls deeper than NP_CALLTRACK_MAX_DEPTH, not told */
    uint32_t threads;
    bool thread_limit;        /* a new stack found with NP_CALLTRACK_MAX_THREADS threads
                                 already: the CPU was halted there */
};

struct np_calltrack;

/* NULL when out of memory. The first thread (tid 1, "main") starts with
 * the first event. */
struct np_calltrack *np_calltrack_new(const struct np_calltrack_out *out, const struct np_calltrack_funcs *funcs,
                                      const struct np_calltrack_options *opt);
/* The CPU's branch hook: pass the tracker as the hook's context. */
void np_calltrack_branch(void *tracker, struct np_cpu *cpu, const struct np_branch *b);
/* After the run: tells the entries still pending (a call made by the
 * last instruction). Calls still open stay open: the model closes them
 * at their thread's last event. */
int np_calltrack_finish(struct np_calltrack *t, const struct np_cpu *cpu);
/* Non-zero once an output callback asked to stop (the run should halt). */
int np_calltrack_status(const struct np_calltrack *t);
/* Whether the running thread's innermost open call is an exception's:
 * its handler runs, outside any call it made (a source that cannot see
 * EXC_RETURN values takes a return from there as the exception's). */
bool np_calltrack_in_exception(const struct np_calltrack *t);
const struct np_calltrack_stats *np_calltrack_stats(const struct np_calltrack *t);
void np_calltrack_free(struct np_calltrack *t);

/* With keep_args, during an enter callback: r0-r3 as they were when the
 * call was made (its entry is told later, once it is known not to be a
 * veneer's); else NULL. */
const uint32_t *np_calltrack_entry_args(const struct np_calltrack *t);

#endif
