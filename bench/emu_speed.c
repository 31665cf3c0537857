/* emu_speed.c - the interpreter's speed: runs a firmware ELF (built with
 * --specs=rdimon.specs, or any that exits through semihosting) on the
 * ARM interpreter and prints emulated MIPS, without and with a branch hook
 * (a cheap one that counts calls and returns), cycle counting on.
 *
 *   emu_speed [--cpu=arm7tdmi|arm946e-s|cortex-m4|...] [--max=N] [--repeat=N] [--quiet] FIRMWARE.elf
 *
 * Each configuration runs N times (--repeat, default 5) and the fastest
 * run is printed: on a shared machine the others measure the neighbours.
 * The few semihosting calls newlib's start-up and printf make are served
 * here (open, write, heapinfo, exit, ...); the firmware's output goes to
 * stdout the first run, then is dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpu.h"
#include "cpu_m.h"
#include "image.h"

struct run {
    const struct np_image *img;
    bool quiet;
    int exit_code;
    uint64_t calls, returns, others;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint32_t rd32(struct np_cpu *cpu, uint32_t a)
{
    uint8_t *p = np_cpu_mem(cpu, a, 4);
    uint32_t v = 0;
    if (p)
        memcpy(&v, p, 4);
    return v;
}

static void wr32(struct np_cpu *cpu, uint32_t a, uint32_t v)
{
    uint8_t *p = np_cpu_mem(cpu, a, 4);
    if (p) {
        memcpy(p, &v, 4);
        np_cpu_wrote(cpu, a, 4);
    }
}

/* The semihosting calls newlib's rdimon start-up and stdio make. */
static int semihost(struct run *r, struct np_cpu *cpu)
{
    uint32_t op = cpu->r[0], arg = cpu->r[1], ret = 0;
    switch (op) {
    case 0x01: ret = rd32(cpu, arg + 4) & 4 ? 2 : 1; break;            /* SYS_OPEN ":tt": stdout */
    case 0x02: ret = 0; break;                                         /* SYS_CLOSE */
    case 0x03: if (!r->quiet) { uint8_t *p = np_cpu_mem(cpu, arg, 1); if (p) putchar(*p); } break;
    case 0x04: if (!r->quiet) { const char *p = (const char *)np_cpu_mem(cpu, arg, 1); if (p) fputs(p, stdout); } break;
    case 0x05: {                                                       /* SYS_WRITE */
        uint32_t buf = rd32(cpu, arg + 4), len = rd32(cpu, arg + 8);
        const uint8_t *p = np_cpu_mem(cpu, buf, len);
        if (p && !r->quiet)
            fwrite(p, 1, len, stdout);
        ret = 0;
        break;
    }
    case 0x06: ret = rd32(cpu, arg + 8); break;                        /* SYS_READ: nothing */
    case 0x09: ret = 1; break;                                         /* SYS_ISTTY */
    case 0x0a: ret = 0; break;                                         /* SYS_SEEK */
    case 0x0c: ret = 0; break;                                         /* SYS_FLEN */
    case 0x10: ret = (uint32_t)(cpu->cycles / 10000); break;           /* SYS_CLOCK */
    case 0x11: ret = 0; break;                                         /* SYS_TIME */
    case 0x13: ret = 0; break;                                         /* SYS_ERRNO */
    case 0x15: wr32(cpu, arg + 4, 0); wr32(cpu, rd32(cpu, arg), 0); break; /* SYS_GET_CMDLINE */
    case 0x16: {                                                       /* SYS_HEAPINFO */
        uint32_t b = rd32(cpu, arg);
        wr32(cpu, b, r->img->heap_base);
        wr32(cpu, b + 4, r->img->heap_limit);
        wr32(cpu, b + 8, r->img->stack_base);
        wr32(cpu, b + 12, r->img->stack_limit);
        break;
    }
    case 0x18:                                                         /* SYS_EXIT */
        r->exit_code = arg == 0x20026 ? 0 : (int)arg;
        np_cpu_halt(cpu);
        break;
    case 0x20:                                                         /* SYS_EXIT_EXTENDED */
        r->exit_code = (int)rd32(cpu, arg + 4);
        np_cpu_halt(cpu);
        break;
    default:
        fprintf(stderr, "emu_speed: semihosting call 0x%x not served\n", op);
        ret = (uint32_t)-1;
    }
    cpu->r[0] = ret;
    return 1;
}

static int on_svc(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    if (imm != 0x123456 && imm != 0xab)
        return 0;
    return semihost(ctx, cpu);
}

static int on_bkpt(void *ctx, struct np_cpu *cpu, uint32_t imm)
{
    return imm == 0xab ? semihost(ctx, cpu) : 0;
}

