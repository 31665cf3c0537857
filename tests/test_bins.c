/* test_bins.c - the bins histogram: a known split of time at 1 kHz, the
 * delay wrapper in the last bin, ticks late while the signal is blocked,
 * the exact dump format
 * with ticks given by hand (hz 0), clearing, names, saturation, and
 * misuse. Built twice: with the configured counters (test_bins) and with
 * 16-bit ones (test_bins16, NP_TEST_BIN_BITS=16). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sanitizer.h"
#include "support.h"
#include "workload.h"

static struct capture cap;

static int teardown(void **state)
{
    (void)state;
    np_output_set(discard_write, NULL);
    np_bins_shutdown();
    np_output_set(NULL, NULL);
    return 0;
}

/* Dumps into cap.text. */
static void dump_lines(void)
{
    capture_start(&cap);
    assert_int_equal(np_bins_dump(), NP_OK);
    capture_stop();
}

/* At least LO ms and at most HI ms of 1 kHz ticks: within the
 * intervals' lengths to the ticks at either end of each (the timer's
 * phase) and the last one's signal, which the thread may take only
 * after the next switch (a signal is handled when the thread returns to
 * user space): three ticks. Under ThreadSanitizer, at most: it takes the
 * signals and hands them to the program later, and one that comes while
 * it holds one of the same number is lost (a tick in twenty on a busy
 * machine, spinning or asleep), as are the expirations of a signal the
 * program blocks (it holds it itself, and the kernel counts none late);
 * at least one tick then, when some are due. */
static void ticks_within(const char *what, uint32_t got, uint64_t lo_ns, uint64_t hi_ns)
{
    double lo = (double)lo_ns / 1e6 - 3, hi = (double)hi_ns / 1e6 + 3;
    if (UNDER_TSAN && lo > 1)
        lo = 1;
    print_message("%s: %u ticks, %.1f to %.1f measured\n", what, got, lo, hi);
    if (got < lo || got > hi)
        fail_msg("%s counted %u ticks, expected %.1f to %.1f from the wall time measured", what, got, lo, hi);
}

/* NS of wall time in the bin current: busy, as the program it measures
 * would be. Under ThreadSanitizer, asleep: it defers a signal that comes
 * while the thread runs code of its own until its next interceptor, and
 * one more tick's signal meanwhile is one lost (a fifth of them, seen on
 * a busy machine; fewer in a blocking call, where it delivers at once). */
static void in_bin_ns(uint64_t ns)
{
    if (UNDER_TSAN)
        sleep_ns(ns);
    else
        spin_wall_ns(ns);
}

static void known_split(void **state)
{
    (void)state;
    assert_int_equal(np_bins_init(4, 1000), NP_OK);
    assert_true(np_bins_signal() >= SIGRTMIN && np_bins_signal() <= SIGRTMAX);
    /* each switch between two reads of the clock: a bin's time is at
     * least from the read after its mark to the read before the next,
     * at most from the read before to the read after */
    uint64_t t0 = mono_ns();
    NP_BIN(1);
    uint64_t t1 = mono_ns();
    in_bin_ns(300000000);
    uint64_t t2 = mono_ns();
    NP_BIN(2);
    uint64_t t3 = mono_ns();
    in_bin_ns(100000000);
    uint64_t t4 = mono_ns();
    NP_BIN(1);
    uint32_t c1 = np_bins_count(1), c2 = np_bins_count(2);
    uint64_t t5 = mono_ns();
    /* one tick per ms of wall time in each (300 and 100 ms, more on a
     * loaded machine: ticks that came due while the process was not
     * running are counted late, in the bin it was in) */
    ticks_within("bin 1", c1, t2 - t1, (t3 - t0) + (t5 - t4));
    ticks_within("bin 2", c2, t4 - t3, t5 - t2);
    assert_int_equal(np_bins_count(3), 0);
    assert_int_equal(np_bins_count(0), 0);
}

