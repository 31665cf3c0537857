/* test_emu_cpu.c - the ARM interpreter (src/emu/cpu.h) on the instruction
 * sequences of tests/emu/snippets.S, assembled and linked at build time:
 * exact registers, flags and memory; exact instruction and cycle counts on
 * both CPU models; the branch hook's records for the call and return
 * idioms; exceptions, IRQ entry and return, mode banking; faults,
 * undefined instructions, self-modifying code; and the firmware loader
 * (src/emu/image.h) on good and bad files. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "cpu.h"
#include "image.h"

#define END_ARM 0xe7f000f0u
#define END_THUMB 0xde00u
#define SCRATCH_OFF 0x1000u /* r10's scratch RAM, from the RAM region's start */

static struct np_image img;

/* ---- symbols of the snippets ---- */

static uint32_t sym(const char *name)
{
    int fd = open(SNIPPETS_ELF, O_RDONLY);
    assert_true(fd >= 0);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    uint32_t value = 0;
    bool found = false;
    Elf_Scn *scn = NULL;
    while (!found && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        if (sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            gelf_getsym(d, (int)i, &s);
            if (!strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name)) {
                value = (uint32_t)s.st_value;
                found = true;
                break;
            }
        }
    }
    elf_end(elf);
    close(fd);
    if (!found)
        fail_msg("no symbol %s in the snippets", name);
    return value;
}

/* ---- a CPU over a fresh copy of the snippets' memory ---- */

struct rig {
    struct np_cpu cpu;
    struct np_mem_region mem[NP_CPU_MAX_REGIONS];
    struct np_branch rec[64];
    unsigned nrec;
    int svc_result, bkpt_result;
    unsigned nsvc, nbkpt;
    uint32_t svc_imm, bkpt_imm;
    uint64_t svc_insns;
    bool clear_irq;   /* the branch hook lowers irq_line on an IRQ entry */
    int halt_kind;    /* the branch hook halts the CPU at a branch of this kind (-1: never) */
    unsigned ntimer;
};

static void on_branch(void *ctx, struct np_cpu *cpu, const struct np_branch *b)
{
    struct rig *r = ctx;
    if (r->nrec < 64)
        r->rec[r->nrec++] = *b;
    if (r->clear_irq && b->kind == NP_BR_EXCEPTION && b->vector == NP_VEC_IRQ)
        cpu->irq_line = false;
    if (b->kind == r->halt_kind)
        np_cpu_halt(cpu);
}

static int on_svc(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    struct rig *r = ctx;
    r->nsvc++;
    r->svc_imm = imm;
    r->svc_insns = cpu->insns;
    return r->svc_result;
}

static int on_bkpt(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    struct rig *r = ctx;
    (void)cpu;
    r->nbkpt++;
    r->bkpt_imm = imm;
    return r->bkpt_result;
}

static void on_timer(void *ctx, struct np_cpu *cpu)
{
    struct rig *r = ctx;
    r->ntimer++;
    cpu->timer_at = UINT64_MAX;
    cpu->irq_line = true;
}

static struct rig *rig_new(enum np_cpu_model model, unsigned n_wait, unsigned s_wait)
{
    struct rig *r = calloc(1, sizeof *r);
    r->halt_kind = -1;
    for (unsigned i = 0; i < img.nmem; i++) {
        r->mem[i] = img.mem[i];
        r->mem[i].data = malloc(img.mem[i].size);
        memcpy(r->mem[i].data, img.mem[i].data, img.mem[i].size);
    }
    struct np_cpu_timing timing = { n_wait, s_wait };
    struct np_cpu_hooks hooks = { .ctx = r, .branch = on_branch, .svc = on_svc, .bkpt = on_bkpt };
    assert_int_equal(np_cpu_init(&r->cpu, model, r->mem, img.nmem, &timing, &hooks), 0);
    r->cpu.r[13] = img.sp;
    r->cpu.r[10] = img.ram_base + SCRATCH_OFF;
    return r;
}

static void rig_free(struct rig *r)
{
    np_cpu_free(&r->cpu);
    for (unsigned i = 0; i < img.nmem; i++)
        free(r->mem[i].data);
    free(r);
}

static uint8_t *ram(struct rig *r, uint32_t addr)
{
    uint8_t *p = np_cpu_mem(&r->cpu, addr, 4);
    assert_non_null(p);
    return p;
}

static uint32_t rd32(struct rig *r, uint32_t addr)
{
    uint32_t v;
    memcpy(&v, ram(r, addr), 4);
    return v;
}

static void wr32(struct rig *r, uint32_t addr, uint32_t v)
{
    memcpy(ram(r, addr), &v, 4);
    np_cpu_wrote(&r->cpu, addr, 4);
}

/* Runs from NAME (a Thumb symbol's bit 0 selects Thumb) to its END. */
static void run_to_end(struct rig *r, const char *name)
{
    np_cpu_set_pc(&r->cpu, sym(name));
    enum np_cpu_stop stop = np_cpu_run(&r->cpu, 10000);
    if (stop != NP_STOP_UNDEFINED)
        fail_msg("%s: stopped with %d at 0x%x", name, (int)stop, r->cpu.r[15]);
    uint32_t pc = r->cpu.r[15];
    if (r->cpu.cpsr & NP_CPSR_T)
        assert_int_equal(rd32(r, pc) & 0xffff, END_THUMB);
    else
        assert_int_equal(rd32(r, pc), END_ARM);
}

#define NZCV(cpu) ((cpu).cpsr >> 28)
#define MODELS for (int m = NP_CPU_ARM7TDMI; m <= NP_CPU_ARM946ES; m++)

static void expect_branch(const struct rig *r, unsigned i, unsigned kind, uint32_t from, uint32_t to, unsigned reg,
                          unsigned flags)
{
    if (i >= r->nrec)
        fail_msg("branch %u not told (%u told)", i, r->nrec);
    const struct np_branch *b = &r->rec[i];
    if (b->kind != kind || b->from != from || b->to != to || b->reg != reg || b->flags != flags)
        fail_msg("branch %u: kind %u from 0x%x to 0x%x reg %u flags 0x%x; expected kind %u from 0x%x to 0x%x "
                 "reg %u flags 0x%x",
                 i, b->kind, b->from, b->to, b->reg, b->flags, kind, from, to, reg, flags);
}

/* ---- data processing ---- */

static void dp_results(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_dp");
        static const uint32_t want[13] = { 0xf, 0xffffffff, 0xff, 0xffffffff, 0xf1, 0xf000000f, 0xf0f,
                                           0x00f, 0xffffff00, 0xf, 0xf, 3, 0x78 };
        for (int i = 0; i < 13; i++)
            assert_int_equal(r->cpu.r[i], want[i]);
        assert_int_equal(r->cpu.cpsr, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F);
        assert_int_equal(r->cpu.insns, 13);
        /* one register-specified shift: +1 I cycle on the ARM7TDMI, one
           more cycle on the ARM9E-S */
        assert_int_equal(r->cpu.cycles, 14);
        rig_free(r);
    }
}

