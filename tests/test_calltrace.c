/* test_calltrace.c - the call trace: stack and log modes, exact records and
 * nesting, ring wrap, stack overflow, enable/disable, the dump format. */
#include <stdio.h>
#include "support.h"
#include "workload.h"

static uint64_t buf[2 * 256];
static np_calltrace_entry seen[64];
static int nseen;

static void snapshot(void)
{
    nseen = np_calltrace_read(seen, 64);
}

static int setup(void **state)
{
    (void)state;
    wl_probe = NULL;
    nseen = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wl_probe = NULL;
    np_calltrace_shutdown();
    return 0;
}

/* Within the first 256 bytes of FN: the call site is in the caller. */
static int site_in(const void *site, const void *fn)
{
    return (uintptr_t)site > (uintptr_t)fn && (uintptr_t)site < (uintptr_t)fn + 256;
}

static void stack_mode_shows_active_chain(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK), NP_OK);
    wl_probe = snapshot;
    test1(0x100);
    assert_int_equal(nseen, 3); /* test3, test2, test1: newest first */
    assert_ptr_equal(seen[0].fn, (void *)test3);
    assert_int_equal(seen[0].depth, 2);
    assert_int_equal(seen[1].depth, 1);
    assert_ptr_equal(seen[2].fn, (void *)test1);
    assert_int_equal(seen[2].depth, 0);
    assert_true(site_in(seen[1].site, (void *)test1)); /* test2 called from test1 */
    /* every exit popped: nothing left, nothing lost */
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    assert_int_equal(np_calltrace_lost(), 0);
}

static void stack_mode_function_pointers_and_recursion(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK), NP_OK);
    assert_int_equal(apply(square, 7), 49);
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    wl_probe = snapshot;
    recurse(9);
    assert_int_equal(nseen, 10);
    for (int i = 0; i < 10; i++) {
        assert_ptr_equal(seen[i].fn, (void *)recurse);
        assert_int_equal(seen[i].depth, 9 - i);
    }
}

static void log_mode_records_calls_with_depth(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    test1(0x100);
    test1(0x200);
    assert_int_equal(apply(twice, 3), 6);
    int n = np_calltrace_read(seen, 64);
    assert_int_equal(n, 8);
    const void *fns[8] = { (void *)twice, (void *)apply, (void *)test3, NULL, (void *)test1,
                           (void *)test3, NULL, (void *)test1 };
    const uint32_t depth[8] = { 1, 0, 2, 1, 0, 2, 1, 0 };
    for (int i = 0; i < 8; i++) {
        if (fns[i])
            assert_ptr_equal(seen[i].fn, fns[i]);
        assert_int_equal(seen[i].depth, depth[i]);
    }
    assert_int_equal(np_calltrace_lost(), 0);
}

static void log_mode_ring_wraps_and_counts_lost(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, np_calltrace_buffer_size(8), NP_CALLTRACE_LOG), NP_OK);
    for (int i = 0; i < 5; i++)
        test1(i);
    assert_int_equal(np_calltrace_read(seen, 64), 8);
    assert_int_equal(np_calltrace_lost(), 15 - 8);
    const uint32_t depth[8] = { 2, 1, 0, 2, 1, 0, 2, 1 };
    for (int i = 0; i < 8; i++)
        assert_int_equal(seen[i].depth, depth[i]);
    assert_ptr_equal(seen[0].fn, (void *)test3);
    assert_ptr_equal(seen[2].fn, (void *)test1);
}

static void stack_overflow_counts_and_pops_in_step(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, np_calltrace_buffer_size(4), NP_CALLTRACE_STACK), NP_OK);
    wl_probe = snapshot;
    recurse(10); /* 11 frames, 4 fit */
    assert_int_equal(nseen, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seen[i].depth, 3 - i);
    wl_probe = NULL;
    assert_int_equal(np_calltrace_lost(), 0);  /* all popped again */
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    wl_probe = snapshot;
    test1(1);
    assert_int_equal(nseen, 3);
    assert_ptr_equal(seen[0].fn, (void *)test3);
}

static uint64_t lost_seen;

static void read_lost(void)
{
    lost_seen = np_calltrace_lost();
}