static void delay_in_last_bin(void **state)
{
    (void)state;
    assert_int_equal(np_bins_init(5, 1000), NP_OK);
    uint64_t t0 = mono_ns();
    NP_BIN(2);
    uint64_t t1 = mono_ns();
    np_bins_delay_us(100000);
    uint64_t t2 = mono_ns();
    assert_int_equal(np_bin_current, 2); /* restored */
    uint32_t last = np_bins_count(4), in2 = np_bins_count(2);
    uint64_t t3 = mono_ns();
    assert_true(t2 - t1 >= 100000000u);
    /* the last bin holds the 100 ms slept (at least) and no more than the
     * delay took; bin 2 the rest */
    ticks_within("the last bin", last, 100000000u, t2 - t1);
    ticks_within("bin 2", in2, 0, t3 - t0 - 100000000u);

    unsigned prev = np_bins_idle_begin();
    assert_int_equal(prev, 2);
    assert_int_equal(np_bin_current, 4);
    np_bins_idle_end(prev);
    assert_int_equal(np_bin_current, 2);
}

/* While every thread blocks the signal, ticks come due without a signal:
 * they are counted late, in the bin current when it is unblocked, and the
 * dump says how many. */
static void blocked_signal_counted_late(void **state)
{
    (void)state;
    uint64_t t_init = mono_ns();
    assert_int_equal(np_bins_init(3, 1000), NP_OK);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, np_bins_signal());
    NP_BIN(1);
    uint64_t t0 = mono_ns();
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
    uint64_t t1 = mono_ns();
    uint32_t before = np_bins_count(1);
    spin_wall_ns(50000000);
    assert_int_equal(np_bins_count(1), before); /* nothing while blocked */
    NP_BIN(2);
    uint64_t t2 = mono_ns();
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    /* every tick that came due while the signal was blocked (at least
     * from t1 to t2, as ticks_within counts) goes to bin 2 with the
     * pending one, once it is delivered (ThreadSanitizer defers it to its
     * next interceptor, a sleep here: a minute at most) */
    double blocked = (double)(t2 - t1) / 1e6 - 3;
    for (int i = 0; i < 60000 && np_bins_count(2) < blocked; i++)
        sleep_ns(1000000);
    NP_BIN(1);
    uint64_t t3 = mono_ns();
    ticks_within("bin 2", np_bins_count(2), t2 - t1, t3 - t0);
    dump_lines();
    match_line(cap.text, "\n\\([0-9]+ ticks counted late: the timer signal was blocked or the program was not running\\)\n$");
    const char *p = strstr(cap.text, "\n(");
    assert_non_null(p);
    /* those but the one whose signal was pending, and any that came late
     * because the process was not running: no more than all */
    ticks_within("late", (uint32_t)strtoul(p + 2, NULL, 10), t2 - t1 - 1000000u, mono_ns() - t_init);
}

/* hz 0: no timer; the program ticks. Counts are exact. */
static void dump_format_and_clear(void **state)
{
    (void)state;
    assert_int_equal(np_bins_init(5, 0), NP_OK);
    assert_int_equal(np_bins_signal(), 0);
    assert_int_equal(np_bin_name(1, "parse"), NP_OK);
    assert_int_equal(np_bin_name(3, "emit"), NP_OK);
    NP_BIN(1);
    for (int i = 0; i < 3; i++)
        np_bins_tick();
    NP_BIN(3);
    np_bins_tick();
    np_bins_tick();
    unsigned prev = np_bins_idle_begin();
    np_bins_tick();
    np_bins_idle_end(prev);
    dump_lines();
    assert_string_equal(cap.text, "0 - 0\n"
                                  "1 parse 3\n"
                                  "2 - 0\n"
                                  "3 emit 2\n"
                                  "4 - 1\n");
    assert_int_equal(np_bin_current, 3); /* the dump counted itself in bin 0, then gave it back */
    dump_lines();
    assert_string_equal(cap.text, "0 - 0\n1 parse 0\n2 - 0\n3 emit 0\n4 - 0\n");
    /* a mark beyond the bins: counted apart */
    NP_BIN(7);
    np_bins_tick();
    np_bins_tick();
    NP_BIN(2);
    np_bins_tick();
    dump_lines();
    assert_string_equal(cap.text, "0 - 0\n1 parse 0\n2 - 1\n3 emit 0\n4 - 0\n(2 ticks in bins out of range)\n");
}