static void dp_flags_each_step(void **state)
{
    (void)state;
    static const uint8_t want[21] = { 4, 8, 6, 10, 10, 3, 0, 8, 8, 8, 6, 6, 8, 10, 10, 10, 4, 8, 0, 2, 10 };
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        np_cpu_set_pc(&r->cpu, sym("t_flags"));
        for (int i = 0; i < 21; i++) {
            assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
            if (NZCV(r->cpu) != want[i])
                fail_msg("step %d: NZCV %x, expected %x", i, NZCV(r->cpu), want[i]);
        }
        static const uint32_t regs[13] = { 0, 0xffffffff, 0, 0xfffffffe, 0x80000000, 0x7fffffff, 1,
                                           0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 33, 0xf0000000 };
        for (int i = 0; i < 13; i++)
            assert_int_equal(r->cpu.r[i], regs[i]);
        assert_int_equal(r->cpu.insns, 21);
        assert_int_equal(r->cpu.cycles, 23);
        assert_int_equal(np_cpu_run(&r->cpu, 5), NP_STOP_UNDEFINED);
        assert_int_equal(r->cpu.insns, 21);
        rig_free(r);
    }
}

static void dp_conditions(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_cond");
        static const uint32_t want[12] = { 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0 };
        for (int i = 0; i < 12; i++)
            if (i != 10)
                assert_int_equal(r->cpu.r[i], want[i]);
        assert_int_equal(r->cpu.r[10], img.ram_base + SCRATCH_OFF); /* addmi skipped */
        assert_int_equal(r->cpu.insns, 13);
        assert_int_equal(r->cpu.cycles, 13);
        rig_free(r);
        /* instructions that cost more when they run cost 1S skipped */
        r = rig_new(m, 0, 0);
        run_to_end(r, "t_cond_fail");
        assert_int_equal(r->cpu.insns, 6);
        assert_int_equal(r->cpu.cycles, 6);
        assert_int_equal(r->nrec, 0);
        rig_free(r);
        /* run or skipped, each is one S cycle (1 + s_wait) */
        r = rig_new(m, 3, 1);
        run_to_end(r, "t_cond");
        assert_int_equal(r->cpu.cycles, 26);
        rig_free(r);
    }
}

static void dp_pc_operands(void **state)
{
    (void)state;
    uint32_t t = sym("t_pcops");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_pcops");
        assert_int_equal(r->cpu.r[0], t + 12);
        assert_int_equal(r->cpu.r[1], t + 8 - 4 + 4);
        assert_int_equal(r->cpu.r[2], t + 16);
        assert_int_equal(r->cpu.r[3], 2 * t + 16 + 20);
        assert_int_equal(r->cpu.r[5], t + 28 + 4);
        assert_int_equal(r->cpu.r[6], 0xe7f000f0); /* [pc - 4]: the word after it */
        rig_free(r);
    }
}

/* ---- multiplies ---- */

static void multiplies(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        r->cpu.cpsr |= NP_CPSR_C | NP_CPSR_V;
        run_to_end(r, "t_mul");
        assert_int_equal(r->cpu.r[2], 0x7f6e5d48);
        assert_int_equal(r->cpu.r[3], 0x123456a9);
        assert_int_equal(r->cpu.r[4], 0x1df4d840);
        assert_int_equal(r->cpu.r[5], 0x014b66dc);
        assert_int_equal(r->cpu.r[7], 0xedcba9b2);
        assert_int_equal(r->cpu.r[8], 0x00000006);
        assert_int_equal(r->cpu.r[9], 1);
        /* muls: N and Z from the result, C and V as they were */
        assert_int_equal(NZCV(r->cpu), 3);
        assert_int_equal(r->cpu.insns, 10);
        /* ARM7TDMI: mov 1 (ldr =7), ldr 1S+1N+1I, mul 1S+1I (m 1), mla
           1S+2I, umull 1S+5I (m 4), mvn 1, smull 1S+5I, smlal 1S+3I, umlal
           1S+3I, muls 1S+1I (m 1 for -1); ARM9E-S: mov 1, ldr 1 + 1 (used
           next), mul 2, mla 2, the long ones 3, mvn 1, muls 4 */
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 32 : 24);
        rig_free(r);
    }
}

/* ---- loads and stores ---- */

static uint8_t pattern(unsigned i) { return (uint8_t)(0x80 + i * 0x13); }

static uint32_t pat_word(unsigned off)
{
    return pattern(off) | pattern(off + 1) << 8 | pattern(off + 2) << 16 | (uint32_t)pattern(off + 3) << 24;
}

static uint32_t ror32(uint32_t v, unsigned n) { return n ? (v >> n) | (v << (32 - n)) : v; }

static void fill_pattern(struct rig *r, uint32_t base)
{
    for (unsigned i = 0; i < 64; i++)
        ram(r, base + i)[0] = pattern(i);
    np_cpu_wrote(&r->cpu, base, 64);
}

static void loads_stores(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t b = r->cpu.r[10];
        fill_pattern(r, b);
        r->cpu.r[11] = 0xdead;
        run_to_end(r, "t_ls");
        assert_int_equal(r->cpu.r[0], pat_word(0));
        assert_int_equal(r->cpu.r[1], ror32(pat_word(0), 8));
        assert_int_equal(r->cpu.r[2], pattern(5));
        assert_int_equal(r->cpu.r[3], pattern(4) | pattern(5) << 8);
        assert_int_equal(r->cpu.r[4], (uint32_t)(int32_t)(int8_t)pattern(5));
        assert_int_equal(r->cpu.r[5], (uint32_t)(int32_t)(int16_t)(pattern(10) | pattern(11) << 8));
        assert_int_equal(r->cpu.r[6], ror32(pat_word(4), 16));
        assert_int_equal(r->cpu.r[7], ror32(pat_word(8), 16));
        uint32_t w20 = (pat_word(0) & 0xffff0000u) | pattern(4) | pattern(5) << 8;
        assert_int_equal(rd32(r, b + 20), w20);
        assert_int_equal(r->cpu.r[8], w20);
        assert_int_equal(ram(r, b + 17)[0], pattern(5));
        uint32_t w16 = pattern(16) | pattern(5) << 8 | pattern(18) << 16 | (uint32_t)pattern(19) << 24;
        assert_int_equal(r->cpu.r[11], ror32(w16, 8));
        assert_int_equal(r->cpu.r[10], b + 16);
        assert_int_equal(r->cpu.insns, 14);
        /* ARM7TDMI: 10 loads 1S+1N+1I, 3 stores 2N, mov 1S; ARM9E-S: 1 each,
           +1 for the two scaled offsets */
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 37 : 16);
        rig_free(r);

        /* with wait states (2 per N, 1 per S): loads 1S+1N+1I, stores 2N,
           mov 1S; on the ARM946E-S, the same waits over its core cycles */
        r = rig_new(m, 2, 1);
        fill_pattern(r, r->cpu.r[10]);
        run_to_end(r, "t_ls");
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 10 * (2 + 3 + 1) + 3 * (2 * 3) + 2
                                                             : 16 + 10 * (1 + 2) + 3 * (2 * 2) + 1);
        rig_free(r);
    }
}

