/* test_threads.c - per-thread independence, a shared statistics table, and
 * exclusion of the time a thread is switched out (two threads pinned to one
 * CPU, each burning a known amount of its own CPU time). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "support.h"
#include "workload.h"

static uint64_t stats[8192];

static np_func_stats get(const void *fn)
{
    return stats_of(stats, fn);
}

struct job {
    int which;
    int pin;
    uint64_t spin_ns;
    uint64_t spin_cpu_ns; /* the CPU time measured around the spin */
    uint64_t spin_off_ns; /* the time off the CPU around it (cost_within) */
    np_calltrace_entry seen[256];
    int nseen;
    int status;
    pthread_barrier_t *start;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    static __thread uint64_t trace[2 * 256], cost[2 * 8192];
    if (j->pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG);
    np_cost_init(cost, sizeof cost);
    if (j->start)
        pthread_barrier_wait(j->start);
    uint64_t t0 = 0, w0;
    usleep(2000); /* the first timestamp below re-bases the estimate (cost_within) */
    w0 = mono_ns();
    if (j->which == 0) {
        for (int i = 0; i < 5; i++)
            test1(i);
        t0 = cpu_ns();
        if (j->spin_ns)
            spin_a(j->spin_ns);
    } else {
        fib(10);
        apply(square, 2);
        t0 = cpu_ns();
        if (j->spin_ns)
            spin_b(j->spin_ns);
    }
    j->spin_cpu_ns = cpu_ns() - t0;
    uint64_t wall = mono_ns() - w0;
    j->spin_off_ns = wall > j->spin_cpu_ns ? wall - j->spin_cpu_ns : 0;
    j->nseen = np_calltrace_read(j->seen, 256);
    j->status = np_stats_calc(stats);
    np_calltrace_shutdown();
    np_cost_shutdown();
    return NULL;
}

static void threads_record_independently(void **state)
{
    (void)state;
    struct job a = { .which = 0 }, b = { .which = 1 };
    pthread_t ta, tb;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    pthread_create(&ta, NULL, run_job, &a);
    pthread_create(&tb, NULL, run_job, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.status, NP_OK);
    assert_int_equal(b.status, NP_OK);
    assert_int_equal(a.nseen, 15);
    for (int i = 0; i < a.nseen; i++)
        assert_true(a.seen[i].fn != (void *)fib && a.seen[i].fn != (void *)apply);
    assert_int_equal(b.nseen, 177 + 2);
    for (int i = 0; i < b.nseen; i++)
        assert_true(b.seen[i].fn != (void *)test1 && b.seen[i].fn != (void *)test3);
    assert_int_equal(get((void *)test1).calls, 5);
    assert_int_equal(get((void *)fib).calls, 177);
    assert_int_equal(get((void *)square).calls, 1);
    /* the main thread initialised nothing: it records nothing */
    test1(0);
    assert_int_equal(get((void *)test1).calls, 5);
}

#define SPIN_NS 200000000ull

