/* m4_unicorn.c - runs a firmware of tests/target on a Cortex-M4 under
 * Unicorn 2 with the two clocks QEMU's boards lack or cannot stretch: a
 * DWT cycle counter that moves SCALE cycles an instruction (so that 2^32
 * cycles pass in 2^32 / SCALE instructions) and SysTick's interrupt,
 * taken every (reload + 1) / SCALE instructions while the firmware has
 * SysTick enabled with its interrupt and PRIMASK clear.
 *
 *   m4_unicorn FIRMWARE.elf SCALE
 *
 * Unicorn runs no peripherals: the system control space is plain memory,
 * the DWT counter's reads are answered here, SysTick's writes watched, and
 * its interrupt made by hand: the exception frame pushed, the handler
 * (the vector table's entry 15) called with a return address here, where
 * every register is put back; on the way in and out, CLREX clears the
 * exclusive monitor, as exception entry and return do (ARMv7-M), so that
 * a store-exclusive the interrupt came into fails; an interrupt due inside
 * an IT block is taken after it. Semihosting (bkpt 0xab) does what check.c
 * and startup.c need: open ":tt", write, exit. Prints the firmware's
 * output and "interrupts N", and exits with the firmware's status (1 when
 * it faults or does not end). M4_UNICORN_DUMP=FILE:BYTES dumps the RAM's
 * first BYTES into FILE at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arm_elf.h"

#define MAX_INSNS 200000000ull
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define DWT_CYCCNT 0xE0001004u
/* In a page of its own (the RAM's top is the firmware's stack): where the
 * handler returns (CLREX, then the registers put back at the nop after
 * it), and the way into the handler (CLREX; BX IP) */
#define RETURN_ADDR 0x60000000u
#define RESTORE_ADDR (RETURN_ADDR + 4)
#define ENTRY_ADDR (RETURN_ADDR + 8)

static uint64_t insns, scale, next_irq, irqs;
static uint32_t csr, rvr;
static int in_handler, status = 1, done;

static const int saved_regs[] = { UC_ARM_REG_R0,  UC_ARM_REG_R1,  UC_ARM_REG_R2,  UC_ARM_REG_R3, UC_ARM_REG_R4,
                                  UC_ARM_REG_R5,  UC_ARM_REG_R6,  UC_ARM_REG_R7,  UC_ARM_REG_R8, UC_ARM_REG_R9,
                                  UC_ARM_REG_R10, UC_ARM_REG_R11, UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR,
                                  UC_ARM_REG_XPSR, UC_ARM_REG_PC };
#define NSAVED (sizeof saved_regs / sizeof saved_regs[0])
static uint32_t saved[NSAVED];

static int systick_on(void)
{
    return (csr & 3u) == 3u && rvr;
}

static void arm_systick(void)
{
    next_irq = systick_on() ? insns + ((uint64_t)rvr + 1 + scale - 1) / scale : 0;
}

/* SysTick's interrupt at the instruction at PC: the frame as the core
 * pushes it (r0-r3, r12, lr, pc, xpsr), then the handler (through
 * ENTRY_ADDR, its address in r12, which the frame keeps), returning to
 * RETURN_ADDR. */
static void take_irq(uc_engine *uc, uint32_t pc)
{
    for (size_t i = 0; i < NSAVED; i++)
        saved[i] = reg(uc, saved_regs[i]);
    saved[NSAVED - 1] = pc | 1u;
    uint32_t frame[8] = { saved[0], saved[1], saved[2], saved[3], saved[12], saved[14], pc, saved[15] };
    uint32_t sp = (saved[13] - 32) & ~7u, vec = 0, lr = RETURN_ADDR | 1u;
    uc_mem_write(uc, sp, frame, sizeof frame);
    uc_mem_read(uc, 15 * 4, &vec, 4);
    uc_reg_write(uc, UC_ARM_REG_SP, &sp);
    uc_reg_write(uc, UC_ARM_REG_LR, &lr);
    vec |= 1u; /* Thumb: Unicorn takes a PC without bit 0 as ARM state */
    uint32_t entry = ENTRY_ADDR | 1u;
    uc_reg_write(uc, UC_ARM_REG_R12, &vec);
    uc_reg_write(uc, UC_ARM_REG_PC, &entry);
    in_handler = 1;
    irqs++;
}

