/* target_insns.c - instructions per event of the runtime on a Cortex-M4,
 * counted on the executed path: runs bench/target/insns.c's firmware
 * under Unicorn 2 (Cortex-M4 model) and counts every instruction executed
 * from the entry of a runtime function the firmware calls (the compiler's
 * hooks, -pg's and its trampoline's, the section markers, np_stats_calc)
 * until it returns to its caller, callees included, per phase of the
 * firmware (bench_phase).
 *
 * Unicorn runs no peripherals: the system control space is plain memory,
 * and the DWT cycle counter is made to move (each read returns 17 more
 * than the last, and it wraps once), so the runtime
 * takes the path a real Cortex-M4 takes, the DWT counter as its clock.
 *
 *   target_insns FIRMWARE.elf
 * prints one line per phase: "phase N insns I calls C" (I in total over
 * the phase, C the calls of measured functions), "trace_bytes B",
 * "ring_bytes B" (bench_trace_bytes[0] and [1]: the bytes of trace the
 * firmware's writer took) and "ring_words_bytes B" ([2]: those of the
 * RING chunks' words), and exits 1 when the
 * firmware says a step failed or does not end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arm_elf.h"

#define PHASES 10
#define MAX_INSNS 50000000ull

/* the runtime functions whose instructions are counted */
static const char *const measured[] = { "__cyg_profile_func_enter", "__cyg_profile_func_exit", "np_section_begin",
                                        "np_section_end", "np_stats_calc", "np_trace_stop", "__gnu_mcount_nc" };
#define NMEASURED (sizeof measured / sizeof measured[0])

static uint32_t fn_addr[NMEASURED], phase_addr, bytes_addr;
static unsigned phase;
static uint32_t ret_to;  /* inside a measured function: where it returns (else 0) */
/* -pg alone's trampoline (NP_PG_EXITS), which a return reaches by a jump
 * and which leaves by its last instruction, a jump: its start and that */
static uint32_t tramp_addr, tramp_last;
static int in_tramp;
static uint64_t insns[PHASES], calls[PHASES], total;
static int failed, done;
static uint32_t cyccnt, cost_reads;

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    (void)size, (void)user;
    uint32_t pc = (uint32_t)addr;
    if (++total > MAX_INSNS) {
        uc_emu_stop(uc);
        return;
    }
    if (in_tramp) {
        insns[phase]++;
        in_tramp = pc != tramp_last;
        return;
    }
    if (ret_to) {
        if (pc == ret_to)
            ret_to = 0;
        else
            insns[phase]++;
        return;
    }
    if (pc == tramp_addr) {
        in_tramp = 1;
        insns[phase]++;
        calls[phase]++;
        return;
    }
    if (pc == phase_addr) {
        uint32_t id = reg(uc, UC_ARM_REG_R0);
        if (id == 99) {
            done = 1;
            uc_emu_stop(uc);
        } else if (id >= 100) {
            fprintf(stderr, "target_insns: the firmware's step %u failed\n", id - 100);
            failed = 1;
            uc_emu_stop(uc);
        } else {
            phase = id < PHASES ? id : 0;
        }
        return;
    }
    for (size_t i = 0; i < NMEASURED; i++)
        if (pc == fn_addr[i]) {
            ret_to = reg(uc, UC_ARM_REG_LR) & ~1u;
            insns[phase]++;
            calls[phase]++;
            return;
        }
}

/* The DWT cycle counter: moves on every read. In function cost's phase
 * (phase 4: an entry's read, then its exit's) it wraps inside the 500th
 * call, which insns.c checks took 17 cycles like the others. */
static void on_cyccnt(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
    (void)type, (void)size, (void)value, (void)user;
    cyccnt += 17;
    if (phase == 4 && ++cost_reads == 999)
        cyccnt = 0xfffffff8u;
    uc_mem_write(uc, addr, &cyccnt, 4);
}

static void on_intr(uc_engine *uc, uint32_t intno, void *user)
{
    (void)user;
    fprintf(stderr, "target_insns: exception %u at 0x%08x (semihosting or a fault)\n", intno,
            reg(uc, UC_ARM_REG_PC));
    failed = 1;
    uc_emu_stop(uc);
}

