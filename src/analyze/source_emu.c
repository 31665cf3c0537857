/* source_emu.c - the emulator as a source of events (source_emu.h): the
 * firmware loaded, run with semihosting and its virtual IRQ timer, its
 * calls rebuilt by the call tracker and told to the sink and the trace
 * writer. */
#define _GNU_SOURCE
#include "source_emu.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/board.h"
#include "emu/cpu_m.h"
#include "emu/image.h"
#include "emu/semihost.h"
#include "symbols.h"
#include "calls_out.h"
#include "rtos.h"
#include "events_decode.h"
#include "common/parse_units.h"

struct emu {
    const struct np_emu_config *cfg;
    struct np_cpu cpu;
    struct np_semihost sh;
    struct np_calltrack *trk;
    struct np_rtos *rtos;        /* --rtos: the kernel's task names */
    struct np_symbols *syms;
    struct np_addrspace *as;
    struct np_calls_out out;     /* the tracker's events to the sink and the writer */
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

static int parse_u64(const char *name, const char *v, uint64_t max, uint64_t *out, char *err, size_t size)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (!*v || *end || errno || x > max || *v == '-')
        return fail(err, size, "bad %s '%s': a number from 0 to %" PRIu64 " is needed", name, v, max);
    *out = x;
    return 0;
}

int np_emu_config_set(struct np_emu_config *c, const char *setting, char *err, size_t errsize)
{
    const char *eq = strchr(setting, '=');
    if (!eq)
        return fail(err, errsize, "bad emulator setting '%s': NAME=VALUE is needed", setting);
    size_t n = (size_t)(eq - setting);
    const char *v = eq + 1;
    uint64_t x;
#define IS(name) (n == sizeof(name) - 1 && memcmp(setting, name, n) == 0)
    if (IS("cpu")) {
        int m = np_cpu_model_parse(v);
        if (m < 0)
            return fail(err, errsize, "unknown CPU '%s': arm7tdmi, arm946e-s, cortex-m0, cortex-m3, cortex-m4 "
                        "or cortex-m33", v);
        c->model = (enum np_cpu_model)m;
        c->model_given = true;
    } else if (IS("board")) {
        const struct np_board *b = np_board_find(v);
        if (strcmp(v, "generic") != 0 && !b)
            return fail(err, errsize, "unknown board '%s': %s or generic", v, np_board_names());
        c->board = b ? b->name : NULL; /* the table's: the setting's text is not kept */
    } else if (IS("max-insns")) {
        if (parse_u64("instruction limit", v, UINT64_MAX, &x, err, errsize) || !x)
            return x ? -1 : fail(err, errsize, "bad instruction limit '%s': at least 1", v);
        c->max_insns = x;
    } else if (IS("irq-every")) {
        if (parse_u64("IRQ period", v, UINT64_MAX, &c->irq_every, err, errsize))
            return -1;
    } else if (IS("thread-switch")) {
        c->thread_switch = *v ? v : NULL;
    } else if (IS("rtos")) {
        if (*v && !np_rtos_known(v))
            return fail(err, errsize, "unknown RTOS '%s': %s", v, NP_RTOS_NAMES);
        c->rtos = *v ? "freertos" : NULL; /* the table's: the setting's text is not kept */
    } else if (IS("n-wait") || IS("s-wait")) {
        if (parse_u64("wait states", v, 1000, &x, err, errsize))
            return -1;
        *(IS("n-wait") ? &c->timing.n_wait : &c->timing.s_wait) = (unsigned)x;
    } else if (IS("ram")) {
        uint64_t bytes = np_parse_size(v);
        if (bytes < 4096 || bytes > (1ull << 31))
            return fail(err, errsize, "bad RAM size '%s': 4k to 2G (k, M or G)", v);
        c->ram_size = (uint32_t)bytes;
    } else if (IS("map")) {
        char *comma;
        errno = 0;
        unsigned long long base = strtoull(v, &comma, 0), size;
        if (errno || comma == v || *comma != ',' || base > UINT32_MAX)
            return fail(err, errsize, "bad --map '%s': ADDR,SIZE (e.g. 0x40000000,4k)", v);
        size = np_parse_size(comma + 1);
        if (!size || size > (1ull << 31) || base + size > (1ull << 32))
            return fail(err, errsize, "bad --map '%s': a size of 1 to 2G within the 4 GiB address space", v);
        if (c->nmap == NP_EMU_MAX_MAPS)
            return fail(err, errsize, "more than %d --map regions", NP_EMU_MAX_MAPS);
        c->map[c->nmap].base = (uint32_t)base;
        c->map[c->nmap].size = (uint32_t)size;
        c->nmap++;
    } else if (IS("clock")) {
        if (parse_u64("clock", v, UINT64_MAX, &c->clock_hz, err, errsize) || !c->clock_hz)
            return c->clock_hz ? -1 : fail(err, errsize, "bad clock '%s': at least 1 Hz", v);
    } else if (IS("real-time")) {
        c->real_time = strcmp(v, "0") != 0;
    } else if (IS("save")) {
        c->save = v;
    } else if (IS("console")) {
        if (strcmp(v, "stdout") == 0)
            c->fd_out = 1;
        else if (strcmp(v, "stderr") == 0)
            c->fd_out = 2;
        else
            return fail(err, errsize, "bad console '%s': stdout or stderr", v);
    } else {
        return fail(err, errsize, "unknown emulator setting '%.*s'", (int)n, setting);
    }
#undef IS
    return 0;
}