static void loads_stores_rare_forms(void **state)
{
    (void)state;
    uint32_t t = sym("t_ls_misc");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t b = r->cpu.r[10] + 0x200;
        r->cpu.r[10] = b;
        fill_pattern(r, b - 0x100);
        fill_pattern(r, b);
        fill_pattern(r, b + 0x100);
        run_to_end(r, "t_ls_misc");
        assert_int_equal(r->cpu.r[1], pat_word(4));             /* [b, 8 lsr #1] */
        assert_int_equal(r->cpu.r[2], ror32(pat_word(0), 16));  /* [b, 8 asr #2]! */
        assert_int_equal(rd32(r, b), r->cpu.r[2]);              /* aligned down */
        uint32_t h = pattern(0) | pattern(1) << 8;
        assert_int_equal(r->cpu.r[4], h);
        assert_int_equal(r->cpu.r[5], (uint32_t)(int32_t)(int16_t)h);
        assert_int_equal(rd32(r, b - 0x100), pat_word(0));
        assert_int_equal(r->cpu.r[10], b);
        assert_int_equal(rd32(r, b + 8), t + 32 + 8);
        assert_int_equal(r->cpu.insns, 9);
        rig_free(r);
    }
}

static void block_transfers(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t b = r->cpu.r[10] + 0x100;
        r->cpu.r[10] = b;
        r->cpu.r[11] = 0x1111;
        run_to_end(r, "t_lsm");
        static const uint32_t want[10] = { 3, 4, 3, 3, 1, 2, 3, 3, 3, 3 };
        for (int i = 0; i < 10; i++)
            assert_int_equal(r->cpu.r[i], want[i]);
        assert_int_equal(r->cpu.r[10], b + 16);
        assert_int_equal(rd32(r, b), 1);
        assert_int_equal(rd32(r, b + 4), 2);
        assert_int_equal(rd32(r, b + 8), b + 8);
        assert_int_equal(rd32(r, b + 12), 0x1111);
        assert_int_equal(rd32(r, b + 16), 4);
        assert_int_equal(r->cpu.insns, 14);
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 42 : 29);
        rig_free(r);

        /* stm with the PC stores its address + 8 (QEMU's choice) */
        r = rig_new(m, 0, 0);
        run_to_end(r, "t_stm_pc");
        assert_int_equal(rd32(r, r->cpu.r[10] + 4), sym("t_stm_pc") + 8);
        rig_free(r);
    }
}

/* the ARM946E-S's load-use interlocks: 1 cycle after a word, 2 after a
   byte or halfword, on ALU operands and store data alike */
static void load_use_interlocks(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_interlock");
        assert_int_equal(r->cpu.insns, 10);
        /* ARM7TDMI: 4 loads 1S+1N+1I, 4 adds 1S, str 2N, ldm 2S+1N+1I;
           ARM9E-S: ldr 1+1, ldrb 1+2, ldrh 1, ldr 1+1 (str data), ldm 2+1,
           the rest 1 */
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 22 : 16);
        rig_free(r);
    }
}

static void swap(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        wr32(r, r->cpu.r[10], 0x11223344);
        run_to_end(r, "t_swp");
        assert_int_equal(r->cpu.r[1], 0x11223344);
        assert_int_equal(r->cpu.r[2], 0x55);
        assert_int_equal(r->cpu.r[3], 0x44);
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 1 + 4 + 4 + 3 : 1 + 2 + 2 + 1);
        rig_free(r);
    }
}

/* ---- modes ---- */

static void mode_banking(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_modes");
        uint32_t start = NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F;
        assert_int_equal(r->cpu.r[1], start);
        assert_int_equal(r->cpu.r[3], 0);
        assert_int_equal(r->cpu.r[4], NP_MODE_USR | NP_CPSR_I | NP_CPSR_F);
        assert_int_equal(r->cpu.r[5], 0xf0000000u | NP_MODE_USR | NP_CPSR_I | NP_CPSR_F);
        assert_int_equal(r->cpu.cpsr, r->cpu.r[5]);
        assert_int_equal(r->cpu.r[13], 0x400);
        assert_int_equal(r->cpu.r[14], 0x500);
        assert_int_equal(r->cpu.bank_r13[np_cpu_bank(NP_MODE_SVC)], 0x100);
        assert_int_equal(r->cpu.bank_r14[np_cpu_bank(NP_MODE_SVC)], 0x200);
        assert_int_equal(r->cpu.bank_r13[np_cpu_bank(NP_MODE_IRQ)], 0x300);
        assert_int_equal(r->cpu.bank_spsr[np_cpu_bank(NP_MODE_IRQ)], start);
        assert_int_equal(r->cpu.spsr, 0);
        rig_free(r);

        r = rig_new(m, 0, 0);
        run_to_end(r, "t_fiq");
        assert_int_equal(r->cpu.r[8], 8);
        assert_int_equal(r->cpu.r[12], 12);
        assert_int_equal(r->cpu.fiq_r8_12[0], 0x88);
        assert_int_equal(r->cpu.fiq_r8_12[4], 0xcc);
        assert_int_equal(r->cpu.bank_r13[np_cpu_bank(NP_MODE_FIQ)], 0xdd);
        assert_int_equal(r->cpu.cpsr & NP_CPSR_MODE, NP_MODE_SVC);
        rig_free(r);

        /* np_cpu_set_mode banks as msr does */
        r = rig_new(m, 0, 0);
        r->cpu.r[13] = 1;
        np_cpu_set_mode(&r->cpu, NP_MODE_IRQ);
        r->cpu.r[13] = 2;
        np_cpu_set_mode(&r->cpu, NP_MODE_SVC);
        assert_int_equal(r->cpu.r[13], 1);
        assert_int_equal(r->cpu.bank_r13[np_cpu_bank(NP_MODE_IRQ)], 2);
        rig_free(r);
    }
}

/* ---- exceptions ---- */

static void swi_exception_and_hook(void **state)
{
    (void)state;
    uint32_t t = sym("t_swi"), v = sym("swi_vec");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_swi");
        assert_int_equal(r->nsvc, 1);
        assert_int_equal(r->svc_imm, 0x42);
        assert_int_equal(r->cpu.r[7], 0x11);
        assert_int_equal(r->cpu.insns, 6);
        assert_int_equal(r->cpu.cpsr & NP_CPSR_MODE, NP_MODE_SVC);
        expect_branch(r, 0, NP_BR_EXCEPTION, t + 4, NP_VEC_SWI, 15, 0);
        assert_int_equal(r->rec[0].vector, NP_VEC_SWI);
        expect_branch(r, 1, NP_BR_B, NP_VEC_SWI, v, 15, 0);
        expect_branch(r, 2, NP_BR_EXC_RETURN, v + 4, t + 8, 14, 0);
        assert_int_equal(r->nrec, 3);
        /* ARM7TDMI: mov 1, swi entry 2S+1N, b 2S+1N, add 1, movs pc 2S+1N, add 1 */
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 1 + 3 + 3 + 1 + 3 + 1 : 1 + 3 + 3 + 1 + 4 + 1);
        rig_free(r);

        /* handled by the hook: no exception, the next instruction runs */
        r = rig_new(m, 0, 0);
        r->svc_result = 1;
        run_to_end(r, "t_swi");
        assert_int_equal(r->cpu.r[7], 0x10);
        assert_int_equal(r->cpu.insns, 3);
        assert_int_equal(r->svc_insns, 2);
        assert_int_equal(r->nrec, 0);
        rig_free(r);
    }
}

