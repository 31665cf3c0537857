/* semihost.h - ARM semihosting for `nanoprof emu`: the calls newlib's
 * rdimon makes (svc 0x123456 in ARM state, svc 0xab in Thumb, bkpt 0xab),
 * served on the host as qemu-arm serves them, with three differences
 * that keep a run deterministic and safe:
 *
 *  - Time is the emulated CPU's: SYS_CLOCK is centiseconds of cycles at
 *    the clock given, SYS_ELAPSED counts cycles and SYS_TICKFREQ is that
 *    clock; SYS_TIME is NP_SEMIHOST_TIME_BASE plus emulated seconds
 *    unless the real time was asked for.
 *  - The console (":tt", SYS_WRITEC, SYS_WRITE0, SYS_READC) is the fds
 *    given, usually ours; its handles say they are a terminal (SYS_ISTTY
 *    1), are 0 bytes long and cannot seek, whatever those fds are.
 *    (As in qemu, ":tt" opened for reading is stdin, for writing stdout,
 *    for appending stderr; SYS_WRITEC and SYS_WRITE0 write to stderr,
 *    the debug channel.)
 *  - Every guest pointer and length is checked: one outside memory stops
 *    the run with a one-line error naming the call ("semihosting
 *    SYS_WRITE: buffer 0x40000000+12 is outside memory"), where qemu would
 *    return -1. So does an operation not served here (SYS_SYSTEM, ...).
 *
 * The guest's file handles index a table of our own (from 1, as qemu's);
 * it never sees a host fd. Files the guest opened are closed by
 * np_semihost_free. Errors of host calls set the guest's errno
 * (SYS_ERRNO) to the host's errno value, as qemu does.
 *
 * Exit: SYS_EXIT (its reason in r1) and SYS_EXIT_EXTENDED (a block of
 * reason and subcode) end the run. The exit code is qemu-arm's:
 * ADP_Stopped_ApplicationExit gives 0 for SYS_EXIT and the subcode for
 * SYS_EXIT_EXTENDED; any other reason (abort() reports
 * ADP_Stopped_RunTimeErrorUnknown) is an abnormal stop with code 1. As
 * with exit(), a process status is the low 8 bits of the code. */
#ifndef NP_EMU_SEMIHOST_H
#define NP_EMU_SEMIHOST_H

#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"

/* Operation numbers (r0). */
enum np_semihost_op {
    NP_SYS_OPEN = 0x01,
    NP_SYS_CLOSE = 0x02,
    NP_SYS_WRITEC = 0x03,
    NP_SYS_WRITE0 = 0x04,
    NP_SYS_WRITE = 0x05,
    NP_SYS_READ = 0x06,
    NP_SYS_READC = 0x07,
    NP_SYS_ISERROR = 0x08,
    NP_SYS_ISTTY = 0x09,
    NP_SYS_SEEK = 0x0a,
    NP_SYS_FLEN = 0x0c,
    NP_SYS_TMPNAM = 0x0d,
    NP_SYS_REMOVE = 0x0e,
    NP_SYS_RENAME = 0x0f,
    NP_SYS_CLOCK = 0x10,
    NP_SYS_TIME = 0x11,
    NP_SYS_SYSTEM = 0x12,
    NP_SYS_ERRNO = 0x13,
    NP_SYS_GET_CMDLINE = 0x15,
    NP_SYS_HEAPINFO = 0x16,
    NP_SYS_EXIT = 0x18,
    NP_SYS_EXIT_EXTENDED = 0x20,
    NP_SYS_ELAPSED = 0x30,
    NP_SYS_TICKFREQ = 0x31
};

/* The semihosting trap's comment fields. */
#define NP_SEMIHOST_SVC_ARM 0x123456u
#define NP_SEMIHOST_SVC_THUMB 0xabu
#define NP_SEMIHOST_BKPT 0xabu

/* Exit reasons (ADP_Stopped_*) that programs use. */
#define NP_ADP_STOPPED_RUNTIME_ERROR 0x20023u   /* abort() */
#define NP_ADP_STOPPED_APPLICATION_EXIT 0x20026u

/* SYS_TIME's answer at cycle 0 when the real time is not asked for:
 * 2020-01-01 00:00:00 UTC. */
