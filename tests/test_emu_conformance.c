/* test_emu_conformance.c - the emulator is one more source of the same
 * pipeline: the model built from the events an emulated run gives a sink
 * straight is the model read back from the trace that run wrote (-o),
 * field for field, in cycles, in instructions and in time at a clock
 * rate; and two runs of one firmware write the same bytes, one of them
 * told to a model at the same time. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyze/source_emu.h"
#include "conformance.h"

struct run {
    const char *elf;
    struct np_emu_config cfg;
    enum np_metric metric;
    double clock_hz;
};

static int feed(void *ctx, const struct np_event_sink *sink)
{
    struct run *r = ctx;
    struct np_emu_result res;
    struct np_trace_summary sum;
    return np_emu_run(r->elf, &r->cfg, r->metric, r->clock_hz, sink, NULL, &sum, &res);
}

static char *firmware(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s.elf", FIRMWARE_DIR, name);
    return path;
}

/* Runs NAME with the options in SETTINGS (NULL-terminated), saved to a
 * trace, then straight into a model, for each way of reading times. */
static void check(const char *name, const char *const *settings)
{
    char trace[] = TMP_DIR "/emu_conformance_XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    int quiet = open("/dev/null", O_WRONLY);
    assert_true(quiet >= 0);

    struct run r = { firmware(name), { 0 }, NP_METRIC_TIME, 0 };
    np_emu_config_init(&r.cfg);
    r.cfg.fd_out = r.cfg.fd_err = quiet;
    char err[256];
    for (const char *const *s = settings; s && *s; s++)
        assert_int_equal(np_emu_config_set(&r.cfg, *s, err, sizeof err), 0);
    r.cfg.save = trace;
    struct np_emu_result res;
    struct np_trace_summary sum;
    assert_int_equal(np_emu_run(r.elf, &r.cfg, NP_METRIC_TIME, 0, NULL, NULL, &sum, &res), NP_TRACE_OK);
    assert_true(res.exited);
    r.cfg.save = NULL;

    static const struct {
        enum np_metric metric;
        double hz;
    } ways[] = { { NP_METRIC_TIME, 0 }, { NP_METRIC_COUNT, 0 }, { NP_METRIC_TIME, 30e6 } }; /* 33.3 ns a cycle: rounded */
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        r.metric = ways[w].metric;
        r.clock_hz = ways[w].hz;
        struct np_model_options mo = { 0 };
        mo.source.metric = r.metric;
        mo.source.clock_hz = r.clock_hz;
        struct cf_model straight, saved;
        assert_int_equal(cf_model_from(feed, &r, &mo, &straight), NP_TRACE_OK);
        assert_int_equal(cf_model_load(trace, &mo, &saved), NP_TRACE_OK);
        char msg[512];
        if (cf_compare(&straight, &saved, msg, sizeof msg) != 0)
            fail_msg("%s, way %zu: %s", name, w, msg);
        size_t n;
        np_model_functions(straight.m, &n);
        assert_true(n > 3);
        cf_model_free(&straight);
        cf_model_free(&saved);
    }

    /* the same run again, told to a model in instructions and written to a
     * trace at once (through the tee): the same model, and the same trace
     * byte for byte */
    char again[] = TMP_DIR "/emu_conformance_XXXXXX";
    fd = mkstemp(again);
    assert_true(fd >= 0);
    close(fd);
    r.cfg.save = again;
    r.metric = NP_METRIC_COUNT;
    r.clock_hz = 0;
    struct np_model_options mo = { 0 };
    mo.source.metric = NP_METRIC_COUNT;
    struct cf_model both, saved;
    assert_int_equal(cf_model_from(feed, &r, &mo, &both), NP_TRACE_OK);
    assert_int_equal(cf_model_load(trace, &mo, &saved), NP_TRACE_OK);
    char msg[512];
    if (cf_compare(&both, &saved, msg, sizeof msg) != 0)
        fail_msg("%s, told and written at once: %s", name, msg);
    cf_model_free(&both);
    cf_model_free(&saved);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", trace, again);
    assert_int_equal(system(cmd), 0);
    unlink(trace);
    unlink(again);
    close(quiet);
}

static void calls(void **state)
{
    (void)state;
    check("calls_arm", NULL);
    check("calls_thumb", NULL);
    static const char *const v5[] = { "cpu=arm946e-s", NULL };
    check("calls_v5", v5);
}

static void resync(void **state)
{
    (void)state;
    check("resync", NULL);
}

static void irq(void **state)
{
    (void)state;
    static const char *const s[] = { "irq-every=1500", NULL };
    check("irq", s);
}

static void threads(void **state)
{
    (void)state;
    check("threads", NULL);
    static const char *const s[] = { "thread-switch=np_fw_switch", "n-wait=2", "s-wait=1", NULL };
    check("threads", s);
}

static void newlib(void **state)
{
    (void)state;
    check("fib_thumb", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls), cmocka_unit_test(resync), cmocka_unit_test(irq),
        cmocka_unit_test(threads), cmocka_unit_test(newlib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
