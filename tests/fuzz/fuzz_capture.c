/* fuzz_capture.c - libFuzzer target: any bytes as a target's capture,
 * read by the capture source (analyze/source_capture.h) with the ELF of
 * the firmware that made the corpus (tests/fuzz/capture_fw.elf) twice: into
 * a model (filters and a listener on), whose invariant is checked as
 * fuzz_trace_read.c checks it, and into the trace writer's sink, as
 * `nanoprof import` writes it; that trace read back gives as many events
 * as the writer was told when the capture read without a problem. The
 * firmware's reports are formatted as import prints them, named from the
 * ELF: every record the capture source tells is one the formatter takes
 * (a known type with its values). Built with -DNP_FUZZ=ON under Clang;
 * for every compiler fuzz_replay.c runs it over the corpus
 * (tests/fuzz/corpus_capture: captures of tests/port/trace_fw.c on
 * mps2-an385, taken by the port_trace_import test, and one of them,
 * trace_fw-m3-reports, with REPORT records added before and after its
 * END) in ctest. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/model.h"
#include "analyze/source_capture.h"
#include "analyze/trace_read.h"
#include "analyze/trace_write.h"
#include "common/report_text.h"
#include "../timeline.h"
#include "fuzz_invariant.h"

#ifndef NP_FUZZ_CAPTURE_ELF
#error "NP_FUZZ_CAPTURE_ELF: the corpus's firmware ELF"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd holding DATA: its path in PATH. -1 when it cannot be made. */
static int memfile(const char *name, const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = fuzz_memfd(name, data, size);
    if (fd >= 0)
        snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

static void into_model(const char *path)
{
    static char glob[] = "0x*0"; /* exercises the filters: drops every address ending in 0 */
    static char *exclude[] = { glob };
    static const char *args[] = { "elf=" NP_FUZZ_CAPTURE_ELF, NULL };
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener, .max_depth = 64, .min_duration_ns = 2,
                                    .exclude = exclude, .nexclude = 1 };
    opt.source.args = args;
    opt.source.source = "capture";
    struct np_model *m = NULL;
    struct np_trace_summary sum;
    np_model_load(path, &opt, NULL, &m, &sum);
    if (m && sum.status < NP_TRACE_ENOMEM) { /* (finished: np_model_finish failed only when out of memory) */
        check_invariant(m);
        if (timeline_check(&tl))
            abort();
    }
    np_model_free(m);
    timeline_free(&tl);
}

/* Counts what a reader delivers. */
static int count_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    (void)tid, (void)ev;
    *(uint64_t *)ctx += n;
    *done = n;
    return 0;
}

/* The writer's sink, the events it is told counted (samples it does not
 * write: they are not counted). */
static struct np_event_sink writer;
static uint64_t told;
static int count_then_write(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    int rc = writer.events(ctx, tid, ev, n, done);
    told += *done;
    return rc;
}

/* A report formatted, its lines dropped. */
static struct np_report_names names;
static void drop_line(void *ctx, const char *line, size_t len)
{
    (void)ctx, (void)line, (void)len;
}
static int format_report(void *ctx, unsigned type, const uint64_t *values, unsigned n)
{
    (void)ctx;
    if (np_report_text(type, values, n, &names, drop_line, NULL) < 0) {
        fprintf(stderr, "fuzz_capture: a report of type %u with %u values told, the formatter refused it\n", type, n);
        abort();
    }
    return 0;
}

static void through_writer(const char *path)
{
    struct np_trace_summary sum;
    struct np_capture *c = np_capture_open(path, NP_FUZZ_CAPTURE_ELF, NP_CAPTURE_KEEP_ENDING, NULL, NULL, &sum);
    if (!c)
        return;
    int out = memfd_create("fuzz.npt", MFD_CLOEXEC);
    char file[64], err[NP_TRACE_MSG_MAX];
    if (out < 0) {
        np_capture_free(c);
        return;
    }
    snprintf(file, sizeof file, "/proc/self/fd/%d", out);
    struct np_trace_write_sink *ws = np_trace_write_sink_new(file, NULL, NULL);
    writer = np_trace_write_sink(ws);
    struct np_event_sink sink = writer;
    sink.events = count_then_write;
    sink.report = format_report;
    names = np_capture_report_names(c);
    told = 0;
    int st = np_capture_read(c, &sink);
    bool begun = np_trace_write_sink_begun(ws);
    int wrc = np_trace_write_sink_close(ws, err, sizeof err);
    if (st == NP_TRACE_OK && !wrc && begun && !sum.chunks_damaged) {
        uint64_t n = 0;
        struct np_event_sink counter = { .ctx = &n, .events = count_events };
        struct np_trace_summary back = { 0 };
        np_trace_read_fd(out, file, &counter, NULL, &back);
        if (back.status != NP_TRACE_OK || n != told) {
            fprintf(stderr, "fuzz_capture: the capture gave %llu events, its trace read back %llu (%s)\n",
                    (unsigned long long)told, (unsigned long long)n, back.message);
            abort();
        }
    }
    close(out);
    np_capture_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = memfile("fuzz.capture", data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    into_model(path);
    through_writer(path);
    close(fd);
    return 0;
}