static void lost_reported_while_overflowed(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, np_calltrace_buffer_size(4), NP_CALLTRACE_STACK), NP_OK);
    wl_probe = read_lost;
    recurse(10);
    assert_int_equal(lost_seen, 7);
    assert_int_equal(np_calltrace_lost(), 0);
}

static void enable_disable_restore_act_on_this_thread(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    assert_int_equal(np_calltrace_disable(), 1);
    test1(1);
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    assert_int_equal(np_calltrace_disable(), 0);
    assert_int_equal(np_calltrace_restore(1), 0);
    test1(1);
    assert_int_equal(np_calltrace_read(seen, 64), 3);
    assert_int_equal(np_calltrace_enable(), 1);
    assert_int_equal(np_calltrace_clear(), NP_OK);
    assert_int_equal(np_calltrace_read(seen, 64), 0);
    assert_int_equal(np_calltrace_lost(), 0);
}

static void manual_markers_are_recorded_by_name(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    NP_ENTER("decode frame");
    test3(0);
    NP_EXIT();
    assert_int_equal(np_calltrace_read(seen, 64), 2);
    assert_int_equal(seen[1].named, 1);
    assert_string_equal((const char *)seen[1].fn, "decode frame");
    assert_ptr_equal(seen[0].fn, (void *)test3);
    assert_int_equal(seen[0].depth, 1);
}

static struct capture cap;

static void dump_now(void)
{
    np_calltrace_dump();
}

#define match match_line

static void stack_dump_format(void **state)
{
    (void)state;
    char line[512];
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK), NP_OK);
    capture_start(&cap);
    wl_probe = dump_now;
    test1(0x100);
    capture_stop();
    assert_true(line_of(cap.text, 0, line, sizeof line));
    match(line, "^calltrace: stack mode, thread [0-9]+, lr=0x[0-9a-f]+, 3 records, 0 lost$");
    assert_true(line_of(cap.text, 1, line, sizeof line));
    match(line, "^    test3: lr=0x[0-9a-f]+$");
    assert_true(line_of(cap.text, 2, line, sizeof line));
    match(line, "^  test2: lr=0x[0-9a-f]+$"); /* a static function, by name */
    assert_true(line_of(cap.text, 3, line, sizeof line));
    match(line, "^test1: lr=0x[0-9a-f]+$");
    assert_false(line_of(cap.text, 4, line, sizeof line));
    /* the lr printed is the record's call site */
    char want[64];
    wl_probe = snapshot;
    test1(0x100);
    snprintf(want, sizeof want, "\n  test2: lr=%p\n", seen[1].site);
    assert_non_null(strstr(cap.text, want));
}

static void log_dump_format_newest_first(void **state)
{
    (void)state;
    char line[512];
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    test1(1);
    test1(2);
    capture_start(&cap);
    np_calltrace_dump();
    capture_stop();
    assert_true(line_of(cap.text, 0, line, sizeof line));
    match(line, "^calltrace: log mode, thread [0-9]+, lr=0x[0-9a-f]+, 6 records, 0 lost$");
    const char *want[6] = { "^    test3: ", "^  test2: ", "^test1: ", "^    test3: ", "^  test2: ", "^test1: " };
    for (int i = 0; i < 6; i++) {
        assert_true(line_of(cap.text, i + 1, line, sizeof line));
        match(line, want[i]);
    }
}

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static void unknown_function_prints_address(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    /* an address in no module */
    __cyg_profile_func_enter((void *)0x10, (void *)0x20);
    __cyg_profile_func_exit((void *)0x10, (void *)0x20);
    capture_start(&cap);
    np_calltrace_dump();
    capture_stop();
    assert_non_null(strstr(cap.text, "\n0x10: lr=0x20\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(stack_mode_shows_active_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(stack_mode_function_pointers_and_recursion, setup, teardown),
        cmocka_unit_test_setup_teardown(log_mode_records_calls_with_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(log_mode_ring_wraps_and_counts_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(stack_overflow_counts_and_pops_in_step, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_reported_while_overflowed, setup, teardown),
        cmocka_unit_test_setup_teardown(enable_disable_restore_act_on_this_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(manual_markers_are_recorded_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(stack_dump_format, setup, teardown),
        cmocka_unit_test_setup_teardown(log_dump_format_newest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_function_prints_address, setup, teardown),
    };
    return cmocka_run_group_tests_name("calltrace", tests, NULL, NULL);
}