/* ---- the CPU's hooks ------------------------------------------------------------- */

static void on_branch(void *ctx, struct np_cpu *cpu, const struct np_branch *b)
{
    struct emu *e = ctx;
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
    np_calltrack_branch(e->trk, cpu, b);
}

static int on_svc(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    return np_semihost_svc(&((struct emu *)ctx)->sh, cpu, imm);
}

static int on_bkpt(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    return np_semihost_bkpt(&((struct emu *)ctx)->sh, cpu, imm);
}

static void on_timer(void *ctx, struct np_cpu *cpu)
{
    struct emu *e = ctx;
    cpu->irq_line = true;
    cpu->timer_at += e->cfg->irq_every;
}

/* ---- the run ----------------------------------------------------------------------- */

static void where(struct emu *e, uint32_t pc, char *buf, size_t size)
{
    struct np_symbol sym;
    char *full = NULL, *short_name = NULL;
    np_addrspace_lookup(e->as, pc, &sym);
    bool cxx = sym.name && np_demangle(sym.name, &full, &short_name) > 0; /* as the views name it */
    if (sym.name)
        snprintf(buf, size, "at 0x%08" PRIx32 " in %s", pc, cxx ? short_name : sym.name);
    else
        snprintf(buf, size, "at 0x%08" PRIx32 " (in no function)", pc);
    free(full);
    free(short_name);
}

/* A Cortex-M's fault, as its line says it: "UsageFault (undefined
 * instruction udf #0) at 0x... in f", the HardFault it escalated to
 * first. */
static void m_fault_text(struct emu *e, const struct np_m_fault_info *f, char *buf, size_t size)
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
static bool m_fault_loop(struct emu *e, struct np_emu_result *r)
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

static void run_error(struct emu *e, struct np_emu_result *r, enum np_cpu_stop stop)
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

