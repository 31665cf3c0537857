/* cpu_disasm.c - np_cpu_disasm: one guest instruction as text, through
 * Capstone, for error messages (an undefined instruction, a fault). */
#include <stdio.h>
#include <capstone/capstone.h>
#include "cpu_internal.h"

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
    csh h;
    bool done = false;
    if (cs_open(CS_ARCH_ARM, thumb ? CS_MODE_THUMB : CS_MODE_ARM, &h) == CS_ERR_OK) {
        cs_insn *insn;
        if (cs_disasm(h, code, len, addr, 1, &insn) == 1) {
            /* a Thumb-2 instruction is not one of these CPUs': only the
               bl/blx pair may take 4 bytes */
            if (!thumb || insn->size == 2 || (code[1] & 0xf8) == 0xf0) {
                snprintf(buf, size, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str);
                done = true;
            }
            cs_free(insn, 1);
        }
        cs_close(&h);
    }
    if (!done) {
        if (thumb)
            snprintf(buf, size, "0x%04x", (unsigned)np_ld16(code));
        else
            snprintf(buf, size, "0x%08x", (unsigned)np_ld32(code));
    }
    return buf;
}