static void irq_entry_and_return(void **state)
{
    (void)state;
    uint32_t t = sym("t_irq"), v = sym("irq_vec");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        r->cpu.irq_line = true;
        r->clear_irq = true;
        np_cpu_set_pc(&r->cpu, t);
        /* masked: nothing until msr clears I */
        assert_int_equal(np_cpu_run(&r->cpu, 2), NP_STOP_LIMIT);
        assert_int_equal(r->nrec, 0);
        assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
        /* taken before the next instruction, at the end of that run */
        expect_branch(r, 0, NP_BR_EXCEPTION, t + 12, NP_VEC_IRQ, 15, 0);
        assert_int_equal(r->cpu.cpsr & NP_CPSR_MODE, NP_MODE_IRQ);
        assert_int_equal(r->cpu.r[14], t + 16);
        assert_int_equal(r->cpu.spsr, NP_MODE_SVC | NP_CPSR_F);
        assert_int_equal(r->cpu.r[15], NP_VEC_IRQ);
        assert_int_equal(r->cpu.insns, 3);
        assert_int_equal(np_cpu_run(&r->cpu, 100), NP_STOP_UNDEFINED);
        expect_branch(r, 1, NP_BR_B, NP_VEC_IRQ, v, 15, 0);
        expect_branch(r, 2, NP_BR_EXC_RETURN, v + 4, t + 12, 14, 0);
        assert_int_equal(r->nrec, 3);
        assert_int_equal(r->cpu.r[8], 1);
        assert_int_equal(r->cpu.r[1], 1);
        assert_int_equal(r->cpu.insns, 7);
        assert_int_equal(r->cpu.cpsr, NP_MODE_SVC | NP_CPSR_F);
        rig_free(r);

        /* from Thumb state: LR = next + 4 there too, back to Thumb */
        r = rig_new(m, 0, 0);
        r->clear_irq = true;
        r->cpu.cpsr &= ~NP_CPSR_I;
        uint32_t tt = sym("t_thumb_irq") & ~1u;
        np_cpu_set_pc(&r->cpu, tt | 1);
        assert_int_equal(np_cpu_run(&r->cpu, 2), NP_STOP_LIMIT);
        r->cpu.irq_line = true;
        assert_int_equal(np_cpu_run(&r->cpu, 100), NP_STOP_UNDEFINED);
        expect_branch(r, 0, NP_BR_EXCEPTION, tt + 4, NP_VEC_IRQ, 15, NP_BRF_FROM_THUMB);
        expect_branch(r, 2, NP_BR_EXC_RETURN, v + 4, tt + 4, 14, NP_BRF_THUMB);
        assert_int_equal(r->cpu.r[1], 2);
        assert_true(r->cpu.cpsr & NP_CPSR_T);
        rig_free(r);
    }
}

static void timer_raises_irq(void **state)
{
    (void)state;
    struct rig *r = rig_new(NP_CPU_ARM7TDMI, 0, 0);
    r->cpu.hooks.timer = on_timer;
    r->cpu.timer_at = 0;
    r->clear_irq = true;
    r->cpu.cpsr &= ~NP_CPSR_I;
    run_to_end(r, "t_dp");
    /* the timer fired at the start: an IRQ before the first instruction */
    assert_int_equal(r->ntimer, 1);
    expect_branch(r, 0, NP_BR_EXCEPTION, sym("t_dp"), NP_VEC_IRQ, 15, 0);
    assert_int_equal(r->cpu.r[8], 0xffffff00);
    rig_free(r);
}

static void undefined_instructions(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t t = sym("t_undef");
        np_cpu_set_pc(&r->cpu, t);
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
        assert_int_equal(r->cpu.r[15], t + 4);
        assert_int_equal(r->cpu.insns, 1);
        assert_int_equal(r->cpu.cycles, 1);
        assert_int_equal(r->cpu.cpsr & NP_CPSR_MODE, NP_MODE_SVC);
        char text[64];
        np_cpu_disasm(&r->cpu, t, false, text, sizeof text);
        assert_string_equal(text, "mov r0, #1");
        rig_free(r);

        r = rig_new(m, 0, 0);
        uint32_t tt = sym("t_thumb_undef") & ~1u;
        np_cpu_set_pc(&r->cpu, tt | 1);
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
        assert_int_equal(r->cpu.r[15], tt + 2);
        assert_int_equal(r->cpu.insns, 1);
        rig_free(r);

        /* ARMv5 instructions on the ARM7TDMI */
        if (m == NP_CPU_ARM7TDMI) {
            r = rig_new(m, 0, 0);
            np_cpu_set_pc(&r->cpu, sym("t_v5"));
            assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
            assert_int_equal(r->cpu.r[15], sym("t_v5") + 4); /* clz */
            np_cpu_set_pc(&r->cpu, sym("t_cp15"));
            assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
            assert_int_equal(r->cpu.r[15], sym("t_cp15"));
            /* an ARM bkpt is undefined there, and never goes to the hook */
            r->bkpt_result = 1;
            np_cpu_set_pc(&r->cpu, sym("t_bkpt"));
            assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
            assert_int_equal(r->cpu.r[15], sym("t_bkpt") + 4);
            assert_int_equal(r->nbkpt, 0);
            rig_free(r);
        }
    }
}

/* ---- calls and returns ---- */

static void arm_call_return_idioms(void **state)
{
    (void)state;
    uint32_t t = sym("t_calls");
    uint32_t f_bx = sym("f_bx"), f_mov = sym("f_mov"), f_pop = sym("f_pop"), f_ldr = sym("f_ldr");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_calls");
        expect_branch(r, 0, NP_BR_BL, t, f_bx, 15, 0);
        expect_branch(r, 1, NP_BR_BX, f_bx, t + 4, 14, 0);
        expect_branch(r, 2, NP_BR_BX, t + 12, f_mov, 3, NP_BRF_LINKED);
        expect_branch(r, 3, NP_BR_MOV_PC, f_mov, t + 16, 14, 0);
        expect_branch(r, 4, NP_BR_MOV_PC, t + 24, f_pop, 3, NP_BRF_LINKED);
        expect_branch(r, 5, NP_BR_LDM_PC, f_pop + 4, t + 28, 13, 0);
        expect_branch(r, 6, NP_BR_LDR_PC, t + 36, f_ldr, 15, NP_BRF_LINKED);
        expect_branch(r, 7, NP_BR_LDR_PC, f_ldr + 4, t + 40, 13, 0);
        expect_branch(r, 8, NP_BR_DP_PC, t + 44, t + 56, 15, 0);
        assert_int_equal(r->nrec, 9);
        assert_int_equal(r->cpu.r[13], img.sp);
        rig_free(r);
    }
}

