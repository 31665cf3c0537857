/* driver.c - the emulator's driver (driver.h): the firmware loaded onto
 * its CPU and board, run with semihosting, the virtual IRQ timer and the
 * call tracker on every branch, and its end said in one line. */
#define _GNU_SOURCE
#include "driver.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "board.h"
#include "cpu_m.h"
#include "semihost.h"

struct np_emu {
    const struct np_emu_config *cfg;
    struct np_cpu cpu;
    bool cpu_ready;              /* np_cpu_init done: np_cpu_free to call */
    struct np_semihost sh;
    bool sh_ready;
    struct np_image img;
    unsigned image_regions;      /* img.mem[] the loader made; --map's follow */
    const struct np_board *board;
    struct np_calltrack *trk;    /* while running */
    const struct np_emu_names *names;
    bool halted;                 /* a branch to itself no IRQ can leave */
    struct np_cmsdk_uart uart;   /* a Cortex-M board's console */
};

void np_emu_config_init(struct np_emu_config *c)
{
    memset(c, 0, sizeof *c);
    c->model = NP_CPU_ARM7TDMI;
    c->fd_in = 0;
    c->fd_out = 1;
    c->fd_err = 2;
}

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the CPU's hooks ------------------------------------------------------------- */

static void on_branch(void *ctx, struct np_cpu *cpu, const struct np_branch *b)
{
    struct np_emu *e = ctx;
    if (__builtin_expect(b->from == b->to, 0) && b->kind == NP_BR_B &&
        (np_cpu_is_m(cpu->model) ? np_m_waits_forever(cpu)
                                 : (cpu->cpsr & NP_CPSR_I) || !e->cfg->irq_every)) {
        /* `b .` that no interrupt can leave: how bare-metal code stops */
        e->halted = true;
        np_cpu_halt(cpu);
    }
    /* the virtual timer's line drops once its IRQ is taken: it needs no
     * acknowledge (docs/emulator.md) */
    if (__builtin_expect(b->kind == NP_BR_EXCEPTION, 0)) {
        /* (kind read alone: the CPU stores the fields one by one, and one
         * wide load of them would wait for all four stores) */
        if (b->vector == NP_VEC_IRQ)
            cpu->irq_line = false;
    }
    if (e->trk)
        np_calltrack_branch(e->trk, cpu, b);
}

static int on_svc(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    return np_semihost_svc(&((struct np_emu *)ctx)->sh, cpu, imm);
}

static int on_bkpt(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    return np_semihost_bkpt(&((struct np_emu *)ctx)->sh, cpu, imm);
}

static void on_timer(void *ctx, struct np_cpu *cpu)
{
    struct np_emu *e = ctx;
    cpu->irq_line = true;
    cpu->timer_at += e->cfg->irq_every;
}

/* ---- the run's end ------------------------------------------------------------------ */

static void where(struct np_emu *e, uint32_t pc, char *buf, size_t size)
{
    char name[256];
    const char *fn = e->names && e->names->name ? e->names->name(e->names->ctx, pc, name, sizeof name) : NULL;
    if (fn)
        snprintf(buf, size, "at 0x%08" PRIx32 " in %s", pc, fn);
    else
        snprintf(buf, size, "at 0x%08" PRIx32 " (in no function)", pc);
}

/* A Cortex-M's fault, as its line says it: "UsageFault (undefined
 * instruction udf #0) at 0x... in f", the HardFault it escalated to
 * first. */
