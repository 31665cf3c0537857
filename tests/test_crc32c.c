/* test_crc32c.c - the trace format's checksum (common/crc32c.h): the known
 * values of CRC-32C, every way it is computed giving the same (the
 * target's nibble table, slicing by 8, the CPU's instruction when it has
 * one), in any pieces, at any alignment; the constants and the worked
 * example of docs/trace-format.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "common/crc32c.h"
#include "common/trace_format.h"

/* The bit-by-bit definition: reflected 0x82F63B78, from and to ~0. */
static uint32_t by_bits(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void known_values(void **state)
{
    (void)state;
    assert_int_equal(np_crc32c("123456789", 9), 0xE3069283u);
    assert_int_equal(np_crc32c("", 0), 0);
    /* RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending */
    uint8_t b[32];
    memset(b, 0, sizeof b);
    assert_int_equal(np_crc32c(b, sizeof b), 0x8A9136AAu);
    memset(b, 0xff, sizeof b);
    assert_int_equal(np_crc32c(b, sizeof b), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    assert_int_equal(np_crc32c(b, sizeof b), 0x46DD794Eu);
    assert_int_equal(np_crc32c_small(NP_CRC32C_INIT, "123456789", 9) ^ NP_CRC32C_XOROUT, 0xE3069283u);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Every path, every length to 300 and some long ones, every alignment,
 * in two pieces cut anywhere: the same as bit by bit. */
static void paths_agree(void **state)
{
    (void)state;
    static uint8_t buf[70000 + 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)next_random();
#ifdef NP_CRC32C_HW
    printf("the CPU's instruction: %s\n", np_crc32c_hw_ok() ? "present, checked" : "absent");
#else
    printf("the CPU's instruction: none on this architecture\n");
#endif
    for (int round = 0; round < 400; round++) {
        size_t n = round < 300 ? (size_t)round : 1000 + next_random() % 69000;
        size_t align = next_random() % 16, cut = n ? next_random() % (n + 1) : 0;
        const uint8_t *p = buf + align;
        uint32_t want = by_bits(p, n);
        assert_int_equal(np_crc32c_small(NP_CRC32C_INIT, p, n) ^ NP_CRC32C_XOROUT, want);
#ifdef NP_CRC32C_HOST
        assert_int_equal(np_crc32c_sliced(NP_CRC32C_INIT, p, n) ^ NP_CRC32C_XOROUT, want);
#endif
#ifdef NP_CRC32C_HW
        if (np_crc32c_hw_ok())
            assert_int_equal(np_crc32c_hw(NP_CRC32C_INIT, p, n) ^ NP_CRC32C_XOROUT, want);
#endif
        assert_int_equal(np_crc32c(p, n), want);
        uint32_t c = np_crc32c_update(NP_CRC32C_INIT, p, cut);
        assert_int_equal(np_crc32c_update(c, p + cut, n - cut) ^ NP_CRC32C_XOROUT, want);
    }
}

/* docs/trace-format.md's numbers. */
static void format_values(void **state)
{
    (void)state;
    uint8_t h[NP_TRACE_HEADER_SIZE];
    np_trace_file_header(h);
    assert_int_equal(np_crc32c(h, 12), NP_TRACE_HEADER_CRC);
    assert_int_equal(NP_TRACE_HEADER_CRC, 0xD0DDB374u);
    assert_true(np_trace_header_sum_ok(h));
    /* the worked example: END at tick 1000, 0 lost, ns_per_tick 1.0 */
    static const uint8_t end[] = { 0x05, 0, 0, 0, 0x18, 0, 0, 0, 0x01, 0x30, 0xa4, 0x1b, 0xe8, 0x03, 0, 0, 0, 0,
                                   0,    0, 0, 0, 0,    0, 0, 0, 0,    0,    0,    0,    0,    0,    0, 0, 0xf0, 0x3f };
    uint8_t c[sizeof end];
    np_trace_chunk_header(c, NP_CHUNK_END, 24);
    np_put_u64(c + 12, 1000);
    np_put_u64(c + 20, 0);
    np_put_u64(c + 28, 0x3ff0000000000000ull);
    np_trace_chunk_seal(c);
    assert_memory_equal(c, end, sizeof end);
    assert_int_equal(np_get_u32(c + 8), 0x1BA43001u);
    assert_true(np_trace_chunk_sum_ok(c, c + 12));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_values),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(format_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