static void arm_v5_calls(void **state)
{
    (void)state;
    uint32_t t = sym("t_calls_v5"), tf_bx = sym("tf_bx") & ~1u, tf_pop = sym("tf_pop") & ~1u;
    struct rig *r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_calls_v5");
    expect_branch(r, 0, NP_BR_BL, t, tf_bx, 15, NP_BRF_THUMB);
    expect_branch(r, 1, NP_BR_BX, tf_bx, t + 4, 14, NP_BRF_FROM_THUMB);
    expect_branch(r, 2, NP_BR_BLX_REG, t + 8, sym("f_bx"), 3, 0);
    expect_branch(r, 3, NP_BR_BX, sym("f_bx"), t + 12, 14, 0);
    expect_branch(r, 4, NP_BR_BLX_REG, t + 16, tf_pop, 3, NP_BRF_THUMB);
    /* pop {pc} interworks on ARMv5: back to ARM state */
    expect_branch(r, 5, NP_BR_LDM_PC, tf_pop + 2, t + 20, 13, NP_BRF_FROM_THUMB);
    assert_int_equal(r->nrec, 6);
    rig_free(r);

    /* ldr pc / pop {pc} to a Thumb address: ARMv5 switches, ARMv4T stays */
    uint32_t tend = sym("tf_end") & ~1u;
    MODELS {
        r = rig_new(m, 0, 0);
        np_cpu_set_pc(&r->cpu, sym("t_ldr_pc_interwork"));
        assert_int_equal(np_cpu_run(&r->cpu, 3), NP_STOP_LIMIT);
        assert_int_equal(r->cpu.insns, 3);
        if (m == NP_CPU_ARM946ES) {
            assert_true(r->cpu.cpsr & NP_CPSR_T);
            assert_int_equal(r->cpu.r[15], tend);
            assert_int_equal(np_cpu_run(&r->cpu, 4), NP_STOP_UNDEFINED);
        } else {
            assert_false(r->cpu.cpsr & NP_CPSR_T);
            assert_int_equal(r->cpu.r[15], tend & ~3u);
        }
        assert_int_equal(r->rec[0].kind, NP_BR_LDR_PC);
        rig_free(r);
    }
}

static void exception_returns(void **state)
{
    (void)state;
    uint32_t t = sym("t_exc_return");
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_exc_return");
        expect_branch(r, 0, NP_BR_EXC_RETURN, t + 12, t + 16, 14, NP_BRF_LINKED);
        expect_branch(r, 1, NP_BR_EXC_RETURN, t + 28, t + 32, 10, 0);
        assert_int_equal(r->cpu.cpsr, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F);
        rig_free(r);
    }
}

/* ldm/stm ^ without the PC: the User bank, conditional or not */
static void user_bank_transfers(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t b = r->cpu.r[10];
        r->cpu.r[13] = 0x55;
        r->cpu.r[14] = 0x77;
        run_to_end(r, "t_user_bank");
        assert_int_equal(r->cpu.bank_r13[0], 0x13);
        assert_int_equal(r->cpu.bank_r14[0], 0x14);
        assert_int_equal(r->cpu.r[13], 0x66);
        assert_int_equal(r->cpu.r[14], 0x77);
        assert_int_equal(rd32(r, b - 8), 0x13);
        assert_int_equal(rd32(r, b - 4), 0x14);
        assert_int_equal(r->cpu.r[0], 0x13);
        assert_int_equal(r->cpu.insns, 8);
        rig_free(r);
    }
}

static void thumb_call_return_idioms(void **state)
{
    (void)state;
    uint32_t t = sym("t_tcalls") & ~1u, tf_bx = sym("tf_bx") & ~1u, tf_pop = sym("tf_pop") & ~1u;
    uint32_t tf_mov = tf_bx + 2;
    const unsigned T = NP_BRF_THUMB | NP_BRF_FROM_THUMB;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_tcalls");
        expect_branch(r, 0, NP_BR_BL, t, tf_bx, 15, T);
        expect_branch(r, 1, NP_BR_BX, tf_bx, t + 4, 14, T);
        expect_branch(r, 2, NP_BR_BX, t + 8, tf_mov, 3, T | NP_BRF_LINKED);
        expect_branch(r, 3, NP_BR_MOV_PC, tf_mov, t + 10, 14, T);
        expect_branch(r, 4, NP_BR_BL, t + 10, tf_pop, 15, T);
        expect_branch(r, 5, NP_BR_LDM_PC, tf_pop + 2, t + 14, 13, T);
        expect_branch(r, 6, NP_BR_B, t + 16, t + 20, 15, T | NP_BRF_COND);
        expect_branch(r, 7, NP_BR_B, t + 22, t + 24, 15, T);
        assert_int_equal(r->nrec, 8);
        /* the bl pairs count two each: 2 + bx (tf_bx) + ldr + mov + bx +
           mov pc (tf_mov) + 2 + push + pop + movs + beq + bne + b */
        assert_int_equal(r->cpu.insns, 15);
        rig_free(r);
    }
}

static void thumb_bl_pair_split(void **state)
{
    (void)state;
    uint32_t t = sym("t_tcalls") & ~1u, tf_bx = sym("tf_bx") & ~1u;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        np_cpu_set_pc(&r->cpu, t | 1);
        /* room for one instruction: the first half alone */
        assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
        assert_int_equal(r->cpu.r[15], t + 2);
        assert_int_equal(r->cpu.insns, 1);
        assert_int_equal(r->cpu.cycles, 1);
        assert_int_equal(r->nrec, 0);
        assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
        assert_int_equal(r->cpu.r[15], tf_bx);
        assert_int_equal(r->cpu.r[14], (t + 4) | 1);
        expect_branch(r, 0, NP_BR_BL, t, tf_bx, 15, NP_BRF_THUMB | NP_BRF_FROM_THUMB);
        assert_int_equal(r->cpu.insns, 2);
        assert_int_equal(r->cpu.cycles, m == NP_CPU_ARM7TDMI ? 4 : 4);
        rig_free(r);
    }
}

static void thumb_v5(void **state)
{
    (void)state;
    uint32_t t = sym("t_thumb_blx") & ~1u, f_bx = sym("f_bx");
    struct rig *r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_thumb_blx");
    expect_branch(r, 0, NP_BR_BL, t, f_bx, 15, NP_BRF_FROM_THUMB);
    expect_branch(r, 1, NP_BR_BX, f_bx, t + 4, 14, NP_BRF_THUMB);
    expect_branch(r, 2, NP_BR_BLX_REG, t + 6, f_bx, 3, NP_BRF_FROM_THUMB);
    expect_branch(r, 3, NP_BR_BX, f_bx, t + 8, 14, NP_BRF_THUMB);
    rig_free(r);

    /* the ARMv4T runs the first half (lr = pc + offset) and stops at the
       second: blx is ARMv5 */
    r = rig_new(NP_CPU_ARM7TDMI, 0, 0);
    np_cpu_set_pc(&r->cpu, t | 1);
    assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_UNDEFINED);
    assert_int_equal(r->cpu.r[15], t + 2);
    assert_int_equal(r->cpu.insns, 1);
    assert_int_equal(r->nrec, 0);
    rig_free(r);
}

static void thumb_to_arm(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t t = sym("t_thumb_to_arm") & ~1u;
        run_to_end(r, "t_thumb_to_arm");
        assert_int_equal(r->cpu.r[0], 42);
        expect_branch(r, 0, NP_BR_BX, t, t + 4, 15, NP_BRF_FROM_THUMB);
        rig_free(r);
    }
}

/* ---- Thumb ---- */

