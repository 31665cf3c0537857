/* test_cost.c - function cost: exact counts, inclusive and exclusive time,
 * recursion, tail calls at -O2, function pointers, manual markers, a full
 * measurement buffer, and the dump format. test_cost_refill: a buffer that
 * fills many times gives the same figures as one that never does. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "support.h"
#include "workload.h"

static uint64_t cost[2 * 65536];
static uint64_t stats[16384];

static int setup(void **state)
{
    (void)state;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    assert_int_equal(np_cost_init(cost, sizeof cost), NP_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    np_cost_shutdown();
    return 0;
}

static np_func_stats get(const void *fn)
{
    return stats_of(stats, fn);
}

static void counts_are_exact(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        test1(i);
    assert_int_equal(apply(square, 3) + apply(twice, 4) + apply(twice, 5), 9 + 8 + 10);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 3);
    assert_int_equal(get((void *)test3).calls, 3);
    assert_int_equal(get((void *)apply).calls, 3);
    assert_int_equal(get((void *)square).calls, 1);
    assert_int_equal(get((void *)twice).calls, 2);
    assert_int_equal(np_stats_count(stats), 6); /* test2 too */
}

static void self_and_total_add_up(void **state)
{
    (void)state;
    /* a sleep switches the thread out: the first timestamp below is a
     * check, so what the loop's calls lose to the estimate was lost in
     * the loop (see the shortest call below) */
    usleep(2000);
    uint64_t t0 = mono_ns(), cpu = 0, loop_cpu = cpu_ns();
    for (int i = 0; i < 20; i++) {
        test1(i);
        uint64_t c0 = cpu_ns();
        spin_a(200000); /* spin_a -> spin_thread_cpu_ns */
        cpu += cpu_ns() - c0;
    }
    uint64_t wall = mono_ns() - t0;
    loop_cpu = cpu_ns() - loop_cpu;
    uint64_t off = wall > loop_cpu ? wall - loop_cpu : 0;
    assert_int_equal(np_stats_calc(stats), NP_OK);
    np_func_stats a = get((void *)spin_a), inner = get((void *)spin_thread_cpu_ns);
    assert_int_equal(a.calls, 20);
    assert_int_equal(inner.calls, 20);
    /* spin_a's total = its self + its callee's total (to rounding) */
    int64_t diff = (int64_t)a.total_ns - (int64_t)(a.self_ns + inner.total_ns);
    assert_true(diff >= -2 && diff <= 2);
    /* the CPU time of its calls, and never more than the wall time (1%
     * for the two clocks' rates) */
    cost_within("spin_a", a.total_ns, 20 * 200000u, cpu, 20, off);
    assert_true(a.total_ns <= wall + wall / 100);
    assert_true(a.min_ns <= a.max_ns);
    /* each call spins 200 us of CPU at least (spin_thread_cpu_ns reads
     * the thread's CPU clock); a switch during it is taken off by an
     * estimate from that clock, which may take a little more than the
     * thread was out (cost.md): 5%. Time the thread lost without a
     * switch (a virtual machine's host running another guest, interrupts)
     * is out of its CPU clock too, and the estimate takes it off at the
     * next switch, from the call open then (cost.md): at most all the
     * time the loop was off the CPU, which this run measured. */
    if (a.min_ns + off < 190000u)
        fail_msg("spin_a's shortest call: %" PRIu64 " ns, not 200 us (-5%%) less the %" PRIu64
                 " ns the loop was off the CPU",
                 a.min_ns, off);
    assert_true(a.max_ns <= a.total_ns);
    np_func_stats t1 = get((void *)test1), t3 = get((void *)test3);
    assert_true(t1.total_ns >= t3.total_ns);
    assert_true(t3.self_ns == t3.total_ns || t3.self_ns + 1 >= t3.total_ns);
}

static void recursion_counted_once(void **state)
{
    (void)state;
    uint64_t t0 = mono_ns();
    assert_int_equal(fib(18), 2584);
    uint64_t wall = mono_ns() - t0;
    assert_int_equal(np_stats_calc(stats), NP_OK);
    np_func_stats f = get((void *)fib);
    assert_int_equal(f.calls, fib_calls(18));
    /* inclusive time of the outermost call only: never more than the wall
     * time (1% for the two clocks' rates), and all of it is fib's own */
    assert_true(f.total_ns <= wall + wall / 100);
    assert_true(f.max_ns == f.total_ns);
    int64_t diff = (int64_t)f.total_ns - (int64_t)f.self_ns;
    assert_true(diff >= -1 && diff <= 1);
}

static void tail_calls_at_O2(void **state)
{
    (void)state;
    int sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += tc_top(i % 2 ? -i : i);
    assert_true(sum != 0);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)tc_top).calls, 1500); /* 500 negative: twice */
    assert_int_equal(get((void *)tc_mid).calls, 1000);
    assert_int_equal(get((void *)tc_leaf).calls, 1000);
}

