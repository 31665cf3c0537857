/* test_sink_conformance.c - a source is one more source of the same
 * pipeline: a scripted run (several threads, nested calls, recursion, a
 * LOST, a SWITCH, RESYNCs, a second counter) fed straight to the model
 * gives exactly the model read back from the file the trace writer made
 * of it, through the source table - in cycles, in instructions, at a
 * clock rate, in ns, with the model's filters, in one chunk or many
 * (conformance.h). Then the new parts one by one: the times' units and
 * their text, RESYNC's rules, the options a trace cannot take, UNITS
 * chunks that are wrong, the writer's refusals, the source table. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "analyze/source.h"
#include "analyze/textfmt.h"
#include "common/trace_format.h"
#include "conformance.h"
#include "trace_builder.h"

static char dir[] = "/tmp/np_conformance_XXXXXX";
static struct tb_sample fn;
static struct tb_self self;
static struct np_trace_module module;

static const char *in_dir(const char *name)
{
    static char path[2][4200];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    tb_sample_functions(&fn);
    tb_self(&self);
    module = (struct np_trace_module){ self.bias, self.start, self.end, self.build_id, self.build_id_len, self.path };
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the script ------------------------------------------------------------------ */

#define EV(k, t, ticks, count, arg) { k, t, ticks, count, arg, NULL }

/* Thread 1 "main" and thread 2 "worker", interleaved; thread 3 is only
 * named. Ticks are cycles, counts instructions:
 *   1: main { helper { leaf } fib { fib { fib } } [switched 5] } leaf
 *      ... RESYNC 2 (leaf, helper) ... square { } } main, then an exit
 *      with nothing open
 *   2: twice { square ... LOST 3 (closes square, twice) square { } exit
 *      with nothing open; twice { ... RESYNC 5 (only twice is open);
 *      0x10 { 0x10 { (a function in no module, recursive) left open */
static struct cf_event events[64];
static size_t nevents;

static void build_events(void)
{
    const struct cf_event e[] = {
        { CF_THREAD, 1, 0, 0, 0, "main" },
        EV(CF_ENTER, 1, 100, 0, fn.main),
        EV(CF_ENTER, 2, 105, 0, fn.twice),
        EV(CF_ENTER, 1, 110, 4, fn.helper),
        EV(CF_ENTER, 2, 115, 3, fn.square),
        EV(CF_ENTER, 1, 120, 9, fn.leaf),
        EV(CF_LOST, 2, 125, 7, 3),
        EV(CF_EXIT, 1, 150, 20, 0),
        EV(CF_ENTER, 1, 160, 22, fn.fib),
        EV(CF_ENTER, 2, 135, 9, fn.square),
        EV(CF_ENTER, 1, 170, 25, fn.fib),
        EV(CF_EXIT, 2, 145, 12, 0),
        EV(CF_EXIT, 2, 150, 12, 0),
        EV(CF_ENTER, 1, 180, 28, fn.fib),
        EV(CF_EXIT, 1, 190, 30, 0),
        EV(CF_ENTER, 2, 160, 15, fn.twice),
        EV(CF_EXIT, 1, 200, 33, 0),
        EV(CF_SWITCH, 1, 205, 35, 5),
        EV(CF_EXIT, 1, 210, 36, 0),
        EV(CF_ENTER, 1, 220, 40, fn.leaf),
        EV(CF_RESYNC, 1, 260, 55, 2),
        EV(CF_RESYNC, 2, 170, 16, 5),
        EV(CF_ENTER, 1, 270, 60, fn.square),
        EV(CF_ENTER, 2, 180, 18, 0x10),
        EV(CF_EXIT, 1, 280, 62, 0),
        EV(CF_ENTER, 2, 190, 21, 0x10),
        EV(CF_EXIT, 1, 300, 70, 0),
        { CF_THREAD, 2, 0, 0, 0, "worker" },
        EV(CF_EXIT, 1, 310, 72, 0),
        { CF_THREAD, 3, 0, 0, 0, "idle" },
    };
    memcpy(events, e, sizeof e);
    nevents = sizeof e / sizeof *e;
}

static const char *const argv0[] = { "firmware.elf", "--fast" };

/* The run in cycles and instructions (an emulator's), chunks of
 * CHUNK_BYTES (0: one per thread). */