static void thumb_alu(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_thumb_alu");
        assert_int_equal(r->cpu.r[0], 5);
        assert_int_equal(r->cpu.r[1], 3);
        assert_int_equal(r->cpu.r[2], 6);
        assert_int_equal(r->cpu.r[3], 0xffffffff);
        assert_int_equal(r->cpu.r[4], 10);
        /* negs -3, cmn, orrs 6: -1, muls 3: -3, bics 3: -4, mvns: 3 */
        assert_int_equal(r->cpu.r[5], 3);
        assert_int_equal(r->cpu.r[6], 0xfffffffc);
        assert_int_equal(r->cpu.r[7], 0x20000000);
        assert_int_equal(r->cpu.r[8], 8);
        /* cmp r8, r0: 8 - 5 */
        assert_int_equal(NZCV(r->cpu), 2);
        assert_int_equal(r->cpu.insns, 27);
        rig_free(r);

        r = rig_new(m, 0, 0);
        run_to_end(r, "t_thumb_carry");
        /* subs 0 - 1: C clear; adcs r1 = -1 + 0 + 0; sbcs 0 - 0 - 1 */
        assert_int_equal(r->cpu.r[1], 0xffffffff);
        assert_int_equal(r->cpu.r[2], 0xffffffff);
        assert_int_equal(r->cpu.r[3], 0);
        assert_int_equal(r->cpu.r[4], 0xffffffff);
        /* asrs #32 of a negative value: N, C set */
        assert_int_equal(NZCV(r->cpu), 10);
        rig_free(r);
    }
}

static void thumb_loads_stores(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t b = r->cpu.r[10];
        r->cpu.r[1] = b;
        run_to_end(r, "t_thumb_ls");
        assert_int_equal(rd32(r, b + 4), 0x12345678);
        assert_int_equal(r->cpu.r[3], sym("t_thumb_ls_lit"));
        assert_int_equal(r->cpu.r[4], 0x12);
        assert_int_equal(rd32(r, b), 0x12340000u | 0x1200);
        assert_int_equal(r->cpu.r[5], 0x12341200);
        assert_int_equal(r->cpu.r[6], 0x34);
        assert_int_equal(r->cpu.r[7], 0x1234);
        assert_int_equal(r->cpu.r[2], 0x12341200);
        assert_int_equal(rd32(r, img.sp + 4), 0x12341200);
        assert_int_equal(r->cpu.r[13], img.sp - 8);
        rig_free(r);

        r = rig_new(m, 0, 0);
        b = r->cpu.r[10];
        r->cpu.r[1] = b;
        r->cpu.r[14] = 0x77;
        run_to_end(r, "t_thumb_lsm");
        assert_int_equal(rd32(r, b), 1);
        assert_int_equal(rd32(r, b + 8), 3);
        assert_int_equal(rd32(r, img.sp - 4), 0x77);
        assert_int_equal(r->cpu.r[4], 1);
        assert_int_equal(r->cpu.r[5], 2);
        assert_int_equal(r->cpu.r[6], 1);
        assert_int_equal(r->cpu.r[7], 2);
        /* ldmia r1, {r1, r2}: r1 loaded, no write-back */
        assert_int_equal(r->cpu.r[1], 3);
        assert_int_equal(r->cpu.r[2], 0);
        assert_int_equal(r->cpu.r[13], img.sp - 4);
        rig_free(r);
    }
}

static void thumb_swi_bkpt(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        uint32_t t = sym("t_thumb_swi") & ~1u;
        run_to_end(r, "t_thumb_swi");
        assert_int_equal(r->svc_imm, 0x12);
        assert_int_equal(r->cpu.r[7], 0x11);
        expect_branch(r, 0, NP_BR_EXCEPTION, t + 2, NP_VEC_SWI, 15, NP_BRF_FROM_THUMB);
        expect_branch(r, 2, NP_BR_EXC_RETURN, sym("swi_vec") + 4, t + 4, 14, NP_BRF_THUMB);
        rig_free(r);

        /* bkpt 0xab: the hook serves it on either CPU */
        r = rig_new(m, 0, 0);
        r->bkpt_result = 1;
        run_to_end(r, "t_thumb_bkpt");
        assert_int_equal(r->nbkpt, 1);
        assert_int_equal(r->bkpt_imm, 0xab);
        assert_int_equal(r->cpu.r[0], 2);
        rig_free(r);

        /* not served: undefined on the ARM7TDMI, a prefetch abort on the
           ARM946E-S */
        r = rig_new(m, 0, 0);
        t = sym("t_thumb_bkpt") & ~1u;
        np_cpu_set_pc(&r->cpu, t | 1);
        enum np_cpu_stop stop = np_cpu_run(&r->cpu, 3);
        if (m == NP_CPU_ARM7TDMI) {
            assert_int_equal(stop, NP_STOP_UNDEFINED);
            assert_int_equal(r->cpu.r[15], t + 2);
            assert_int_equal(r->cpu.insns, 1);
        } else {
            assert_int_equal(stop, NP_STOP_LIMIT);
            expect_branch(r, 0, NP_BR_EXCEPTION, t + 2, NP_VEC_PABT, 15, NP_BRF_FROM_THUMB);
            assert_int_equal(r->cpu.cpsr & NP_CPSR_MODE, NP_MODE_ABT);
            assert_int_equal(r->cpu.r[14], t + 6);
        }
        rig_free(r);
    }
}

/* ---- ARMv5TE ---- */

static void v5_dsp(void **state)
{
    (void)state;
    struct rig *r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_v5");
    assert_int_equal(r->cpu.r[1], 8);
    assert_int_equal(r->cpu.r[4], 0x7fffffff);
    assert_int_equal(r->cpu.r[5], 0x7fffffd0);
    assert_int_equal(r->cpu.r[7], 0x80000020u);
    assert_int_equal(r->cpu.r[8], 0x7fffffff);
    assert_true(r->cpu.r[9] & NP_CPSR_Q);
    rig_free(r);

    r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_v5_mul");
    assert_int_equal(r->cpu.r[2], (uint32_t)(-32768 * 5));
    assert_int_equal(r->cpu.r[3], 15);
    assert_int_equal(r->cpu.r[4], (uint32_t)(-32768 * -2));
    assert_int_equal(r->cpu.r[5], (uint32_t)-6);
    assert_int_equal(r->cpu.r[7], (uint32_t)(-32768 * 5 + 100));
    assert_int_equal(r->cpu.r[8], (uint32_t)(((int64_t)0x00038000 * 5) >> 16));
    assert_int_equal(r->cpu.r[9], (uint32_t)((((int64_t)0x00038000 * -2) >> 16) + 100));
    assert_int_equal(r->cpu.r[11], 15);
    assert_int_equal(r->cpu.r[12], 1);
    rig_free(r);

    r = rig_new(NP_CPU_ARM946ES, 0, 0);
    uint32_t b = r->cpu.r[10];
    run_to_end(r, "t_ldrd");
    assert_int_equal(rd32(r, b + 8), 0x11111111);
    assert_int_equal(rd32(r, b + 12), 0x22222222);
    assert_int_equal(r->cpu.r[4], 0);
    assert_int_equal(r->cpu.r[6], 0x11111111);
    assert_int_equal(r->cpu.r[7], 0x22222222);
    assert_int_equal(r->cpu.r[10], b);
    rig_free(r);

    /* bkpt: the hook, else a prefetch abort */
    r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_bkpt");
    assert_int_equal(r->nbkpt, 1);
    assert_int_equal(r->bkpt_imm, 0x12);
    assert_int_equal(r->cpu.r[9], 0x11);
    expect_branch(r, 0, NP_BR_EXCEPTION, sym("t_bkpt") + 4, NP_VEC_PABT, 15, 0);
    rig_free(r);

    r = rig_new(NP_CPU_ARM946ES, 0, 0);
    run_to_end(r, "t_cp15");
    assert_int_equal(r->cpu.r[0], 0x41059461);
    assert_int_equal(r->cpu.r[1], 0x0f004006);
    assert_int_equal(r->cpu.r[2], 0x78);
    rig_free(r);
}