static void on_branch(void *ctx, struct np_cpu *cpu, const struct np_branch *b)
{
    struct run *r = ctx;
    (void)cpu;
    if (b->kind == NP_BR_BL || b->kind == NP_BR_BLX_REG || (b->flags & NP_BRF_LINKED))
        r->calls++;
    else if ((b->kind == NP_BR_BX && b->reg == 14) || b->kind == NP_BR_LDM_PC || b->kind == NP_BR_LDR_PC)
        r->returns++;
    else
        r->others++;
}

static int run_once(const struct np_image *img, enum np_cpu_model model, uint64_t max, bool hook, bool quiet,
                    double *seconds, uint64_t *insns, uint64_t *cycles, struct run *out)
{
    struct run r = { .img = img, .quiet = quiet };
    struct np_cpu_hooks hooks = { .ctx = &r, .svc = on_svc, .bkpt = on_bkpt, .branch = hook ? on_branch : NULL };
    struct np_cpu_timing timing = { 0, 0 };
    struct np_cpu cpu;
    /* a fresh copy of the image's memory for each run */
    struct np_mem_region mem[NP_CPU_MAX_REGIONS];
    for (unsigned i = 0; i < img->nmem; i++) {
        mem[i] = img->mem[i];
        mem[i].data = malloc(mem[i].size);
        memcpy(mem[i].data, img->mem[i].data, mem[i].size);
    }
    if (np_cpu_init(&cpu, model, mem, img->nmem, &timing, &hooks)) {
        fprintf(stderr, "emu_speed: cannot set the CPU up\n");
        return -1;
    }
    if (np_cpu_is_m(model)) {
        /* a Cortex-M starts from its vector table (at 0 in the bench firmware) */
        if (np_m_reset(&cpu, 0)) {
            fprintf(stderr, "emu_speed: no vector table at 0\n");
            return -1;
        }
    } else {
        np_cpu_set_pc(&cpu, img->entry);
        cpu.r[13] = img->sp;
    }
    double t0 = now();
    enum np_cpu_stop stop = np_cpu_run(&cpu, max);
    double t = now() - t0;
    if (stop != NP_STOP_HALT && stop != NP_STOP_LIMIT) {
        char text[64];
        fprintf(stderr, "emu_speed: stopped (%d) at 0x%08x: %s, fault address 0x%08x\n", (int)stop, cpu.r[15],
                np_cpu_disasm(&cpu, cpu.r[15], cpu.cpsr & NP_CPSR_T, text, sizeof text), cpu.fault_addr);
    }
    *seconds = t;
    *insns = cpu.insns;
    *cycles = cpu.cycles;
    *out = r;
    np_cpu_free(&cpu);
    for (unsigned i = 0; i < img->nmem; i++)
        free(mem[i].data);
    return stop == NP_STOP_HALT || stop == NP_STOP_LIMIT ? 0 : -1;
}

int main(int argc, char **argv)
{
    enum np_cpu_model model = NP_CPU_ARM7TDMI;
    uint64_t max = UINT64_MAX / 2;
    bool quiet = false;
    int repeat = 5;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--cpu=", 6)) {
            int m = np_cpu_model_parse(argv[i] + 6);
            if (m < 0) {
                fprintf(stderr, "emu_speed: unknown CPU %s\n", argv[i] + 6);
                return 2;
            }
            model = (enum np_cpu_model)m;
        } else if (!strncmp(argv[i], "--max=", 6)) {
            max = strtoull(argv[i] + 6, NULL, 0);
        } else if (!strncmp(argv[i], "--repeat=", 9)) {
            repeat = atoi(argv[i] + 9) > 0 ? atoi(argv[i] + 9) : 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: emu_speed [--cpu=arm7tdmi|arm946e-s|cortex-m4|...] [--max=N] [--repeat=N] [--quiet] FIRMWARE.elf\n");
        return 2;
    }
    struct np_image img;
    char err[256];
    if (np_image_load(path, NULL, &img, err, sizeof err)) {
        fprintf(stderr, "emu_speed: %s: %s\n", path, err);
        return 1;
    }
    int rc = 0;
    for (int hook = 0; hook <= 1 && !rc; hook++) {
        double best = 1e30;
        uint64_t insns = 0, cycles = 0;
        struct run r = { 0 };
        for (int i = 0; i < repeat && !rc; i++) {
            double t;
            rc = run_once(&img, model, max, hook, quiet || hook || i, &t, &insns, &cycles, &r);
            if (t < best)
                best = t;
        }
        if (rc)
            break;
        if (!quiet && !hook)
            printf("\n");
        printf("%-10s %s: %llu instructions, %llu cycles, best of %d: %.3f s, %.0f MIPS", np_cpu_model_name(model),
               hook ? "hook   " : "no hook", (unsigned long long)insns, (unsigned long long)cycles, repeat, best,
               (double)insns / best / 1e6);
        if (hook)
            printf(" (%llu calls, %llu returns, %llu other jumps)", (unsigned long long)r.calls,
                   (unsigned long long)r.returns, (unsigned long long)r.others);
        printf(", exit %d\n", r.exit_code);
    }
    np_image_free(&img);
    return rc ? 1 : 0;
}
