/* test_calltrace_args.c - NP_CALLTRACE_ARGS (a runtime built with it,
 * libnanoprof-calltrace-args.a): the first four arguments kept with each
 * record where the hook sees them (-pg -mfentry, a patched entry), and
 * none where it does not (-finstrument-functions), in np_calltrace_read
 * and in the dump, in both modes; the buffer-size helpers count the
 * larger records. */
#include <stdio.h>
#include "support.h"
#include "nanoprof/patch.h"

uintptr_t args_fe(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d);  /* -pg -mfentry */
uintptr_t args_cyg(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d); /* -finstrument-functions */
uintptr_t args_pf(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d);  /* patchable entry */
void (*args_probe)(void);

static uint64_t buf[6 * 64];
static np_calltrace_entry seen[8];
static int nseen;
static struct capture cap;

static void snapshot(void) { nseen = np_calltrace_read(seen, 8); }

static int teardown(void **state)
{
    (void)state;
    args_probe = NULL;
    np_trace_off(NULL);
    np_calltrace_shutdown();
    return 0;
}

static void expect_args(const np_calltrace_entry *e, const void *fn, uintptr_t a, uintptr_t b, uintptr_t c,
                        uintptr_t d)
{
    assert_ptr_equal(e->fn, fn);
    assert_int_equal(e->has_args, 1);
    assert_int_equal(e->args[0], a);
    assert_int_equal(e->args[1], b);
    assert_int_equal(e->args[2], c);
    assert_int_equal(e->args[3], d);
}

static void sizes_count_the_arguments(void **state)
{
    (void)state;
    assert_int_equal(NP_CALLTRACE_RECORD_SIZE, 48);
    assert_int_equal(np_calltrace_buffer_size(10), 480);
    assert_int_equal(np_calltrace_lines(480 + 47), 10);
    assert_int_equal(np_calltrace_init(buf, 47, NP_CALLTRACE_LOG), NP_ESMALL);
}

static void log_mode_keeps_arguments_where_seen(void **state)
{
    (void)state;
    char line[512];
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK);
    args_fe(0x11, 0x22, 0x33, 0x44);
    args_cyg(1, 2, 3, 4);
    assert_int_equal(np_trace_on("args_pf"), 1);
    args_pf(0xa, 0xb, 0xc, 0xd);
    assert_int_equal(np_trace_off("args_pf"), 1);
    args_pf(5, 6, 7, 8); /* off: not seen */
    snapshot();
    assert_int_equal(nseen, 3);
    expect_args(&seen[0], (const void *)args_pf, 0xa, 0xb, 0xc, 0xd);
    assert_ptr_equal(seen[1].fn, (const void *)args_cyg);
    assert_int_equal(seen[1].has_args, 0);
    assert_int_equal(seen[1].args[0], 0);
    expect_args(&seen[2], (const void *)args_fe, 0x11, 0x22, 0x33, 0x44);
    capture_start(&cap);
    np_calltrace_dump();
    capture_stop();
    assert_true(line_of(cap.text, 1, line, sizeof line));
    match_line(line, "^args_pf: lr=0x[0-9a-f]+, arg1=0xa, arg2=0xb, arg3=0xc, arg4=0xd$");
    assert_true(line_of(cap.text, 2, line, sizeof line));
    match_line(line, "^args_cyg: lr=0x[0-9a-f]+$");
    assert_true(line_of(cap.text, 3, line, sizeof line));
    match_line(line, "^args_fe: lr=0x[0-9a-f]+, arg1=0x11, arg2=0x22, arg3=0x33, arg4=0x44$");
}

static void stack_mode_keeps_arguments(void **state)
{
    (void)state;
    assert_int_equal(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK), NP_OK);
    args_probe = snapshot;
    args_fe(~(uintptr_t)0, 0, 1, 2);
    assert_int_equal(nseen, 1);
    expect_args(&seen[0], (const void *)args_fe, ~(uintptr_t)0, 0, 1, 2);
    args_cyg(9, 9, 9, 9);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].has_args, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_count_the_arguments),
        cmocka_unit_test_teardown(log_mode_keeps_arguments_where_seen, teardown),
        cmocka_unit_test_teardown(stack_mode_keeps_arguments, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
