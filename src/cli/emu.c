/* emu.c - `nanoprof emu`: runs ARM firmware in the emulator, writes the
 * calls it finds as a trace every view reads, and with --report prints
 * the flat profile in cycles and instructions (docs/emulator.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "common/value_spec.h"
#include "options.h"
#include "trace_dir.h"
#include "analyze/model.h"
#include "analyze/qemu_run.h"
#include "analyze/source_emu.h"
#include "analyze/trace_write.h"
#include "analyze/textfmt.h"

static const char usage_text[] =
    "usage: nanoprof emu [options] FIRMWARE.elf [ARGS...]\n"
    "\n"
    "Runs bare-metal 32-bit ARM firmware (ARM and Thumb code, e.g. built with\n"
    "arm-none-eabi-gcc --specs=rdimon.specs) in nanoprof's emulator, unchanged:\n"
    "no instrumentation. Every instruction that writes the PC is classed as a\n"
    "call, a return or a jump, which gives the exact call tree of every thread,\n"
    "with the cycles (by the CPU's cycle model) and the instructions of each\n"
    "call. Semihosting serves the firmware's console, files, arguments (ARGS)\n"
    "and exit code, which become the command's. The calls go into a trace that\n"
    "report, tree, graph, replay, flame and dump read (docs/emulator.md).\n"
    "\n"
    "A Cortex-M firmware (M0/M0+, M3, M4/M4F, M33 without TrustZone) starts\n"
    "from its vector table, with the exception model, NVIC, SysTick and a DWT\n"
    "cycle counter that runs; --board gives it the memory map and console\n"
    "UART of a QEMU board, so that one ELF runs alike in both.\n"
    "\n"
    "With --qemu BOARD, FIRMWARE.elf runs in qemu-system-arm -M BOARD instead\n"
    "(any of its boards, peripherals and all: mps2-an385, mps2-an386,\n"
    "microbit, ...), and its calls are rebuilt from QEMU's execution log as it is written, by the\n"
    "same rules; times are instructions. The board's UART is the command's\n"
    "console; QEMU_SYSTEM_ARM names another QEMU (docs/emulator.md, \"QEMU\n"
    "execution logs\").\n"
    "\n"
    "options:\n"
    "  -o, --output PATH     the trace directory (default nanoprof.data); an\n"
    "                        existing one is renamed PATH.old\n"
    "      --cpu NAME        arm7tdmi (ARMv4T), arm946e-s (ARMv5TE), cortex-m0,\n"
    "                        cortex-m3, cortex-m4 or cortex-m33; default: the one the\n"
    "                        ELF's architecture needs (arm7tdmi when it says none)\n"
    "      --board NAME      a Cortex-M firmware's board: mps2-an385, mps2-an386,\n"
    "                        mps2-an505 (QEMU's memory maps, UART0 as the console)\n"
    "                        or generic (default: memory where the ELF's segments are)\n"
    "      --max-insns N     stop with an error after N instructions (default\n"
    "                        10000000000): a runaway firmware\n"
    "      --irq-every N     raise the IRQ line every N cycles (a virtual timer\n"
    "                        that needs no acknowledge); default none\n"
    "      --thread-switch SYMBOL  the firmware's context-switch function: a\n"
    "                        return from it on another stack switches threads\n"
    "                        (without it, threads are told apart by their stacks)\n"
    "      --rtos freertos   name each thread as the RTOS's kernel names its task\n"
    "                        (FreeRTOS: pxCurrentTCB->pcTaskName when the task\n"
    "                        first runs), found by the ELF's symbols and debug\n"
    "                        information (-g)\n"
    "      --wait N,S        memory wait states added to each non-sequential and\n"
    "                        sequential access (default 0,0); on a Cortex-M, its\n"
    "                        flash's (addresses below 0x20000000): N for a jump's\n"
    "                        fetch and a data read, S for each word of straight-\n"
    "                        line code (0 behind a prefetch buffer that keeps up)\n"
    "      --ram SIZE        RAM after the image for heap and stack (k, M or G;\n"
    "                        default 16M)\n"
    "      --map ADDR,SIZE   more memory at ADDR, e.g. where the firmware's devices\n"
    "                        are: read and written as RAM (up to 4)\n"
    "      --clock HZ        the CPU's clock, for semihosting's clock() and time()\n"
    "                        (default 100000000)\n"
    "      --real-time       time() gives the host's time (the run is then not\n"
    "                        reproducible if the firmware uses it)\n"
    "  -A, --args SPEC       record the arguments of the functions SPEC names,\n"
    "                        read from r0-r3 at each call, in uftrace's syntax:\n"
    "                        FUNC@arg1,arg2/x (arg1 to arg4; formats i d u x o p\n"
    "                        c, sizes 8 16 32; s gives the address); repeatable\n"
    "  -R, --retval SPEC     record the return value (r0) of the functions SPEC\n"
    "                        names: FUNC@retval[/FORMAT]; repeatable\n"
    "      --qemu BOARD      run it in qemu-system-arm -M BOARD (only -o,\n"
    "                        --max-insns and --report apply then)\n"
    "      --report          print the flat profile after the run on stderr, as\n"
    "                        `nanoprof report` does: in cycles, then instructions\n"
    "      --help            print this help and exit\n"
    "\n"
    "The run ends when the firmware exits by semihosting, or stops in a branch\n"
    "to itself that no IRQ can leave (`b .` with IRQs masked, or no --irq-every):\n"
    "\n"
    "exit status: the firmware's exit code (0 after such a stop); 1 when it\n"
    "failed (an undefined instruction, an access outside memory, the\n"
    "instruction limit, a bad semihosting call: one line says what, where, in\n"
    "which function, and the trace keeps everything before it); 2 for a usage\n"
    "error.\n";

enum { OPT_CPU = NP_CLI_OWN, OPT_MAX, OPT_IRQ, OPT_SWITCH, OPT_WAIT, OPT_RAM, OPT_MAP, OPT_CLOCK, OPT_REAL,
       OPT_REPORT, OPT_QEMU, OPT_BOARD, OPT_RTOS, OPT_ARGS, OPT_RETVAL };

static const struct np_cli_option options[] = {
    { "output", 'o', NP_CLI_VALUE, 'o' },
    { "cpu", 0, NP_CLI_VALUE, OPT_CPU },
    { "board", 0, NP_CLI_VALUE, OPT_BOARD },
    { "max-insns", 0, NP_CLI_VALUE, OPT_MAX },
    { "irq-every", 0, NP_CLI_VALUE, OPT_IRQ },
    { "thread-switch", 0, NP_CLI_VALUE, OPT_SWITCH },
    { "rtos", 0, NP_CLI_VALUE, OPT_RTOS },
    { "wait", 0, NP_CLI_VALUE, OPT_WAIT },
    { "ram", 0, NP_CLI_VALUE, OPT_RAM },
    { "map", 0, NP_CLI_VALUE, OPT_MAP },
    { "clock", 0, NP_CLI_VALUE, OPT_CLOCK },
    { "real-time", 0, NP_CLI_NO_VALUE, OPT_REAL },
    { "report", 0, NP_CLI_NO_VALUE, OPT_REPORT },
    { "qemu", 0, NP_CLI_VALUE, OPT_QEMU },
    { "args", 'A', NP_CLI_VALUE, OPT_ARGS },
    { "retval", 'R', NP_CLI_VALUE, OPT_RETVAL },
    { NULL, 0, 0, 0 },
};

/* What the options set. */
struct emu_cmd {
    struct np_emu_config c;
    const char *out;
    bool want_report;
    const char *qemu_board;  /* --qemu */
    const char *emu_only;    /* an option of the interpreter's given, for the error */
};

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

