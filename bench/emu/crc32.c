/* crc32.c - loop-heavy firmware for the emulator's speed (bench/emu.sh):
 * a table-driven CRC-32 over a 64 KiB buffer, ROUNDS times, one call per
 * round. Built for ARM and Thumb (rdimon) and for x86-64 (callgrind). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE 65536

static uint32_t table[256];
static uint8_t buf[SIZE];

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    make_table();
    for (uint32_t i = 0; i < SIZE; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 24);
    uint32_t crc = 0;
    for (int r = 0; r < rounds; r++)
        crc = crc32(crc, buf, SIZE);
    printf("crc32 x%d = %08lx\n", rounds, (unsigned long)crc);
    return 0;
}
