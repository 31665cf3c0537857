/* test_blocks.c - basic-block counts in process (nanoprof/blocks.h): the
 * table through np_blocks_hit with made-up addresses (exact counts, read,
 * clear, disable, the ring, the dump), and the coverage callback on the
 * workload of tests/programs/blocks_prog.c (built with
 * -fsanitize-coverage=trace-pc): bb_loop(N) runs a branch taken N/4 times,
 * alone and on two threads. Run with NANOPROF_BLOCKS=3 in the environment,
 * it checks a table of 4 slots filling up instead. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "nanoprof/blocks.h"
#include "nanoprof/nanoprof.h"

void bb_loop(int n); /* blocks_prog.c, with coverage */

#define FAKE(i) ((const void *)(uintptr_t)(0x100000 + 16 * (i)))
#define MAX_BLOCKS 256

static char out[4096];

static void capture(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    size_t n = strlen(out);
    if (n + len < sizeof out) {
        memcpy(out + n, bytes, len);
        out[n + len] = 0;
    }
}

static int reset(void **state)
{
    (void)state;
    np_blocks_enable();
    np_blocks_clear();
    return 0;
}

/* The blocks that ran N times. */
static size_t with_count(uint64_t n, const void **pc)
{
    np_block_count b[MAX_BLOCKS];
    size_t count = np_blocks_read(b, MAX_BLOCKS), found = 0;
    assert_true(count <= MAX_BLOCKS);
    for (size_t i = 0; i < count; i++)
        if (b[i].count == n) {
            found++;
            if (pc)
                *pc = b[i].pc;
        }
    return found;
}

static void hits_count_exactly(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++)
        for (int k = 0; k <= i; k++)
            np_blocks_hit(FAKE(i));
    np_blocks_hit(NULL); /* not a block */
    for (int i = 0; i < 5; i++)
        assert_int_equal(np_blocks_count(FAKE(i)), i + 1);
    assert_int_equal(np_blocks_count(FAKE(99)), 0);
    np_block_count b[8];
    assert_int_equal(np_blocks_read(b, 8), 5);
    assert_int_equal(np_blocks_read(b, 2), 5); /* says how many there are */
    uint64_t sum = 0;
    for (int i = 0; i < 5; i++)
        sum += b[i].count;
    assert_int_equal(sum, 15);
    assert_int_equal(np_blocks_lost(), 0);
    np_blocks_clear();
    assert_int_equal(np_blocks_count(FAKE(2)), 0);
    assert_int_equal(np_blocks_read(b, 8), 0);
}

static void coverage_counts_the_loop(void **state)
{
    (void)state;
    const void *taken = NULL;
    bb_loop(1000);
    assert_int_equal(with_count(250, &taken), 1); /* the branch */
    assert_true(with_count(1000, NULL) >= 1);     /* bb_body's entry */
    assert_int_equal(np_blocks_count(taken), 250);
    bb_loop(1000);
    assert_int_equal(np_blocks_count(taken), 500);
}

static void disabled_counts_nothing(void **state)
{
    (void)state;
    assert_int_equal(np_blocks_disable(), 1);
    bb_loop(100);
    assert_int_equal(np_blocks_read(NULL, 0), 0);
    assert_int_equal(np_blocks_enable(), 0);
    bb_loop(100);
    assert_int_equal(with_count(25, NULL), 1);
}

static void *loop_thread(void *arg)
{
    bb_loop(*(int *)arg);
    return NULL;
}

static void threads_add_exactly(void **state)
{
    (void)state;
    int n = 100000;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, loop_thread, &n), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(with_count(2 * 25000, NULL), 1);
    assert_true(with_count(2 * 100000, NULL) >= 1);
    assert_int_equal(np_blocks_lost(), 0);
}

static void ring_keeps_the_latest(void **state)
{
    (void)state;
    const void *r[16];
    assert_int_equal(np_blocks_recent(r, 16), 0); /* no ring */
    assert_int_equal(np_blocks_log(6), NP_OK);   /* 8 entries */
    for (int i = 0; i < 10; i++)
        np_blocks_hit(FAKE(i));
    assert_int_equal(np_blocks_recent(r, 16), 8);
    for (int i = 0; i < 8; i++)
        assert_ptr_equal(r[i], FAKE(9 - i));
    assert_int_equal(np_blocks_recent(r, 3), 3);
    assert_ptr_equal(r[2], FAKE(7));
    assert_int_equal(np_blocks_log(0), NP_OK);
    assert_int_equal(np_blocks_recent(r, 16), 0);
    np_output_set(capture, NULL);
    out[0] = 0;
    assert_int_equal(np_blocks_log((size_t)1 << 29), NP_EINVAL);
    np_output_set(NULL, NULL);
    assert_string_equal(out, "nanoprof: np_blocks_log: at most 268435456 entries\n");
}

