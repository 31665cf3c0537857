/* crc32.c - a benchmark of loads and ALU work with few calls: the
 * table-driven CRC-32 (IEEE, reflected) of a 64 KiB buffer, 16 times
 * over. newlib (rdimon), -O2; runs under qemu-arm too. */
#include <stdint.h>
#include <stdio.h>

#define SIZE 65536
/* make bench builds it with more rounds (bench/CMakeLists.txt) */
#ifndef ROUNDS
#define ROUNDS 16
#endif

static uint32_t table[256];
static uint8_t buf[SIZE];

__attribute__((noipa)) static void crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

__attribute__((noipa)) static uint32_t crc32(uint32_t crc, const uint8_t *p, uint32_t n)
{
    crc = ~crc;
    while (n--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int main(void)
{
    crc32_init();
    for (uint32_t i = 0; i < SIZE; i++)
        buf[i] = (uint8_t)(i * 31 + (i >> 8));
    uint32_t crc = 0;
    for (int r = 0; r < ROUNDS; r++)
        crc = crc32(crc, buf, SIZE);
    printf("crc32 = %08lx\n", (unsigned long)crc);
    return 0;
}
