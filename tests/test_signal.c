/* test_signal.c - re-entry: a signal handler that runs instrumented code in
 * the middle of a hook, a storm of such signals, and hooks that reach
 * instrumented code. None may recurse or corrupt the buffers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "support.h"
#include "workload.h"

static uint64_t trace[2 * 256];
static uint64_t cost[2 * 65536];
static uint64_t stats[8192];
static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
    (void)sig;
    handler_work(); /* instrumented: handler_work -> test1 -> test2 -> test3 */
    handled++;
}

static np_func_stats get(const void *fn)
{
    return stats_of(stats, fn);
}

static int setup(void **state)
{
    (void)state;
    handled = 0;
    signal(SIGUSR1, on_signal);
    assert_int_equal(np_stats_init(stats, sizeof stats), NP_OK);
    assert_int_equal(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK), NP_OK);
    assert_int_equal(np_cost_init(cost, sizeof cost), NP_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    np_hooks_set(NULL, NULL, NULL);
    signal(SIGUSR1, SIG_DFL);
    quiet_shutdown();
    return 0;
}

/* A user hook that raises the signal: the handler runs while the runtime's
 * hook is in progress on this thread. */
static int raise_in_hook;
static unsigned long user_enters;

static void raising_enter(void *ctx, const void *fn, const void *site, int named)
{
    (void)ctx, (void)site, (void)named;
    if (fn == (void *)square) {
        user_enters++;
        if (raise_in_hook)
            raise(SIGUSR1);
    }
}

static void signal_inside_hook_records_nothing(void **state)
{
    (void)state;
    np_hooks_set(raising_enter, NULL, NULL);
    raise_in_hook = 1;
    for (int i = 0; i < 50; i++)
        assert_int_equal(square(i), i * i);
    raise_in_hook = 0;
    assert_int_equal(handled, 50);
    assert_int_equal(user_enters, 50);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    /* the handler's calls ran inside a hook: dropped whole, never half */
    assert_int_equal(get((void *)square).calls, 50);
    assert_int_equal(get((void *)handler_work).calls, 0);
    assert_int_equal(get((void *)test1).calls, 0);
    np_calltrace_entry e[8];
    assert_int_equal(np_calltrace_read(e, 8), 0);
    /* outside a hook the same handler is recorded in full */
    raise(SIGUSR1);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)handler_work).calls, 1);
    assert_int_equal(get((void *)test3).calls, 1);
}

static int reentered;

static void instrumented_enter(void *ctx, const void *fn, const void *site, int named)
{
    (void)ctx, (void)site, (void)named;
    if (fn == (void *)test1)
        reentered += twice(1); /* instrumented code from inside a hook */
}

static void hook_reaching_instrumented_code(void **state)
{
    (void)state;
    np_hooks_set(instrumented_enter, instrumented_enter, NULL);
    for (int i = 0; i < 10; i++)
        test1(i);
    np_hooks_set(NULL, NULL, NULL);
    assert_int_equal(reentered, 2 * 20); /* each enter and exit of test1 */
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 10);
    assert_int_equal(get((void *)twice).calls, 0); /* not recorded, no recursion */
}

struct seen_hook {
    int enters, exits, named_enters, null_exits;
};

static void count_enter(void *ctx, const void *fn, const void *site, int named)
{
    struct seen_hook *h = ctx;
    (void)site;
    h->enters++;
    if (named && strcmp(fn, "marker") == 0)
        h->named_enters++;
}

static void count_exit(void *ctx, const void *fn, const void *site, int named)
{
    struct seen_hook *h = ctx;
    (void)site, (void)named;
    h->exits++;
    if (!fn)
        h->null_exits++;
}

static void user_hooks_see_calls_and_markers(void **state)
{
    (void)state;
    struct seen_hook h = { 0 };
    assert_int_equal(np_hooks_set(count_enter, count_exit, &h), NP_OK);
    test1(0);
    NP_ENTER("marker");
    NP_EXIT();
    assert_int_equal(np_hooks_set(NULL, NULL, NULL), NP_OK);
    test1(0);
    assert_int_equal(h.enters, 4);
    assert_int_equal(h.exits, 4);
    assert_int_equal(h.named_enters, 1);
    assert_int_equal(h.null_exits, 1);
}

static jmp_buf escape_env;

static void escape_handler(int sig)
{
    (void)sig;
    longjmp(escape_env, 1);
}

static void raise_escape(void *ctx, const void *fn, const void *site, int named)
{
    (void)ctx, (void)site, (void)named;
    if (fn == (void *)square)
        raise(SIGUSR2);
}