static struct cf_script cycles_script(size_t chunk_bytes)
{
    build_events();
    return (struct cf_script){
        .process = { .pid = 7, .ppid = 1, .clock = "cycles", .ns_per_tick = 1.0, .start_tick = 50,
                     .start_ns = 1700000000000000000ull, .argc = 2, .argv = argv0, .time_unit = "cycles",
                     .count_unit = "instructions", .chunk_bytes = chunk_bytes },
        .modules = &module, .nmodules = 1, .events = events, .nevents = nevents,
        .end_tick = 400, .events_lost = 3,
    };
}

static void check(const struct cf_script *s, const char *name, const struct np_model_options *mo)
{
    char msg[1024];
    if (cf_check_script(s, in_dir(name), mo, msg, sizeof msg))
        fail_msg("%s: %s", name, msg);
}

/* Every metric and clock, with and without filters, in one chunk per
 * thread and in chunks of a few events (counts and calls go on across
 * them; two chunks or more are decoded ahead in time). */
static void conformance(void **state)
{
    (void)state;
    static char include[] = "sample_helper", exclude[] = "sample_fib";
    static char *inc[] = { include }, *exc[] = { exclude };
    static uint32_t tids[] = { 2 };
    const struct np_source_options sources[] = {
        { 0, NP_METRIC_TIME, NULL, NULL },
        { 0, NP_METRIC_COUNT, NULL, NULL },
        { 3e6, NP_METRIC_TIME, NULL, NULL },    /* 333.33 ns a cycle: rounding */
        { 250e6, NP_METRIC_TIME, NULL, NULL },
    };
    const struct np_model_options filters[] = {
        { 0 },
        { .max_depth = 2 },
        { .exclude_switched = true },
        { .min_duration_ns = 10 },
        { .include = inc, .ninclude = 1 },
        { .exclude = exc, .nexclude = 1, .tids = tids, .ntids = 1 },
    };
    for (size_t chunk = 0; chunk < 2; chunk++)
        for (size_t s = 0; s < sizeof sources / sizeof *sources; s++)
            for (size_t f = 0; f < sizeof filters / sizeof *filters; f++) {
                struct cf_script script = cycles_script(chunk ? 8 : 0);
                struct np_model_options mo = filters[f];
                mo.source = sources[s];
                char name[64];
                snprintf(name, sizeof name, "c%zu-s%zu-f%zu.npt", chunk, s, f);
                check(&script, name, &mo);
            }
}

/* The same run on a clock in ns: 2.5 ns a tick, from tick 50 at a Unix
 * time; and cycles told by the clock's name alone (no UNITS). */
static void conformance_ns(void **state)
{
    (void)state;
    struct cf_script s = cycles_script(0);
    s.process.clock = "monotonic";
    s.process.ns_per_tick = 2.5;
    s.process.time_unit = s.process.count_unit = NULL;
    check(&s, "ns.npt", NULL);
    struct np_model_options mo = { .exclude_switched = true };
    s.process.chunk_bytes = 5;
    check(&s, "ns-chunks.npt", &mo);
    s = cycles_script(0);
    s.process.time_unit = s.process.count_unit = NULL;
    mo = (struct np_model_options){ .source = { 1e6, NP_METRIC_TIME, NULL, NULL } };
    check(&s, "clock-named.npt", &mo);
}

/* A long run: chunks large enough for the decoder's fast paths (and for
 * reading ahead), records of every kind among them, and gaps long enough
 * for varints of several bytes. */
