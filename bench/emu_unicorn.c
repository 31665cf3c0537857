/* emu_unicorn.c - runs semihosting ARM firmware under Unicorn 2 with no
 * hook on instructions or blocks: the peer `make bench` times beside
 * `nanoprof emu` on the same ELF (bench/emu.sh). With --cortex-m4 the
 * ELF is a Cortex-M4 one started at its entry (Unicorn has no vector
 * table boot) and semihosting is `bkpt 0xab`; --block-hook adds a hook
 * on every translation block that counts them, the least a profiler
 * built on Unicorn pays.
 *
 * Only what the bench firmware's newlib start-up and output need is
 * answered (console open, write, heap info, command line, exit); the
 * program's output goes to stdout as under qemu-arm, and the time spent
 * in uc_emu_start to stderr as "seconds S". */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "arm_elf.h"

#define RAM_SIZE (16u << 20)

static int exit_code;

static uint32_t word(uc_engine *uc, uint32_t addr)
{
    uint32_t v = 0;
    uc_mem_read(uc, addr, &v, 4);
    return v;
}

static uint32_t ram_base;
static bool cortex_m, stopped;
static uint64_t blocks;

static void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    (void)uc, (void)addr, (void)size, (void)user;
    blocks++;
}

/* The semihosting calls (SVC 0x123456 / 0xab): operation r0, block r1. */
static void on_intr(uc_engine *uc, uint32_t intno, void *user)
{
    (void)user;
    if (intno != 2 && intno != 7)
        return;
    uint32_t op = reg(uc, UC_ARM_REG_R0), arg = reg(uc, UC_ARM_REG_R1), r0 = 0;
    char buf[4096];
    switch (op) {
    case 0x01: /* SYS_OPEN: only the console */
        r0 = 1;
        break;
    case 0x03: /* SYS_WRITEC */
        uc_mem_read(uc, arg, buf, 1);
        fwrite(buf, 1, 1, stdout);
        break;
    case 0x04: /* SYS_WRITE0 */
        for (uint32_t a = arg;; a++) {
            uc_mem_read(uc, a, buf, 1);
            if (!buf[0])
                break;
            fputc(buf[0], stdout);
        }
        break;
    case 0x05: { /* SYS_WRITE: handle, buffer, length; r0 = bytes not written */
        uint32_t p = word(uc, arg + 4), n = word(uc, arg + 8);
        while (n) {
            uint32_t k = n < sizeof buf ? n : (uint32_t)sizeof buf;
            uc_mem_read(uc, p, buf, k);
            fwrite(buf, 1, k, stdout);
            p += k;
            n -= k;
        }
        break;
    }
    case 0x09: /* SYS_ISTTY */
        r0 = 1;
        break;
    case 0x15: { /* SYS_GET_CMDLINE */
        static const char cmd[] = "firmware";
        uc_mem_write(uc, word(uc, arg), cmd, sizeof cmd);
        uint32_t len = sizeof cmd - 1;
        uc_mem_write(uc, arg + 4, &len, 4);
        break;
    }
    case 0x16: { /* SYS_HEAPINFO: heap in the lower half of RAM, stack the upper */
        uint32_t info[4] = { ram_base, ram_base + RAM_SIZE / 2, ram_base + RAM_SIZE, ram_base + RAM_SIZE / 2 };
        uc_mem_write(uc, word(uc, arg), info, sizeof info);
        break;
    }
    case 0x18: /* SYS_EXIT */
        exit_code = arg == 0x20026 ? 0 : 1;
        stopped = true;
        uc_emu_stop(uc);
        break;
    case 0x20: /* SYS_EXIT_EXTENDED */
        exit_code = (int)word(uc, arg + 4);
        stopped = true;
        uc_emu_stop(uc);
        break;
    default: /* close, seek, flen, clock, time, errno: 0 does */
        break;
    }
    uc_reg_write(uc, UC_ARM_REG_R0, &r0);
    if (intno == 7 && cortex_m && !stopped) { /* bkpt: on to the next instruction (a PC write would undo a stop) */
        uint32_t next = (reg(uc, UC_ARM_REG_PC) + 2) | 1;
        uc_reg_write(uc, UC_ARM_REG_PC, &next);
    }
}

int main(int argc, char **argv)
{
    bool block_hook = false;
    while (argc > 2 && argv[1][0] == '-') {
        if (strcmp(argv[1], "--cortex-m4") == 0)
            cortex_m = true;
        else if (strcmp(argv[1], "--block-hook") == 0)
            block_hook = true;
        else
            break;
        argv++;
        argc--;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s [--cortex-m4] [--block-hook] FIRMWARE.elf\n", argv[0]);
        return 2;
    }
    int fd;
    GElf_Ehdr eh;
    size_t nph;
    Elf *e = arm_elf_open(argv[1], &fd, &eh, &nph);
    if (!e) {
        fprintf(stderr, "%s: %s: not 32-bit ARM firmware\n", argv[0], argv[1]);
        return 2;
    }
    uc_engine *uc;
    /* (Unicorn 2.0.1 ignores the model with UC_MODE_MCLASS: Thumb mode
     * and the model give the Cortex-M4, tests/emu/lockstep.c says more) */
    if (uc_open(UC_ARCH_ARM, cortex_m ? UC_MODE_THUMB : UC_MODE_ARM, &uc) != UC_ERR_OK) {
        fprintf(stderr, "%s: uc_open failed\n", argv[0]);
        return 1;
    }
    uc_ctl_set_cpu_model(uc, cortex_m ? UC_CPU_ARM_CORTEX_M4 : UC_CPU_ARM_946);
    uint32_t top = 0;
    if (arm_elf_load(uc, fd, e, nph, &top) != 0) {
        fprintf(stderr, "%s: cannot load %s\n", argv[0], argv[1]);
        return 1;
    }
    ram_base = top; /* newlib's heap starts at the end of .bss: no gap */
    uc_mem_map(uc, ram_base, RAM_SIZE, UC_PROT_ALL);
    uint32_t sp = ram_base + RAM_SIZE;
    uc_reg_write(uc, UC_ARM_REG_SP, &sp);
    uc_hook hh;
    uc_hook_add(uc, &hh, UC_HOOK_INTR, (void *)on_intr, NULL, 1, 0);
    uc_hook hb;
    if (block_hook)
        uc_hook_add(uc, &hb, UC_HOOK_BLOCK, (void *)on_block, NULL, 1, 0);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a minute at most: a firmware that never exits fails the bench, it does not hang it */
    uc_err err = uc_emu_start(uc, eh.e_entry | (cortex_m ? 1u : 0u), 0xffffffffu, 60u * 1000000u, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fflush(stdout);
    if (err == UC_ERR_OK && !stopped) {
        fprintf(stderr, "%s: still running after 60 s, at 0x%08x\n", argv[0], reg(uc, UC_ARM_REG_PC));
        return 1;
    }
    if (err != UC_ERR_OK) {
        fprintf(stderr, "%s: %s at 0x%08x\n", argv[0], uc_strerror(err), reg(uc, UC_ARM_REG_PC));
        return 1;
    }
    if (block_hook)
        fprintf(stderr, "blocks %llu\n", (unsigned long long)blocks);
    fprintf(stderr, "seconds %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    uc_close(uc);
    elf_end(e);
    close(fd);
    return exit_code;
}