/* A signal handler that longjmps out of an interrupted hook: the hook is
 * abandoned, and the thread must not stay busy for good. */
static void longjmp_out_of_a_hook(void **state)
{
    (void)state;
    sigset_t set;
    signal(SIGUSR2, escape_handler);
    np_hooks_set(raise_escape, NULL, NULL);
    if (setjmp(escape_env) == 0) {
        square(3);
        fail_msg("the handler did not jump");
    }
    np_hooks_set(NULL, NULL, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    signal(SIGUSR2, SIG_DFL);
    struct capture cap;
    capture_start(&cap);
    assert_int_equal(np_calltrace_dump(), NP_OK);
    capture_stop();
    assert_non_null(strstr(cap.text, "calltrace: stack mode"));
    test1(0);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_int_equal(get((void *)test1).calls, 1);
}

static pthread_t target;
static int storm_on; /* atomic */

static void *storm(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 20000 };
    while (__atomic_load_n(&storm_on, __ATOMIC_RELAXED)) {
        pthread_kill(target, SIGUSR1);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void signal_storm_during_calls(void **state)
{
    (void)state;
    pthread_t th;
    target = pthread_self();
    __atomic_store_n(&storm_on, 1, __ATOMIC_RELAXED);
    pthread_create(&th, NULL, storm, NULL);
    unsigned long expect = 0;
    /* until 50 signals came during the calls, however late the storm's
     * thread runs on a busy machine (a minute at most) */
    time_t start = time(NULL);
    for (int i = 0; i < 40 || (handled < 50 && time(NULL) - start < 60); i++) {
        assert_int_equal(fib(18), 2584);
        expect += fib_calls(18);
        np_stats_calc(stats);
    }
    __atomic_store_n(&storm_on, 0, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    assert_int_equal(np_stats_calc(stats), NP_OK);
    assert_true(handled > 0);
    assert_int_equal(get((void *)fib).calls, expect);
    np_func_stats h = get((void *)handler_work), t3 = get((void *)test3);
    assert_true(h.calls <= (uint64_t)handled);
    assert_int_equal(t3.calls, h.calls); /* handlers recorded whole or not at all */
    np_calltrace_entry e[8];
    assert_int_equal(np_calltrace_read(e, 8), 0);
    assert_int_equal(np_calltrace_lost(), 0);
}

/* The call trace runs without the busy flag: handlers that interrupt it
 * must leave every record whole and the depth right. */
static void signal_storm_log_mode(void **state)
{
    (void)state;
    pthread_t th;
    static np_calltrace_entry e[256];
    quiet_shutdown();
    assert_int_equal(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG), NP_OK);
    target = pthread_self();
    __atomic_store_n(&storm_on, 1, __ATOMIC_RELAXED);
    pthread_create(&th, NULL, storm, NULL);
    /* sched_yield: sanitizers deliver signals at library calls; until 50
     * signals came, however late the storm's thread runs (a minute at
     * most) */
    time_t start = time(NULL);
    for (int i = 0; (i < 200 || handled < 50) && time(NULL) - start < 60; i++) {
        assert_int_equal(fib(14), 377);
        sched_yield();
    }
    __atomic_store_n(&storm_on, 0, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    assert_true(handled > 0);
    int n = np_calltrace_read(e, 256);
    assert_int_equal(n, 256);
    for (int i = 0; i < n; i++) {
        const void *fn = e[i].fn;
        assert_true(fn == (void *)fib || fn == (void *)handler_work || fn == (void *)test1 ||
                    fn == (void *)test3 || e[i].depth > 0);
        assert_true(e[i].depth <= 14 + 4);
    }
    /* back at the top: the next call is at depth 0 */
    test1(0);
    assert_int_equal(np_calltrace_read(e, 3), 3);
    assert_int_equal(e[2].depth, 0);
    assert_ptr_equal(e[2].fn, (void *)test1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(signal_inside_hook_records_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(hook_reaching_instrumented_code, setup, teardown),
        cmocka_unit_test_setup_teardown(signal_storm_during_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(user_hooks_see_calls_and_markers, setup, teardown),
        cmocka_unit_test_setup_teardown(signal_storm_log_mode, setup, teardown),
        /* last: a longjmp out of a signal handler unsettles ThreadSanitizer's
         * signal bookkeeping for the rest of the process */
        cmocka_unit_test_setup_teardown(longjmp_out_of_a_hook, setup, teardown),
    };
    return cmocka_run_group_tests_name("signal", tests, NULL, NULL);
}
