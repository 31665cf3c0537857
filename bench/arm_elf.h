/* arm_elf.h - what the benchmarks that run ARM firmware under Unicorn
 * share (emu_unicorn.c, target_insns.c): a register's value, the ELF
 * opened and checked, and its loadable segments copied into the engine's
 * memory. */
#ifndef NP_BENCH_ARM_ELF_H
#define NP_BENCH_ARM_ELF_H

#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <unicorn/unicorn.h>
#include <unistd.h>

static uint32_t reg(uc_engine *uc, int r)
{
    uint32_t v = 0;
    uc_reg_read(uc, r, &v);
    return v;
}

/* PATH opened as a 32-bit ARM ELF with program headers: its descriptor in
 * *FD, header in *EH and header count in *NPH; NULL when it is not one. */
static Elf *arm_elf_open(const char *path, int *fd, GElf_Ehdr *eh, size_t *nph)
{
    elf_version(EV_CURRENT);
    *fd = open(path, O_RDONLY);
    Elf *e = *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
    if (e && (!gelf_getehdr(e, eh) || eh->e_machine != EM_ARM || elf_getphdrnum(e, nph) != 0)) {
        elf_end(e);
        e = NULL;
    }
    return e;
}

/* Copies E's loadable segments (at their load addresses) into UC's
 * memory. With TOP, maps their pages first (segments sharing a page map
 * it once), and sets *TOP past the last: the engine's memory is then the
 * ELF's; without, the caller has mapped it. 0, or -1 when a segment
 * cannot be read or written. */
static int arm_elf_load(uc_engine *uc, int fd, Elf *e, size_t nph, uint32_t *top)
{
    const uint32_t page = 4096;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
            continue;
        if (top) {
            uint32_t lo = (uint32_t)ph.p_paddr & ~(page - 1);
            uint32_t hi = ((uint32_t)(ph.p_paddr + ph.p_memsz) + page - 1) & ~(page - 1);
            if (lo < *top)
                lo = *top; /* segments sharing a page */
            if (hi > lo)
                uc_mem_map(uc, lo, hi - lo, UC_PROT_ALL);
            if (hi > *top)
                *top = hi;
        }
        if (!ph.p_filesz)
            continue;
        char *data = malloc(ph.p_filesz);
        int ok = data && pread(fd, data, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
                 uc_mem_write(uc, ph.p_paddr, data, ph.p_filesz) == UC_ERR_OK;
        free(data);
        if (!ok)
            return -1;
    }
    return 0;
}

#endif