static void conformance_long(void **state)
{
    (void)state;
    enum { CALLS = 6000 };
    struct cf_event *e = calloc(8 * CALLS, sizeof *e);
    assert_non_null(e);
    const uint64_t fns[] = { fn.main, fn.helper, fn.leaf, fn.fib, fn.square, fn.twice, 0x10 };
    uint64_t ticks[3] = { 0 }, counts[3] = { 0 };
    size_t n = 0;
#define AT(t, dt, dc) (ticks[t] += (dt), counts[t] += (dc), ticks[t]), counts[t]
    for (unsigned i = 0; i < CALLS; i++) {
        uint32_t t = 1 + i % 2;
        uint64_t gap = i % 97 == 0 ? 70000 : 1 + i % 13; /* now and then three bytes */
        e[n++] = (struct cf_event){ CF_ENTER, t, AT(t, gap, i % 5), fns[i % 7], NULL };
        e[n++] = (struct cf_event){ CF_ENTER, t, AT(t, 3, 2), fns[(i + 3) % 7], NULL };
        if (i % 11 == 0) { /* a return missed: found at the caller's */
            e[n++] = (struct cf_event){ CF_ENTER, t, AT(t, 2, 1), fns[2], NULL };
            e[n++] = (struct cf_event){ CF_RESYNC, t, AT(t, 9, 4), 2, NULL };
        } else {
            e[n++] = (struct cf_event){ CF_EXIT, t, AT(t, 5, 3), 0, NULL };
        }
        if (i % 301 == 0)
            e[n++] = (struct cf_event){ CF_SWITCH, t, AT(t, 40, 0), 30, NULL };
        if (i % 1009 == 0)
            e[n++] = (struct cf_event){ CF_LOST, t, AT(t, 1, 0), 7, NULL };
        else
            e[n++] = (struct cf_event){ CF_EXIT, t, AT(t, 4, 1), 0, NULL };
    }
#undef AT
    struct cf_script script = cycles_script(4096);
    script.events = e;
    script.nevents = n;
    script.end_tick = ticks[1] > ticks[2] ? ticks[1] + 1 : ticks[2] + 1;
    const struct np_source_options sources[] = {
        { 0, NP_METRIC_TIME, NULL, NULL }, { 0, NP_METRIC_COUNT, NULL, NULL }, { 7e6, NP_METRIC_TIME, NULL, NULL } };
    for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        struct np_model_options mo = { .source = sources[i] };
        check(&script, "long.npt", &mo);
    }
    script.process.chunk_bytes = 0; /* one chunk per thread: no reading ahead */
    check(&script, "long-one.npt", NULL);
    free(e);
}

/* ---- what the model makes of it ---------------------------------------------------- */

static const struct np_function *function(const struct np_model *m, const char *name)
{
    size_t n;
    const struct np_function *f = np_model_functions(m, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(f[i].name, name))
            return &f[i];
    fail_msg("no function %s", name);
    return NULL;
}

static const struct np_thread *thread(const struct np_model *m, uint32_t tid)
{
    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        if (t[i].tid == tid)
            return &t[i];
    fail_msg("no thread %" PRIu32, tid);
    return NULL;
}

static struct cf_model load(const char *name, const struct np_source_options *o)
{
    struct np_model_options mo = { 0 };
    if (o)
        mo.source = *o;
    struct cf_model c;
    cf_model_load(in_dir(name), &mo, &c);
    return c;
}

/* The figures, by hand: in cycles (times from the start tick 50), then
 * in instructions. */