static int symbols(Elf *e)
{
    Elf_Scn *scn = NULL;
    int found = 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s))
                continue;
            const char *name = elf_strptr(e, sh.sh_link, s.st_name);
            if (!name)
                continue;
            if (GELF_ST_TYPE(s.st_info) == STT_OBJECT && strcmp(name, "bench_trace_bytes") == 0)
                bytes_addr = (uint32_t)s.st_value;
            if (GELF_ST_TYPE(s.st_info) != STT_FUNC)
                continue;
            uint32_t a = (uint32_t)s.st_value & ~1u;
            if (strcmp(name, "bench_phase") == 0)
                phase_addr = a, found++;
            if (strcmp(name, "np_cm_pg_return") == 0 && s.st_size >= 2)
                tramp_addr = a, tramp_last = a + (uint32_t)s.st_size - 2;
            for (size_t k = 0; k < NMEASURED; k++)
                if (strcmp(name, measured[k]) == 0)
                    fn_addr[k] = a;
        }
    }
    return found == 1 && fn_addr[0] && fn_addr[1];
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIRMWARE.elf\n", argv[0]);
        return 2;
    }
    int fd;
    GElf_Ehdr eh;
    size_t nph;
    Elf *e = arm_elf_open(argv[1], &fd, &eh, &nph);
    if (!e || !symbols(e)) {
        fprintf(stderr, "target_insns: %s: not the bench's Cortex-M firmware\n", argv[1]);
        return 2;
    }
    uc_engine *uc;
    if (uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &uc) != UC_ERR_OK) {
        fprintf(stderr, "target_insns: uc_open failed\n");
        return 1;
    }
    uc_ctl_set_cpu_model(uc, UC_CPU_ARM_CORTEX_M4);
    /* QEMU's mps2 boards' memory (boards/cortex_m/mps2.ld), and the
     * system control space as plain memory */
    if (uc_mem_map(uc, 0x00000000u, 4u << 20, UC_PROT_ALL) || uc_mem_map(uc, 0x20000000u, 4u << 20, UC_PROT_ALL) ||
        uc_mem_map(uc, 0xE0000000u, 1u << 20, UC_PROT_READ | UC_PROT_WRITE)) {
        fprintf(stderr, "target_insns: cannot map the board's memory\n");
        return 1;
    }
    if (arm_elf_load(uc, fd, e, nph, NULL) != 0) {
        fprintf(stderr, "target_insns: cannot load %s\n", argv[1]);
        return 1;
    }
    /* the reset: stack and entry from the vector table */
    uint32_t vec[2];
    uc_mem_read(uc, 0, vec, sizeof vec);
    uc_reg_write(uc, UC_ARM_REG_SP, &vec[0]);
    uc_hook h1, h2, h3;
    uc_hook_add(uc, &h1, UC_HOOK_CODE, (void *)on_code, NULL, 1, 0);
    uc_hook_add(uc, &h2, UC_HOOK_MEM_READ, (void *)on_cyccnt, NULL, 0xE0001004u, 0xE0001007u);
    uc_hook_add(uc, &h3, UC_HOOK_INTR, (void *)on_intr, NULL, 1, 0);
    uc_err err = uc_emu_start(uc, vec[1] | 1u, 0xffffffffu, 0, 0);
    if (err != UC_ERR_OK && !done) {
        fprintf(stderr, "target_insns: %s at 0x%08x\n", uc_strerror(err), reg(uc, UC_ARM_REG_PC));
        return 1;
    }
    if (!done || failed) {
        if (!failed)
            fprintf(stderr, "target_insns: the firmware did not end (%llu instructions)\n",
                    (unsigned long long)total);
        return 1;
    }
    for (unsigned p = 1; p < PHASES; p++)
        if (calls[p])
            printf("phase %u insns %llu calls %llu\n", p, (unsigned long long)insns[p], (unsigned long long)calls[p]);
    if (bytes_addr) {
        uint32_t bytes[3] = { 0, 0, 0 };
        uc_mem_read(uc, bytes_addr, bytes, sizeof bytes);
        printf("trace_bytes %u\nring_bytes %u\nring_words_bytes %u\n", bytes[0], bytes[1], bytes[2]);
    }
    uc_close(uc);
    elf_end(e);
    close(fd);
    return 0;
}