/* ---- self-modifying code ---- */

static void self_modifying_code(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        run_to_end(r, "t_smc");
        assert_int_equal(r->cpu.r[0], 17);
        /* a store over the next instruction: the new one runs (as QEMU) */
        assert_int_equal(r->cpu.r[5], 99);
        rig_free(r);

        r = rig_new(m, 0, 0);
        run_to_end(r, "t_copy_run");
        assert_int_equal(r->cpu.r[4], 6);
        rig_free(r);

        /* a host write told with np_cpu_wrote */
        r = rig_new(m, 0, 0);
        uint32_t t = sym("t_dp");
        run_to_end(r, "t_dp");
        wr32(r, t, 0xe3a0002a); /* mov r0, #42 */
        np_cpu_set_pc(&r->cpu, t);
        assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
        assert_int_equal(r->cpu.r[0], 42);
        rig_free(r);
    }
}

/* Thumb code overwritten: a function's first instruction, and the second
   half of a bl pair already run */
static void thumb_self_modifying_code(void **state)
{
    (void)state;
    uint32_t f = sym("tsmc_f") & ~1u, g = sym("tsmc_g") & ~1u, bl = sym("tsmc_bl");
    int32_t off_f = (int32_t)(f - (bl + 4)), off_g = (int32_t)(g - (bl + 4));
    assert_int_equal(off_f >> 12, off_g >> 12); /* one prefix for both */
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        r->cpu.r[5] = 0x3010; /* adds r0, #16 */
        r->cpu.r[6] = f;
        r->cpu.r[3] = 0xf800u | (((uint32_t)off_g >> 1) & 0x7ff);
        r->cpu.r[4] = bl + 2;
        run_to_end(r, "t_thumb_smc");
        assert_int_equal(r->cpu.r[0], 1 + 16 + 64);
        rig_free(r);
    }
}

/* the branch hook halts: the run ends after that branch */
static void halt_from_branch_hook(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        r->halt_kind = NP_BR_BX;
        np_cpu_set_pc(&r->cpu, sym("t_calls"));
        assert_int_equal(np_cpu_run(&r->cpu, 100), NP_STOP_HALT);
        assert_int_equal(r->cpu.r[15], sym("t_calls") + 4);
        assert_int_equal(r->cpu.insns, 2);
        assert_int_equal(r->nrec, 2);
        /* the next run goes on from there */
        r->halt_kind = -1;
        assert_int_equal(np_cpu_run(&r->cpu, 1), NP_STOP_LIMIT);
        assert_int_equal(r->cpu.r[15], sym("t_calls") + 8);
        rig_free(r);
    }
}

/* the timer checked at taken branches: the IRQ comes at a branch target */
static void timer_at_a_branch(void **state)
{
    (void)state;
    struct rig *r = rig_new(NP_CPU_ARM7TDMI, 0, 0);
    r->cpu.hooks.timer = on_timer;
    r->cpu.timer_at = 5;
    r->clear_irq = true;
    r->cpu.cpsr &= ~NP_CPSR_I;
    run_to_end(r, "t_calls");
    assert_int_equal(r->ntimer, 1);
    unsigned i = 0;
    while (i < r->nrec && r->rec[i].kind != NP_BR_EXCEPTION)
        i++;
    assert_true(i > 0 && i < r->nrec);
    assert_int_equal(r->rec[i].from, r->rec[i - 1].to);
    assert_int_equal(r->rec[i].vector, NP_VEC_IRQ);
    assert_int_equal(r->cpu.r[8], 1);
    rig_free(r);
}

/* ---- faults ---- */

static void faults(void **state)
{
    (void)state;
    MODELS {
        struct rig *r = rig_new(m, 0, 0);
        r->cpu.r[10] = 0xf0000000;
        np_cpu_set_pc(&r->cpu, sym("t_fault_read"));
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_READ);
        assert_int_equal(r->cpu.fault_addr, 0xf0000004);
        assert_int_equal(r->cpu.r[15], sym("t_fault_read") + 4);
        assert_int_equal(r->cpu.r[10], 0xf0000000);
        assert_int_equal(r->cpu.r[0], 7);
        assert_int_equal(r->cpu.insns, 1);
        assert_int_equal(r->cpu.cycles, 1);
        rig_free(r);

        /* a block that leaves memory half-way: nothing loaded */
        r = rig_new(m, 0, 0);
        uint32_t top = img.ram_base + img.ram_size;
        r->cpu.r[10] = top - 8;
        np_cpu_set_pc(&r->cpu, sym("t_fault_ldm"));
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_READ);
        assert_int_equal(r->cpu.fault_addr, top);
        assert_int_equal(r->cpu.r[0], 0);
        assert_int_equal(r->cpu.r[10], top - 8);
        assert_int_equal(r->cpu.insns, 0);
        assert_int_equal(r->cpu.cycles, 0);
        rig_free(r);

        r = rig_new(m, 0, 0);
        r->cpu.r[10] = 0x8;
        np_cpu_set_pc(&r->cpu, sym("t_fault_write"));
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_WRITE);
        assert_int_equal(r->cpu.fault_addr, 0xfffffff8);
        assert_int_equal(r->cpu.r[10], 0x8);
        rig_free(r);

        r = rig_new(m, 0, 0);
        r->cpu.r[10] = 0xf0000000;
        np_cpu_set_pc(&r->cpu, sym("t_fault_fetch"));
        assert_int_equal(np_cpu_run(&r->cpu, 10), NP_STOP_FETCH);
        assert_int_equal(r->cpu.fault_addr, 0xf0000000);
        assert_int_equal(r->cpu.r[15], 0xf0000000);
        assert_int_equal(r->cpu.insns, 1);
        rig_free(r);
    }
}

/* no vectors mapped: an exception fetches outside memory */
static void exception_without_vectors(void **state)
{
    (void)state;
    static uint8_t code[64];
    uint32_t prog[] = { 0xef000001 /* swi 1 */ };
    memcpy(code, prog, sizeof prog);
    struct np_mem_region mem = { 0x1000, sizeof code, code };
    struct np_cpu cpu;
    assert_int_equal(np_cpu_init(&cpu, NP_CPU_ARM7TDMI, &mem, 1, NULL, NULL), 0);
    np_cpu_set_pc(&cpu, 0x1000);
    assert_int_equal(np_cpu_run(&cpu, 10), NP_STOP_FETCH);
    assert_int_equal(cpu.fault_addr, NP_VEC_SWI);
    assert_int_equal(cpu.cpsr & NP_CPSR_MODE, NP_MODE_SVC);
    assert_int_equal(cpu.r[14], 0x1004);
    np_cpu_free(&cpu);
}

