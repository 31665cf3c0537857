/* check.h - what the target firmwares under tests/target/ share: printing
 * through semihosting, "ok"/"FAIL" checks counted into the exit status, a
 * writer that keeps what the runtime writes, and the exact spin loop their
 * timing checks count instructions of. */
#ifndef NP_TARGET_CHECK_H
#define NP_TARGET_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"

#define NOPROF NP_NO_PROFILE

/* Core clock of the board SysTick runs on (run.sh says which): 25 MHz on
 * QEMU's mps2 boards, 16 MHz on its microbit. */
#ifndef TC_CPU_HZ
#define TC_CPU_HZ 25000000u
#endif

extern int tc_failures;

NOPROF void tc_put(const char *s);
NOPROF void tc_put_u64(uint64_t v);
/* Prints "ok WHAT" or "FAIL WHAT" and counts a failure. */
NOPROF int tc_check(int ok, const char *what);
/* The same, with the figures behind it: "(got G, want W .. W2)". */
NOPROF int tc_check_range(uint64_t got, uint64_t lo, uint64_t hi, const char *what);

/* What the runtime writes between tc_capture_begin and tc_capture_end
 * (np_output_set), kept in tc_captured. */
extern char tc_captured[1024];
extern size_t tc_ncaptured;
NOPROF void tc_capture_begin(void);
NOPROF void tc_capture_end(void);
NOPROF int tc_streq(const char *a, const char *b);
NOPROF int tc_starts_with(const char *s, const char *prefix);

/* Prints PASSED or FAILED and returns the failures (main's exit status). */
NOPROF int tc_finish(void);
/* Ends the firmware now with STATUS (semihosting exit), from any stack. */
NOPROF __attribute__((noreturn)) void tc_exit(int status);

/* Runs exactly 2 * N instructions (N >= 1): one subtract and one branch
 * per turn. Under QEMU's -icount shift=0 one instruction is one
 * nanosecond of virtual time. */
static inline __attribute__((always_inline)) NOPROF void tc_spin(uint32_t n)
{
    __asm__ __volatile__(".syntax unified\n1:\tsubs %0, %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
}

#endif