static void m_fault_text(struct np_emu *e, const struct np_m_fault_info *f, char *buf, size_t size)
{
    char at[160], insn[96], name[16], what[160];
    where(e, f->pc, at, sizeof at);
    const char *fault = np_m_fault_name(f->fault);
    if (f->fault == NP_MF_UNDEFINED)
        snprintf(what, sizeof what, "undefined instruction %s", np_cpu_disasm(&e->cpu, f->pc, true, insn, sizeof insn));
    else if (f->fault == NP_MF_READ || f->fault == NP_MF_WRITE)
        snprintf(what, sizeof what, "%s of 0x%08" PRIx32 ", where no memory is, by %s",
                 f->fault == NP_MF_READ ? "a read" : "a write", f->addr,
                 np_cpu_disasm(&e->cpu, f->pc, true, insn, sizeof insn));
    else
        snprintf(what, sizeof what, "%s", fault);
    snprintf(buf, size, "%s (%.150s) %.150s", np_m_exception_name(f->exception, name, sizeof name), what, at);
}

/* A Cortex-M stopped in a `b .` of a fault's handler: the firmware
 * faulted, and its handler gave up. True when so (R says it). */
static bool m_fault_loop(struct np_emu *e, struct np_emu_result *r)
{
    const struct np_m_fault_info *f = np_m_last_fault(&e->cpu);
    unsigned n = e->cpu.m.ipsr;
    if (!f->taken || n < NP_EXC_HARDFAULT || n > NP_EXC_USAGEFAULT)
        return false;
    char text[320], at[160];
    m_fault_text(e, f, text, sizeof text);
    where(e, e->cpu.r[15], at, sizeof at);
    r->failed = true;
    snprintf(r->error, sizeof r->error, "the firmware faulted: %.300s; its handler loops %.150s", text,
             at);
    return true;
}

static void run_error(struct np_emu *e, struct np_emu_result *r, enum np_cpu_stop stop)
{
    char at[160], insn[96];
    uint32_t pc = e->cpu.r[15];
    bool thumb = (e->cpu.cpsr & NP_CPSR_T) != 0;
    r->failed = true;
    if (np_cpu_is_m(e->cpu.model) && stop != NP_STOP_LIMIT && stop != NP_STOP_HALT) {
        const struct np_m_fault_info *f = np_m_last_fault(&e->cpu);
        char text[320], name[16];
        m_fault_text(e, f, text, sizeof text);
        if (f->lockup && e->cpu.m.ipsr)
            snprintf(r->error, sizeof r->error, "the CPU locked up: %.300s, in the %s handler", text,
                     np_m_exception_name(e->cpu.m.ipsr, name, sizeof name));
        else if (f->lockup)
            snprintf(r->error, sizeof r->error, "the CPU locked up: %.300s, with FAULTMASK set", text);
        else
            snprintf(r->error, sizeof r->error, "%.300s: taking it, %s of 0x%08" PRIx32 " found no memory (the stack or "
                     "the vector table)", text, stop == NP_STOP_WRITE ? "a write" : "a read", e->cpu.fault_addr);
        return;
    }
    switch (stop) {
    case NP_STOP_UNDEFINED: {
        where(e, pc, at, sizeof at);
        const char *text = np_cpu_disasm(&e->cpu, pc, thumb, insn, sizeof insn);
        /* an instruction of a later architecture: say which CPU runs it */
        bool later = e->cpu.model == NP_CPU_ARM7TDMI && strncmp(text, "udf", 3) != 0 && !strchr(text, '.') &&
                     !(text[0] == '0' && text[1] == 'x');
        snprintf(r->error, sizeof r->error, "undefined instruction %s %s%s", text, at,
                 later ? " (ARMv5TE code runs with --cpu arm946e-s)" : "");
        break;
    }
    case NP_STOP_FETCH:
        where(e, e->cpu.fault_addr, at, sizeof at);
        snprintf(r->error, sizeof r->error, "instruction fetch outside memory %s", at);
        break;
    case NP_STOP_READ:
    case NP_STOP_WRITE:
        where(e, pc, at, sizeof at);
        snprintf(r->error, sizeof r->error, "%s of 0x%08" PRIx32 " outside memory by %s %s (--map maps more)",
                 stop == NP_STOP_READ ? "read" : "write", e->cpu.fault_addr,
                 np_cpu_disasm(&e->cpu, pc, thumb, insn, sizeof insn), at);
        break;
    case NP_STOP_LIMIT:
        where(e, pc, at, sizeof at);
        snprintf(r->error, sizeof r->error,
                 "still running after %" PRIu64 " instructions (the limit: --max-insns), %s", e->cpu.insns, at);
        break;
    case NP_STOP_HALT:
        where(e, pc, at, sizeof at);
        if (e->sh.failed)
            snprintf(r->error, sizeof r->error, "%.192s, %.160s", e->sh.error, at);
        else
            snprintf(r->error, sizeof r->error, "stopped %s", at);
        break;
    }
}

