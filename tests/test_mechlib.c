/* test_mechlib.c - the single-mechanism libraries (libnanoprof-calltrace,
 * libnanoprof-cost): their own mechanism works, the other is refused with
 * an error rather than silently recording nothing. Built twice, with
 * NP_TEST_MECH set to 1 (call trace) or 2 (cost). */
#include "support.h"
#include "workload.h"

static uint64_t buf[2 * 1024];
#if NP_TEST_MECH == 2
static uint64_t stats[4096];
#endif

static void own_mechanism_works_other_refused(void **state)
{
    (void)state;
    struct capture cap;
#if NP_TEST_MECH == 1
    np_calltrace_entry e[8];
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    test1(0);
    assert_int_equal(np_calltrace_read(e, 8), 3);
    assert_ptr_equal(e[2].fn, (void *)test1);
    capture_start(&cap);
    assert_int_equal(np_cost_init(buf, sizeof buf), NP_EINVAL);
    capture_stop();
    assert_non_null(strstr(cap.text, "built without function cost"));
    capture_start(&cap);
    assert_int_equal(np_hooks_set(NULL, NULL, NULL), NP_EINVAL);
    capture_stop();
    assert_non_null(strstr(cap.text, "without user hooks"));
#else
    np_func_stats s;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    assert_int_equal(np_cost_init(buf, sizeof buf), NP_OK);
    test1(0);
    test1(0);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(np_stats_find(stats, (void *)test3, &s), NP_OK);
    assert_int_equal(s.calls, 2);
    capture_start(&cap);
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_EINVAL);
    capture_stop();
    assert_non_null(strstr(cap.text, "built without the call trace"));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_mechanism_works_other_refused),
    };
    return cmocka_run_group_tests_name("mechlib", tests, NULL, NULL);
}
