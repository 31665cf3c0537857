/* import.c - `nanoprof import`: a trace recorded on a target
 * (nanoprof/trace.h), captured from its output (semihosting's stdout, a
 * UART) with whatever else the firmware wrote around and between its
 * chunks, turned into a trace directory every view reads, its MODULE
 * pointing at the firmware's ELF, whose build-id must be the trace's: the
 * capture source (analyze/source_capture.h) told to the trace writer's
 * sink (analyze/trace_write.h). The firmware's reports (its dumps and
 * error lines, sent as records) are printed on stdout as the host's
 * runtime prints them (common/report_text.h), named from the ELF. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "options.h"
#include "trace_dir.h"
#include "analyze/source_capture.h"
#include "analyze/source_qemu_log.h"
#include "analyze/trace_write.h"
#include "common/report_text.h"
#include "common/trace_format.h"

static const char usage_text[] =
    "usage: nanoprof import [options] CAPTURE --elf FIRMWARE.elf\n"
    "       nanoprof import [options] --qemu-log LOG --elf FIRMWARE.elf\n"
    "\n"
    "Imports the trace a Cortex-M firmware recorded with np_trace_init\n"
    "(docs/porting.md, \"Recording a trace on the target\"), from CAPTURE, the\n"
    "bytes its output writer sent (semihosting's stdout, a UART's capture).\n"
    "The firmware's own text before, after and between the trace's chunks is\n"
    "skipped. The calls are named from FIRMWARE.elf's symbols; its build-id\n"
    "must be the one the firmware recorded (link with -Wl,--build-id). The\n"
    "result is a trace directory that report, tree, graph, replay, flame and\n"
    "dump read, its times in cycles (give them --clock=HZ for time).\n"
    "\n"
    "The firmware's reports (its dumps and error lines, which a target sends\n"
    "as records among the trace's chunks, after its END too) are printed on\n"
    "stdout, in order, as the runtime prints them on a host, named from\n"
    "FIRMWARE.elf. A capture of reports and no trace (a firmware that only\n"
    "dumps) has them printed, and no directory is written.\n"
    "\n"
    "CAPTURE may be an image of the firmware's RAM holding a flight recorder\n"
    "(np_trace_init_flight), as gdb saves it (dump binary memory FILE START\n"
    "END): its control block is found in it by its id, and its newest calls\n"
    "imported (docs/porting.md, \"The flight recorder\").\n"
    "\n"
    "With --qemu-log, LOG is qemu-system-arm's log of the blocks it ran of\n"
    "FIRMWARE.elf (-d exec,nochain -D LOG; with -singlestep, or -accel\n"
    "tcg,one-insn-per-tb=on, a block per instruction; -d cpu adds the\n"
    "registers, which tell threads apart): the calls are rebuilt from the\n"
    "firmware's code as `nanoprof emu` rebuilds them, times in instructions\n"
    "(docs/emulator.md, \"QEMU execution logs\"). Every view also reads LOG\n"
    "itself, given --elf.\n"
    "\n"
    "options:\n"
    "      --elf FILE      the firmware's ELF (required)\n"
    "      --qemu-log LOG  import QEMU's execution log LOG\n"
    "  -o, --output PATH   the trace directory (default nanoprof.data); an\n"
    "                      existing one is renamed PATH.old\n"
    "      --help          print this help and exit\n"
    "\n"
    "A capture cut short is imported up to its last whole chunk, and said; a\n"
    "damaged chunk is said with its offset, skipped and counted, and so is a\n"
    "report of a type this nanoprof does not know. When there is no trace in\n"
    "it, its start is corrupt, or the ELF is not the firmware's, one line\n"
    "says so and nothing is written; a chunk further on that is corrupt (its\n"
    "checksum holds, its fields do not) ends the trace there, said in one\n"
    "line: what came before it is written (and printed).\n"
    "\n"
    "exit status: 0 imported, 1 nothing could be imported (or only the part\n"
    "before a corrupt chunk), 2 usage error.\n";

enum { OPT_ELF = NP_CLI_OWN, OPT_QEMU_LOG };

/* ---- messages --------------------------------------------------------------------- */

static void diag(void *ctx, enum np_diag_level level, const char *line)
{
    (void)ctx;
    fprintf(stderr, "nanoprof import: %s%s\n",
            level == NP_DIAG_WARNING ? "warning: " : level == NP_DIAG_NOTE ? "note: " : "", line);
}

/* ---- the trace directory, made when the trace begins ------------------------------ */

struct import_out {
    const char *out;                /* -o */
    char dir[PATH_MAX];
    bool prepared;
};

static int prepare(void *ctx)
{
    struct import_out *o = ctx;
    if (!np_trace_dir_prepare("import", o->out, o->dir, sizeof o->dir))
        return NP_TRACE_EIO; /* (its line is out) */
    o->prepared = true;
    return 0;
}

/* ---- the firmware's reports, printed; the trace, written ----------------------------- */

