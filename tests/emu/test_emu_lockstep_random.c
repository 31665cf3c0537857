/* test_emu_lockstep_random.c - the interpreter against Unicorn on random
 * instruction streams (insn_gen.h), compared after every instruction
 * (lockstep.h): ARMv5TE streams on the ARM946E-S, ARMv4T streams on the
 * ARM7TDMI, each starting in ARM and in Thumb state.
 *
 * Run without arguments it is the ctest: STREAMS streams of each kind
 * (NP_LOCKSTEP_STREAMS in the environment overrides it). A difference
 * fails it with the report and the command that replays that one stream:
 *   test_emu_lockstep_random CPU SEED arm|thumb
 * With NP_LOCKSTEP_SURVEY=1 it goes on after a difference and prints one
 * line for each failing stream (the instruction), for a survey.
 * NP_LOCKSTEP_EXCLUDE=MASK replaces the classes left out (`excluded`
 * below; 0: none), to check a fix.
 *
 * The Cortex-M CPUs, one ctest each (a Cortex-M is no part of the run
 * without arguments):
 *   test_emu_lockstep_random cortex-m0|cortex-m3|cortex-m4|cortex-m33
 * runs M_STREAMS streams of the CPU's architecture (ARMv6-M, ARMv7-M,
 * ARMv7E-M + FPv4-SP, ARMv8-M mainline + DSP + FPv5-SP), Thumb only, and
 * replays one with SEED thumb after it as above. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "insn_gen.h"
#include "lockstep.h"

#define STREAMS 1500
/* Classes left out while a difference in them is open (insn_gen.h's enum
 * gen_class); none is. */
static unsigned excluded = 0;
/* streams per pair of engines */
#define REOPEN 200
/* instruction groups per stream: some 780 instructions */
#define ITEMS 250
/* Cortex-M: streams per CPU, instruction groups per stream (some 480
 * instructions): a few seconds a CPU under ASan */
#define M_STREAMS 300
#define M_ITEMS 250

static bool is_cortex_m(enum np_cpu_model model)
{
    return model >= NP_CPU_CORTEX_M0;
}

/* the generator's architecture for MODEL */
static enum gen_isa isa_of(enum np_cpu_model model)
{
    switch (model) {
    case NP_CPU_ARM7TDMI: return GEN_V4T;
    case NP_CPU_ARM946ES: return GEN_V5TE;
    case NP_CPU_CORTEX_M0: return GEN_V6M;
    case NP_CPU_CORTEX_M3: return GEN_V7M;
    case NP_CPU_CORTEX_M4: return GEN_V7EM;
    default: return GEN_V8M;
    }
}

static const struct lockstep_region regions[2] = {{GEN_CODE_BASE, GEN_CODE_SIZE}, {GEN_DATA_BASE, GEN_DATA_SIZE}};

/* The streams' svc and bkpt: r0 becomes a function of r0 and the comment
 * field, the same in both engines. */
static int answer(void *ctx, struct lockstep *ls, enum lockstep_side side, enum lockstep_call call, uint32_t imm)
{
    (void)ctx;
    uint32_t r0 = lockstep_reg(ls, side, 0);
    lockstep_set_reg(ls, side, 0, call == LS_SVC ? gen_svc_result(r0, imm) : gen_bkpt_result(r0, imm));
    return 1;
}

/* Runs the stream of SEED; 0 when the engines agreed all the way, else
 * -1 with the report printed. Adds the instructions compared to *INSNS. */
static int run_stream(struct lockstep *ls, struct gen_stream *s, uint64_t seed, enum gen_isa isa, bool thumb,
                      uint64_t *insns)
{
    bool m = isa >= GEN_V6M;
    gen_stream(s, seed, isa, thumb, m ? M_ITEMS : ITEMS, excluded);
    lockstep_load(ls, GEN_CODE_BASE, s->code, GEN_CODE_SIZE);
    lockstep_load(ls, GEN_DATA_BASE, s->data, GEN_DATA_SIZE);

    uint64_t insns0 = ls->insns;
    /* the branch hook on for every other stream: the interpreter without
     * it and with it, checked */
    ls->check_branches = seed & 1;
    enum lockstep_result res = LS_END;
    if (m) {
        /* a Cortex-M has no banked registers to set: no prologue */
        lockstep_set_fp(ls, s->fs, s->fpscr);
    } else {
        /* the prologue banks every mode's registers, in both engines */
        uint32_t r[16] = {0};
        r[0] = GEN_TABLE;
        r[15] = GEN_PROLOGUE;
        lockstep_set_state(ls, r, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F, 0);
        res = lockstep_run(ls, s->prologue_end, 100);
    }
    if (res == LS_END) {
        lockstep_set_state(ls, s->r, s->cpsr, s->spsr);
        res = lockstep_run(ls, s->end, 20 * (uint64_t)s->insns);
    }
    if (res == LS_END && lockstep_compare_memory(ls))
        res = LS_DIFFERENT;
    *insns += ls->insns - insns0;
    /* a stream that ends outside memory: both stopped there, unchanged */
    static const enum np_cpu_stop stops[] = {NP_STOP_LIMIT, NP_STOP_READ, NP_STOP_WRITE, NP_STOP_FETCH,
                                             NP_STOP_UNDEFINED};
    if (s->fault != GEN_FAULT_NONE && res == LS_STOPPED) {
        if (ls->stop == stops[s->fault] && (s->fault == GEN_FAULT_UNDEFINED || ls->cpu.fault_addr == s->fault_addr))
            return 0;
        fprintf(stderr, "lockstep: the stream should stop with a fault at 0x%08x (kind %d)\n", s->fault_addr, s->fault);
    } else if (s->fault != GEN_FAULT_NONE && res == LS_END) {
        fprintf(stderr, "lockstep: the stream should have faulted at 0x%08x\n", s->fault_addr);
        res = LS_DIFFERENT;
    } else if (res == LS_END) {
        return 0;
    }
    if (getenv("NP_LOCKSTEP_SURVEY")) {
        const char *line = strchr(ls->report, '\n');
        fprintf(stderr, "%llu %s: %.*s\n", (unsigned long long)seed, thumb ? "thumb" : "arm",
                line ? (int)strcspn(line + 1, "\n") : 0, line ? line + 1 : "");
        return -1;
    }
    if (res == LS_LIMIT)
        fprintf(stderr, "lockstep: the stream did not end: at 0x%08x after %llu steps, the end is 0x%08x\n",
                lockstep_pc(ls), (unsigned long long)(ls->insns - insns0), s->end);
    fputs(ls->report, stderr);
    fprintf(stderr, "replay: test_emu_lockstep_random %s %llu %s\n", np_cpu_model_name(ls->model),
            (unsigned long long)seed, thumb ? "thumb" : "arm");
    return -1;
}

