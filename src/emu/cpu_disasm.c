/* cpu_disasm.c - np_cpu_disasm: one guest instruction as text, through
 * Capstone, for error messages (an undefined instruction, a fault).
 *
 * Capstone is loaded when a message first needs it (dlopen of its
 * SONAME, NP_CAPSTONE_SONAME from the build): linked into the command,
 * its tables' 78,000 relocations cost every start of `nanoprof` (so of
 * `nanoprof record`) about 1 ms. Without it the instruction is given in
 * hexadecimal. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <capstone/capstone.h>
#include "cpu_internal.h"

static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
    void (*free)(cs_insn *, size_t);
    cs_err (*close)(csh *);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
    void *h = dlopen(NP_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    *(void **)&cs.open = dlsym(h, "cs_open");
    *(void **)&cs.disasm = dlsym(h, "cs_disasm");
    *(void **)&cs.free = dlsym(h, "cs_free");
    *(void **)&cs.close = dlsym(h, "cs_close");
    if (!cs.open || !cs.disasm || !cs.free || !cs.close)
        cs.open = NULL;
}

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
    pthread_once(&cs_once, cs_load);
    if (cs.open && cs.open(CS_ARCH_ARM, thumb ? CS_MODE_THUMB : CS_MODE_ARM, &h) == CS_ERR_OK) {
        cs_insn *insn;
        if (cs.disasm(h, code, len, addr, 1, &insn) == 1) {
            /* a Thumb-2 instruction is not one of these CPUs': only the
               bl/blx pair may take 4 bytes */
            if (!thumb || insn->size == 2 || (code[1] & 0xf8) == 0xf0) {
                snprintf(buf, size, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str);
                done = true;
            }
            cs.free(insn, 1);
        }
        cs.close(&h);
    }
    if (!done) {
        if (thumb)
            snprintf(buf, size, "0x%04x", (unsigned)np_ld16(code));
        else
            snprintf(buf, size, "0x%08x", (unsigned)np_ld32(code));
    }
    return buf;
}