/* The sink the capture is read into: the reports printed, and the trace
 * writer's sink (when there is a trace) behind the callbacks it sets,
 * under one context. */
struct import_sink {
    struct np_report_names names;
    struct np_event_sink writer;
};

static void print_line(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    fwrite(line, 1, len, stdout);
}

static int print_report(void *ctx, unsigned type, const uint64_t *values, unsigned n)
{
    struct import_sink *s = ctx;
    /* (a known type with its values, as the capture source tells them:
     * the formatter takes every one) */
    np_report_text(type, values, n, &s->names, print_line, NULL);
    return 0;
}

#define TO_WRITER(fn, params, ...)                       \
    static int to_##fn params                            \
    {                                                    \
        struct import_sink *s = ctx;                     \
        return s->writer.fn(s->writer.ctx, __VA_ARGS__); \
    }
TO_WRITER(begin, (void *ctx, const struct np_trace_process *p), p)
TO_WRITER(module, (void *ctx, const struct np_trace_module *m), m)
TO_WRITER(thread, (void *ctx, uint32_t tid, const char *name), tid, name)
TO_WRITER(name, (void *ctx, uint64_t address, const char *name), address, name)
TO_WRITER(events, (void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done), tid, ev, n, done)
TO_WRITER(damaged, (void *ctx, const uint8_t *bytes, size_t n), bytes, n)
#undef TO_WRITER

/* The summary line's counts after the events' or the reports': what was
 * skipped. */
static void say_skipped(const struct np_capture_found *f, const struct np_trace_summary *sum)
{
    if (f->reports_unknown)
        fprintf(stderr, ", %" PRIu64 " report%s of unknown type skipped", f->reports_unknown,
                f->reports_unknown == 1 ? "" : "s");
    if (sum->chunks_damaged)
        fprintf(stderr, ", %u damaged chunk%s skipped (%" PRIu64 " bytes)", sum->chunks_damaged,
                sum->chunks_damaged == 1 ? "" : "s", sum->bytes_damaged);
}

/* The lines on how the capture ends (cut, another trace after it). */
static void say_ending(const struct np_capture *cap)
{
    for (const char *line = np_capture_ending(cap), *nl; (nl = strchr(line, '\n')); line = nl + 1)
        fprintf(stderr, "nanoprof import: %.*s\n", (int)(nl - line), line);
}

/* A capture of reports and no trace: printed, nothing written. */
static int print_reports(struct np_capture *cap, struct import_sink *s, const struct np_trace_summary *sum)
{
    struct np_event_sink sink = { .ctx = s, .report = print_report };
    int rc = np_capture_read(cap, &sink) > NP_TRACE_ETRUNC ? 1 : 0;
    const struct np_capture_found *f = np_capture_found(cap);
    fprintf(stderr, "nanoprof import: %" PRIu64 " report%s", f->reports, f->reports == 1 ? "" : "s");
    say_skipped(f, sum);
    fprintf(stderr, ", no trace events (nothing written)\n");
    say_ending(cap);
    return rc;
}

/* The sink that writes the trace directory O->out (made when the trace
 * begins); NULL, said, when out of memory. */
static struct np_trace_write_sink *trace_sink(struct import_out *o)
{
    char file[PATH_MAX + 32];
    snprintf(file, sizeof file, "%s/firmware%s", o->out, NP_TRACE_FILE_SUFFIX);
    struct np_trace_write_sink *ws = np_trace_write_sink_new(file, prepare, o);
    if (!ws)
        fprintf(stderr, "nanoprof import: out of memory\n");
    return ws;
}

/* The trace written into OUT, the reports printed. */
static int import_trace(struct np_capture *cap, struct import_sink *s, const struct np_trace_summary *sum,
                        const char *out)
{
    struct import_out o = { out, "", false };
    char err[NP_TRACE_MSG_MAX];
    struct np_trace_write_sink *ws = trace_sink(&o);
    if (!ws)
        return 1;
    s->writer = np_trace_write_sink(ws);
    const struct np_event_sink *w = &s->writer;
    struct np_event_sink sink = { .ctx = s,
                                  .begin = w->begin ? to_begin : NULL,
                                  .module = w->module ? to_module : NULL,
                                  .thread = w->thread ? to_thread : NULL,
                                  .name = w->name ? to_name : NULL,
                                  .events = w->events ? to_events : NULL,
                                  .damaged = w->damaged ? to_damaged : NULL,
                                  .report = print_report };
    int st = np_capture_read(cap, &sink);
    bool written = np_trace_write_sink_begun(ws);
    int rc = st > NP_TRACE_ETRUNC ? 1 : 0;
    if (rc) /* what came before the problem: a trace cut short there */
        np_trace_write_sink_stopped(ws);
    if (np_trace_write_sink_close(ws, err, sizeof err)) {
        fprintf(stderr, "nanoprof import: %s\n", err);
        rc = 1;
    }
    if (written) {
        const struct np_capture_found *f = np_capture_found(cap);
        fprintf(stderr, "nanoprof import: %" PRIu64 " events of %" PRIu32 " thread%s, %" PRIu64 " lost", sum->events,
                f->threads, f->threads == 1 ? "" : "s", f->lost);
        if (f->reports)
            fprintf(stderr, ", %" PRIu64 " report%s", f->reports, f->reports == 1 ? "" : "s");
        say_skipped(f, sum);
        fprintf(stderr, ", into %s\n", out);
        say_ending(cap);
    } else if (o.prepared) { /* nothing came: nothing is left */
        rmdir(o.dir);
    }
    return rc;
}

