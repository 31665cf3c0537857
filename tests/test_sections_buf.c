/* test_sections_buf.c - sections in the program's buffer
 * (np_sections_init_buf): the buffers refused and their lines, the ids a
 * buffer holds, exact counts from two threads in the buffer's table, an
 * id past it refused, the dump, and a second init refused. A process of
 * its own: the buffer must come before any section. */
#include <pthread.h>
#include <stdio.h>
#include "support.h"

#define ROUNDS 1000

static struct capture cap;
/* NP_SECTIONS_BUF_BYTES(4), aligned as a host's sections are (a cache
 * line each): 5 fit */
static _Alignas(64) unsigned char buf[NP_SECTIONS_BUF_BYTES(4)];

static void *rounds(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        NP_SECTION_BEGIN(2);
        NP_SECTION_BEGIN(2); /* nested in itself: the outer one counts */
        NP_SECTION_END(2);
        NP_SECTION_END(2);
    }
    return NULL;
}

static void in_the_buffer(void **state)
{
    (void)state;
    capture_start(&cap);
    assert_int_equal(np_sections_init_buf(NULL, sizeof buf, 0), NP_EINVAL);
    assert_int_equal(np_sections_init_buf(buf + 4, sizeof buf - 4, 0), NP_EINVAL);
    assert_int_equal(np_sections_init_buf(buf, NP_SECTIONS_BUF_BYTES(2) - 1, 0), NP_ESMALL);
    assert_int_equal(np_sections_init_buf(buf, sizeof buf, 4), NP_EINVAL);
    capture_stop();
    assert_string_equal(cap.text, "nanoprof: np_sections_init_buf: no buffer, or one not 8-byte aligned\n"
                                  "nanoprof: np_sections_init_buf: no buffer, or one not 8-byte aligned\n"
                                  "nanoprof: np_sections_init_buf: buffer smaller than NP_SECTIONS_BUF_BYTES(2)\n"
                                  "nanoprof: np_sections_init_buf: unknown flag\n");
    assert_int_equal(np_sections_max(), NP_SECTIONS_MAX_BUILT);
    assert_int_equal(np_sections_init_buf(buf, sizeof buf, 0), NP_OK);
    assert_int_equal(np_sections_max(), 5);
    assert_int_equal(np_section_name(2, "work"), NP_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, rounds, NULL), 0);
    NP_SECTIONS_START();
    rounds(NULL);
    NP_SECTIONS_STOP();
    assert_int_equal(pthread_join(t, NULL), 0);
    np_section_stats s;
    assert_int_equal(np_sections_get(2, &s), NP_OK);
    assert_int_equal(s.count, 2 * ROUNDS);
    assert_string_equal(s.name, "work");
    /* the table is the buffer: section 2's name, a cache line in (its
     * totals are the threads' own, on a host) */
    const char *in_buf;
    memcpy(&in_buf, buf + 2 * 64 + 8 + 8 * 2 + 8, sizeof in_buf);
    assert_ptr_equal(in_buf, s.name);
    capture_start(&cap);
    assert_int_equal(np_section_begin(5), NP_EINVAL);
    assert_int_equal(np_sections_get(5, &s), NP_EINVAL);
    assert_int_equal(np_sections_init_buf(buf, sizeof buf, 0), NP_EALREADY);
    assert_int_equal(np_sections_init(0), NP_EALREADY);
    capture_stop();
    assert_string_equal(cap.text, "nanoprof: np_section_begin: section id out of range (see np_sections_max; reported once)\n"
                                  "nanoprof: np_sections_get: section id out of range or output is NULL\n"
                                  "nanoprof: np_sections_init_buf: already initialised\n"
                                  "nanoprof: np_sections_init: already initialised\n");
    capture_start(&cap);
    assert_int_equal(np_sections_dump(), NP_OK);
    capture_stop();
    match_line(cap.text, "^work: count 2000, time [0-9]+, [0-9]+\\.[0-9]% of global\n"
                         "global: count 1, time [0-9]+, 100\\.0% of global\n$");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_the_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