static void init_checks(void **state)
{
    (void)state;
    static uint8_t a[16], b[16];
    struct np_mem_region overlap[2] = { { 0x1000, 16, a }, { 0x1008, 16, b } };
    struct np_cpu cpu;
    assert_int_equal(np_cpu_init(&cpu, NP_CPU_ARM7TDMI, overlap, 2, NULL, NULL), -1);
    struct np_mem_region many[NP_CPU_MAX_REGIONS + 1];
    assert_int_equal(np_cpu_init(&cpu, NP_CPU_ARM7TDMI, many, NP_CPU_MAX_REGIONS + 1, NULL, NULL), -1);
    assert_int_equal(np_cpu_init(&cpu, NP_CPU_ARM946ES, overlap, 1, NULL, NULL), 0);
    assert_int_equal(cpu.cpsr, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F);
    assert_int_equal(cpu.r[15], 0);
    assert_int_equal(np_cpu_run(&cpu, 0), NP_STOP_LIMIT);
    assert_int_equal(np_cpu_run(&cpu, 1), NP_STOP_FETCH);
    np_cpu_free(&cpu);
    assert_string_equal(np_cpu_model_name(NP_CPU_ARM7TDMI), "ARM7TDMI");
    assert_string_equal(np_cpu_model_name(NP_CPU_ARM946ES), "ARM946E-S");
    assert_int_equal(np_cpu_model_parse("arm7tdmi"), NP_CPU_ARM7TDMI);
    assert_int_equal(np_cpu_model_parse("arm946e-s"), NP_CPU_ARM946ES);
    assert_int_equal(np_cpu_model_parse("cortex-m3"), NP_CPU_CORTEX_M3);
    assert_int_equal(np_cpu_model_parse("Cortex-M0+"), NP_CPU_CORTEX_M0);
    assert_string_equal(np_cpu_model_name(NP_CPU_CORTEX_M33), "Cortex-M33");
    assert_int_equal(np_cpu_model_parse("cortex-a9"), -1);
}

/* ---- the image loader ---- */

static void image_of_snippets(void **state)
{
    (void)state;
    assert_int_equal(img.entry, sym("t_dp"));
    assert_int_equal(img.sp, 0x00040000);
    assert_int_equal(img.mem[0].base, 0);
    assert_int_equal(img.text_lo, 0);
    assert_true(img.text_hi > sym("t_thumb_blx"));
    /* .data at 0x10000 and the RAM region after it: one region */
    assert_int_equal(img.nmem, 2);
    assert_int_equal(img.mem[1].base, 0x10000);
    assert_int_equal(img.ram_base, 0x10010);
    assert_int_equal(img.ram_size, 0x40000);
    assert_int_equal(img.mem[1].size, 0x40010);
    assert_int_equal(img.heap_base, sym("end"));
    assert_int_equal(img.heap_limit, 0x10010 + 0x20000);
    assert_int_equal(img.stack_base, 0x50010);
    assert_int_equal(img.stack_limit, 0x30010);
    assert_int_equal(img.build_id_len, 20);
    uint32_t word;
    memcpy(&word, img.mem[1].data, 4);
    assert_int_equal(word, 0x600df00d);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* A 32-bit little-endian ELF header for MACHINE with no program headers. */
static void elf32_header(uint8_t h[52], unsigned machine)
{
    memset(h, 0, 52);
    memcpy(h, "\x7f" "ELF", 4);
    h[4] = 1; /* ELFCLASS32 */
    h[5] = 1; /* little-endian */
    h[6] = 1;
    h[16] = 2; /* ET_EXEC */
    h[18] = (uint8_t)machine;
    h[20] = 1;
    h[40] = 52; /* e_ehsize */
    h[42] = 32; /* e_phentsize */
    h[46] = 40; /* e_shentsize */
}

static void image_errors(void **state)
{
    (void)state;
    struct np_image bad;
    char err[256], path[] = TMP_DIR "/emu_image_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    write_file(path, "just text\n", 10);
    assert_int_equal(np_image_load(path, NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "not an ELF file");

    assert_int_equal(np_image_load("/proc/self/exe", NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "a 64-bit ELF: not 32-bit ARM firmware");

    uint8_t h[52];
    elf32_header(h, 3);
    write_file(path, h, sizeof h);
    assert_int_equal(np_image_load(path, NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "an x86 ELF (machine 3): not ARM firmware");

    elf32_header(h, 62);
    write_file(path, h, sizeof h);
    assert_int_equal(np_image_load(path, NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "an x86-64 ELF (machine 62): not ARM firmware");

    elf32_header(h, 40);
    write_file(path, h, sizeof h);
    assert_int_equal(np_image_load(path, NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "no loadable segment");

    assert_int_equal(np_image_load(TMP_DIR "/no/such/file", NULL, &bad, err, sizeof err), -1);
    assert_string_equal(err, "No such file or directory");
    unlink(path);
}

static int load_snippets(void **state)
{
    (void)state;
    char err[256];
    struct np_image_options o = { .ram_size = 0x40000 };
    if (np_image_load(SNIPPETS_ELF, &o, &img, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", SNIPPETS_ELF, err);
        return -1;
    }
    return 0;
}

static int free_snippets(void **state)
{
    (void)state;
    np_image_free(&img);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dp_results),
        cmocka_unit_test(dp_flags_each_step),
        cmocka_unit_test(dp_conditions),
        cmocka_unit_test(dp_pc_operands),
        cmocka_unit_test(multiplies),
        cmocka_unit_test(loads_stores),
        cmocka_unit_test(loads_stores_rare_forms),
        cmocka_unit_test(block_transfers),
        cmocka_unit_test(load_use_interlocks),
        cmocka_unit_test(swap),
        cmocka_unit_test(mode_banking),
        cmocka_unit_test(swi_exception_and_hook),
        cmocka_unit_test(irq_entry_and_return),
        cmocka_unit_test(timer_raises_irq),
        cmocka_unit_test(undefined_instructions),
        cmocka_unit_test(arm_call_return_idioms),
        cmocka_unit_test(arm_v5_calls),
        cmocka_unit_test(exception_returns),
        cmocka_unit_test(user_bank_transfers),
        cmocka_unit_test(thumb_call_return_idioms),
        cmocka_unit_test(thumb_bl_pair_split),
        cmocka_unit_test(thumb_v5),
        cmocka_unit_test(thumb_to_arm),
        cmocka_unit_test(thumb_alu),
        cmocka_unit_test(thumb_loads_stores),
        cmocka_unit_test(thumb_swi_bkpt),
        cmocka_unit_test(v5_dsp),
        cmocka_unit_test(self_modifying_code),
        cmocka_unit_test(thumb_self_modifying_code),
        cmocka_unit_test(halt_from_branch_hook),
        cmocka_unit_test(timer_at_a_branch),
        cmocka_unit_test(faults),
        cmocka_unit_test(exception_without_vectors),
        cmocka_unit_test(init_checks),
        cmocka_unit_test(image_of_snippets),
        cmocka_unit_test(image_errors),
    };
    return cmocka_run_group_tests(tests, load_snippets, free_snippets);
}
