/* test_sections.c - measured sections, time only: known durations and
 * counts, nesting, two threads in one section, threads read while they
 * run and after they end (each thread keeps its own totals), the dump
 * format, ids out of range and unmatched ends. */
#include <pthread.h>
#include <stdio.h>
#include "support.h"
#include "workload.h"

static struct capture cap;

static int group_setup(void **state)
{
    (void)state;
    assert_int_equal(np_sections_init(0), NP_OK);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(np_sections_clear(), NP_OK);
    return 0;
}

static void known_durations_and_counts(void **state)
{
    (void)state;
    uint64_t inside = 0, outside = 0;
    for (int i = 0; i < 10; i++) {
        uint64_t t0 = mono_ns();
        NP_SECTION_BEGIN(1);
        uint64_t t1 = mono_ns();
        spin_wall_ns(2000000);
        uint64_t t2 = mono_ns();
        NP_SECTION_END(1);
        uint64_t t3 = mono_ns();
        inside += t2 - t1;
        outside += t3 - t0;
        spin_wall_ns(500000); /* not in the section */
    }
    np_section_stats s = section_of(1);
    assert_int_equal(s.count, 10);
    assert_null(s.name);
    /* bracketed by the reads around it, to the clocks' rounding (a
     * preemption between a mark and its read is in the outer bracket
     * only: no other bound holds on a busy machine) */
    assert_true(s.time_ns + 10 * 1000 >= inside);
    assert_true(s.time_ns <= outside + 10 * 1000);
    assert_int_equal(s.hw, 0);
}

static void global_share(void **state)
{
    (void)state;
    uint64_t t0 = mono_ns();
    NP_SECTIONS_START();
    spin_wall_ns(3000000);
    uint64_t t1 = mono_ns();
    NP_SECTION_BEGIN_NAMED(2, "work");
    spin_wall_ns(3000000);
    NP_SECTION_END(2);
    uint64_t t2 = mono_ns();
    NP_SECTIONS_STOP();
    uint64_t t3 = mono_ns();
    np_section_stats g = section_of(NP_SECTION_GLOBAL), w = section_of(2);
    assert_int_equal(g.count, 1);
    assert_int_equal(w.count, 1);
    assert_string_equal(w.name, "work");
    assert_true(g.time_ns >= 6000000u && g.time_ns <= t3 - t0);
    assert_true(w.time_ns >= 3000000u && w.time_ns <= t2 - t1);
    assert_true(w.time_ns < g.time_ns);
}

static void nested_sections(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        NP_SECTION_BEGIN(3);
        for (int j = 0; j < 3; j++) {
            NP_SECTION_BEGIN(4);
            spin_wall_ns(200000);
            NP_SECTION_END(4);
        }
        spin_wall_ns(200000);
        NP_SECTION_END(3);
    }
    np_section_stats outer = section_of(3), inner = section_of(4);
    assert_int_equal(outer.count, 4);
    assert_int_equal(inner.count, 12);
    assert_true(inner.time_ns <= outer.time_ns);
    assert_true(inner.time_ns >= 12 * 200000u);
    assert_true(outer.time_ns >= 16 * 200000u);
}

/* A section inside itself (recursion) is measured once, at the outside. */
static void same_id_nested_counts_outermost(void **state)
{
    (void)state;
    uint64_t t0 = mono_ns();
    NP_SECTION_BEGIN(5);
    spin_wall_ns(1000000);
    NP_SECTION_BEGIN(5);
    spin_wall_ns(1000000);
    NP_SECTION_BEGIN(5);
    NP_SECTION_END(5);
    NP_SECTION_END(5);
    spin_wall_ns(1000000);
    NP_SECTION_END(5);
    uint64_t wall = mono_ns() - t0;
    np_section_stats s = section_of(5);
    assert_int_equal(s.count, 1);
    assert_true(s.time_ns >= 3000000u);
    assert_true(s.time_ns <= wall + 1000);
}

struct worker {
    int reps;
    uint64_t inside;  /* this thread's time in the section: at least */
    uint64_t outside; /* ... and at most */
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < w->reps; i++) {
        uint64_t t0 = mono_ns();
        NP_SECTION_BEGIN(6);
        uint64_t t1 = mono_ns();
        spin_wall_ns(20000);
        uint64_t t2 = mono_ns();
        NP_SECTION_END(6);
        w->outside += mono_ns() - t0;
        w->inside += t2 - t1;
    }
    return NULL;
}

