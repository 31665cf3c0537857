/* test_sections_hw.c - sections with hardware events (NP_SECTIONS_HW).
 * Run three ways (tests/CMakeLists.txt): as the kernel allows; with
 * NANOPROF_NO_PERF=1, where the counters are refused and sections must
 * still measure time, the refusal said once; and with
 * NANOPROF_PERF_EVENTS=software, where task-clock and page-faults stand in
 * for the hardware events so that the counting path runs on machines
 * without a PMU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "support.h"
#include "workload.h"

#define NOTICE "nanoprof: np_sections_init: hardware events unavailable ("

static struct capture cap;
static int counting; /* the kernel accepted the counters */

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static int software(void)
{
    const char *v = getenv("NANOPROF_PERF_EVENTS");
    return v && strcmp(v, "software") == 0;
}

static int group_setup(void **state)
{
    (void)state;
    capture_start(&cap);
    int rc = np_sections_init(NP_SECTIONS_HW);
    capture_stop();
    assert_int_equal(rc, NP_OK); /* refused counters are not a failure */
    counting = strstr(cap.text, NOTICE) == NULL;
    return 0;
}

static void notice_as_expected(void **state)
{
    (void)state;
    if (env_set("NANOPROF_NO_PERF")) {
        assert_false(counting);
        assert_string_equal(cap.text, NOTICE "NANOPROF_NO_PERF is set): sections measure time only\n");
    } else if (counting) {
        assert_string_equal(cap.text, ""); /* nothing said */
    } else {
        /* refused by this kernel or machine: one line with the reason */
        match_line(cap.text, "^nanoprof: np_sections_init: hardware events unavailable \\(.+\\): "
                             "sections measure time only\n$");
    }
}

static void time_works_either_way(void **state)
{
    (void)state;
    np_sections_clear();
    uint64_t t0 = mono_ns();
    for (int i = 0; i < 5; i++) {
        NP_SECTION_BEGIN(1);
        spin_wall_ns(1000000);
        NP_SECTION_END(1);
    }
    uint64_t wall = mono_ns() - t0;
    np_section_stats s = section_of(1);
    assert_int_equal(s.count, 5);
    assert_true(s.time_ns >= 5000000u);
    assert_true(s.time_ns <= wall);
    assert_int_equal(s.hw, counting);
    /* the notice is not repeated by sections or dumps */
    capture_start(&cap);
    np_sections_dump();
    capture_stop();
    assert_null(strstr(cap.text, NOTICE));
    char line[256];
    assert_true(line_of(cap.text, 0, line, sizeof line));
    if (!counting)
        match_line(line, "^section 1: count 5, time [0-9]+, -% of global$");
    else if (software())
        match_line(line, "^section 1: count 5, time [0-9]+, -% of global, task-clock [0-9]+, page-faults [0-9]+$");
    else
        match_line(line, "^section 1: count 5, time [0-9]+, -% of global, instructions [0-9]+, cache-misses [0-9]+$");
}

/* Hardware: a loop of known length retires at least that many
 * instructions. */
static void hardware_counts(void **state)
{
    (void)state;
    if (!counting || software())
        skip();
    np_sections_clear();
    volatile unsigned sink = 0;
    NP_SECTION_BEGIN(2);
    for (unsigned i = 0; i < 1000000; i++)
        sink += i;
    NP_SECTION_END(2);
    np_section_stats s = section_of(2);
    assert_true(s.instructions >= 1000000u);
    assert_true(s.instructions < 100000000u);
}

/* Software stand-ins: task-clock is the thread's CPU time in ns, so for a
 * busy loop it matches the section's time; page-faults counts first
 * touches of fresh pages. */
static void software_counts(void **state)
{
    (void)state;
    if (!counting || !software())
        skip();
    np_sections_clear();
    NP_SECTION_BEGIN(3);
    spin_thread_cpu_ns(20000000);
    NP_SECTION_END(3);
    np_section_stats s = section_of(3);
    assert_true(s.instructions >= 19000000u); /* task-clock, ns */
    assert_true(s.instructions <= s.time_ns + 1000000u);

    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 64;
    char *mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    NP_SECTION_BEGIN(4);
    for (size_t i = 0; i < pages; i++)
        mem[i * page] = 1;
    NP_SECTION_END(4);
    munmap(mem, pages * page);
    s = section_of(4);
    assert_true(s.cache_misses >= pages); /* page-faults */
    assert_true(s.cache_misses < 4 * pages);
}

static void *worker_main(void *arg)
{
    (void)arg;
    NP_SECTION_BEGIN(5);
    spin_thread_cpu_ns(10000000);
    NP_SECTION_END(5);
    return NULL;
}

/* Another thread opens counters of its own: its events add to the
 * section's. */
static void other_thread_counts(void **state)
{
    (void)state;
    if (!counting || !software())
        skip();
    np_sections_clear();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker_main, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    worker_main(NULL);
    np_section_stats s = section_of(5);
    assert_int_equal(s.count, 2);
    assert_true(s.instructions >= 19000000u); /* both threads' CPU time */
    assert_true(s.instructions <= s.time_ns + 1000000u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(notice_as_expected),
        cmocka_unit_test(time_works_either_way),
        cmocka_unit_test(hardware_counts),
        cmocka_unit_test(software_counts),
        cmocka_unit_test(other_thread_counts),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
