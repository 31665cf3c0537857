/* test_rtt.c - the RTT writer (nanoprof/rtt.h) read as a probe reads it,
 * by a thread of the test: the control block in SEGGER's layout (the 64-bit
 * one here: OpenOCD's rtt_params_64), found by its symbol _SEGGER_RTT and
 * its ID; in block mode every byte of writes far larger than the ring
 * arrives in order while the reader drains it; in skip mode a write that
 * does not fit is dropped whole and counted; bytes before np_rtt_init are
 * dropped and counted; misuse is refused, its line written to the ring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include "nanoprof/nanoprof.h"

extern unsigned char rtt_block[] __asm__("_SEGGER_RTT");

/* The fields as a host reads them: ID at 0, MaxNumUpBuffers at 16,
 * MaxNumDownBuffers at 20, up-buffer 0 at 24: sName 0, pBuffer 8,
 * SizeOfBuffer 16, WrOff 20, RdOff 24, Flags 28 (64-bit pointers). */
#define UP 24
static unsigned *field(size_t off)
{
    return (unsigned *)(rtt_block + off);
}
static void *pointer(size_t off)
{
    void *p;
    memcpy(&p, rtt_block + off, sizeof p);
    return p;
}

#define RING 64
static char ring[RING];
#define TOTAL 100000
static unsigned char want[TOTAL];
static size_t got;
static int bad;

/* The probe: drains the ring into the check of the bytes, until TOTAL. */
static void *reader(void *arg)
{
    (void)arg;
    const unsigned char *buf = pointer(UP + 8);
    unsigned size = *field(UP + 16);
    while (got < TOTAL) {
        unsigned wr = __atomic_load_n(field(UP + 20), __ATOMIC_ACQUIRE);
        unsigned rd = __atomic_load_n(field(UP + 24), __ATOMIC_RELAXED);
        while (rd != wr && got < TOTAL) {
            bad += buf[rd] != want[got];
            got++;
            rd = (rd + 1) % size;
        }
        __atomic_store_n(field(UP + 24), rd, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_rtt(void **state)
{
    (void)state;
    /* before np_rtt_init: no block to find, the bytes dropped and counted */
    assert_int_equal(rtt_block[0], 0);
    np_rtt_write(NULL, "early", 5);
    assert_int_equal(np_rtt_dropped(), 5);
    assert_int_equal(np_rtt_pending(), 0);
    /* misuse */
    assert_int_equal(np_rtt_init(NULL, RING, NP_RTT_BLOCK), NP_EINVAL);
    assert_int_equal(np_rtt_init(ring, NP_RTT_BUFFER_MIN - 1, NP_RTT_BLOCK), NP_ESMALL);
    assert_int_equal(np_rtt_init(ring, RING, (enum np_rtt_mode)1), NP_EINVAL);
    assert_int_equal(rtt_block[0], 0);

    assert_int_equal(np_rtt_init(ring, RING, NP_RTT_BLOCK), NP_OK);
    assert_memory_equal(rtt_block, "SEGGER RTT\0\0\0\0\0", 16);
    assert_int_equal(*field(16), 1);
    assert_int_equal(*field(20), 0);
    assert_string_equal(pointer(UP), "nanoprof");
    assert_ptr_equal(pointer(UP + 8), ring);
    assert_int_equal(*field(UP + 16), RING);
    assert_int_equal(*field(UP + 28), 2); /* SEGGER_RTT_MODE_BLOCK_IF_FIFO_FULL */

    /* block mode: writes of 1 to 200 bytes (over three times the ring),
     * every byte in order */
    for (size_t i = 0; i < TOTAL; i++)
        want[i] = (unsigned char)(i * 7 + i / 251);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, reader, NULL), 0);
    for (size_t at = 0, n = 1; at < TOTAL; at += n, n = n % 200 + 1) {
        if (n > TOTAL - at)
            n = TOTAL - at;
        np_rtt_write(NULL, (const char *)want + at, n);
    }
    pthread_join(t, NULL);
    assert_int_equal(got, TOTAL);
    assert_int_equal(bad, 0);
    assert_int_equal(np_rtt_pending(), 0);
    assert_int_equal(np_rtt_dropped(), 5);

    /* skip mode (the Flags word, as a firmware built for it has): what
     * fits goes whole, what does not is dropped whole and counted; the
     * ring holds RING - 1 bytes */
    __atomic_store_n(field(UP + 28), 0, __ATOMIC_RELEASE);
    unsigned start = *field(UP + 20);
    np_rtt_write(NULL, "0123456789012345678901234567890123456789", 40);
    assert_int_equal(np_rtt_pending(), 40);
    np_rtt_write(NULL, "abcdefghijklmnopqrstuvwxyz", 24);
    assert_int_equal(np_rtt_pending(), 40);
    assert_int_equal(np_rtt_dropped(), 5 + 24);
    np_rtt_write(NULL, "ABCDEFGHIJKLMNOPQRSTUVW", 23);
    assert_int_equal(np_rtt_pending(), RING - 1);
    np_rtt_write(NULL, "x", 1);
    assert_int_equal(np_rtt_dropped(), 5 + 24 + 1);
    char out[RING];
    for (unsigned i = 0; i < RING - 1; i++)
        out[i] = ring[(start + i) % RING];
    assert_memory_equal(out, "0123456789012345678901234567890123456789ABCDEFGHIJKLMNOPQRSTUVW", RING - 1);
    /* the host reads half: room for that much again */
    __atomic_store_n(field(UP + 24), (start + 32) % RING, __ATOMIC_RELEASE);
    assert_int_equal(np_rtt_pending(), RING - 1 - 32);
    np_rtt_write(NULL, "0123456789012345678901234567890123456789", 32);
    assert_int_equal(np_rtt_pending(), RING - 1);
    assert_int_equal(np_rtt_dropped(), 5 + 24 + 1);
    /* an RdOff out of the ring (a host's mistake) frees nothing */
    __atomic_store_n(field(UP + 24), RING + 3, __ATOMIC_RELEASE);
    np_rtt_write(NULL, "y", 1);
    assert_int_equal(np_rtt_dropped(), 5 + 24 + 1 + 1);
    /* a second init is refused, its line through the ring (full: dropped) */
    assert_int_equal(np_rtt_init(ring, RING, NP_RTT_BLOCK), NP_EALREADY);
    assert_int_equal(np_rtt_dropped(), 5 + 24 + 1 + 1 + strlen("nanoprof: np_rtt_init: the RTT ring is set already\n"));
    np_output_set(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_rtt) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
