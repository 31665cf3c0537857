/* test_badinput.c - NULL or too-small buffers, a second init, use before
 * init, a statistics table too small: a clear error (return code plus one
 * line on the sink), never a crash or a write outside the buffer given. */
#include "support.h"
#include "workload.h"

#define CANARY 0xa5
static unsigned char arena[4096 + 64] __attribute__((aligned(16)));
static struct capture cap;

/* The first SIZE bytes of the arena are the buffer; the rest must stay. */
static void *guarded(size_t size)
{
    memset(arena, CANARY, sizeof arena);
    (void)size;
    return arena;
}

static void intact_after(size_t size)
{
    for (size_t i = size; i < sizeof arena; i++)
        if (arena[i] != CANARY)
            fail_msg("byte %zu past a %zu-byte buffer was written", i - size, size);
}

static int setup(void **state)
{
    (void)state;
    capture_start(&cap);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    capture_stop();
    quiet_shutdown();
    return 0;
}

static void expect_error(int got, int want, const char *needle)
{
    assert_int_equal(got, want);
    if (!strstr(cap.text, needle))
        fail_msg("no error line containing '%s' in '%s'", needle, cap.text);
    /* exactly one line per error, prefixed */
    assert_true(strncmp(cap.text, "nanoprof: ", 10) == 0);
    assert_int_equal(cap.text[cap.len - 1], '\n');
    assert_null(strchr(cap.text, '\n') + 1 == cap.text + cap.len ? NULL : "more than one line");
    cap.len = 0;
    cap.text[0] = 0;
}

static void calltrace_bad_arguments(void **state)
{
    (void)state;
    expect_error(np_calltrace_init(NULL, 1024, NP_CALLTRACE_STACK), NP_EINVAL, "np_calltrace_init: buffer is NULL");
    expect_error(np_calltrace_init(guarded(8), 8, NP_CALLTRACE_STACK), NP_ESMALL, "too small");
    expect_error(np_calltrace_init(arena, 1024, (np_calltrace_mode)3), NP_EINVAL, "mode");
    expect_error(np_calltrace_init(arena + 1, 1024, NP_CALLTRACE_LOG), NP_EINVAL, "aligned");
    expect_error(np_calltrace_dump(), NP_ENOTINIT, "np_calltrace_dump: call trace not initialised");
    expect_error(np_calltrace_enable(), NP_ENOTINIT, "not initialised");
    expect_error(np_calltrace_clear(), NP_ENOTINIT, "not initialised");
    np_calltrace_entry e[4];
    expect_error(np_calltrace_read(e, 4), NP_ENOTINIT, "not initialised");
    assert_int_equal(np_calltrace_init(arena, 1024, NP_CALLTRACE_STACK), NP_OK);
    expect_error(np_calltrace_init(arena, 1024, NP_CALLTRACE_LOG), NP_EALREADY, "already initialised");
    assert_int_equal(np_calltrace_lines(15), 0);
    assert_int_equal(np_calltrace_lines(48), 3);
    assert_int_equal(np_calltrace_buffer_size(3), 48);
    assert_int_equal(np_calltrace_buffer_size(-1), 0);
}

static void calltrace_never_writes_past_its_buffer(void **state)
{
    (void)state;
    size_t size = np_calltrace_buffer_size(3) + 8; /* not a whole number of lines */
    assert_int_equal(np_calltrace_init(guarded(size), size, NP_CALLTRACE_STACK), NP_OK);
    recurse(40);
    intact_after(size);
    np_calltrace_shutdown();
    assert_int_equal(np_calltrace_init(guarded(size), size, NP_CALLTRACE_LOG), NP_OK);
    for (int i = 0; i < 50; i++)
        test1(i);
    intact_after(size);
}

