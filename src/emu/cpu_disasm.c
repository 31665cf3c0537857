/* cpu_disasm.c - np_cpu_disasm: one guest instruction as text, through
 * Capstone (decode.h), for error messages (an undefined instruction, a
 * fault). Without Capstone the instruction is given in hexadecimal. */
#include <stdio.h>
#include "cpu_internal.h"
#include "decode.h"

const char *np_cpu_disasm(struct np_cpu *cpu, uint32_t addr, bool thumb, char *buf, size_t size)
{
    uint8_t code[4];
    size_t len = 0;
    if (!size)
        return buf;
    buf[0] = 0;
    /* up to 4 bytes: a Thumb bl pair is one instruction to Capstone */
    for (unsigned n = thumb ? 2 : 4; n <= 4; n += 2) {
        const uint8_t *p = np_cpu_mem(cpu, addr, n);
        if (!p)
            break;
        memcpy(code, p, n);
        len = n;
    }
    if (!len) {
        snprintf(buf, size, "(not in memory)");
        return buf;
    }
    bool done = np_decode_text(code, len, addr, thumb, false, buf, size) != NULL;
    if (!done) {
        if (thumb)
            snprintf(buf, size, "0x%04x", (unsigned)np_ld16(code));
        else
            snprintf(buf, size, "0x%08x", (unsigned)np_ld32(code));
    }
    return buf;
}