static int set(struct np_emu_config *c, const char *name, const char *value)
{
    char setting[PATH_MAX + 32], err[256];
    snprintf(setting, sizeof setting, "%s=%s", name, value);
    if (np_emu_config_set(c, setting, err, sizeof err) == 0)
        return 0;
    return np_cli_usage_error("emu", "%s", err);
}

static int option(void *ctx, int id, const char *value)
{
    struct emu_cmd *e = ctx;
    if (id != 'o' && id != OPT_REPORT && id != OPT_QEMU && id != OPT_MAX)
        for (const struct np_cli_option *o = options; o->name; o++)
            if (o->id == id)
                e->emu_only = o->name;
    switch (id) {
    case 'o':
        e->out = value;
        return 0;
    case OPT_QEMU:
        e->qemu_board = value;
        return 0;
    case OPT_CPU:
        return set(&e->c, "cpu", value);
    case OPT_BOARD:
        return set(&e->c, "board", value);
    case OPT_MAX:
        return set(&e->c, "max-insns", value);
    case OPT_IRQ:
        return set(&e->c, "irq-every", value);
    case OPT_SWITCH:
        e->c.thread_switch = value; /* kept: the setting's text is not */
        return 0;
    case OPT_RTOS:
        return set(&e->c, "rtos", value);
    case OPT_WAIT: {
        char n[32], s[32];
        const char *comma = strchr(value, ',');
        if (!comma || (size_t)(comma - value) >= sizeof n || strlen(comma + 1) >= sizeof s)
            return np_cli_usage_error("emu", "bad --wait '%s': N,S (two numbers)", value);
        snprintf(n, sizeof n, "%.*s", (int)(comma - value), value);
        snprintf(s, sizeof s, "%s", comma + 1);
        return set(&e->c, "n-wait", n) || set(&e->c, "s-wait", s) ? 2 : 0;
    }
    case OPT_RAM:
        return set(&e->c, "ram", value);
    case OPT_MAP:
        return set(&e->c, "map", value);
    case OPT_CLOCK:
        return set(&e->c, "clock", value);
    case OPT_REAL:
        e->c.real_time = true;
        return 0;
    case OPT_REPORT:
        e->want_report = true;
        return 0;
    case OPT_ARGS:
    case OPT_RETVAL: {
        struct np_value_spec spec;
        char err[256];
        bool ret = id == OPT_RETVAL;
        if (np_value_spec_parse(value, ret, &spec, err, sizeof err) < 0)
            return np_cli_usage_error("emu", "%s: %s", ret ? "--retval" : "--args", err);
        for (unsigned i = 0; i < spec.n; i++)
            if (spec.item[i].index > 4)
                return np_cli_usage_error("emu", "--args '%s': arg%u: ARM passes arguments 1 to 4 in registers, "
                                          "which are read", value, spec.item[i].index);
        if (e->c.nvalue_specs == NP_EMU_MAX_VALUE_SPECS)
            return np_cli_usage_error("emu", "more than %d --args and --retval specs", NP_EMU_MAX_VALUE_SPECS);
        e->c.value_retval[e->c.nvalue_specs] = ret;
        e->c.value_spec[e->c.nvalue_specs++] = value; /* kept: the setting's text is not */
        return 0;
    }
    }
    return 2;
}

