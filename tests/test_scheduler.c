/* test_scheduler.c - a small user-level scheduler (two coroutines on one OS
 * thread, ucontext) that calls np_thread_switch from its switch hook: each
 * coroutine records into its own buffers, and the time it is switched out
 * is not counted in its costs. */
#define _GNU_SOURCE
#include <ucontext.h>
#include "support.h"
#include "workload.h"

#define ROUNDS 5
#define SLICE_NS 20000000ull

static uint64_t stats[8192];
static ucontext_t main_ctx, co_ctx[2];
static np_thread *co_state[2];
static int current = -1;
static np_calltrace_entry seen[2][64];
static int nseen[2];
static uint64_t spin_cpu[2]; /* the CPU time measured around each's spins */

/* the scheduler's switch: the one place the profiler is told */
static void switch_to(int next)
{
    int prev = current;
    current = next;
    np_thread_switch(prev < 0 ? NULL : co_state[prev], next < 0 ? NULL : co_state[next]);
    swapcontext(prev < 0 ? &main_ctx : &co_ctx[prev], next < 0 ? &main_ctx : &co_ctx[next]);
}

static void yield(void)
{
    switch_to(current == 0 ? 1 : 0);
}

static void body(int me)
{
    static uint64_t trace[2][2 * 256], cost[2][2 * 4096];
    np_calltrace_init(trace[me], sizeof trace[me], NP_CALLTRACE_LOG);
    np_cost_init(cost[me], sizeof cost[me]);
    for (int r = 0; r < ROUNDS; r++) {
        /* in a function that stays open across the switches */
        uint64_t t0 = cpu_ns();
        if (me == 0)
            spin_a(SLICE_NS);
        else
            spin_b(SLICE_NS);
        spin_cpu[me] += cpu_ns() - t0;
        test1(me);
        yield();
    }
    nseen[me] = np_calltrace_read(seen[me], 64);
    np_stats_calc(stats);
    switch_to(-1);
}

static void co_main(int me)
{
    body(me);
}

static void coroutines_have_their_own_state_and_time(void **state)
{
    (void)state;
    static char stacks[2][256 * 1024];
    static uint64_t mem[2][NP_THREAD_SIZE / 8];
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    for (int i = 0; i < 2; i++) {
        co_state[i] = np_thread_init(mem[i], sizeof mem[i]);
        assert_non_null(co_state[i]);
        getcontext(&co_ctx[i]);
        co_ctx[i].uc_stack.ss_sp = stacks[i];
        co_ctx[i].uc_stack.ss_size = sizeof stacks[i];
        co_ctx[i].uc_link = &main_ctx;
        makecontext(&co_ctx[i], (void (*)(void))co_main, 1, i);
    }
    /* (no sleep before it: it would be charged to the first coroutine as
     * well as taken off by its first check; the span's off-CPU time bounds
     * what a switch inside it takes off) */
    uint64_t w0 = mono_ns(), c0 = cpu_ns();
    switch_to(0); /* runs both to the end, alternating */
    switch_to(1);
    uint64_t wall = mono_ns() - w0, cpu = cpu_ns() - c0, off = wall > cpu ? wall - cpu : 0;
    assert_ptr_equal(np_thread_current(), np_thread_current()); /* back on our own */
    /* each coroutine's log holds only its own calls */
    assert_int_equal(nseen[0], ROUNDS * 5); /* spin, its callee, test1-3 */
    assert_int_equal(nseen[1], ROUNDS * 5);
    for (int i = 0; i < nseen[0]; i++)
        assert_true(seen[0][i].fn != (void *)spin_b);
    for (int i = 0; i < nseen[1]; i++)
        assert_true(seen[1][i].fn != (void *)spin_a);
    np_func_stats a, b;
    assert_int_equal(np_stats_find(stats, (void *)spin_a, &a), NP_OK);
    assert_int_equal(np_stats_find(stats, (void *)spin_b, &b), NP_OK);
    assert_int_equal(a.calls, ROUNDS);
    assert_int_equal(b.calls, ROUNDS);
    /* spin_a ran 5 x 20 ms of CPU while spin_b's coroutine was switched
     * out, and the other way round: each its own time, not the other's */
    cost_within("spin_a", a.total_ns, ROUNDS * SLICE_NS, spin_cpu[0], ROUNDS, off);
    cost_within("spin_b", b.total_ns, ROUNDS * SLICE_NS, spin_cpu[1], ROUNDS, off);
    np_func_stats t;
    assert_int_equal(np_stats_find(stats, (void *)test1, &t), NP_OK);
    assert_int_equal(t.calls, 2 * ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coroutines_have_their_own_state_and_time),
    };
    return cmocka_run_group_tests_name("scheduler", tests, NULL, NULL);
}