int np_emu_run(const char *elf, const struct np_emu_config *cfg, enum np_metric metric, double clock_hz,
               const struct np_event_sink *sink, const struct np_trace_hooks *hooks, struct np_trace_summary *summary,
               struct np_emu_result *r)
{
    struct np_emu_config defaults;
    if (!cfg) {
        np_emu_config_init(&defaults);
        cfg = &defaults;
    }
    struct np_trace_summary local;
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    memset(r, 0, sizeof *r);
    struct emu *e = calloc(1, sizeof *e);
    if (!e) {
        summary->status = NP_TRACE_ENOMEM;
        return summary->status;
    }
    if (metric == NP_METRIC_COUNT && clock_hz > 0) {
        snprintf(summary->message, sizeof summary->message,
                 "a clock rate turns the clock's cycles into time, not the second counter (instructions)");
        if (hooks && hooks->diag)
            hooks->diag(hooks->ctx, NP_DIAG_ERROR, summary->message);
        free(e);
        summary->status = NP_TRACE_EOPTION;
        return summary->status;
    }
    e->cfg = cfg;
    e->out.sink = sink;
    e->out.metric = metric;
    e->out.ns_per_cycle = clock_hz > 0 ? 1e9 / clock_hz : 0;
    e->out.insns_now = &e->cpu.insns;
    int status = NP_TRACE_OK;
    struct np_image img;
    /* on a board, its memory is the firmware's: the loader's own RAM region
     * kept to a few bytes (it merges with the last segment's page) */
    struct np_image_options io = { cfg->board ? 16 : cfg->ram_size, 0 };
    char err[256];
    if (np_image_load(elf, &io, &img, err, sizeof err) != 0) {
        snprintf(summary->message, sizeof summary->message, "%s: %s", elf, err);
        free(e);
        summary->status = NP_TRACE_ENOTTRACE;
        return summary->status;
    }
    enum np_cpu_model model = NP_CPU_ARM7TDMI;
    const struct np_board *board = cfg->board ? np_board_find(cfg->board) : NULL;
    if (cpu_for(&img, cfg, board, &model, err, sizeof err) != 0 ||
        (board && onto_board(&img, board, err, sizeof err) != 0)) {
        snprintf(summary->message, sizeof summary->message, "%s: %s", elf, err);
        np_image_free(&img);
        free(e);
        summary->status = NP_TRACE_ENOTTRACE;
        return summary->status;
    }
    r->model = model;
    if (np_cpu_is_m(model) && (cfg->irq_every || cfg->timing.n_wait || cfg->timing.s_wait || (board && cfg->ram_size))) {
        snprintf(summary->message, sizeof summary->message, "%s: %s", elf,
                 cfg->irq_every ? "--irq-every is the ARM CPUs' virtual timer: a Cortex-M firmware has SysTick"
                 : board && cfg->ram_size ? "--ram is for --board generic: a board has its own memory"
                                          : "--wait is the ARM CPUs' memory model: the Cortex-M cycle model has none");
        np_image_free(&img);
        free(e);
        summary->status = NP_TRACE_EOPTION;
        return summary->status;
    }
    /* --map: more memory, zeroed */
    unsigned image_regions = img.nmem;
    for (unsigned i = 0; i < cfg->nmap; i++) {
        if (img.nmem == NP_CPU_MAX_REGIONS) {
            snprintf(summary->message, sizeof summary->message, "%s: too many memory regions with --map", elf);
            status = NP_TRACE_EOPTION;
            goto out_image;
        }
        struct np_mem_region *m = &img.mem[img.nmem];
        m->base = cfg->map[i].base;
        m->size = cfg->map[i].size;
        m->data = calloc(1, m->size);
        if (!m->data) {
            status = NP_TRACE_ENOMEM;
            goto out_image;
        }
        img.nmem++;
    }
    /* --rtos: the kernel's structures found before the first instruction */
    if (cfg->rtos && !(e->rtos = np_rtos_open(cfg->rtos, elf, err, sizeof err))) {
        snprintf(summary->message, sizeof summary->message, "%s", err);
        status = NP_TRACE_EOPTION;
        goto out_image;
    }
    char *path = realpath(elf, NULL);
    e->syms = np_symbols_new(NULL, NULL);
    e->as = e->syms ? np_addrspace_new(e->syms) : NULL;
    struct np_trace_module mod = { 0, img.text_lo, img.text_hi, img.build_id, img.build_id_len, path ? path : elf };
    if (!e->as || np_addrspace_map(e->as, &mod) != 0) {
        status = NP_TRACE_ENOMEM;
        goto out;
    }

