/* gen_units.c - writes, with the analysis side's trace writer
 * (trace_write.h), the small traces test_units_cli.sh runs the views on:
 * `gen_units KIND FILE`. Names resolve against this executable (the
 * sample functions of trace_builder.c).
 *
 *   cycles   an emulated run: clock "cycles", UNITS cycles/instructions,
 *            thread 1 "main" (ticks: cycles; counts: instructions):
 *              0/0 main { 1000/400 helper { 2000/800 leaf } 12000/4800
 *              20000/8000 leaf { ... RESYNC 2 at 1500000/600000 (closes
 *              leaf and helper) ... } 2500000/1000000 (main)
 *            END at 3000000.
 *   nocount  the same without a second counter (UNITS cycles only)
 *   ns       the same calls with a clock in ns ("monotonic", 1 ns a
 *            tick, start 1e9 Unix ns), no UNITS
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/trace_write.h"
#include "trace_builder.h"

static struct np_trace_writer *w;

static void check(int rc)
{
    if (rc) {
        fprintf(stderr, "gen_units: %s\n", np_trace_writer_error(w));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: gen_units cycles|nocount|ns FILE\n", stderr);
        return 2;
    }
    const char *kind = argv[1];
    bool ns = !strcmp(kind, "ns"), counted = !strcmp(kind, "cycles");
    if (!ns && !counted && strcmp(kind, "nocount")) {
        fprintf(stderr, "gen_units: unknown kind '%s'\n", kind);
        return 2;
    }
    static const char *const args[] = { "firmware.elf" };
    struct np_trace_writer_process p = {
        .pid = 1,
        .clock = ns ? "monotonic" : "cycles",
        .ns_per_tick = 1.0,
        .start_ns = ns ? 1000000000ull : 0,
        .argc = 1,
        .argv = args,
        .time_unit = ns ? NULL : "cycles",
        .count_unit = counted ? "instructions" : NULL,
    };
    char err[512];
    if (!(w = np_trace_writer_open(argv[2], &p, err, sizeof err))) {
        fprintf(stderr, "gen_units: %s\n", err);
        return 1;
    }
    struct tb_self self;
    struct tb_sample s;
    tb_self(&self);
    tb_sample_functions(&s);
    struct np_trace_module m = { self.bias, self.start, self.end, self.build_id, self.build_id_len, self.path };
    check(np_trace_writer_module(w, &m));
    check(np_trace_writer_thread(w, 1, "main"));
    check(np_trace_writer_enter(w, 1, 0, 0, s.main));
    check(np_trace_writer_enter(w, 1, 1000, 400, s.helper));
    check(np_trace_writer_enter(w, 1, 2000, 800, s.leaf));
    check(np_trace_writer_exit(w, 1, 12000, 4800));
    check(np_trace_writer_enter(w, 1, 20000, 8000, s.leaf));
    check(np_trace_writer_resync(w, 1, 1500000, 600000, 2));
    check(np_trace_writer_exit(w, 1, 2500000, 1000000));
    if (np_trace_writer_close(w, 3000000, 0, err, sizeof err)) {
        fprintf(stderr, "gen_units: %s\n", err);
        return 1;
    }
    return 0;
}