/* The Cortex-M a firmware of architecture ARCH needs at least: 0 for
 * none (an architecture the emulator does not run). */
static int m_model_for(int arch)
{
    switch (arch) {
    case 11: case 12: return NP_CPU_CORTEX_M0; /* ARMv6-M, ARMv6S-M */
    case 10: return NP_CPU_CORTEX_M3;          /* ARMv7-M */
    case 13: return NP_CPU_CORTEX_M4;          /* ARMv7E-M */
    case 17: return NP_CPU_CORTEX_M33;         /* ARMv8-M mainline */
    default: return 0;
    }
}

/* The CPU that runs IMG: the one CFG gives, else the one its ELF's
 * architecture (Tag_CPU_arch) needs (for a Cortex-M firmware, the
 * board's CPU when it runs that architecture); arm7tdmi for an ELF that
 * says none. A firmware the CPU cannot run is refused, before its first
 * instruction. */
static int cpu_for(const struct np_image *img, const struct np_emu_config *cfg, const struct np_board *board,
                   enum np_cpu_model *model, char *err, size_t size)
{
    int arch = img->cpu_arch;
    const char *name = np_image_arch_name(arch, img->cpu_profile);
    bool m_elf = np_image_is_m_profile(arch, img->cpu_profile);
    if (m_elf) {
        int need = m_model_for(arch);
        if (!need)
            return fail(err, size, "built for %s (Tag_CPU_arch %d): the emulator runs ARMv6-M, ARMv7-M, ARMv7E-M "
                        "and ARMv8-M mainline (cortex-m0, -m3, -m4, -m33); run it with --qemu BOARD", name, arch);
        if (cfg->model_given && !np_cpu_is_m(cfg->model))
            return fail(err, size, "built for %s (Tag_CPU_arch %d), a Cortex-M: --cpu %s runs ARM code; give a "
                        "Cortex-M (cortex-m0, -m3, -m4, -m33) or none", name, arch, np_cpu_model_name(cfg->model));
        /* the FP attributes: FPv5 code (vrint, vsel, vmaxnm) needs the M33's
         * FPU; double precision (a Cortex-M7's FPv5-D16) none here has */
        if (img->fp_arch >= 7 && need < NP_CPU_CORTEX_M33 && need >= NP_CPU_CORTEX_M4)
            need = NP_CPU_CORTEX_M33;
        if (np_image_fp_double(img) && !cfg->model_given)
            return fail(err, size, "built for %s with a double-precision FPU (Tag_FP_arch %d, a Cortex-M7's): the "
                        "emulator's are single-precision; --cpu %s runs it anyway", name, img->fp_arch,
                        need >= NP_CPU_CORTEX_M33 ? "cortex-m33" : "cortex-m4");
        int m = cfg->model_given ? (int)cfg->model : board && (int)board->model >= need ? (int)board->model : need;
        /* each Cortex-M runs the code of those before it in this order */
        if (m < need)
            return fail(err, size, "built for %s (Tag_CPU_arch %d): %s does not run it, %s does", name, arch,
                        np_cpu_model_name((enum np_cpu_model)m), np_cpu_model_name((enum np_cpu_model)need));
        *model = (enum np_cpu_model)m;
        return 0;
    }
    if (cfg->model_given && np_cpu_is_m(cfg->model))
        return fail(err, size, "built for %s (Tag_CPU_arch %d), not for a Cortex-M: --cpu %s runs Thumb code of "
                    "the M profile only", arch < 0 ? "no architecture it names" : name, arch,
                    np_cpu_model_name(cfg->model));
    if (board)
        return fail(err, size, "built for %s (Tag_CPU_arch %d), not for a Cortex-M: --board is for Cortex-M firmware",
                    arch < 0 ? "no architecture it names" : name, arch);
    if (arch > 5)
        return fail(err, size, "built for %s (Tag_CPU_arch %d): the emulator runs ARMv4T and ARMv5TE code "
                    "(arm7tdmi, arm946e-s) and Cortex-M code", name, arch);
    *model = cfg->model_given || arch < 0 ? cfg->model : arch >= 3 ? NP_CPU_ARM946ES : NP_CPU_ARM7TDMI;
    if (*model == NP_CPU_ARM7TDMI && arch >= 3)
        return fail(err, size, "built for %s (Tag_CPU_arch %d): --cpu arm7tdmi runs ARMv4T code, %s needs arm946e-s",
                    name, arch, name);
    return 0;
}