/* The flat profile of the trace in DIR on stderr (the firmware's output
 * has stdout), as `nanoprof report` prints it: in cycles, then in
 * instructions (the trace's second counter); a QEMU run's (INSNS_ONLY)
 * counts instructions alone. */
static int report(const char *dir, bool insns_only)
{
    char *cycles[] = { "report", (char *)dir, NULL };
    char *insns[] = { "report", (char *)dir, "--metric=count", NULL };
    fflush(stdout);
    if (!insns_only) {
        if (np_cmd_report_to(stderr, 2, cycles) != 0)
            return 1;
        fputc('\n', stderr);
    }
    return np_cmd_report_to(stderr, insns_only ? 2 : 3, insns_only ? cycles : insns) != 0;
}

/* --qemu: the firmware run in QEMU, its trace written into DIR as FILE. */
static int run_qemu(struct emu_cmd *e, const char *elf, char **args, int nargs, const char *dir, const char *file)
{
    struct np_trace_write_sink *ws = np_trace_write_sink_new(file, NULL, NULL);
    if (!ws) {
        fprintf(stderr, "nanoprof emu: out of memory\n");
        return 1;
    }
    struct np_event_sink sink = np_trace_write_sink(ws);
    struct np_qemu_run r = { e->qemu_board, elf, (const char *const *)args, nargs, e->c.max_insns };
    struct np_trace_summary sum;
    struct np_qemu_log_stats st;
    int code, status = np_qemu_run(&r, &sink, &sum, &st, &code);
    fflush(stdout);
    char err[NP_TRACE_MSG_MAX];
    if (status != NP_TRACE_OK)
        np_trace_write_sink_stopped(ws);
    if (np_trace_write_sink_close(ws, err, sizeof err) && status == NP_TRACE_OK) {
        fprintf(stderr, "nanoprof emu: %s\n", err);
        return 1;
    }
    if (status != NP_TRACE_OK) {
        fprintf(stderr, "nanoprof emu: %s\n", sum.message[0] ? sum.message : np_trace_strerror(status));
        rmdir(dir); /* (when nothing was written into it) */
        return 1;
    }
    char ended[64];
    if (st.halted || st.limited || st.threads_full || code < 0)
        snprintf(ended, sizeof ended, "stopped");
    else
        snprintf(ended, sizeof ended, "exited with %d", code);
    fprintf(stderr,
            "nanoprof emu: %s %s on QEMU's %s after %" PRIu64 " instructions; %" PRIu64 " calls in %" PRIu32
            " thread%s, %" PRIu64 " exceptions; trace in %s\n",
            elf, ended, e->qemu_board, st.insns, st.calls.calls, st.calls.threads ? st.calls.threads : 1,
            st.calls.threads > 1 ? "s" : "", st.exceptions, e->out);
    if (st.ending[0])
        fprintf(stderr, "nanoprof emu: error: %s\n", st.ending);
    np_qemu_log_say(&st, err, sizeof err);
    if (err[0])
        fprintf(stderr, "nanoprof emu: warning: %s\n", err);
    if (e->want_report && report(dir, true) != 0)
        return 1;
    return code < 0 || st.halted || st.limited || st.threads_full ? 1 : code & 0xff;
}