static void manual_markers_measure_regions(void **state)
{
    (void)state;
    static const char region[] = "decode region";
    usleep(2000); /* the first timestamp below re-bases the estimate (cost_within) */
    uint64_t cpu = 0, w0 = mono_ns(), c_all = cpu_ns();
    for (int i = 0; i < 4; i++) {
        uint64_t c0 = cpu_ns();
        NP_ENTER(region);
        spin_thread_cpu_ns(100000);
        NP_EXIT();
        cpu += cpu_ns() - c0;
    }
    uint64_t wall = mono_ns() - w0;
    c_all = cpu_ns() - c_all;
    assert_int_equal(np_stats_calc(stats), NP_OK);
    np_func_stats r = get(region);
    assert_int_equal(r.calls, 4);
    assert_int_equal(r.named, 1);
    cost_within("the region", r.total_ns, 4 * 100000u, cpu, 4, wall > c_all ? wall - c_all : 0);
}

static void full_table_is_merged_automatically(void **state)
{
    (void)state;
    /* 512 bytes: a table of 3 functions, a few open calls; the loop calls
     * 8 functions, so the table fills and is merged again and again */
    static uint64_t small[64] __attribute__((aligned(64)));
    np_cost_shutdown();
    assert_int_equal(np_cost_init(small, sizeof small), NP_OK);
    for (int i = 0; i < 50; i++) {
        test1(i);
        assert_int_equal(fib(5), 5);
        assert_int_equal(apply(square, 3) + apply(twice, 4), 9 + 8);
    }
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 50);
    assert_int_equal(get((void *)test3).calls, 50);
    assert_int_equal(get((void *)fib).calls, 50 * fib_calls(5));
    assert_int_equal(get((void *)apply).calls, 100);
    assert_int_equal(get((void *)square).calls, 50);
    assert_int_equal(get((void *)twice).calls, 50);
    assert_int_equal(np_stats_lost(stats), 0);
}

static void deeper_than_buffer_is_counted_lost_not_wrong(void **state)
{
    (void)state;
    /* room for 3 functions, and fewer than 10 open calls */
    static uint64_t small[64] __attribute__((aligned(64)));
    np_cost_shutdown();
    assert_int_equal(np_cost_init(small, sizeof small), NP_OK);
    recurse(20); /* 21 nested calls; only the outer ones fit */
    test1(0);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    np_func_stats r = get((void *)recurse);
    assert_true(r.calls > 0 && r.calls < 21);
    assert_int_equal(np_stats_lost(stats), 2 * (21 - r.calls));
    assert_int_equal(get((void *)test1).calls, 1); /* exact again after */
    assert_int_equal(get((void *)test3).calls, 1);
    struct capture cap;
    capture_start(&cap);
    np_stats_dump(stats);
    capture_stop();
    assert_non_null(strstr(cap.text, "records lost"));
}

static void enable_disable_restore(void **state)
{
    (void)state;
    assert_int_equal(np_cost_disable(), 1);
    test1(0);
    assert_int_equal(np_cost_restore(1), 0);
    test1(0);
    assert_int_equal(np_cost_enable(), 1);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 1);
    /* clear drops unsummarised records */
    test1(0);
    assert_int_equal(np_cost_clear(), NP_OK);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 1);
}

#define match match_line

static void dump_format_largest_total_first(void **state)
{
    (void)state;
    char line[512];
    struct capture cap;
    spin_a(3000000);
    test1(0);
    test1(1);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    capture_start(&cap);
    assert_int_equal(np_stats_dump(stats), NP_OK);
    capture_stop();
    assert_true(line_of(cap.text, 0, line, sizeof line));
    match(line, "^spin_a: count 1, cost [0-9]+, self [0-9]+, min [0-9]+, max [0-9]+$");
    assert_true(line_of(cap.text, 1, line, sizeof line));
    match(line, "^spin_thread_cpu_ns: count 1, cost ");
    for (int i = 2; i < 5; i++) {
        assert_true(line_of(cap.text, i, line, sizeof line));
        match(line, "^test[123]: count 2, cost [0-9]+, self [0-9]+, min [0-9]+, max [0-9]+$");
    }
    assert_false(line_of(cap.text, 5, line, sizeof line));
    /* and totals are in order */
    uint64_t prev = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        unsigned long long c;
        line_of(cap.text, i, line, sizeof line);
        assert_int_equal(sscanf(strstr(line, ", cost ") + 7, "%llu", &c), 1);
        assert_true(c <= prev);
        prev = c;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counts_are_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(self_and_total_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(recursion_counted_once, setup, teardown),
        cmocka_unit_test_setup_teardown(tail_calls_at_O2, setup, teardown),
        cmocka_unit_test_setup_teardown(manual_markers_measure_regions, setup, teardown),
        cmocka_unit_test_setup_teardown(full_table_is_merged_automatically, setup, teardown),
        cmocka_unit_test_setup_teardown(deeper_than_buffer_is_counted_lost_not_wrong, setup, teardown),
        cmocka_unit_test_setup_teardown(enable_disable_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_format_largest_total_first, setup, teardown),
    };
    return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
