/* source_emu.h - the emulator as a source of events: runs bare-metal ARM
 * firmware in the interpreter (src/emu/cpu.h) with semihosting
 * (src/emu/semihost.h), rebuilds its calls from the instructions that
 * write the PC (src/emu/calltrack.h), and tells them to a sink as any
 * trace would be told, and to a trace file when asked (-o).
 *
 * Times are cycles of the CPU's cycle model; the instruction count is the
 * second counter beside them (source.h: NP_METRIC_COUNT makes it the
 * time). The process is pid 1, its clock "cycles"; threads are numbered
 * from 1 ("main") in the order they appear. A run is deterministic: the
 * same firmware, arguments and options tell the same events. */
#ifndef NP_ANALYZE_SOURCE_EMU_H
#define NP_ANALYZE_SOURCE_EMU_H

#include <stdbool.h>
#include <stdint.h>
#include "events.h"
#include "source.h"
#include "emu/calltrack.h"
#include "emu/cpu.h"

/* The instructions a run may execute by default: a firmware that runs
 * longer is taken for a runaway (--max-insns sets another limit). */
#define NP_EMU_MAX_INSNS_DEFAULT 10000000000ull
/* The clock semihosting's SYS_CLOCK and SYS_TIME count emulated time by. */
#define NP_EMU_CLOCK_HZ_DEFAULT 100000000ull
/* Regions --map may add (the CPU takes NP_CPU_MAX_REGIONS in all). */
#define NP_EMU_MAX_MAPS 4

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
};

void np_emu_config_init(struct np_emu_config *c);
/* Sets one "name=value" setting (source options' args: cpu, board, max-insns,
 * irq-every, thread-switch, rtos, n-wait, s-wait, ram, map=ADDR,SIZE, clock,
 * real-time, save, console=stdout|stderr, arg). 0, or -1 with a one-line
 * reason in ERR. */
int np_emu_config_set(struct np_emu_config *c, const char *setting, char *err, size_t errsize);

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

/* Runs ELF with C (NULL: the defaults), telling SINK (may be NULL) its
 * events with times of METRIC, scaled by CLOCK_HZ (> 0: cycles made ns).
 * Returns an np_trace_status: NP_TRACE_OK also when the firmware failed
 * (R says so, and the events up to the failure were told); an error when
 * the ELF cannot be run (SUMMARY->message says why). */
int np_emu_run(const char *elf, const struct np_emu_config *c, enum np_metric metric, double clock_hz,
               const struct np_event_sink *sink, const struct np_trace_hooks *hooks, struct np_trace_summary *summary,
               struct np_emu_result *r);

/* The source table's entry (source.h): the settings come from O->args. */
int np_source_emu_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

#endif