static void resync_rules(void **state)
{
    (void)state;
    struct cf_script s = cycles_script(0);
    char err[512];
    assert_int_equal(cf_write_script(&s, in_dir("rules.npt"), err, sizeof err), 0);
    struct cf_model c = load("rules.npt", NULL);
    assert_int_equal(c.status, NP_TRACE_OK);
    const struct np_model *m = c.m;
    assert_int_equal(np_model_time_unit(m), NP_UNIT_CYCLES);
    const struct np_process *p = np_model_processes(m, &(size_t){ 0 });
    assert_int_equal(p->start_ns, 0);
    assert_int_equal(p->end_ns, 350);
    assert_int_equal(p->time_unit, NP_UNIT_CYCLES);
    /* leaf: 120-150 (30), 220-260 closed by the RESYNC (40) */
    const struct np_function *leaf = function(m, "sample_leaf");
    assert_int_equal(leaf->calls, 2);
    assert_int_equal(leaf->total_ns, 70);
    assert_int_equal(leaf->resynced, 1);
    /* helper: 110-260, closed by the same RESYNC */
    const struct np_function *helper = function(m, "sample_helper");
    assert_int_equal(helper->total_ns, 150);
    assert_int_equal(helper->self_ns, 150 - 30 - 50 - 40);
    assert_int_equal(helper->resynced, 1);
    assert_int_equal(function(m, "sample_main")->resynced, 0);
    assert_int_equal(function(m, "sample_main")->total_ns, 200);
    /* the RESYNC of 5 on thread 2 closed twice alone (160-170) */
    const struct np_function *twice = function(m, "sample_twice");
    assert_int_equal(twice->calls, 2);
    assert_int_equal(twice->resynced, 1);
    assert_int_equal(twice->total_ns, 20 + 10);
    assert_int_equal(thread(m, 1)->closed_at_resync, 2);
    assert_int_equal(thread(m, 2)->closed_at_resync, 1);
    assert_int_equal(thread(m, 2)->closed_at_loss, 2);
    assert_int_equal(thread(m, 2)->lost, 3);
    assert_string_equal(thread(m, 3)->name, "idle");
    assert_int_equal(thread(m, 3)->calls, 0);
    /* the switch, 5 cycles within fib's outermost call */
    assert_int_equal(function(m, "sample_fib")->switched_ns, 5);
    /* the calls told: two ends marked, each at its RESYNC */
    size_t marked = 0;
    for (size_t i = 0; i < c.tl.n; i++)
        if (c.tl.calls[i].resynced) {
            marked++;
            assert_int_equal(c.tl.calls[i].start_ns + c.tl.calls[i].duration_ns,
                             c.tl.calls[i].thread == thread(m, 1) - np_model_threads(m, &(size_t){ 0 }) ? 210 : 120);
        }
    assert_int_equal(marked, 3);
    /* the nodes: one resynced call on each of the three paths */
    size_t nn, resynced = 0;
    const struct np_node *nodes = np_model_nodes(m, &nn);
    for (size_t i = 0; i < nn; i++)
        resynced += nodes[i].resynced;
    assert_int_equal(resynced, 3);
    cf_model_free(&c);

    /* instructions: leaf 9-20 (11) and 40-55 (15); the count metric has
     * no end time of its own: the last event's */
    struct np_source_options count = { 0, NP_METRIC_COUNT, NULL, NULL };
    c = load("rules.npt", &count);
    m = c.m;
    assert_int_equal(c.status, NP_TRACE_OK);
    assert_int_equal(np_model_time_unit(m), NP_UNIT_INSNS);
    assert_int_equal(function(m, "sample_leaf")->total_ns, 26);
    assert_int_equal(function(m, "sample_main")->total_ns, 70);
    assert_int_equal(function(m, "sample_fib")->switched_ns, 0); /* no instruction runs switched out */
    assert_int_equal(np_model_processes(m, &(size_t){ 0 })->end_ns, 72);
    cf_model_free(&c);

    /* 250 MHz: 4 ns a cycle after the start time */
    struct np_source_options clock = { 250e6, NP_METRIC_TIME, NULL, NULL };
    c = load("rules.npt", &clock);
    m = c.m;
    assert_int_equal(np_model_time_unit(m), NP_UNIT_NS);
    assert_int_equal(function(m, "sample_leaf")->total_ns, 280);
    assert_int_equal(np_model_processes(m, &(size_t){ 0 })->start_ns, 1700000000000000000ull);
    assert_int_equal(thread(m, 1)->first_ns, 1700000000000000000ull + 200);
    cf_model_free(&c);
}

/* ---- options a trace cannot take ----------------------------------------------------- */