static void switched_out_time_is_excluded(void **state)
{
    (void)state;
    pthread_barrier_t start;
    struct job a = { .which = 0, .pin = 1, .spin_ns = SPIN_NS, .start = &start };
    struct job b = { .which = 1, .pin = 1, .spin_ns = SPIN_NS, .start = &start };
    pthread_t ta, tb;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    pthread_barrier_init(&start, NULL, 2);
    uint64_t t0 = mono_ns();
    pthread_create(&ta, NULL, run_job, &a);
    pthread_create(&tb, NULL, run_job, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    uint64_t wall = mono_ns() - t0;
    pthread_barrier_destroy(&start);
    np_func_stats sa = get((void *)spin_a), sb = get((void *)spin_b);
    print_message("clock %s: wall %.1f ms, spin_a %.1f ms, spin_b %.1f ms (each burnt %.1f ms of CPU)\n",
                  np_cost_clock_name(), wall / 1e6, sa.total_ns / 1e6, sb.total_ns / 1e6, SPIN_NS / 1e6);
    /* both shared one CPU, so the run took at least the CPU time of both */
    assert_true(wall >= a.spin_cpu_ns + b.spin_cpu_ns);
    assert_int_equal(sa.calls, 1);
    assert_int_equal(sb.calls, 1);
    /* each its own CPU time: not the time the other ran */
    cost_within("spin_a", sa.total_ns, SPIN_NS, a.spin_cpu_ns, 1, a.spin_off_ns);
    cost_within("spin_b", sb.total_ns, SPIN_NS, b.spin_cpu_ns, 1, b.spin_off_ns);
}

static void sleeping_is_not_counted(void **state)
{
    (void)state;
    static uint64_t cost[2 * 1024];
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    assert_int_equal(np_cost_init(cost, sizeof cost), NP_OK);
    uint64_t c0 = cpu_ns(), t0 = mono_ns();
    sleep_ns(50000000);
    uint64_t cpu = cpu_ns() - c0, wall = mono_ns() - t0;
    assert_int_equal(np_stats_calc(stats), NP_OK);
    np_func_stats s = get((void *)sleep_ns);
    assert_int_equal(s.calls, 1);
    /* the CPU time of the call (us), not the 50 ms asleep */
    assert_true(wall >= 50000000u);
    cost_within("sleep_ns", s.total_ns, 0, cpu, 1, 0);
    np_cost_shutdown();
}

struct hammer {
    int rounds;
};

static void *summarise_often(void *arg)
{
    struct hammer *h = arg;
    static __thread uint64_t cost[2 * 256];
    np_cost_init(cost, sizeof cost);
    for (int i = 0; i < h->rounds; i++) {
        test1(i);
        np_stats_calc(stats);
    }
    np_cost_shutdown();
    return NULL;
}

static void concurrent_summaries_share_a_table(void **state)
{
    (void)state;
    struct hammer h = { 2000 };
    pthread_t th[4];
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, summarise_often, &h);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(get((void *)test1).calls, 4 * 2000);
    assert_int_equal(get((void *)test3).calls, 4 * 2000);
}

static void *record_and_leave(void *arg)
{
    static __thread uint64_t cost[2 * 256];
    (void)arg;
    np_cost_init(cost, sizeof cost);
    for (int i = 0; i < 7; i++)
        test1(i);
    return NULL; /* no np_stats_calc before the thread ends */
}

static void ending_thread_keeps_its_counts(void **state)
{
    (void)state;
    pthread_t th;
    struct capture cap;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    pthread_create(&th, NULL, record_and_leave, NULL);
    pthread_join(th, NULL);
    assert_int_equal(get((void *)test1).calls, 7);
    assert_int_equal(get((void *)test3).calls, 7);
    assert_int_equal(np_stats_lost(stats), 0);
    capture_start(&cap);
    np_stats_dump(stats);
    capture_stop();
    assert_null(strstr(cap.text, "records lost"));
}

static void leave_from_inside(void)
{
    pthread_exit(NULL);
}

static void *exit_inside_calls(void *arg)
{
    static __thread uint64_t cost[2 * 256];
    (void)arg;
    np_cost_init(cost, sizeof cost);
    for (int i = 0; i < 5; i++)
        test1(i);
    wl_probe = leave_from_inside;
    test1(0); /* test1 -> test2 -> test3 -> pthread_exit: never return */
    return NULL;
}

static void calls_open_at_thread_exit_are_counted_lost(void **state)
{
    (void)state;
    pthread_t th;
    struct capture cap;
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    pthread_create(&th, NULL, exit_inside_calls, NULL);
    pthread_join(th, NULL);
    wl_probe = NULL;
    assert_int_equal(get((void *)test1).calls, 5);
    assert_int_equal(get((void *)test3).calls, 5);
    assert_int_equal(np_stats_lost(stats), 2 * 3);
    capture_start(&cap);
    np_stats_dump(stats);
    capture_stop();
    assert_non_null(strstr(cap.text, "(6 records lost: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_record_independently),
        cmocka_unit_test(switched_out_time_is_excluded),
        cmocka_unit_test(sleeping_is_not_counted),
        cmocka_unit_test(concurrent_summaries_share_a_table),
        cmocka_unit_test(ending_thread_keeps_its_counts),
        cmocka_unit_test(calls_open_at_thread_exit_are_counted_lost),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
