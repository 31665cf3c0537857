/* posix.h - what the POSIX port offers the hosted parts of the runtime
 * (the recorder) beyond port.h. */
#ifndef NP_POSIX_H
#define NP_POSIX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Not instrumented by sanitizers: code that reads memory no sanitizer
 * keeps shadow of as its own (other functions' frames, the program's
 * code), or writes the program's code. */
#define UNSANITIZED __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))

/* write() of the whole range to FD, going on after a signal (EINTR) and
 * after a short write; 0, or -1 when write() fails or writes nothing.
 * The one loop of the runtime: the default output and the trace files. */
int np_posix_write_all(int fd, const void *p, size_t n);
/* np_port_ns_per_tick for a trace's end: where the process ends within
 * the first millisecond of the counter's measurement, the rate over the
 * time it ran (at least 50 us; the durations it holds are as short, so
 * the error in ns stays that of one read) rather than a wait for the
 * rest of the millisecond. */
double np_port_ns_per_tick_final(void);

/* NAME demangled, when it is a C++ name ("_Z...") and the program has a
 * C++ library loaded (its __cxa_demangle: the runtime links none): its
 * signature into FULL and its short name (common/demangle.h) into SHORT,
 * each cut to its buffer's size. 1 when demangled, else 0. Allocates:
 * never in a signal handler. */
int np_posix_demangle(const char *name, char *full, size_t full_len, char *short_name, size_t short_len);

/* A real-time signal with no handler (the highest free), or 0: for the
 * runtime's own uses (the tick timer, patch.c's round of the threads). */
int np_posix_free_rt_signal(void);

/* THREAD's stack, [*LO, *HI): 0, or -1 when the C library cannot tell
 * (the sampler's frame walk, 32-bit ARM -pg's search for a saved return
 * address). */
int np_posix_thread_stack(pthread_t thread, uintptr_t *lo, uintptr_t *hi);

/* The names a pattern (record's -F, -N, -A, -R; np_trace_on) matches the
 * function at ADDR by: its symbol, and for a C++ one its signature and its
 * short name, in V (NULL after the last). */
struct np_posix_names {
    char name[512], full[1024], short_name[512];
    const char *v[3];
};
/* 1, or 0 when ADDR has no symbol (V[0] is then its address in hex).
 * Symbolizes: not in a signal handler. */
int np_posix_names_of(uint64_t addr, struct np_posix_names *n);

/* patch.c, for the recorder (NANOPROF_PATCH, _OFF, _SIGNAL): switches on
 * the functions matching PATTERNS (comma-separated) now when ON, and, SIG
 * not 0, on and off at each signal SIG (a thread of the runtime's
 * switches them). 0, or -1 (np_trace_error() says why). */
int np_posix_patch_start(const char *patterns, int on, int sig);
/* The calling thread is the runtime's and runs no code of the program's:
 * a switch does not wait for it (the recorder's writer calls it). */
void np_posix_patch_own_thread(void);

/* Writing the program's code while its threads run (x86-64; patch.c and
 * thunks.c): every CPU of the process serialised (membarrier), 0 or -1;
 * the SIGTRAP handler that moves a thread off an int3 of a write under
 * way, installed once, 0 or -1. */
int np_posix_sync_cores(void);
int np_posix_trap_ready(void);
/* N places, each of one instruction of NP_CODE_SITE bytes, given their
 * new bytes B while other threads may run them (Intel SDM vol. 3A 8.1.3,
 * as Linux's text_poke_bp): int3 on each first byte, every CPU serialised,
 * the bytes after it, serialised, the first bytes; under the code lock.
 * ROUND (not NULL) runs after the int3s. 0; -1 the code cannot be made
 * writable (errno); -2 the CPUs cannot be serialised or ROUND failed: the
 * first bytes are put back (WAS), nothing else was written. Writers of
 * code take one lock here. */
#define NP_CODE_SITE 5
struct np_code_site {
    uintptr_t at;
    uint8_t b[NP_CODE_SITE];
    uint8_t was;
};
int np_posix_code_write(struct np_code_site *v, size_t n, int (*round)(void));
/* B: the instruction OP (0xe8 call, 0xe9 jmp) to TO, as written at AT. */
void np_posix_code_rel(uint8_t *b, uintptr_t at, uint8_t op, uintptr_t to);
/* Whether a rel32 at FROM reaches TO (with a page to spare); SIZE bytes
 * mapped read-write within a rel32's reach of LO..HI, or NULL. */
int np_posix_reach(uintptr_t from, uintptr_t to);
void *np_posix_map_near(uintptr_t lo, uintptr_t hi, size_t size);
/* thunks.c: N thunks, the Ith for the function FN[I] whose code after its
 * hook is at BODY[I], each NP_THUNK_BYTES from the first (returned; 0: no
 * room within reach). The module whose unwind table is EH_FRAME_HDR, code
 * LO..HI, mapping MOD_LO..MOD_HI has each call of __fentry__ its functions
 * start with rewritten into a jump to its thunk: how many, or -1. */
#define NP_THUNK_BYTES 320 /* a fast path (mcount.c), then the calls */
#define NP_THUNK_CALLS 32
#define NP_THUNK_SHARED_BYTES 512 /* the fast path's enter and exit, one per area */
uintptr_t np_posix_thunks(size_t n, const uintptr_t *fn, const uintptr_t *body);
/* 1 unless NANOPROF_PG_THUNKS=0 (every exit by the trampoline, as on
 * other CPUs). */
int np_posix_thunks_wanted(void);
int np_posix_thunks_module(const uint8_t *eh_frame_hdr, uintptr_t lo, uintptr_t hi, uintptr_t mod_lo,
                           uintptr_t mod_hi);

#endif