/* ---- a QEMU execution log ------------------------------------------------------------- */

static int import_qemu_log(const char *log, const char *elf, const char *out)
{
    struct import_out o = { out, "", false };
    char err[NP_TRACE_MSG_MAX];
    struct np_trace_write_sink *ws = trace_sink(&o);
    if (!ws)
        return 1;
    struct np_event_sink sink = np_trace_write_sink(ws);
    struct np_trace_summary sum;
    struct np_qemu_log_stats st;
    int status = np_qemu_log_read(log, elf, NP_METRIC_TIME, &sink, &sum, &st);
    bool written = np_trace_write_sink_begun(ws);
    int rc = status == NP_TRACE_OK ? 0 : 1;
    if (rc)
        np_trace_write_sink_stopped(ws);
    if (np_trace_write_sink_close(ws, err, sizeof err)) {
        fprintf(stderr, "nanoprof import: %s\n", err);
        rc = 1;
    }
    if (status != NP_TRACE_OK && sum.message[0])
        fprintf(stderr, "nanoprof import: %s\n", sum.message);
    if (written && (status == NP_TRACE_OK || status == NP_TRACE_ETRUNC)) {
        fprintf(stderr,
                "nanoprof import: %" PRIu64 " calls of %" PRIu32 " thread%s, %" PRIu64 " instructions in %" PRIu64
                " blocks, %" PRIu64 " exceptions (%" PRIu64 " tail-chained), into %s\n",
                st.calls.calls, st.calls.threads, st.calls.threads == 1 ? "" : "s", st.insns, st.blocks,
                st.exceptions, st.tail_chains, out);
        np_qemu_log_say(&st, err, sizeof err);
        if (err[0])
            fprintf(stderr, "nanoprof import: warning: %s\n", err);
        if (st.ending[0] && !st.cut)
            fprintf(stderr, "nanoprof import: note: %s\n", st.ending);
    } else if (!written && o.prepared) {
        rmdir(o.dir);
    }
    return rc;
}

/* ---- the command ------------------------------------------------------------------- */

static const struct np_cli_option options[] = {
    { "output", 'o', NP_CLI_VALUE, 'o' },
    { "elf", 0, NP_CLI_VALUE, OPT_ELF },
    { "qemu-log", 0, NP_CLI_VALUE, OPT_QEMU_LOG },
    { NULL, 0, 0, 0 },
};

struct import_cmd {
    const char *out, *elf, *qemu_log;
};

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

static int option(void *ctx, int id, const char *value)
{
    struct import_cmd *c = ctx;
    *(id == 'o' ? &c->out : id == OPT_ELF ? &c->elf : &c->qemu_log) = value;
    return 0;
}

int np_cmd_import(int argc, char **argv)
{
    struct import_cmd c = { NP_TRACE_DEFAULT_PATH, NULL, NULL };
    struct np_cli cli = { "import", options, NP_CLI_PERMUTE, usage, option, NULL };
    int first, rc = np_cli_parse(&cli, &c, argc, argv, &first);
    if (rc)
        return rc == NP_CLI_HELP ? 0 : rc;
    if (c.qemu_log) {
        if (first < argc)
            return np_cli_usage_error("import", "--qemu-log takes the log: no capture besides");
        if (!c.elf)
            return np_cli_usage_error("import", "--elf FIRMWARE.elf is required: the log's code is read from it");
        return import_qemu_log(c.qemu_log, c.elf, c.out);
    }
    if (first >= argc)
        return np_cli_usage_error("import", "no capture given");
    if (first + 1 < argc)
        return np_cli_usage_error("import", "one capture at a time");
    if (!c.elf)
        return np_cli_usage_error("import", "--elf FIRMWARE.elf is required: the calls are named from it");
    struct np_trace_hooks hooks = { NULL, diag, NULL };
    struct np_trace_summary sum;
    struct np_capture *cap = np_capture_open(argv[first], c.elf, NP_CAPTURE_KEEP_ENDING, NULL, &hooks, &sum);
    if (!cap)
        return 1;
    struct import_sink s = { .names = np_capture_report_names(cap) };
    rc = np_capture_reports_only(cap) ? print_reports(cap, &s, &sum) : import_trace(cap, &s, &sum, c.out);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nanoprof import: writing the reports to stdout failed\n");
        rc = 1;
    }
    np_capture_free(cap);
    return rc;
}