/* IMG's loaded bytes moved into BOARD's memory: its regions replace the
 * image's. 0, or -1 with ERR (a segment outside the board's memory). */
static int onto_board(struct np_image *img, const struct np_board *board, char *err, size_t size)
{
    struct np_mem_region mem[NP_CPU_MAX_REGIONS];
    unsigned n = 0;
    for (unsigned i = 0; i < board->nram; i++) {
        mem[n].base = board->ram[i].base;
        mem[n].size = board->ram[i].size;
        mem[n].data = calloc(1, board->ram[i].size);
        if (!mem[n].data) {
            for (unsigned j = 0; j < n; j++)
                free(mem[j].data);
            return fail(err, size, "out of memory");
        }
        n++;
    }
    for (unsigned i = 0; i < img->nmem; i++) {
        struct np_mem_region *r = &img->mem[i];
        uint64_t lo = r->base, hi = lo + r->size;
        if (r->base == img->ram_base && r->size == img->ram_size)
            continue; /* the loader's own RAM region alone: the board has its RAM */
        unsigned j = 0;
        while (j < n && !(lo >= mem[j].base && hi <= (uint64_t)mem[j].base + mem[j].size))
            j++;
        if (j == n) {
            for (unsigned k = 0; k < n; k++)
                free(mem[k].data);
            return fail(err, size, "its memory at 0x%08" PRIx32 "-0x%08" PRIx64 " is not in %s's memory", r->base,
                        hi - 1, board->name);
        }
        memcpy(mem[j].data + (r->base - mem[j].base), r->data, r->size);
    }
    np_image_free(img);
    memcpy(img->mem, mem, sizeof mem);
    img->nmem = n;
    return 0;
}

/* Where a generic Cortex-M firmware's vector table is: at 0 when memory
 * is there (VTOR's reset value), else at the start of its lowest
 * executable segment (flash linked elsewhere, as a boot ROM would map
 * it). */
static uint32_t generic_vtor(struct np_cpu *cpu, const struct np_image *img)
{
    return np_cpu_mem(cpu, 0, 8) ? 0 : img->text_lo;
}


/* ---- load and run ------------------------------------------------------------------ */

static enum np_emu_refusal refuse(struct np_emu *e, enum np_emu_refusal why)
{
    np_emu_free(e);
    return why;
}