static void counters_saturate(void **state)
{
    (void)state;
    uint32_t max = np_bins_counter_max();
#ifdef NP_TEST_BIN_BITS
    assert_int_equal(max, 65535);
#else
    assert_true(max == 65535 || max == UINT32_MAX);
#endif
    assert_int_equal(np_bins_init(3, 0), NP_OK);
    NP_BIN(1);
    for (uint32_t i = 0; i < 70000; i++)
        np_bins_tick();
    NP_BIN(2);
    for (uint32_t i = 0; i < 5; i++)
        np_bins_tick();
    dump_lines();
    if (max == 65535)
        assert_string_equal(cap.text, "0 - 0\n1 - 65535 (saturated)\n2 - 5\n");
    else
        assert_string_equal(cap.text, "0 - 0\n1 - 70000\n2 - 5\n");
    dump_lines(); /* cleared: counting starts again */
    assert_string_equal(cap.text, "0 - 0\n1 - 0\n2 - 0\n");
}

/* dump_every's thread writes through this: the test reads what it wrote
 * under the same lock while it waits */
static pthread_mutex_t dumped_lock = PTHREAD_MUTEX_INITIALIZER;

static void dumped_write(void *ctx, const char *bytes, size_t len)
{
    pthread_mutex_lock(&dumped_lock);
    capture_write(ctx, bytes, len);
    pthread_mutex_unlock(&dumped_lock);
}

static size_t dumped_lines(void)
{
    pthread_mutex_lock(&dumped_lock);
    size_t n = 0;
    for (size_t i = 0; i < cap.len; i++)
        n += cap.text[i] == '\n';
    pthread_mutex_unlock(&dumped_lock);
    return n;
}

static void dump_every(void **state)
{
    (void)state;
    assert_int_equal(np_bins_init(3, 0), NP_OK);
    cap.len = 0;
    cap.text[0] = 0;
    np_output_set(dumped_write, &cap);
    NP_BIN(2);
    np_bins_tick();
    assert_int_equal(np_bins_dump_every(1), NP_OK);
    /* its first dump, a second after (however late the thread runs: a
     * minute at most) */
    for (int i = 0; i < 6000 && dumped_lines() < 3; i++)
        sleep_ns(10000000);
    assert_int_equal(np_bins_dump_every(0), NP_OK); /* joins the thread */
    np_output_set(NULL, NULL);
    /* the tick, then (if the stop came a second or more later) dumps of
     * the counts cleared by the first */
    assert_true(cap.len >= 18);
    assert_memory_equal(cap.text, "0 - 0\n1 - 0\n2 - 1\n", 18);
    for (size_t at = 18; at < cap.len; at += 18)
        assert_memory_equal(cap.text + at, "0 - 0\n1 - 0\n2 - 0\n", 18);
    assert_int_equal(cap.len % 18, 0);
    assert_int_equal(np_bin_current, 2);
}