static void dump_lines(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        np_blocks_hit(FAKE(2));
    np_blocks_hit(FAKE(1));
    char want[256];
    snprintf(want, sizeof want, "blocks: 2 blocks, 4 executions, 0 lost, %zu slots\n0x100010: 1\n0x100020: 3\n",
             np_blocks_capacity());
    np_output_set(capture, NULL);
    out[0] = 0;
    assert_int_equal(np_blocks_dump(), NP_OK);
    np_output_set(NULL, NULL);
    assert_string_equal(out, want);
}

/* NANOPROF_BLOCKS=3: 4 slots. The made-up blocks take the slots still
 * free (covered code that ran before, such as a sanitizer's module
 * constructor, may hold one), the executions of the others are lost, the
 * blocks that got a slot go on counting. */
static void tiny_table_loses(void **state)
{
    (void)state;
    assert_int_equal(np_blocks_capacity(), 4);
    for (int k = 0; k < 10; k++)
        for (int i = 0; i < 6; i++)
            np_blocks_hit(FAKE(i));
    unsigned in = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t c = np_blocks_count(FAKE(i));
        assert_true(c == 0 || c == 10);
        in += c == 10;
    }
    assert_true(in >= 3 && in <= 4);
    assert_int_equal(np_blocks_read(NULL, 0), in);
    assert_int_equal(np_blocks_lost(), 10 * (6 - in));
    char want[128];
    snprintf(want, sizeof want, "blocks: %u blocks, %u executions, %u lost, 4 slots\n", in, 10 * in, 10 * (6 - in));
    np_output_set(capture, NULL);
    out[0] = 0;
    np_blocks_dump();
    np_output_set(NULL, NULL);
    assert_non_null(strstr(out, want));
    np_blocks_clear();
    assert_int_equal(np_blocks_lost(), 0);
}

/* The program's own table: what the runtime's counted moves into it,
 * counting goes on there; bad buffers and a second table are refused
 * with one line each. Runs last: the table stays. */
static void user_table_takes_over(void **state)
{
    (void)state;
    static uint64_t buf[(NP_BLOCKS_BUF_BYTES(8) + 8) / 8];
    size_t own = np_blocks_capacity();
    for (int i = 0; i < 3; i++)
        for (int k = 0; k <= i; k++)
            np_blocks_hit(FAKE(i));
    np_output_set(capture, NULL);
    out[0] = 0;
    assert_int_equal(np_blocks_init_buf(NULL, sizeof buf), NP_EINVAL);
    assert_int_equal(np_blocks_init_buf((char *)buf + 4, sizeof buf - 8), NP_EINVAL);
    assert_int_equal(np_blocks_init_buf(buf, NP_BLOCKS_BUF_BYTES(1) - 1), NP_EINVAL);
    assert_int_equal(np_blocks_capacity(), own); /* refused: the table stays */
    assert_int_equal(np_blocks_init_buf(buf, sizeof buf), NP_OK);
    assert_int_equal(np_blocks_init_buf(buf, sizeof buf), NP_EALREADY);
    np_output_set(NULL, NULL);
    assert_non_null(strstr(out, "nanoprof: np_blocks_init_buf: no buffer, or one misaligned or too small\n"));
    assert_non_null(strstr(out, "nanoprof: np_blocks_init_buf: a table was given already\n"));
    assert_int_equal(np_blocks_capacity(), 8); /* 8 slots fit, not 16 */
    for (int i = 0; i < 3; i++)
        assert_int_equal(np_blocks_count(FAKE(i)), i + 1);
    np_blocks_hit(FAKE(2));
    np_blocks_hit(FAKE(3));
    assert_int_equal(np_blocks_count(FAKE(2)), 4);
    assert_int_equal(np_blocks_count(FAKE(3)), 1);
    /* the slots are the buffer's: 8 of them after a 16-byte header */
    unsigned in_buf = 0;
    for (int i = 0; i < 8; i++)
        in_buf += buf[2 + 2 * i] == (uint64_t)(uintptr_t)FAKE(3) && buf[3 + 2 * i] == 1;
    assert_int_equal(in_buf, 1);
}

int main(void)
{
    const char *slots = getenv("NANOPROF_BLOCKS");
    if (slots && strcmp(slots, "3") == 0) {
        const struct CMUnitTest tiny[] = {
            cmocka_unit_test_setup(tiny_table_loses, reset),
        };
        return cmocka_run_group_tests(tiny, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(hits_count_exactly, reset),
        cmocka_unit_test_setup(coverage_counts_the_loop, reset),
        cmocka_unit_test_setup(disabled_counts_nothing, reset),
        cmocka_unit_test_setup(threads_add_exactly, reset),
        cmocka_unit_test_setup(ring_keeps_the_latest, reset),
        cmocka_unit_test_setup(dump_lines, reset),
        cmocka_unit_test_setup(user_table_takes_over, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