enum np_emu_refusal np_emu_load(struct np_emu **out, const char *elf, const struct np_emu_config *cfg, char *err,
                                size_t errsize)
{
    *out = NULL;
    struct np_emu *e = calloc(1, sizeof *e);
    if (!e) {
        fail(err, errsize, "out of memory");
        return NP_EMU_NO_MEMORY;
    }
    e->cfg = cfg;
    char why[400];
    /* on a board, its memory is the firmware's: the loader's own RAM region
     * kept to a few bytes (it merges with the last segment's page) */
    struct np_image_options io = { cfg->board ? 16 : cfg->ram_size, 0 };
    if (np_image_load(elf, &io, &e->img, why, sizeof why) != 0) {
        fail(err, errsize, "%s: %s", elf, why);
        free(e);
        return NP_EMU_NOT_RUNNABLE;
    }
    e->image_regions = e->img.nmem;
    enum np_cpu_model model = NP_CPU_ARM7TDMI;
    const struct np_board *board = e->board = cfg->board ? np_board_find(cfg->board) : NULL;
    if (cpu_for(&e->img, cfg, board, &model, why, sizeof why) != 0 ||
        (board && onto_board(&e->img, board, why, sizeof why) != 0)) {
        fail(err, errsize, "%s: %s", elf, why);
        return refuse(e, NP_EMU_NOT_RUNNABLE);
    }
    e->image_regions = e->img.nmem;
    if (np_cpu_is_m(model) && (cfg->irq_every || (board && cfg->ram_size))) {
        fail(err, errsize, "%s: %s", elf,
             cfg->irq_every ? "--irq-every is the ARM CPUs' virtual timer: a Cortex-M firmware has SysTick"
                            : "--ram is for --board generic: a board has its own memory");
        return refuse(e, NP_EMU_BAD_OPTION);
    }
    /* --map: more memory, zeroed */
    for (unsigned i = 0; i < cfg->nmap; i++) {
        if (e->img.nmem == NP_CPU_MAX_REGIONS) {
            fail(err, errsize, "%s: too many memory regions with --map", elf);
            return refuse(e, NP_EMU_BAD_OPTION);
        }
        struct np_mem_region *m = &e->img.mem[e->img.nmem];
        m->base = cfg->map[i].base;
        m->size = cfg->map[i].size;
        if (!(m->data = calloc(1, m->size))) {
            fail(err, errsize, "out of memory");
            return refuse(e, NP_EMU_NO_MEMORY);
        }
        e->img.nmem++;
    }

    struct np_semihost_options so;
    np_semihost_options_init(&so);
    const char *self[1] = { elf }; /* (copied by np_semihost_init) */
    so.argv = cfg->argv && cfg->argc > 0 ? cfg->argv : self;
    so.argc = cfg->argv && cfg->argc > 0 ? cfg->argc : 1;
    so.heap_base = e->img.heap_base;
    so.heap_limit = e->img.heap_limit;
    so.stack_base = e->img.stack_base;
    so.stack_limit = e->img.stack_limit;
    so.clock_hz = cfg->clock_hz ? cfg->clock_hz : NP_EMU_CLOCK_HZ_DEFAULT;
    so.real_time = cfg->real_time;
    so.fd_in = cfg->fd_in;
    so.fd_out = cfg->fd_out;
    so.fd_err = cfg->fd_err;
    if (np_semihost_init(&e->sh, &so) != 0) {
        fail(err, errsize, "out of memory");
        return refuse(e, NP_EMU_NO_MEMORY);
    }
    e->sh_ready = true;

    struct np_cpu_hooks ch = { e, on_branch, on_svc, on_bkpt, cfg->irq_every ? on_timer : NULL };
    if (np_cpu_init(&e->cpu, model, e->img.mem, e->img.nmem, &cfg->timing, &ch) != 0) {
        fail(err, errsize, cfg->nmap ? "%s: a --map region overlaps another or the image" : "%s: out of memory", elf);
        return refuse(e, cfg->nmap ? NP_EMU_BAD_OPTION : NP_EMU_NO_MEMORY);
    }
    e->cpu_ready = true;
    if (np_cpu_is_m(model)) {
        /* as the hardware starts: from the vector table */
        uint32_t vtor = board ? board->vtor : generic_vtor(&e->cpu, &e->img);
        int f = np_m_reset(&e->cpu, vtor);
        if (f) {
            fail(err, errsize,
                 f == NP_MF_READ ? "%s: no vector table at 0x%08" PRIx32 " (VTOR at reset): not in memory"
                                 : "%s: the reset vector at 0x%08" PRIx32 " is not a Thumb address (bit 0 clear)",
                 elf, vtor + (f == NP_MF_READ ? 0 : 4));
            return refuse(e, NP_EMU_NOT_RUNNABLE);
        }
        e->uart.fd = cfg->fd_out;
        if (board) {
            np_m_set_irqs(&e->cpu, board->nirq);
            np_m_add_device(&e->cpu, board->uart, 0x1000, np_cmsdk_uart_read, np_cmsdk_uart_write, &e->uart);
        }
        if (!np_cpu_mem(&e->cpu, e->cpu.r[15], 2)) {
            fail(err, errsize, "%s: the reset vector points outside memory, at 0x%08" PRIx32, elf, e->cpu.r[15]);
            return refuse(e, NP_EMU_NOT_RUNNABLE);
        }
    } else {
        np_cpu_set_pc(&e->cpu, e->img.entry);
        e->cpu.r[13] = e->img.sp;
    }
    e->cpu.timer_at = cfg->irq_every ? cfg->irq_every : UINT64_MAX;
    *out = e;
    return NP_EMU_READY;
}