static void two_threads_add_up(void **state)
{
    (void)state;
    struct worker w[2] = { { 1500, 0, 0 }, { 1000, 0, 0 } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    np_section_stats s = section_of(6);
    assert_int_equal(s.count, 2500);
    /* both threads' times add: between the sums of what each measured
     * inside and around its sections (1 ns of rounding per occurrence) */
    assert_true(s.time_ns + 2500 >= w[0].inside + w[1].inside);
    assert_true(s.time_ns <= w[0].outside + w[1].outside + 2500);
}

/* A thread that counts in section 7, stops at a barrier with its block
 * still its own (read then), and again after a clear. */
struct live {
    pthread_barrier_t b;
    int first, second;
};

static void *live_main(void *arg)
{
    struct live *l = arg;
    for (int i = 0; i < l->first; i++) {
        NP_SECTION_BEGIN(7);
        NP_SECTION_END(7);
    }
    pthread_barrier_wait(&l->b); /* read while it lives */
    pthread_barrier_wait(&l->b); /* cleared */
    for (int i = 0; i < l->second; i++) {
        NP_SECTION_BEGIN(7);
        NP_SECTION_END(7);
    }
    NP_SECTION_BEGIN(7); /* left open at its end: not counted */
    return NULL;
}

static void live_thread_read_and_cleared(void **state)
{
    (void)state;
    struct live l = { .first = 300, .second = 40 };
    pthread_t th;
    assert_int_equal(pthread_barrier_init(&l.b, NULL, 2), 0);
    assert_int_equal(pthread_create(&th, NULL, live_main, &l), 0);
    pthread_barrier_wait(&l.b);
    assert_int_equal(section_of(7).count, 300);
    assert_int_equal(np_sections_clear(), NP_OK);
    assert_int_equal(section_of(7).count, 0);
    assert_int_equal(section_of(7).time_ns, 0);
    pthread_barrier_wait(&l.b);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(section_of(7).count, 40);
    pthread_barrier_destroy(&l.b);
}

static void *churn_main(void *arg)
{
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        NP_SECTION_BEGIN(8);
        NP_SECTION_END(8);
    }
    return NULL;
}

/* Threads that end (their blocks taken again by the next ones, eight at
 * a time) leave their counts: 200 threads, each its own number. */
static void ended_threads_counted(void **state)
{
    (void)state;
    int n[200];
    long want = 0;
    for (int i = 0; i < 200; i += 8) {
        pthread_t th[8];
        for (int k = 0; k < 8 && i + k < 200; k++) {
            n[i + k] = 1 + (i + k) % 37;
            want += n[i + k];
            assert_int_equal(pthread_create(&th[k], NULL, churn_main, &n[i + k]), 0);
        }
        for (int k = 0; k < 8 && i + k < 200; k++)
            assert_int_equal(pthread_join(th[k], NULL), 0);
    }
    assert_int_equal(section_of(8).count, want);
    /* and this thread's own section on top */
    NP_SECTION_BEGIN(8);
    NP_SECTION_END(8);
    assert_int_equal(section_of(8).count, want + 1);
}

/* The line a dump must print for section ID, computed from its values. */
static void expected_line(char *out, size_t size, const char *name, const np_section_stats *s, uint64_t global_ns)
{
    int n = snprintf(out, size, "%s: count %u, time %llu, ", name, s->count, (unsigned long long)s->time_ns);
    if (global_ns) {
        uint64_t tenths = (uint64_t)((double)s->time_ns * 1000.0 / (double)global_ns + 0.5);
        snprintf(out + n, size - (size_t)n, "%llu.%llu%% of global", (unsigned long long)(tenths / 10),
                 (unsigned long long)(tenths % 10));
    } else {
        snprintf(out + n, size - (size_t)n, "-%% of global");
    }
}

static void dump_format(void **state)
{
    (void)state;
    NP_SECTIONS_START();
    for (int i = 0; i < 3; i++) {
        NP_SECTION_BEGIN_NAMED(8, "parse");
        spin_wall_ns(300000);
        NP_SECTION_END(8);
    }
    NP_SECTION_BEGIN(9);
    spin_wall_ns(100000);
    NP_SECTION_END(9);
    NP_SECTIONS_STOP();
    np_section_name(10, "never"); /* named, never run: listed with count 0 */
    capture_start(&cap);
    assert_int_equal(np_sections_dump(), NP_OK);
    capture_stop();
    /* values do not change after the run: section_of() sees what the dump saw */
    np_section_stats g = section_of(0), p = section_of(8), u = section_of(9), n = section_of(10);
    char want[4][256], line[256];
    expected_line(want[0], sizeof want[0], "parse", &p, g.time_ns);
    expected_line(want[1], sizeof want[1], "section 9", &u, g.time_ns);
    expected_line(want[2], sizeof want[2], "never", &n, g.time_ns);
    expected_line(want[3], sizeof want[3], "global", &g, g.time_ns);
    /* section 2 was named "work" by an earlier test: named, listed */
    assert_true(line_of(cap.text, 0, line, sizeof line));
    match_line(line, "^work: count 0, time 0, 0\\.0% of global$");
    for (int i = 0; i < 4; i++) {
        assert_true(line_of(cap.text, i + 1, line, sizeof line));
        assert_string_equal(line, want[i]);
    }
    assert_false(line_of(cap.text, 5, line, sizeof line));
    assert_int_equal(p.count, 3);
    assert_int_equal(u.count, 1);
    assert_int_equal(n.count, 0);
    assert_string_equal(want[3] + strlen(want[3]) - 16, "100.0% of global");
    match_line(want[0], "^parse: count 3, time [0-9]+, [0-9]+\\.[0-9]% of global$");
}

