/* emu.c - `nanoprof emu`: runs ARM firmware in the emulator, writes the
 * calls it finds as a trace every view reads, and with --report prints
 * the flat profile in cycles and instructions (docs/emulator.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trace_dir.h"
#include "analyze/model.h"
#include "analyze/source_emu.h"
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
    "options:\n"
    "  -o, --output PATH     the trace directory (default nanoprof.data); an\n"
    "                        existing one is renamed PATH.old\n"
    "      --cpu NAME        arm7tdmi (ARMv4T, the default) or arm946e-s (ARMv5TE)\n"
    "      --max-insns N     stop with an error after N instructions (default\n"
    "                        10000000000): a runaway firmware\n"
    "      --irq-every N     raise the IRQ line every N cycles (a virtual timer\n"
    "                        that needs no acknowledge); default none\n"
    "      --thread-switch SYMBOL  the firmware's context-switch function: a\n"
    "                        return from it on another stack switches threads\n"
    "                        (without it, threads are told apart by their stacks)\n"
    "      --wait N,S        memory wait states added to each non-sequential and\n"
    "                        sequential access (default 0,0)\n"
    "      --ram SIZE        RAM after the image for heap and stack (k, M or G;\n"
    "                        default 16M)\n"
    "      --map ADDR,SIZE   more memory at ADDR, e.g. where the firmware's devices\n"
    "                        are: read and written as RAM (up to 4)\n"
    "      --clock HZ        the CPU's clock, for semihosting's clock() and time()\n"
    "                        (default 100000000)\n"
    "      --real-time       time() gives the host's time (the run is then not\n"
    "                        reproducible if the firmware uses it)\n"
    "      --report          print the flat profile after the run (stderr)\n"
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

enum { OPT_CPU = 1000, OPT_MAX, OPT_IRQ, OPT_SWITCH, OPT_WAIT, OPT_RAM, OPT_MAP, OPT_CLOCK, OPT_REAL, OPT_REPORT,
       OPT_HELP };

static int usage_error(const char *fmt, const char *what)
{
    fputs("nanoprof emu: ", stderr);
    fprintf(stderr, fmt, what);
    fputs(" (see nanoprof emu --help)\n", stderr);
    return 2;
}

static int set(struct np_emu_config *c, const char *name, const char *value)
{
    char setting[PATH_MAX + 32], err[256];
    snprintf(setting, sizeof setting, "%s=%s", name, value);
    if (np_emu_config_set(c, setting, err, sizeof err) == 0)
        return 0;
    return usage_error("%s", err);
}

/* The flat profile of the trace in DIR, cycles and instructions side by
 * side, on stderr (the firmware's output has stdout). */