static unsigned it_left; /* instructions left in an IT block */

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    (void)user;
    uint32_t pc = (uint32_t)addr;
    if (++insns > MAX_INSNS) {
        fprintf(stderr, "m4_unicorn: no end after %llu instructions\n", (unsigned long long)insns);
        uc_emu_stop(uc);
        return;
    }
    if (in_handler && pc == RESTORE_ADDR) {
        for (size_t i = 0; i < NSAVED; i++)
            uc_reg_write(uc, saved_regs[i], &saved[i]);
        in_handler = 0;
        return;
    }
    /* an IT block's instructions: the interrupt waits for its end (the
     * frame made here does not keep ITSTATE, as the hardware's xPSR does) */
    int in_it = it_left != 0;
    if (in_it)
        it_left--;
    if (!in_handler && next_irq && insns >= next_irq && !in_it) {
        next_irq += ((uint64_t)rvr + 1 + scale - 1) / scale;
        if (!(reg(uc, UC_ARM_REG_PRIMASK) & 1u)) {
            take_irq(uc, pc);
            return;
        }
        /* masked: it stays pending until PRIMASK is cleared (one pending at most) */
        next_irq = insns + 1;
    }
    uint16_t hw = 0;
    if (size == 2 && uc_mem_read(uc, pc, &hw, 2) == UC_ERR_OK && (hw & 0xff00) == 0xbf00 && (hw & 0xf))
        it_left = 4 - (unsigned)__builtin_ctz(hw & 0xfu); /* IT: 1 to 4 instructions after it */
}

static void on_cyccnt(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
    (void)type, (void)size, (void)value, (void)user;
    uint32_t v = (uint32_t)(insns * scale);
    uc_mem_write(uc, addr, &v, 4);
}

static void on_systick_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
    (void)uc, (void)type, (void)size, (void)user;
    if (addr == SYST_CSR)
        csr = (uint32_t)value;
    else if (addr == SYST_RVR)
        rvr = (uint32_t)value & 0xffffffu;
    else
        return; /* the current value: the period restarts with CSR's write */
    arm_systick();
}

/* Semihosting: bkpt 0xab, the operation in r0, its block at r1. */
static void on_intr(uc_engine *uc, uint32_t intno, void *user)
{
    (void)user;
    uint32_t pc = reg(uc, UC_ARM_REG_PC), op = reg(uc, UC_ARM_REG_R0), arg = reg(uc, UC_ARM_REG_R1), r0 = 0;
    uint16_t insn = 0;
    uc_mem_read(uc, pc, &insn, 2);
    if (insn != 0xbeab) {
        uc_mem_read(uc, pc - 2, &insn, 2);
        if (insn != 0xbeab) {
            fprintf(stderr, "m4_unicorn: exception %u at 0x%08x\n", intno, pc);
            uc_emu_stop(uc);
            return;
        }
        pc -= 2;
    }
    uint32_t block[3] = { 0 };
    uc_mem_read(uc, arg, block, sizeof block);
    if (op == 0x01) { /* SYS_OPEN: ":tt" */
        r0 = 1;
    } else if (op == 0x05) { /* SYS_WRITE: handle, buffer, length */
        char *b = malloc(block[2] + 1);
        if (b && uc_mem_read(uc, block[1], b, block[2]) == UC_ERR_OK)
            fwrite(b, 1, block[2], stdout);
        free(b);
    } else if (op == 0x20 || op == 0x18) { /* SYS_EXIT_EXTENDED, SYS_EXIT */
        status = op == 0x20 && block[0] == 0x20026 ? (int)block[1] : arg == 0x20026 ? 0 : 1;
        done = 1;
        uc_emu_stop(uc);
        return;
    } else {
        fprintf(stderr, "m4_unicorn: semihosting operation 0x%x not known\n", op);
        uc_emu_stop(uc);
        return;
    }
    uc_reg_write(uc, UC_ARM_REG_R0, &r0);
    pc += 2;
    pc |= 1u;
    uc_reg_write(uc, UC_ARM_REG_PC, &pc);
}

