/* qemu_run.h - a firmware run in qemu-system-arm, its execution log read
 * as it is written (source_qemu_log.h): `nanoprof emu --qemu BOARD`.
 *
 * QEMU runs the ELF on BOARD (-M), with semihosting (the firmware's
 * console, arguments and exit code), -icount shift=0 (a repeatable run)
 * and -d exec,cpu,nochain (the registers tell threads and exceptions
 * apart), its log written into a FIFO this reads, so that no log file
 * grows on disk. The board's UART is the command's stdin and stdout. */
#ifndef NP_ANALYZE_QEMU_RUN_H
#define NP_ANALYZE_QEMU_RUN_H

#include "events.h"
#include "source_qemu_log.h"

/* The emulator QEMU_SYSTEM_ARM in the environment names, else this. */
#define NP_QEMU_DEFAULT "qemu-system-arm"

struct np_qemu_run {
    const char *board;              /* -M */
    const char *elf;
    const char *const *args;        /* the firmware's arguments after its name; NULL: none */
    int nargs;
    uint64_t max_insns;             /* stop it there (0: never) */
};

/* Runs R, telling SINK the calls. Returns an np_trace_status (SUMMARY's
 * message says why: QEMU missing, or exited before it ran anything);
 * *EXIT_CODE: QEMU's exit status, the firmware's exit code (-1 when QEMU
 * was stopped: STATS says why, a handler looping in `b .` for good or
 * the instruction limit, in its ending line). */
int np_qemu_run(const struct np_qemu_run *r, const struct np_event_sink *sink, struct np_trace_summary *summary,
                struct np_qemu_log_stats *stats, int *exit_code);

#endif