static void misuse(void **state)
{
    (void)state;
    capture_start(&cap);
    assert_int_equal(np_bins_dump(), NP_ENOTINIT);
    assert_int_equal(np_bins_shutdown(), NP_ENOTINIT);
    assert_int_equal(np_bins_dump_every(1), NP_ENOTINIT);
    assert_int_equal(np_bins_init(2, 1000), NP_EINVAL);
    assert_int_equal(np_bins_init(np_bins_max() + 1, 1000), NP_EINVAL);
    assert_int_equal(np_bins_init(3, 100001), NP_EINVAL);
    assert_int_equal(np_bins_init(3, 0), NP_OK);
    assert_int_equal(np_bins_init(3, 0), NP_EALREADY);
    assert_int_equal(np_bin_name(3, "x"), NP_EINVAL);
    assert_int_equal(np_bins_count(np_bins_max()), 0);
    capture_stop();
    assert_non_null(strstr(cap.text, "nanoprof: np_bins_dump: bins are not running\n"));
    assert_non_null(strstr(cap.text, "nanoprof: np_bins_init: already running (np_bins_shutdown first)\n"));
    assert_non_null(strstr(cap.text, "nanoprof: np_bin_name: bin out of range\n"));
    assert_int_equal(np_bin_name(1, "named"), NP_OK);
    NP_BIN(1);
    np_bins_tick();
    assert_int_equal(np_bins_shutdown(), NP_OK);
    /* names and counts are forgotten; init works again */
    assert_int_equal(np_bins_init(3, 0), NP_OK);
    dump_lines();
    assert_string_equal(cap.text, "0 - 0\n1 - 0\n2 - 0\n");
}

/* The table in the program's buffer: exact counts and names, then a
 * buffer too small, misaligned or missing, and a name before init. */
static void user_buffer(void **state)
{
    (void)state;
    static void *buf[NP_BINS_BUF_BYTES(4) / sizeof(void *)];
    assert_int_equal(np_bins_init_buf(buf, sizeof buf, 4, 0), NP_OK);
    assert_int_equal(np_bin_name(2, "work"), NP_OK);
    NP_BIN(2);
    for (int i = 0; i < 7; i++)
        np_bins_tick();
    NP_BIN(3);
    np_bins_tick();
    assert_int_equal(np_bins_count(2), 7);
    assert_ptr_equal(buf[2], "work"); /* the names are the buffer's */
    dump_lines();
    assert_string_equal(cap.text, "0 - 0\n1 - 0\n2 work 7\n3 - 1\n");
    assert_int_equal(np_bins_shutdown(), NP_OK);
    capture_start(&cap);
    assert_int_equal(np_bin_name(1, "x"), NP_ENOTINIT);
    assert_int_equal(np_bins_init_buf(buf, NP_BINS_BUF_BYTES(4) - 1, 4, 0), NP_ESMALL);
    assert_int_equal(np_bins_init_buf(NULL, sizeof buf, 4, 0), NP_EINVAL);
    assert_int_equal(np_bins_init_buf((char *)buf + 1, sizeof buf - 8, 3, 0), NP_EINVAL);
    assert_int_equal(np_bins_init_buf(buf, sizeof buf, 2, 0), NP_EINVAL);
    capture_stop();
    assert_string_equal(cap.text, "nanoprof: np_bin_name: bins are not running\n"
                                  "nanoprof: np_bins_init_buf: buffer smaller than NP_BINS_BUF_BYTES(nbins)\n"
                                  "nanoprof: np_bins_init_buf: no buffer, or one not aligned for a pointer\n"
                                  "nanoprof: np_bins_init_buf: no buffer, or one not aligned for a pointer\n"
                                  "nanoprof: np_bins_init_buf: needs 3 to 256 bins (np_bins_max)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(known_split, teardown),
        cmocka_unit_test_teardown(delay_in_last_bin, teardown),
        cmocka_unit_test_teardown(blocked_signal_counted_late, teardown),
        cmocka_unit_test_teardown(dump_format_and_clear, teardown),
        cmocka_unit_test_teardown(counters_saturate, teardown),
        cmocka_unit_test_teardown(dump_every, teardown),
        cmocka_unit_test_teardown(misuse, teardown),
        cmocka_unit_test_teardown(user_buffer, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