static void cost_bad_arguments_and_bounds(void **state)
{
    (void)state;
    expect_error(np_cost_init(NULL, 1024), NP_EINVAL, "np_cost_init: buffer is NULL");
    expect_error(np_cost_init(guarded(16), 16), NP_ESMALL, "too small");
    expect_error(np_cost_init(guarded(248), 248), NP_ESMALL, "need at least 256 bytes");
    expect_error(np_cost_disable(), NP_ENOTINIT, "not initialised");
    size_t size = np_cost_buffer_size(16) + 4; /* the smallest, and a part of a line */
    assert_int_equal(np_cost_init(guarded(size), size), NP_OK);
    expect_error(np_cost_init(arena, size), NP_EALREADY, "already initialised");
    recurse(40); /* no statistics table yet: calls that do not fit are lost */
    for (int i = 0; i < 20; i++)
        test1(i);
    intact_after(size);
}

static void statistics_table_checks(void **state)
{
    (void)state;
    static uint64_t cost[2 * 1024];
    static uint64_t notatable[64];
    expect_error(np_stats_init(guarded(8), 8), NP_ESMALL, "np_stats_init: buffer too small");
    expect_error(np_stats_calc(notatable), NP_EINVAL, "not a statistics table");
    expect_error(np_stats_dump(NULL), NP_EINVAL, "not a statistics table");
    /* room for 2 functions; the workload has 3 */
    size_t size = np_stats_buffer_size(2);
    assert_int_equal(np_stats_capacity(size), 2);
    assert_int_equal(np_stats_init(guarded(size), size), NP_OK);
    assert_int_equal(np_cost_init(cost, sizeof cost), NP_OK);
    test1(0);
    test1(1);
    expect_error(np_stats_calc(arena), NP_EFULL, "np_stats_calc: statistics table full");
    intact_after(size);
    assert_int_equal(np_stats_count(arena), 2);
    assert_int_equal(np_stats_dump(arena), NP_EFULL);
    assert_non_null(strstr(cap.text, "(statistics table full: 2 calls of functions not counted"));
    intact_after(size);
    /* after shutdown the table is neither default nor valid: the full
     * buffer of another thread's records is never summarised into it */
    assert_int_equal(np_stats_shutdown(arena), NP_OK);
    cap.len = 0;
    expect_error(np_stats_dump(arena), NP_EINVAL, "not a statistics table");
    memset(arena, CANARY, size);
    for (int i = 0; i < 300; i++)
        test1(i);
    intact_after(0);
}

static void thread_state_checks(void **state)
{
    (void)state;
    expect_error(np_thread_init(arena, 16) == NULL ? NP_EINVAL : NP_OK, NP_EINVAL, "np_thread_init");
    expect_error(np_thread_init(arena + 8, NP_THREAD_SIZE) == NULL ? NP_EINVAL : NP_OK, NP_EINVAL, "aligned");
    assert_int_equal(np_thread_size() <= NP_THREAD_SIZE, 1);
    assert_string_equal(np_strerror(NP_ESMALL), "buffer too small");
}

/* gprof.h is for a target: on a host both calls refuse, and say what
 * does the job here. */
static void gprof_on_a_host(void **state)
{
    (void)state;
    np_gprof_config c = { .arcs = arena, .arcs_size = 1024, .hist = (uint16_t *)(arena + 1024), .hist_size = 1024,
                          .hz = 100 };
    expect_error(np_gprof_init(&c), NP_EINVAL, "np_gprof_init: for a target; on a host, `nanoprof record --sample`");
    expect_error(np_gprof_write(NULL), NP_EINVAL, "np_gprof_write: for a target");
}

/* The trace recorded on a target (trace.h) is no host's: a host refuses
 * it, in one line, and records with `nanoprof record`. */
static void target_trace_refused_on_a_host(void **state)
{
    (void)state;
    expect_error(np_trace_init(arena, sizeof arena), NP_EINVAL, "np_trace_init: records on a target");
    expect_error(np_trace_flush(), NP_ENOTINIT, "np_trace_flush");
    expect_error(np_trace_stop(), NP_ENOTINIT, "np_trace_stop");
    assert_int_equal(np_trace_lost(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(calltrace_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(calltrace_never_writes_past_its_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(cost_bad_arguments_and_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(statistics_table_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(thread_state_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(gprof_on_a_host, setup, teardown),
        cmocka_unit_test_setup_teardown(target_trace_refused_on_a_host, setup, teardown),
    };
    return cmocka_run_group_tests_name("badinput", tests, NULL, NULL);
}