static void options_refused(void **state)
{
    (void)state;
    struct cf_script s = cycles_script(0);
    char err[512];
    s.process.count_unit = NULL;
    assert_int_equal(cf_write_script(&s, in_dir("nocount.npt"), err, sizeof err), 0);
    s = cycles_script(0);
    s.process.clock = "monotonic";
    s.process.time_unit = s.process.count_unit = NULL;
    assert_int_equal(cf_write_script(&s, in_dir("ns-only.npt"), err, sizeof err), 0);
    s = cycles_script(0);
    assert_int_equal(cf_write_script(&s, in_dir("both.npt"), err, sizeof err), 0);

    static const struct {
        const char *file;
        struct np_source_options o;
        const char *says;
    } cases[] = {
        { "nocount.npt", { 0, NP_METRIC_COUNT, NULL, NULL }, "no second counter to count with" },
        { "ns-only.npt", { 1e6, NP_METRIC_TIME, NULL, NULL }, "a clock rate applies to a trace in cycles; this one's "
                                                         "clock (monotonic) counts ns" },
        { "both.npt", { 1e6, NP_METRIC_COUNT, NULL, NULL }, "not the second counter (instructions)" },
        { "both.npt", { 1e-6, NP_METRIC_TIME, NULL, NULL }, "clock rate 1e-06 Hz is out of range" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct cf_model c = load(cases[i].file, &cases[i].o);
        assert_int_equal(c.status, NP_TRACE_EOPTION);
        if (!strstr(c.sum.message, cases[i].says))
            fail_msg("no '%s' in '%s'", cases[i].says, c.sum.message);
        size_t np;
        np_model_processes(c.m, &np);
        assert_int_equal(np, 0); /* nothing read */
        assert_int_equal(c.sum.files_read, 0);
        cf_model_free(&c);
    }
    /* a directory: the first file refuses, the rest is not read */
    mkdir(in_dir("refused"), 0777);
    assert_int_equal(cf_write_script(&s, in_dir("refused/1.npt"), err, sizeof err), 0);
    assert_int_equal(cf_write_script(&s, in_dir("refused/2.npt"), err, sizeof err), 0);
    struct np_source_options clock_count = { 1e6, NP_METRIC_COUNT, NULL, NULL };
    struct cf_model c = load("refused", &clock_count);
    assert_int_equal(c.status, NP_TRACE_EOPTION);
    assert_int_equal(c.sum.files, 1);
    cf_model_free(&c);
}

/* ---- UNITS chunks that are wrong, units that do not mix -------------------------------- */

static void units_chunk(struct tb *b, const char *time, const char *count)
{
    uint8_t payload[256];
    size_t n = 0, lt = strlen(time), lc = strlen(count);
    np_put_u16(payload, (uint16_t)lt);
    memcpy(payload + 2, time, lt);
    n = 2 + lt;
    np_put_u16(payload + n, (uint16_t)lc);
    memcpy(payload + n + 2, count, lc);
    tb_chunk(b, NP_CHUNK_UNITS, payload, n + 2 + lc);
}

static int bad_units_file(const char *name, const char *time, const char *count, int units)
{
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 0, "cycles", 0, NULL);
    for (int i = 0; i < units; i++)
        units_chunk(&b, time, count);
    tb_events_begin(&b, 1, 0);
    tb_enter(&b, 0, 0x1000);
    tb_exit(&b, 10);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 10, 0, 1.0);
    int rc = tb_write(&b, in_dir(name));
    tb_free(&b);
    return rc;
}

static void units_wrong(void **state)
{
    (void)state;
    static const struct {
        const char *time, *count;
        int units;
        int status;
        const char *says;
    } cases[] = {
        { "cycles", "", 1, NP_TRACE_OK, NULL },
        { "furlongs", "", 1, NP_TRACE_ECORRUPT, "UNITS: unknown time unit 'furlongs'" },
        { "cycles", "beats", 1, NP_TRACE_ECORRUPT, "UNITS: unknown count unit 'beats'" },
        { "cycles", "instructions", 2, NP_TRACE_ECORRUPT, "a second UNITS chunk" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(bad_units_file("units.npt", cases[i].time, cases[i].count, cases[i].units), 0);
        struct cf_model c = load("units.npt", NULL);
        assert_int_equal(c.status, cases[i].status);
        if (cases[i].says && !strstr(c.sum.message, cases[i].says))
            fail_msg("no '%s' in '%s'", cases[i].says, c.sum.message);
        if (cases[i].status == NP_TRACE_OK)
            assert_int_equal(np_model_time_unit(c.m), NP_UNIT_CYCLES);
        cf_model_free(&c);
    }
    /* a UNITS chunk that does not hold its two strings */
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 0, "cycles", 0, NULL);
    tb_chunk(&b, NP_CHUNK_UNITS, "\x06\x00" "cyc", 5);
    tb_write(&b, in_dir("short-units.npt"));
    tb_free(&b);
    struct cf_model c = load("short-units.npt", NULL);
    assert_int_equal(c.status, NP_TRACE_ECORRUPT);
    assert_non_null(strstr(c.sum.message, "UNITS chunk of 5 bytes is too short"));
    cf_model_free(&c);

    /* one analysis, one unit: a file in ns after one in cycles */
    mkdir(in_dir("mixed"), 0777);
    struct cf_script s = cycles_script(0);
    char err[512];
    assert_int_equal(cf_write_script(&s, in_dir("mixed/1.npt"), err, sizeof err), 0);
    s.process.clock = "monotonic";
    s.process.time_unit = s.process.count_unit = NULL;
    assert_int_equal(cf_write_script(&s, in_dir("mixed/2.npt"), err, sizeof err), 0);
    c = load("mixed", NULL);
    assert_int_equal(c.status, NP_TRACE_ECORRUPT);
    assert_non_null(strstr(c.sum.message, "2.npt: offset 16: its times are in ns, those of the files before it "
                                          "in cycles"));
    cf_model_free(&c);
}

/* ---- the writer's refusals ---------------------------------------------------------- */

