/* driver.h - the emulator's driver: a firmware ELF loaded onto the CPU
 * that runs it (its architecture's, or the one asked) and its board's
 * memory, with semihosting, --map regions, the virtual IRQ timer, a
 * Cortex-M's reset from its vector table and its board's UART; then run
 * to its end with the call tracker (calltrack.h) on every branch, and
 * the end said: an exit, a halt, or one line naming the fault, the PC
 * and its function.
 *
 * It knows nothing of traces: analyze/source_emu.c is the source that
 * tells the tracker's calls to a sink. */
#ifndef NP_EMU_DRIVER_H
#define NP_EMU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "calltrack.h"
#include "cpu.h"
#include "image.h"

/* The instructions a run may execute by default: a firmware that runs
 * longer is taken for a runaway (--max-insns sets another limit). */
#define NP_EMU_MAX_INSNS_DEFAULT 10000000000ull
/* The clock semihosting's SYS_CLOCK and SYS_TIME count emulated time by. */
#define NP_EMU_CLOCK_HZ_DEFAULT 100000000ull
/* Regions --map may add (the CPU takes NP_CPU_MAX_REGIONS in all). */
#define NP_EMU_MAX_MAPS 4
/* --args and --retval specs (as `nanoprof record` takes -A and -R). */
#define NP_EMU_MAX_VALUE_SPECS 64

struct np_emu_config {
    enum np_cpu_model model;     /* with model_given (cpu=): else the ELF's (Tag_CPU_arch) */
    bool model_given;
    uint64_t max_insns;          /* 0: NP_EMU_MAX_INSNS_DEFAULT */
    uint64_t irq_every;          /* cycles between two IRQs of the virtual timer; 0: none */
    const char *thread_switch;   /* the context-switch function's name, or NULL */
    const char *rtos;            /* threads named by this RTOS's kernel (rtos.h), or NULL */
    struct np_cpu_timing timing; /* memory wait states */
    uint32_t ram_size;           /* bytes of RAM after the image; 0: the loader's default */
    uint64_t clock_hz;           /* for semihosting's time calls; 0: the default */
    bool real_time;              /* SYS_TIME answers the host's time */
    const char *const *argv;     /* the firmware's arguments (argv[0]: its path); NULL: none */
    int argc;
    int fd_in, fd_out, fd_err;   /* its console */
    const char *save;            /* a trace file to write the run to as well, or NULL */
    /* more memory, e.g. where the firmware's devices are (read and write
     * as RAM): --map ADDR,SIZE */
    struct { uint32_t base, size; } map[NP_EMU_MAX_MAPS];
    unsigned nmap;
    /* a Cortex-M firmware's board (board.h): a name of np_board_find, or
     * "generic" / NULL: memory where the ELF's segments are */
    const char *board;
    /* --args and --retval: uftrace's specs (common/value_spec.h), each
     * an -R one when VALUE_RETVAL says so; the texts are the caller's */
    const char *value_spec[NP_EMU_MAX_VALUE_SPECS];
    bool value_retval[NP_EMU_MAX_VALUE_SPECS];
    unsigned nvalue_specs;
};

void np_emu_config_init(struct np_emu_config *c);

/* How a run ended. */
struct np_emu_result {
    bool exited;                 /* the firmware called SYS_EXIT(_EXTENDED) */
    bool halted;                 /* it stopped in a branch to itself that no IRQ can
                                    leave (`b .` with IRQs masked or no timer) */
    uint32_t halt_pc;
    bool asleep;                 /* halted: a Cortex-M in wfi that nothing will wake */
    char where[160];             /* halted: "at 0x... in FUNCTION" */
    int exit_code;               /* its code, as qemu-arm would exit with */
    bool failed;                 /* it stopped on an error (error says which) */
    char error[512];             /* one line: the problem, the PC and its function */
    uint64_t insns, cycles;
    enum np_cpu_model model;     /* the CPU that ran it */
    struct np_calltrack_stats calls;
};

/* Why a firmware cannot be run (np_emu_load). */
enum np_emu_refusal {
    NP_EMU_READY = 0,
    NP_EMU_NOT_RUNNABLE,         /* not an ELF the CPU can run, or memory it cannot have */
    NP_EMU_BAD_OPTION,           /* an option the firmware cannot take */
    NP_EMU_NO_MEMORY
};

/* The names errors give functions: the display name of the function
 * holding ADDR written in BUF, or NULL when none holds it. */
struct np_emu_names {
    void *ctx;
    const char *(*name)(void *ctx, uint32_t addr, char *buf, size_t size);
};

struct np_emu;

/* ELF loaded and made ready to run by CFG (the CPU reset, nothing run):
 * NP_EMU_READY with *OUT, or a refusal with a one-line reason in ERR
 * (naming ELF) and nothing to free. */
enum np_emu_refusal np_emu_load(struct np_emu **out, const char *elf, const struct np_emu_config *cfg, char *err,
                                size_t errsize);
/* The image loaded (its code's range, build-id, ...) and the CPU. */
const struct np_image *np_emu_image(const struct np_emu *e);
struct np_cpu *np_emu_cpu(struct np_emu *e);
/* Runs the firmware to its end, every branch told to TRK (may be NULL),
 * functions named by NAMES (may be NULL) in R's lines. A run stopped by
 * np_cpu_halt from outside (TRK's output failing) is R->failed, "stopped
 * at ...". R->calls is the caller's to fill. */
void np_emu_go(struct np_emu *e, struct np_calltrack *trk, const struct np_emu_names *names,
               struct np_emu_result *r);
void np_emu_free(struct np_emu *e);

#endif