int main(int argc, char **argv)
{
    if (argc != 3 || (scale = strtoull(argv[2], NULL, 0)) == 0) {
        fprintf(stderr, "usage: %s FIRMWARE.elf SCALE\n", argv[0]);
        return 2;
    }
    int fd;
    GElf_Ehdr eh;
    size_t nph;
    Elf *e = arm_elf_open(argv[1], &fd, &eh, &nph);
    uc_engine *uc;
    if (!e || uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &uc) != UC_ERR_OK) {
        fprintf(stderr, "m4_unicorn: %s: not an ARM firmware, or no engine\n", argv[1]);
        return 2;
    }
    uc_ctl_set_cpu_model(uc, UC_CPU_ARM_CORTEX_M4);
    /* at RETURN_ADDR: clrex; nop; clrex; bx ip */
    static const uint16_t stubs[] = { 0xf3bf, 0x8f2f, 0xbf00, 0xbf00, 0xf3bf, 0x8f2f, 0x4760 };
    if (uc_mem_map(uc, 0x00000000u, 4u << 20, UC_PROT_ALL) || uc_mem_map(uc, 0x20000000u, 4u << 20, UC_PROT_ALL) ||
        uc_mem_map(uc, 0xE0000000u, 1u << 20, UC_PROT_READ | UC_PROT_WRITE) ||
        uc_mem_map(uc, RETURN_ADDR, 4096, UC_PROT_ALL) ||
        uc_mem_write(uc, RETURN_ADDR, stubs, sizeof stubs) || arm_elf_load(uc, fd, e, nph, NULL) != 0) {
        fprintf(stderr, "m4_unicorn: cannot load %s\n", argv[1]);
        return 1;
    }
    uint32_t vec[2];
    uc_mem_read(uc, 0, vec, sizeof vec);
    uc_reg_write(uc, UC_ARM_REG_SP, &vec[0]);
    uc_hook h1, h2, h3, h4;
    uc_hook_add(uc, &h1, UC_HOOK_CODE, (void *)on_code, NULL, 1, 0);
    uc_hook_add(uc, &h2, UC_HOOK_MEM_READ, (void *)on_cyccnt, NULL, DWT_CYCCNT, DWT_CYCCNT + 3);
    uc_hook_add(uc, &h3, UC_HOOK_MEM_WRITE, (void *)on_systick_write, NULL, SYST_CSR, SYST_CSR + 11);
    uc_hook_add(uc, &h4, UC_HOOK_INTR, (void *)on_intr, NULL, 1, 0);
    uc_err err = uc_emu_start(uc, vec[1] | 1u, 0xffffffffu, 0, 0);
    fflush(stdout);
    if (!done) {
        fprintf(stderr, "m4_unicorn: %s at 0x%08x after %llu instructions\n",
                err == UC_ERR_OK ? "stopped" : uc_strerror(err), reg(uc, UC_ARM_REG_PC), (unsigned long long)insns);
        return 1;
    }
    printf("interrupts %llu\n", (unsigned long long)irqs);
    /* M4_UNICORN_DUMP=FILE:BYTES: the RAM's first BYTES at the end into
     * FILE, as a debugger dumps it (tests/port/flight.sh) */
    const char *dump = getenv("M4_UNICORN_DUMP"), *colon = dump ? strrchr(dump, ':') : NULL;
    if (colon) {
        size_t n = strtoul(colon + 1, NULL, 0);
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)(colon - dump), dump);
        uint8_t *ram = n <= (4u << 20) ? malloc(n ? n : 1) : NULL;
        FILE *f = ram ? fopen(path, "wb") : NULL;
        if (!f || uc_mem_read(uc, 0x20000000u, ram, n) != UC_ERR_OK || fwrite(ram, 1, n, f) != n || fclose(f)) {
            fprintf(stderr, "m4_unicorn: cannot dump the RAM into %s\n", path);
            return 1;
        }
        free(ram);
    }
    uc_close(uc);
    elf_end(e);
    close(fd);
    return status;
}