static void writer_refuses(void **state)
{
    (void)state;
    struct cf_script s = cycles_script(0);
    char err[512];
    struct np_trace_writer *w = np_trace_writer_open(in_dir("no/such/dir/x.npt"), &s.process, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "x.npt: cannot create: No such file or directory"));

    struct np_trace_writer_process bad = s.process;
    bad.ns_per_tick = 0;
    assert_null(np_trace_writer_open(in_dir("bad.npt"), &bad, err, sizeof err));
    assert_non_null(strstr(err, "ns_per_tick 0 is not a positive clock period"));

    w = np_trace_writer_open(in_dir("back.npt"), &s.process, err, sizeof err);
    assert_non_null(w);
    assert_string_equal(np_trace_writer_error(w), "");
    assert_int_equal(np_trace_writer_enter(w, 1, 100, 10, fn.main), 0);
    assert_int_equal(np_trace_writer_exit(w, 1, 90, 11), -1);
    assert_non_null(strstr(np_trace_writer_error(w), "thread 1: tick 90 comes before its previous event's, 100"));
    /* failed: nothing more is written, the first failure stays */
    assert_int_equal(np_trace_writer_exit(w, 1, 200, 5), -1);
    assert_non_null(strstr(np_trace_writer_error(w), "tick 90"));
    assert_int_equal(np_trace_writer_close(w, 300, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "tick 90"));

    w = np_trace_writer_open(in_dir("count-back.npt"), &s.process, err, sizeof err);
    assert_int_equal(np_trace_writer_enter(w, 1, 100, 10, fn.main), 0);
    assert_int_equal(np_trace_writer_exit(w, 1, 110, 9), -1);
    assert_non_null(strstr(np_trace_writer_error(w), "thread 1: count 9 is less than its previous event's, 10"));
    np_trace_writer_abandon(w);

    /* without a count unit the counts are not written, so never refused */
    s.process.count_unit = NULL;
    w = np_trace_writer_open(in_dir("no-count.npt"), &s.process, err, sizeof err);
    assert_int_equal(np_trace_writer_enter(w, 1, 100, 10, fn.main), 0);
    assert_int_equal(np_trace_writer_exit(w, 1, 110, 9), 0);
    assert_int_equal(np_trace_writer_close(w, 200, 0, err, sizeof err), 0);

    /* a full disk */
    if (access("/dev/full", W_OK) == 0) {
        w = np_trace_writer_open("/dev/full", &s.process, err, sizeof err);
        assert_null(w);
        assert_non_null(strstr(err, "/dev/full: write failed: No space left on device"));
    }
}

/* A file the writer made is the recorder's format: exact bytes of a
 * small one. */