static void read_env(void)
{
    const char *x = getenv("NP_LOCKSTEP_EXCLUDE");
    if (x)
        excluded = (unsigned)strtoul(x, NULL, 0);
}

static void run_streams(enum np_cpu_model model, bool thumb)
{
    static struct gen_stream s;
    struct lockstep ls;
    enum gen_isa isa = isa_of(model);
    unsigned n = is_cortex_m(model) ? M_STREAMS : STREAMS;
    const char *env = getenv("NP_LOCKSTEP_STREAMS");
    if (env && atoi(env) > 0)
        n = (unsigned)atoi(env);
    if (lockstep_init(&ls, model, regions, 2, answer, NULL)) {
        fputs(ls.report, stderr);
        fail();
    }
    uint64_t insns = 0, base = is_cortex_m(model) ? 1000000ull * (10 + model) : 1000000ull * (2 * (model == NP_CPU_ARM946ES) + thumb);
    int failed = 0;
    bool last_failed = false;
    bool survey = getenv("NP_LOCKSTEP_SURVEY") != NULL;
    for (unsigned i = 0; i < n && (!failed || survey); i++) {
        /* fresh engines after a difference (they differ then in what the
         * next prologue does not set) and every REOPEN streams: Unicorn
         * 2.0.1's translation cache, invalidated range by range for each
         * stream, crashes after some thousands of streams otherwise */
        if (i && (i % REOPEN == 0 || last_failed)) {
            lockstep_free(&ls);
            if (lockstep_init(&ls, model, regions, 2, answer, NULL))
                fail();
        }
        last_failed = run_stream(&ls, &s, base + i, isa, thumb, &insns) != 0;
        if (last_failed)
            failed = -1;
    }
    printf("%s, %s start: %u streams, %llu instructions compared\n", np_cpu_model_name(model),
           thumb ? "Thumb" : "ARM", n, (unsigned long long)insns);
    lockstep_free(&ls);
    assert_int_equal(failed, 0);
    assert_true(insns > (uint64_t)n * 100);
}

static void arm946_arm(void **state)
{
    (void)state;
    run_streams(NP_CPU_ARM946ES, false);
}

static void arm946_thumb(void **state)
{
    (void)state;
    run_streams(NP_CPU_ARM946ES, true);
}

static void arm7tdmi_arm(void **state)
{
    (void)state;
    run_streams(NP_CPU_ARM7TDMI, false);
}

static void arm7tdmi_thumb(void **state)
{
    (void)state;
    run_streams(NP_CPU_ARM7TDMI, true);
}

/* test_emu_lockstep_random CPU SEED arm|thumb: one stream, verbose */
static int replay(const char *cpu, const char *seed, const char *state)
{
    static struct gen_stream s;
    struct lockstep ls;
    int model = np_cpu_model_parse(cpu);
    if (model < 0) {
        fprintf(stderr, "unknown cpu %s\n", cpu);
        return 2;
    }
    bool thumb = !strcmp(state, "thumb");
    if (lockstep_init(&ls, (enum np_cpu_model)model, regions, 2, answer, NULL)) {
        fputs(ls.report, stderr);
        return 1;
    }
    uint64_t insns = 0;
    int rc = run_stream(&ls, &s, strtoull(seed, NULL, 0), isa_of((enum np_cpu_model)model),
                        thumb || is_cortex_m((enum np_cpu_model)model), &insns);
    printf("%llu instructions compared%s\n", (unsigned long long)insns, rc ? "" : ": no difference");
    lockstep_free(&ls);
    return rc ? 1 : 0;
}

/* the Cortex-M CPU of the ctest that runs with one argument */
static enum np_cpu_model m_model;

static void cortex_m(void **state)
{
    (void)state;
    run_streams(m_model, true);
}

int main(int argc, char **argv)
{
    read_env();
    if (argc == 4)
        return replay(argv[1], argv[2], argv[3]);
    if (argc == 2) {
        int model = np_cpu_model_parse(argv[1]);
        if (model < 0 || !is_cortex_m((enum np_cpu_model)model)) {
            fprintf(stderr, "usage: test_emu_lockstep_random [cortex-m0|cortex-m3|cortex-m4|cortex-m33]\n");
            return 2;
        }
        m_model = (enum np_cpu_model)model;
        const struct CMUnitTest m_tests[] = {cmocka_unit_test(cortex_m)};
        return cmocka_run_group_tests(m_tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arm946_arm),
        cmocka_unit_test(arm946_thumb),
        cmocka_unit_test(arm7tdmi_arm),
        cmocka_unit_test(arm7tdmi_thumb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