#define NP_SEMIHOST_TIME_BASE 1577836800u

/* Guest file handles open at once (":tt" ones included). */
#define NP_SEMIHOST_MAX_HANDLES 32

struct np_semihost_options {
    /* SYS_GET_CMDLINE: the firmware's path and its arguments, joined by
     * spaces as qemu-arm joins its guest's argv. Copied by init. */
    const char *const *argv;
    int argc;
    /* SYS_HEAPINFO's four words, as the caller laid out memory. */
    uint32_t heap_base, heap_limit, stack_base, stack_limit;
    /* The emulated clock in Hz (not 0): SYS_CLOCK, SYS_TIME,
     * SYS_TICKFREQ. */
    uint64_t clock_hz;
    /* SYS_TIME answers the host's time (not deterministic). */
    bool real_time;
    /* The console: its input, output and error output. */
    int fd_in, fd_out, fd_err;
};

/* Fills O with the defaults: no arguments, no heap information (zeros),
 * a 100 MHz clock, emulated time, the console on fds 0, 1 and 2. */
void np_semihost_options_init(struct np_semihost_options *o);

enum np_semihost_handle_kind {
    NP_SH_FREE = 0,
    NP_SH_CONSOLE_IN,
    NP_SH_CONSOLE_OUT,
    NP_SH_CONSOLE_ERR,
    NP_SH_FILE,       /* a host file we opened */
    NP_SH_FEATURES    /* ":semihosting-features", read from memory */
};

struct np_semihost_handle {
    uint8_t kind;     /* enum np_semihost_handle_kind */
    int fd;           /* NP_SH_FILE */
    uint32_t pos;     /* NP_SH_FEATURES: the read position */
};

struct np_semihost {
    /* ---- the outcome, for the caller ---- */
    bool exited;           /* SYS_EXIT or SYS_EXIT_EXTENDED was called */
    bool abnormal;         /* ... with a reason other than ADP_Stopped_ApplicationExit */
    uint32_t exit_reason;  /* its ADP_Stopped_* reason */
    uint32_t exit_subcode; /* SYS_EXIT_EXTENDED's second word (0 for SYS_EXIT) */
    int exit_code;         /* the code qemu-arm exits with (see the top) */
    bool failed;           /* a bad call stopped the run */
    char error[192];       /* why, one line without a newline ("" when none) */
    /* ---- state ---- */
    struct np_semihost_options opt; /* argv not kept: see cmdline */
    char *cmdline;         /* the joined command line */
    uint32_t cmdline_len;  /* its length without the NUL */
    uint32_t guest_errno;  /* SYS_ERRNO */
    struct np_semihost_handle handles[NP_SEMIHOST_MAX_HANDLES]; /* guest handle N is [N - 1] */
};

/* Sets SH up for a run with options O. Returns 0, or -1 when out of
 * memory or O is invalid (clock_hz 0). */
int np_semihost_init(struct np_semihost *sh, const struct np_semihost_options *o);
/* Closes every file the guest left open, frees SH's memory. */
void np_semihost_free(struct np_semihost *sh);

/* The svc and bkpt hooks of cpu.h, for the caller's to forward to.
 * A semihosting trap (svc 0x123456 in ARM state, svc 0xab in Thumb,
 * bkpt 0xab in either) is served: the operation in r0, its parameter (a
 * value or a block's address) in r1, the result put in r0; 1 is
 * returned, so that the CPU goes on with the next instruction. When the
 * call exits the program or is bad (SH->exited or SH->failed), the CPU
 * is halted (np_cpu_halt) as well. Any other svc or bkpt returns 0: the
 * CPU takes the exception. */
int np_semihost_svc(struct np_semihost *sh, struct np_cpu *cpu, uint32_t imm);
int np_semihost_bkpt(struct np_semihost *sh, struct np_cpu *cpu, uint32_t imm);

/* Serves the call in r0/r1 whatever the trap (for the tests). */
void np_semihost_call(struct np_semihost *sh, struct np_cpu *cpu);

/* "SYS_WRITE", or NULL for an operation number with no name. */
const char *np_semihost_op_name(uint32_t op);
/* "ADP_Stopped_ApplicationExit", or NULL for an unknown reason. */
const char *np_semihost_reason_name(uint32_t reason);

#endif