static void writer_bytes(void **state)
{
    (void)state;
    struct np_trace_writer_process p = { .pid = 2, .ppid = 1, .clock = "cycles", .ns_per_tick = 1.0,
                                         .time_unit = "cycles", .count_unit = "instructions" };
    char err[256];
    struct np_trace_writer *w = np_trace_writer_open(in_dir("bytes.npt"), &p, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(np_trace_writer_enter(w, 5, 10, 0, 0x100), 0);
    assert_int_equal(np_trace_writer_resync(w, 5, 12, 3, 1), 0);
    assert_int_equal(np_trace_writer_close(w, 20, 0, err, sizeof err), 0);
    static const uint8_t want[] = {
        /* version 2, 16 bytes, CRC-32C of those 12 bytes */
        'N', 'P', 'T', 'R', 'A', 'C', 'E', 0, 2, 0, 16, 0, 0x74, 0xb3, 0xdd, 0xd0,
        /* INFO: pid 2, ppid 1, 1.0, tick 0, ns 0, "cycles", argc 0; each
         * chunk's checksum (computed apart from nanoprof's code) after
         * its type and length */
        1, 0, 0, 0, 42, 0, 0, 0, 0xf4, 0x59, 0xad, 0x6c, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 'c', 'y', 'c', 'l', 'e', 's', 0, 0,
        /* UNITS: "cycles", "instructions" */
        9, 0, 0, 0, 22, 0, 0, 0, 0x43, 0x9d, 0x7b, 0x2b, 6, 0, 'c', 'y', 'c', 'l', 'e', 's',
        12, 0, 'i', 'n', 's', 't', 'r', 'u', 'c', 't', 'i', 'o', 'n', 's',
        /* EVENTS: tid 5, base 10, 3 records, raw, 7 bytes: ENTRY dt 0, +0x100
         * (zigzag 0x200); COUNT dt 2 (2 << 3 | 6), 3; RESYNC dt 0 (5), 1 */
        4, 0, 0, 0, 28, 0, 0, 0, 0xff, 0xc0, 0x5f, 0x02, 5, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 7, 0,
        0, 0, 0x00, 0x80, 0x04, 0x16, 0x03, 0x05, 0x01,
        /* END: tick 20, 0 lost, 1.0 */
        5, 0, 0, 0, 24, 0, 0, 0, 0xb8, 0x00, 0x98, 0x0b, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0xf0, 0x3f,
    };
    FILE *f = fopen(in_dir("bytes.npt"), "rb");
    assert_non_null(f);
    uint8_t got[sizeof want + 16];
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(got, want, sizeof want);
}

/* ---- text -------------------------------------------------------------------------- */

static void time_text(void **state)
{
    (void)state;
    static const struct {
        uint64_t v;
        enum np_time_unit unit;
        const char *text;
    } cases[] = {
        { 0, NP_UNIT_CYCLES, "0 cyc" },
        { 999999, NP_UNIT_CYCLES, "999999 cyc" },
        { 1000000, NP_UNIT_CYCLES, "1.00 Mcyc" },
        { 12345678, NP_UNIT_CYCLES, "12.35 Mcyc" },
        { 999994999, NP_UNIT_CYCLES, "999.99 Mcyc" },
        { 999995000, NP_UNIT_CYCLES, "1.00 Gcyc" },
        { 1500000000, NP_UNIT_INSNS, "1.50 Ginsn" },
        { 2500000000000ull, NP_UNIT_INSNS, "2.50 Tinsn" },
        { 3000000000000000ull, NP_UNIT_INSNS, "3.00 Pinsn" },
        { UINT64_MAX, NP_UNIT_INSNS, "18.45 Einsn" },
        { 12, NP_UNIT_INSNS, "12 insn" },
        { 1234, NP_UNIT_NS, "1.234 us" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[NP_DURATION_MAX];
        assert_string_equal(np_format_time(buf, sizeof buf, cases[i].v, cases[i].unit), cases[i].text);
        assert_true(strlen(buf) <= 12);
    }
    assert_string_equal(np_time_unit_name(NP_UNIT_NS), "ns");
    assert_string_equal(np_time_unit_name(NP_UNIT_CYCLES), "cycles");
    assert_string_equal(np_time_unit_name(NP_UNIT_INSNS), "instructions");
    enum np_time_unit u;
    assert_true(np_time_unit_parse("instructions", &u) && u == NP_UNIT_INSNS);
    assert_false(np_time_unit_parse("Cycles", &u));
}

/* ---- the table of sources ------------------------------------------------------------ */

static void source_table(void **state)
{
    (void)state;
    const struct np_source *trace = np_source_find("trace");
    assert_non_null(trace);
    assert_null(np_source_find("nothing"));
    assert_ptr_equal(np_source_for(dir), trace);
    assert_ptr_equal(np_source_for(in_dir("missing")), trace); /* the fallback says what is wrong */
    assert_ptr_equal(np_source_for(in_dir("rules.npt")), trace);
    assert_true(np_probe_trace(dir));
    assert_true(np_probe_trace(in_dir("rules.npt")));
    assert_false(np_probe_trace("/proc/self/exe"));
    assert_false(np_probe_trace(in_dir("missing")));

    /* a 32-bit little-endian ARM ELF header, and the same for x86 */
    uint8_t elf[52] = { 0x7f, 'E', 'L', 'F', 1, 1, 1 };
    elf[16] = 2;  /* ET_EXEC */
    elf[18] = 40; /* EM_ARM */
    FILE *f = fopen(in_dir("fw.elf"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(elf, 1, sizeof elf, f), sizeof elf);
    fclose(f);
    assert_true(np_probe_arm_elf(in_dir("fw.elf")));
    assert_false(np_probe_trace(in_dir("fw.elf")));
    elf[18] = 3; /* EM_386 */
    f = fopen(in_dir("x86.elf"), "wb");
    fwrite(elf, 1, sizeof elf, f);
    fclose(f);
    assert_false(np_probe_arm_elf(in_dir("x86.elf")));
    assert_false(np_probe_arm_elf("/proc/self/exe")); /* not 32-bit ARM (nor regular: a link is followed) */
    assert_false(np_probe_arm_elf(dir));
    assert_false(np_probe_arm_elf(in_dir("rules.npt")));

    /* through the table: the same read as the reader's */
    struct np_trace_summary a, b;
    struct np_event_sink none = { 0 };
    assert_int_equal(np_source_read(in_dir("rules.npt"), NULL, &none, NULL, &a), NP_TRACE_OK);
    assert_int_equal(trace->read(in_dir("rules.npt"), NULL, &none, NULL, &b), NP_TRACE_OK);
    assert_int_equal(a.events, b.events);
    assert_int_equal(a.events, 27); /* the script's events (COUNT records are none) */
}

/* The comparison is not vacuous: a script fed with one difference from
 * the file read gives the first difference. */
static int feed_changed(void *ctx, const struct np_event_sink *sink)
{
    const struct cf_script *s = ctx;
    return cf_feed_script(s, in_dir("notice.npt"), NULL, sink);
}

/* A source that misses the RESYNC records: their calls end as returns. */
static const struct np_event_sink *inner;

static int resync_as_exits(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    int rc = 0;
    while (n-- && !rc)
        rc = inner->exit(ctx, tid, time_ns);
    return rc;
}

static int feed_without_resync(void *ctx, const struct np_event_sink *sink)
{
    struct np_event_sink s = *sink;
    inner = sink;
    s.resync = resync_as_exits;
    return feed_changed(ctx, &s);
}

static void conformance_notices(void **state)
{
    (void)state;
    struct cf_script s = cycles_script(0);
    char err[512], msg[512];
    assert_int_equal(cf_write_script(&s, in_dir("notice.npt"), err, sizeof err), 0);
    struct cf_model read;
    cf_model_load(in_dir("notice.npt"), NULL, &read);
    static const struct {
        size_t event;        /* changed */
        struct cf_event to;
        const char *says;
    } cases[] = {
        /* the first leaf returns a cycle later */
        { 7, { CF_EXIT, 1, 151, 20, 0, NULL }, "function sample_helper: self_ns 29 != 30" },
        { 7, { CF_EXIT, 1, 150, 20, 0, NULL }, NULL }, /* the same: no difference */
        { 0, { CF_THREAD, 1, 0, 0, 0, "other" }, "thread 1: name other != main" },
        /* another address: a function the file does not have */
        { 1, { CF_ENTER, 1, 100, 0, 0x20, NULL }, "function 0x20 is in one model only" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct cf_script changed = cycles_script(0);
        events[cases[i].event] = cases[i].to;
        struct cf_model fed;
        cf_model_from(feed_changed, &changed, NULL, &fed);
        int rc = cf_compare(&fed, &read, msg, sizeof msg);
        if (!cases[i].says)
            assert_int_equal(rc, 0);
        else if (rc != -1 || !strstr(msg, cases[i].says))
            fail_msg("case %zu: rc %d, '%s', not '%s'", i, rc, rc ? msg : "", cases[i].says);
        cf_model_free(&fed);
    }
    /* the same calls, ended by returns where the file has RESYNCs */
    struct cf_script same = cycles_script(0);
    struct cf_model fed;
    cf_model_from(feed_without_resync, &same, NULL, &fed);
    assert_int_equal(cf_compare(&fed, &read, msg, sizeof msg), -1);
    assert_string_equal(msg, "thread 1: closed_at_resync 0 != 2");
    cf_model_free(&fed);
    /* in another unit */
    struct np_source_options count = { 0, NP_METRIC_COUNT, NULL, NULL };
    struct np_model_options mo = { .source = count };
    struct cf_model counted;
    cf_model_load(in_dir("notice.npt"), &mo, &counted);
    assert_int_equal(cf_compare(&counted, &read, msg, sizeof msg), -1);
    assert_string_equal(msg, "unit instructions != cycles");
    cf_model_free(&counted);
    cf_model_free(&read);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conformance),     cmocka_unit_test(conformance_ns), cmocka_unit_test(conformance_long),
        cmocka_unit_test(resync_rules),
        cmocka_unit_test(options_refused), cmocka_unit_test(units_wrong),    cmocka_unit_test(writer_refuses),
        cmocka_unit_test(writer_bytes),    cmocka_unit_test(time_text),      cmocka_unit_test(source_table),
        cmocka_unit_test(conformance_notices),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