    /* the process, as a trace of it would begin */
    const char **argv = NULL;
    int argc = cfg->argc;
    if (cfg->argv && argc > 0)
        argv = (const char **)cfg->argv;
    else {
        static const char *self[1];
        self[0] = elf;
        argv = self;
        argc = 1;
    }
    struct np_trace_process proc = { 0 };
    proc.file = elf;
    proc.pid = 1;
    proc.ns_per_tick = proc.info_ns_per_tick = e->out.ns_per_cycle > 0 ? e->out.ns_per_cycle : 1.0;
    proc.clock = "cycles";
    proc.time_unit = metric == NP_METRIC_COUNT ? NP_UNIT_INSNS : e->out.ns_per_cycle > 0 ? NP_UNIT_NS : NP_UNIT_CYCLES;
    proc.argc = (unsigned)argc;
    proc.argv = argv;
    proc.has_end = true;
    if (cfg->save) {
        struct np_trace_writer_process wp = { 0 };
        wp.pid = 1;
        wp.clock = "cycles";
        wp.ns_per_tick = 1.0;
        wp.argc = (unsigned)argc;
        wp.argv = argv;
        wp.time_unit = "cycles";
        wp.count_unit = "instructions";
        e->out.writer = np_trace_writer_open(cfg->save, &wp, err, sizeof err);
        if (!e->out.writer) {
            snprintf(summary->message, sizeof summary->message, "%s", err);
            status = NP_TRACE_EIO;
            goto out;
        }
        if (np_trace_writer_module(e->out.writer, &mod)) {
            np_calls_out_writer_rc(&e->out, -1);
            e->out.sink = NULL; /* not begun: told no end */
            goto told;
        }
    }
    if (sink && sink->begin && np_calls_out_sink_rc(&e->out, sink->begin(sink->ctx, &proc)))
        goto told;
    if (sink && sink->module && np_calls_out_sink_rc(&e->out, sink->module(sink->ctx, &mod)))
        goto told;

    struct np_semihost_options so;
    np_semihost_options_init(&so);
    so.argv = argv;
    so.argc = argc;
    so.heap_base = img.heap_base;
    so.heap_limit = img.heap_limit;
    so.stack_base = img.stack_base;
    so.stack_limit = img.stack_limit;
    so.clock_hz = cfg->clock_hz ? cfg->clock_hz : NP_EMU_CLOCK_HZ_DEFAULT;
    so.real_time = cfg->real_time;
    so.fd_in = cfg->fd_in;
    so.fd_out = cfg->fd_out;
    so.fd_err = cfg->fd_err;
    if (np_semihost_init(&e->sh, &so) != 0) {
        status = NP_TRACE_ENOMEM;
        goto told;
    }

    struct np_calltrack_out out = np_calls_out_hooks(&e->out);
    struct np_calltrack_funcs funcs = np_calls_funcs(e->as);
    if (e->rtos) {
        funcs.thread_name = np_rtos_thread_name;
        funcs.thread_ctx = e->rtos;
    }
    struct np_calltrack_options topt = { 0 };
    if (cfg->thread_switch) {
        topt.switch_fn = (uint32_t)np_addrspace_address_of(e->as, cfg->thread_switch);
        if (!topt.switch_fn) {
            snprintf(r->error, sizeof r->error, "no function %s in %s (--thread-switch)", cfg->thread_switch, elf);
            r->failed = true;
            goto semihost;
        }
    }
    e->trk = np_calltrack_new(&out, &funcs, &topt);
    struct np_cpu_hooks ch = { e, on_branch, on_svc, on_bkpt, cfg->irq_every ? on_timer : NULL };
    if (!e->trk) {
        status = NP_TRACE_ENOMEM;
        goto semihost;
    }
    if (np_cpu_init(&e->cpu, model, img.mem, img.nmem, &cfg->timing, &ch) != 0) {
        snprintf(summary->message, sizeof summary->message, "%s: a --map region overlaps another or the image",
                 elf);
        status = cfg->nmap ? NP_TRACE_EOPTION : NP_TRACE_ENOMEM;
        goto semihost;
    }
    if (np_cpu_is_m(model)) {
        /* as the hardware starts: from the vector table */
        uint32_t vtor = board ? board->vtor : generic_vtor(&e->cpu, &img);
        int f = np_m_reset(&e->cpu, vtor);
        if (f) {
            snprintf(summary->message, sizeof summary->message,
                     f == NP_MF_READ ? "%s: no vector table at 0x%08" PRIx32 " (VTOR at reset): not in memory"
                                     : "%s: the reset vector at 0x%08" PRIx32 " is not a Thumb address (bit 0 clear)",
                     elf, vtor + (f == NP_MF_READ ? 0 : 4));
            status = NP_TRACE_ENOTTRACE;
            np_cpu_free(&e->cpu);
            goto semihost;
        }
        e->uart.fd = cfg->fd_out;
        if (board) {
            np_m_set_irqs(&e->cpu, board->nirq);
            np_m_add_device(&e->cpu, board->uart, 0x1000, np_cmsdk_uart_read, np_cmsdk_uart_write, &e->uart);
        }
        if (!np_cpu_mem(&e->cpu, e->cpu.r[15], 2)) {
            snprintf(summary->message, sizeof summary->message,
                     "%s: the reset vector points outside memory, at 0x%08" PRIx32, elf, e->cpu.r[15]);
            status = NP_TRACE_ENOTTRACE;
            np_cpu_free(&e->cpu);
            goto semihost;
        }
    } else {
        np_cpu_set_pc(&e->cpu, img.entry);
        e->cpu.r[13] = img.sp;
    }
    e->cpu.timer_at = cfg->irq_every ? cfg->irq_every : UINT64_MAX;