static int report(const char *dir)
{
    struct np_model *m[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        struct np_model_options mo = { 0 };
        mo.source.metric = i ? NP_METRIC_COUNT : NP_METRIC_TIME;
        int rc = np_model_load(dir, &mo, NULL, &m[i], NULL);
        if (!m[i] || (rc != NP_TRACE_OK && rc != NP_TRACE_ETRUNC)) {
            fprintf(stderr, "nanoprof emu: cannot read back %s: %s\n", dir, np_trace_strerror(rc));
            np_model_free(m[0]);
            np_model_free(m[1]);
            return 1;
        }
    }
    size_t n, n2;
    const struct np_function *fc = np_model_functions(m[0], &n);
    const struct np_function *fi = np_model_functions(m[1], &n2);
    /* both models read the same calls in the same order: the same rows */
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t k = 0;
    for (size_t i = 0; i < n && n == n2; i++)
        if (fc[i].calls)
            order[k++] = (uint32_t)i;
    for (size_t i = 1; i < k; i++) { /* by inclusive cycles, then name */
        uint32_t x = order[i];
        size_t j = i;
        while (j > 0 && (fc[order[j - 1]].total_ns < fc[x].total_ns ||
                         (fc[order[j - 1]].total_ns == fc[x].total_ns && strcmp(fc[order[j - 1]].name, fc[x].name) > 0))) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    fprintf(stderr, "%14s %14s %14s %14s %10s %12s %12s  %s\n", "incl cycles", "self cycles", "incl insns",
            "self insns", "calls", "min cycles", "max cycles", "function");
    for (size_t i = 0; i < k; i++) {
        const struct np_function *c = &fc[order[i]], *s = &fi[order[i]];
        fprintf(stderr, "%14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 "  %s%s\n",
                c->total_ns, c->self_ns, s->total_ns, s->self_ns, c->calls, c->min_ns, c->max_ns, c->name,
                c->resynced ? " (?)" : "");
    }
    free(order);
    np_model_free(m[0]);
    np_model_free(m[1]);
    return 0;
}

int np_cmd_emu(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "cpu", required_argument, NULL, OPT_CPU },
        { "max-insns", required_argument, NULL, OPT_MAX },
        { "irq-every", required_argument, NULL, OPT_IRQ },
        { "thread-switch", required_argument, NULL, OPT_SWITCH },
        { "wait", required_argument, NULL, OPT_WAIT },
        { "ram", required_argument, NULL, OPT_RAM },
        { "map", required_argument, NULL, OPT_MAP },
        { "clock", required_argument, NULL, OPT_CLOCK },
        { "real-time", no_argument, NULL, OPT_REAL },
        { "report", no_argument, NULL, OPT_REPORT },
        { "help", no_argument, NULL, OPT_HELP },
        { NULL, 0, NULL, 0 },
    };
    struct np_emu_config c;
    np_emu_config_init(&c);
    const char *out = "nanoprof.data";
    bool want_report = false;
    int opt;
    optind = 1;
    opterr = 0;
    /* options end at the firmware: what follows is its arguments */
    while ((opt = getopt_long(argc, argv, "+:o:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            out = optarg;
            break;
        case OPT_CPU:
            if (set(&c, "cpu", optarg))
                return 2;
            break;
        case OPT_MAX:
            if (set(&c, "max-insns", optarg))
                return 2;
            break;
        case OPT_IRQ:
            if (set(&c, "irq-every", optarg))
                return 2;
            break;
        case OPT_SWITCH:
            c.thread_switch = optarg; /* kept: the setting's text is not */
            break;
        case OPT_WAIT: {
            char n[32], s[32];
            const char *comma = strchr(optarg, ',');
            if (!comma || (size_t)(comma - optarg) >= sizeof n || strlen(comma + 1) >= sizeof s)
                return usage_error("bad --wait '%s': N,S (two numbers)", optarg);
            snprintf(n, sizeof n, "%.*s", (int)(comma - optarg), optarg);
            snprintf(s, sizeof s, "%s", comma + 1);
            if (set(&c, "n-wait", n) || set(&c, "s-wait", s))
                return 2;
            break;
        }
        case OPT_RAM:
            if (set(&c, "ram", optarg))
                return 2;
            break;
        case OPT_MAP:
            if (set(&c, "map", optarg))
                return 2;
            break;
        case OPT_CLOCK:
            if (set(&c, "clock", optarg))
                return 2;
            break;
        case OPT_REAL:
            c.real_time = true;
            break;
        case OPT_REPORT:
            want_report = true;
            break;
        case OPT_HELP:
            fputs(usage_text, stdout);
            return 0;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error("%s", "no firmware given");
    const char *elf = argv[optind];
    c.argv = (const char *const *)argv + optind;
    c.argc = argc - optind;

    char dir[PATH_MAX], file[PATH_MAX + 16];
    if (!np_trace_dir_prepare("emu", out, dir, sizeof dir))
        return 1;
    snprintf(file, sizeof file, "%s/1.npt", dir);
    c.save = file;
    struct np_trace_summary sum;
    struct np_emu_result r;
    int rc = np_emu_run(elf, &c, NP_METRIC_TIME, 0, NULL, NULL, &sum, &r);
    fflush(stdout);
    if (rc != NP_TRACE_OK) {
        fprintf(stderr, "nanoprof emu: %s\n", sum.message[0] ? sum.message : np_trace_strerror(rc));
        return 1;
    }
    const struct np_calltrack_stats *s = &r.calls;
    char ended[224];
    if (r.exited)
        snprintf(ended, sizeof ended, "exited with %d", r.exit_code);
    else if (r.halted)
        snprintf(ended, sizeof ended, "halted in a branch to itself %s", r.where);
    else
        snprintf(ended, sizeof ended, "stopped");
    fprintf(stderr,
            "nanoprof emu: %s %s after %" PRIu64 " instructions, %" PRIu64 " cycles (%s); %" PRIu64
            " calls in %" PRIu32 " thread%s",
            elf, ended, r.insns, r.cycles, np_cpu_model_name(c.model), s->calls, s->threads ? s->threads : 1,
            s->threads > 1 ? "s" : "");
    if (s->resynced)
        fprintf(stderr, ", %" PRIu64 " closed by re-synchronisation (marked (?))", s->resynced);
    fprintf(stderr, "; trace in %s\n", out);
    if (r.failed)
        fprintf(stderr, "nanoprof emu: error: %s\n", r.error);
    if (want_report && report(dir) != 0)
        return 1;
    if (r.failed)
        return 1;
    return r.exit_code & 0xff;
}