static void dump_without_global(void **state)
{
    (void)state;
    NP_SECTION_BEGIN(11);
    NP_SECTION_END(11);
    capture_start(&cap);
    assert_int_equal(np_sections_dump(), NP_OK);
    capture_stop();
    char line[256];
    int found = 0;
    for (int i = 0; line_of(cap.text, i, line, sizeof line); i++) {
        match_line(line, ": count [0-9]+, time [0-9]+, -% of global$");
        static const char want[] = "section 11: count 1, time ";
        found += strncmp(line, want, sizeof want - 1) == 0;
    }
    assert_int_equal(found, 1);
    assert_false(strstr(cap.text, "global: count 0, time 0, -% of global\n") == NULL);
}

static void ids_out_of_range(void **state)
{
    (void)state;
    unsigned max = np_sections_max();
    assert_int_equal(max, 64);
    capture_start(&cap);
    assert_int_equal(np_section_begin(max), NP_EINVAL);
    assert_int_equal(np_section_end(max + 1000), NP_EINVAL);
    assert_int_equal(np_section_begin(~0u), NP_EINVAL);
    assert_int_equal(np_section_name(max, "x"), NP_EINVAL);
    capture_stop();
    /* said once per process, however often it happens */
    assert_string_equal(cap.text, "nanoprof: np_section_begin: section id out of range (see np_sections_max; reported once)\n");
    assert_int_equal(np_section_begin_named(max, "x"), NP_EINVAL);
    np_section_stats s;
    capture_start(&cap);
    assert_int_equal(np_sections_get(max, &s), NP_EINVAL);
    assert_int_equal(np_sections_get(1, NULL), NP_EINVAL);
    capture_stop();
    assert_non_null(strstr(cap.text, "nanoprof: np_sections_get: "));
    /* the last id in range works */
    assert_int_equal(np_section_begin(max - 1), NP_OK);
    assert_int_equal(np_section_end(max - 1), NP_OK);
    assert_int_equal(section_of(max - 1).count, 1);
}

static void end_without_begin(void **state)
{
    (void)state;
    capture_start(&cap);
    assert_int_equal(np_section_end(12), NP_EINVAL);
    assert_int_equal(np_section_end(12), NP_EINVAL);
    capture_stop();
    assert_string_equal(cap.text, "nanoprof: np_section_end: section ended without a begin on this thread (reported once)\n");
    assert_int_equal(section_of(12).count, 0);
    /* and a matched pair after it counts as usual */
    assert_int_equal(np_section_begin(12), NP_OK);
    assert_int_equal(np_section_end(12), NP_OK);
    assert_int_equal(section_of(12).count, 1);
}

static void init_twice_and_bad_flags(void **state)
{
    (void)state;
    capture_start(&cap);
    assert_int_equal(np_sections_init(0), NP_EALREADY);
    assert_int_equal(np_sections_init(0x80), NP_EINVAL);
    capture_stop();
    assert_non_null(strstr(cap.text, "nanoprof: np_sections_init: already initialised\n"));
    assert_non_null(strstr(cap.text, "nanoprof: np_sections_init: unknown flag\n"));
}

static void clear_zeroes_keeps_names(void **state)
{
    (void)state;
    NP_SECTION_BEGIN_NAMED(13, "kept");
    NP_SECTION_END(13);
    assert_int_equal(section_of(13).count, 1);
    assert_int_equal(np_sections_clear(), NP_OK);
    np_section_stats s = section_of(13);
    assert_int_equal(s.count, 0);
    assert_int_equal(s.time_ns, 0);
    assert_string_equal(s.name, "kept");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(known_durations_and_counts, setup),
        cmocka_unit_test_setup(global_share, setup),
        cmocka_unit_test_setup(nested_sections, setup),
        cmocka_unit_test_setup(same_id_nested_counts_outermost, setup),
        cmocka_unit_test_setup(two_threads_add_up, setup),
        cmocka_unit_test_setup(live_thread_read_and_cleared, setup),
        cmocka_unit_test_setup(ended_threads_counted, setup),
        cmocka_unit_test_setup(dump_format, setup),
        cmocka_unit_test_setup(dump_without_global, setup),
        cmocka_unit_test_setup(ids_out_of_range, setup),
        cmocka_unit_test_setup(end_without_begin, setup),
        cmocka_unit_test_setup(init_twice_and_bad_flags, setup),
        cmocka_unit_test_setup(clear_zeroes_keeps_names, setup),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
