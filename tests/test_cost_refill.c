/* test_cost_refill.c - a measurement buffer that fills many times over in
 * one run gives the same statistics as one that never fills: the same
 * functions, counts, totals, self times, minima and maxima.
 *
 * Each run does the same calls (recursion, function pointers, tail calls,
 * manual markers, longjmp), once with a 1 MiB buffer and once with a
 * 640-byte one whose table holds 3 functions, so that it is merged into
 * the default statistics table again and again. Under NANOPROF_CLOCK=steps
 * (ctest sets it) every clock read is one tick, so the two runs see the
 * same durations and every figure must be equal; with another clock the
 * counts must still be equal. Built with libnanoprof.a and with
 * libnanoprof.so (test_cost_refill_so). */
#include "support.h"
#include "workload.h"

#define ROUNDS 40
#define FUNCS 64

static uint64_t big[1 << 17];                               /* 1 MiB */
static uint64_t small[80] __attribute__((aligned(64)));     /* 640 bytes */
static uint64_t stats_big[4096], stats_small[4096];

/* Sum of the calls in STATS. */
static uint64_t calls_in(void *stats)
{
    uint64_t sum = 0;
    for (int i = 0; i < np_stats_count(stats); i++) {
        np_func_stats s;
        assert_int_equal(np_stats_get(stats, i, &s), NP_OK);
        sum += s.calls;
    }
    return sum;
}

static void round_of_calls(int i)
{
    static const char region[] = "refill region";
    test1(i);
    assert_int_equal(fib(6), 8);
    assert_int_equal(apply(square, i) + apply(twice, i), i * i + 2 * i);
    recurse(4);
    (void)tc_top(i % 3 ? i : -i);
    NP_ENTER(region);
    test3(i);
    NP_EXIT();
    assert_int_equal(jump_guard(3), 1);
}

/* Runs the rounds measured into BUF, merging into STATS; returns how many
 * rounds ended with calls already in STATS before any np_stats_calc. */
static int run(void *buf, size_t size, void *stats)
{
    int merged_early = 0;
    assert_int_equal(np_stats_init(stats, 4096 * sizeof(uint64_t)), NP_OK);
    assert_int_equal(np_cost_init(buf, size), NP_OK);
    uint64_t before = 0;
    for (int i = 0; i < ROUNDS; i++) {
        round_of_calls(i);
        uint64_t now = calls_in(stats);
        merged_early += now > before;
        before = now;
    }
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(np_cost_shutdown(), NP_OK);
    assert_int_equal(np_stats_lost(stats), 0);
    return merged_early;
}

static void refilled_buffer_gives_the_same_figures(void **state)
{
    (void)state;
    int exact = strcmp(np_cost_clock_name(), "steps") == 0;
    print_message("clock %s: %s\n", np_cost_clock_name(),
                  exact ? "every figure compared" : "counts compared");
    assert_int_equal(run(big, sizeof big, stats_big), 0); /* never full */
    int merged = run(small, sizeof small, stats_small);
    print_message("the small buffer's table was merged during %d of %d rounds\n", merged, ROUNDS);
    assert_int_equal(merged, ROUNDS);

    int n = np_stats_count(stats_big);
    assert_true(n >= 12 && n < FUNCS);
    assert_int_equal(np_stats_count(stats_small), n);
    for (int i = 0; i < n; i++) {
        np_func_stats a, b;
        assert_int_equal(np_stats_get(stats_big, i, &a), NP_OK);
        assert_int_equal(np_stats_find(stats_small, a.fn, &b), NP_OK);
        assert_ptr_equal(a.fn, b.fn);
        assert_int_equal(a.named, b.named);
        assert_true(a.calls > 0);
        assert_int_equal(a.calls, b.calls);
        assert_true(b.min_ns <= b.max_ns && b.self_ns <= b.total_ns);
        if (exact) {
            assert_int_equal(a.total_ns, b.total_ns);
            assert_int_equal(a.self_ns, b.self_ns);
            assert_int_equal(a.min_ns, b.min_ns);
            assert_int_equal(a.max_ns, b.max_ns);
        }
    }
    np_func_stats f;
    assert_int_equal(np_stats_find(stats_small, (void *)fib, &f), NP_OK);
    assert_int_equal(f.calls, ROUNDS * fib_calls(6));
    assert_int_equal(np_stats_find(stats_small, (void *)jump_deep, &f), NP_OK);
    assert_int_equal(f.calls, ROUNDS * 4);
    if (exact) {
        /* fib(6): 25 calls, 2 clock reads each, the outermost call's
         * total counted once per round */
        assert_int_equal(np_stats_find(stats_small, (void *)fib, &f), NP_OK);
        assert_int_equal(f.total_ns, ROUNDS * (2 * fib_calls(6) - 1));
        assert_int_equal(f.max_ns, 2 * fib_calls(6) - 1);
        assert_int_equal(f.min_ns, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refilled_buffer_gives_the_same_figures),
    };
    return cmocka_run_group_tests_name("cost_refill", tests, NULL, NULL);
}
