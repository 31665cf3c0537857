/* crc32.c - emu_speed firmware: a loop, table-driven CRC-32 over a buffer. */
#include <stdint.h>
#include <stdio.h>

static uint32_t table[256];
static uint8_t buf[65536];

__attribute__((noinline)) static uint32_t crc32(const uint8_t *p, unsigned n, uint32_t c)
{
    c = ~c;
    while (n--)
        c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

int main(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    uint32_t c = 0;
    for (int round = 0; round < 100; round++)
        c = crc32(buf, sizeof buf, c);
    printf("crc32 = %08lx\n", (unsigned long)c);
    return 0;
}
