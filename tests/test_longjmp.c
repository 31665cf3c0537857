/* test_longjmp.c - setjmp/longjmp skip exit hooks; the call trace and the
 * cost records must be right after them, for the rest of the run. */
#include "support.h"
#include "workload.h"

static uint64_t trace[2 * 256];
static uint64_t cost[2 * 4096];
static uint64_t stats[8192];
static np_calltrace_entry seen[64];
static int nseen;

static void snapshot(void)
{
    nseen = np_calltrace_read(seen, 64);
}

static int teardown(void **state)
{
    (void)state;
    wl_probe = NULL;
    quiet_shutdown();
    return 0;
}

static void stack_mode_after_longjmp(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK), NP_OK);
    assert_int_equal(jump_guard(5), 1); /* 6 jump_deep frames skipped */
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    assert_int_equal(np_calltrace_lost(), 0);
    wl_probe = snapshot;
    test1(0);
    assert_int_equal(nseen, 3);
    assert_ptr_equal(seen[2].fn, (void *)test1);
    assert_int_equal(seen[2].depth, 0);
}

static void stack_mode_longjmp_then_call_in_same_frame(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK), NP_OK);
    wl_probe = snapshot;
    jump_then_call(4);
    /* inside test3, after the longjmp: test3, test2, test1, jump_then_call */
    assert_int_equal(nseen, 4);
    assert_ptr_equal(seen[0].fn, (void *)test3);
    assert_ptr_equal(seen[2].fn, (void *)test1);
    assert_ptr_equal(seen[3].fn, (void *)jump_then_call);
    assert_int_equal(seen[3].depth, 0);
    assert_int_equal(seen[2].depth, 1);
}

static void stack_overflowed_longjmp(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(trace, np_calltrace_buffer_size(3), NP_CALLTRACE_STACK), NP_OK);
    assert_int_equal(jump_guard(8), 1);
    assert_int_equal(np_calltrace_lost(), 0);
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    wl_probe = snapshot;
    test1(0);
    assert_int_equal(nseen, 3);
}

static void log_mode_depth_after_longjmp(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG), NP_OK);
    jump_then_call(3);
    test1(0);
    int n = np_calltrace_read(seen, 64);
    /* newest first: test3 test2 test1 (depth 2,1,0), then the ones inside
     * jump_then_call after the longjmp: test3 test2 test1 at 3,2,1 */
    assert_true(n >= 6);
    const uint32_t depth[6] = { 2, 1, 0, 3, 2, 1 };
    for (int i = 0; i < 6; i++)
        assert_int_equal(seen[i].depth, depth[i]);
}

static np_func_stats get(const void *fn)
{
    return stats_of(stats, fn);
}

static void cost_after_longjmp(void **state)
{
    (void)state;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    assert_int_equal(np_cost_init(cost, sizeof cost), NP_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(jump_guard(5), 1);
    usleep(2000); /* the first timestamp below re-bases the estimate (cost_within) */
    uint64_t c0 = cpu_ns(), w0 = mono_ns();
    spin_a(1000000);
    uint64_t cpu = cpu_ns() - c0, wall = mono_ns() - w0;
    jump_then_call(2);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)jump_guard).calls, 10);
    assert_int_equal(get((void *)jump_deep).calls, 10 * 6 + 3);
    assert_int_equal(get((void *)jump_then_call).calls, 1);
    assert_int_equal(get((void *)test1).calls, 1);
    /* spin_a was not charged to a frame the longjmp abandoned */
    np_func_stats a = get((void *)spin_a), g = get((void *)jump_guard), d = get((void *)jump_deep);
    assert_int_equal(a.calls, 1);
    /* (bounded by the time around it, not its CPU time: what is checked
     * here is which frame it is charged to, and a virtual CPU's stolen
     * time is not switched-out time the runtime can see) */
    cost_within("spin_a", a.total_ns, 1000000u, wall > cpu ? wall : cpu, 1, wall > cpu ? wall - cpu : 0);
    assert_true(g.total_ns < a.total_ns);
    assert_true(d.total_ns < a.total_ns);
    /* and nothing is left open: a further summary adds nothing */
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)jump_guard).calls, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(stack_mode_after_longjmp, teardown),
        cmocka_unit_test_teardown(stack_mode_longjmp_then_call_in_same_frame, teardown),
        cmocka_unit_test_teardown(stack_overflowed_longjmp, teardown),
        cmocka_unit_test_teardown(log_mode_depth_after_longjmp, teardown),
        cmocka_unit_test_teardown(cost_after_longjmp, teardown),
    };
    return cmocka_run_group_tests_name("longjmp", tests, NULL, NULL);
}