    uint64_t limit = cfg->max_insns ? cfg->max_insns : NP_EMU_MAX_INSNS_DEFAULT;
    enum np_cpu_stop stop = np_cpu_run(&e->cpu, limit);
    np_calltrack_finish(e->trk, &e->cpu);
    r->insns = e->cpu.insns;
    r->cycles = e->cpu.cycles;
    r->calls = *np_calltrack_stats(e->trk);
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
    } else if (!(stop == NP_STOP_HALT && (e->out.sink_rc || e->out.writer_error[0]))) {
        run_error(e, r, stop);
    }
    np_cpu_free(&e->cpu);
semihost:
    np_semihost_free(&e->sh);
told:
    status = np_calls_out_end(&e->out, status, summary);
out:
    np_calltrack_free(e->trk);
    np_addrspace_free(e->as);
    np_symbols_free(e->syms);
    free(path);
out_image:
    np_rtos_free(e->rtos);
    for (unsigned i = image_regions; i < img.nmem; i++)
        free(img.mem[i].data);
    img.nmem = image_regions;
    np_image_free(&img);
    free(e);
    summary->status = status;
    summary->files = summary->files_read = 1;
    (void)hooks;
    return status;
}

int np_source_emu_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_emu_config c;
    np_emu_config_init(&c);
    /* a view reading firmware keeps its own output clean */
    c.fd_out = 2;
    char err[256];
    const char *args[64];
    int nargs = 0;
    args[nargs++] = path;
    if (o && o->args)
        for (const char *const *a = o->args; *a; a++) {
            if (strncmp(*a, "arg=", 4) == 0) {
                if (nargs < 63)
                    args[nargs++] = *a + 4;
            } else if (np_emu_config_set(&c, *a, err, sizeof err) != 0) {
                memset(summary, 0, sizeof *summary);
                snprintf(summary->message, sizeof summary->message, "%s", err);
                summary->status = NP_TRACE_EOPTION;
                return summary->status;
            }
        }
    args[nargs] = NULL;
    c.argv = args;
    c.argc = nargs;
    struct np_emu_result r;
    int rc = np_emu_run(path, &c, o ? o->metric : NP_METRIC_TIME, o ? o->clock_hz : 0, sink, hooks, summary, &r);
    if (rc == NP_TRACE_OK && r.failed && hooks && hooks->diag) {
        char line[NP_TRACE_MSG_MAX];
        snprintf(line, sizeof line, "%.200s: %.280s (the profile stops there)", path, r.error);
        hooks->diag(hooks->ctx, NP_DIAG_WARNING, line);
    }
    return rc;
}