const struct np_image *np_emu_image(const struct np_emu *e)
{
    return &e->img;
}

struct np_cpu *np_emu_cpu(struct np_emu *e)
{
    return &e->cpu;
}

void np_emu_go(struct np_emu *e, struct np_calltrack *trk, const struct np_emu_names *names,
               struct np_emu_result *r)
{
    e->trk = trk;
    e->names = names;
    enum np_cpu_model model = e->cpu.model;
    uint64_t limit = e->cfg->max_insns ? e->cfg->max_insns : NP_EMU_MAX_INSNS_DEFAULT;
    enum np_cpu_stop stop = np_cpu_run(&e->cpu, limit);
    r->model = model;
    r->insns = e->cpu.insns;
    r->cycles = e->cpu.cycles;
    if (stop == NP_STOP_HALT && e->sh.exited && !e->sh.failed) {
        r->exited = true;
        r->exit_code = e->sh.exit_code;
    } else if (stop == NP_STOP_HALT && e->halted && np_cpu_is_m(model) && m_fault_loop(e, r)) {
        /* said by m_fault_loop */
    } else if (stop == NP_STOP_HALT && (e->halted || (np_cpu_is_m(model) && np_m_asleep(&e->cpu)))) {
        /* a `b .` nothing can leave, or a Cortex-M's wfi nothing will wake */
        r->halted = true;
        r->asleep = !e->halted;
        r->halt_pc = e->cpu.r[15];
        where(e, r->halt_pc, r->where, sizeof r->where);
    } else if (stop == NP_STOP_HALT && trk && np_calltrack_stats(trk)->thread_limit) {
        char at[160];
        where(e, e->cpu.r[15], at, sizeof at);
        r->failed = true;
        snprintf(r->error, sizeof r->error,
                 "a stack switch to a new thread %s, with %u threads already: a firmware that moves its stack "
                 "and jumps to a function's start at every turn? (--thread-switch names a context switch)",
                 at, NP_CALLTRACK_MAX_THREADS);
    } else {
        run_error(e, r, stop);
    }
}

void np_emu_free(struct np_emu *e)
{
    if (!e)
        return;
    if (e->cpu_ready)
        np_cpu_free(&e->cpu);
    if (e->sh_ready)
        np_semihost_free(&e->sh);
    for (unsigned i = e->image_regions; i < e->img.nmem; i++)
        free(e->img.mem[i].data);
    e->img.nmem = e->image_regions;
    np_image_free(&e->img);
    free(e);
}