int np_cmd_emu(int argc, char **argv)
{
    struct emu_cmd e = { .out = "nanoprof.data" };
    np_emu_config_init(&e.c);
    /* options end at the firmware: what follows is its arguments */
    struct np_cli cli = { "emu", options, NP_CLI_UNTIL_ARGUMENT, usage, option, NULL };
    int first, rc = np_cli_parse(&cli, &e, argc, argv, &first);
    if (rc)
        return rc == NP_CLI_HELP ? 0 : rc;
    if (first >= argc)
        return np_cli_usage_error("emu", "%s", "no firmware given");
    const char *elf = argv[first];
    e.c.argv = (const char *const *)argv + first;
    e.c.argc = argc - first;
    if (e.qemu_board && e.emu_only)
        return np_cli_usage_error("emu", "--%s is the interpreter's: it does not apply with --qemu", e.emu_only);

    char dir[PATH_MAX], file[PATH_MAX + 16];
    if (!np_trace_dir_prepare("emu", e.out, dir, sizeof dir))
        return 1;
    snprintf(file, sizeof file, "%s/1.npt", dir);
    if (e.qemu_board)
        return run_qemu(&e, elf, argv + first + 1, argc - first - 1, dir, file);
    e.c.save = file;
    struct np_trace_summary sum;
    struct np_emu_result r;
    rc = np_emu_run(elf, &e.c, NP_METRIC_TIME, 0, NULL, NULL, &sum, &r);
    fflush(stdout);
    if (rc != NP_TRACE_OK) {
        fprintf(stderr, "nanoprof emu: %s\n", sum.message[0] ? sum.message : np_trace_strerror(rc));
        rmdir(dir); /* (a firmware refused: nothing was written) */
        return 1;
    }
    const struct np_calltrack_stats *s = &r.calls;
    char ended[224];
    if (r.exited)
        snprintf(ended, sizeof ended, "exited with %d", r.exit_code);
    else if (r.halted)
        snprintf(ended, sizeof ended, "halted %s %s", r.asleep ? "asleep (wfi) with nothing to wake it" :
                 "in a branch to itself", r.where);
    else
        snprintf(ended, sizeof ended, "stopped");
    fprintf(stderr,
            "nanoprof emu: %s %s after %" PRIu64 " instructions, %" PRIu64 " cycles (%s); %" PRIu64
            " calls in %" PRIu32 " thread%s",
            elf, ended, r.insns, r.cycles, np_cpu_model_name(r.model), s->calls, s->threads ? s->threads : 1,
            s->threads > 1 ? "s" : "");
    if (s->resynced)
        fprintf(stderr, ", %" PRIu64 " closed by re-synchronisation (marked (?))", s->resynced);
    fprintf(stderr, "; trace in %s\n", e.out);
    if (r.failed)
        fprintf(stderr, "nanoprof emu: error: %s\n", r.error);
    if (e.want_report && report(dir, false) != 0)
        return 1;
    if (r.failed)
        return 1;
    return r.exit_code & 0xff;
}
