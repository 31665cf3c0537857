/* crc32.c - CRC-32 bit by bit and by table over the same bytes: shifts,
 * conditional execution, byte loads (lockstep firmware). */
#include <stdint.h>
#include <stdio.h>

static uint8_t buf[3000];
static uint32_t table[256];

static uint32_t __attribute__((noinline)) crc_bits(const uint8_t *p, unsigned n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static uint32_t __attribute__((noinline)) crc_table(const uint8_t *p, unsigned n)
{
    uint32_t c = 0xffffffffu;
    while (n--)
        c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

int main(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
        table[i] = c;
    }
    uint32_t x = 12345;
    for (unsigned i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    printf("crc32(\"123456789\") = %08lx\n", (unsigned long)crc_bits((const uint8_t *)"123456789", 9));
    for (unsigned n = 1000; n <= sizeof buf; n += 1000)
        printf("%u bytes: bits %08lx table %08lx\n", n, (unsigned long)crc_bits(buf, n),
               (unsigned long)crc_table(buf, n));
    return 0;
}
