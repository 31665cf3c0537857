/* test_emu_calltrack.c - the call tracker's decisions, one idiom at a
 * time, from hand-made PC writes: calls, returns, jumps, veneers, long
 * jumps, re-synchronisation, exceptions and threads, with the exact
 * events it tells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "emu/calltrack.h"

/* Functions of the fake firmware: 0x1000, 0x1100, ... each 0x100 bytes. */
#define FN(i) (0x1000u + 0x100u * (i))

static uint32_t func_of(void *ctx, uint32_t addr)
{
    (void)ctx;
    return addr >= FN(0) && addr < FN(16) ? addr & ~0xffu : 0;
}

static const char *name_of(void *ctx, uint32_t addr)
{
    static char buf[16];
    (void)ctx;
    snprintf(buf, sizeof buf, "f%u", (addr - FN(0)) / 0x100);
    return buf;
}

/* Every event told, as text: "T1 main", "E1 f2", "X1", "R1 2", "S2". */
static char log_buf[4096];

static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(log_buf);
    vsnprintf(log_buf + n, sizeof log_buf - n, fmt, ap);
    va_end(ap);
}

static int on_thread(void *ctx, uint32_t tid, const char *name)
{
    (void)ctx;
    note("T%u %s;", tid, name ? name : "-");
    return 0;
}

static int on_enter(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t address)
{
    (void)ctx, (void)cycles, (void)insns;
    note("E%u %s;", tid, name_of(NULL, address));
    return 0;
}

static int on_exit(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns)
{
    (void)ctx, (void)cycles, (void)insns;
    note("X%u;", tid);
    return 0;
}

static int on_resync(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint32_t n)
{
    (void)ctx, (void)cycles, (void)insns;
    note("R%u %u;", tid, n);
    return 0;
}

static int on_resume(void *ctx, uint32_t tid, uint64_t cycles, uint64_t insns, uint64_t oc, uint64_t oi)
{
    (void)ctx;
    note("S%u %llu %llu;", tid, (unsigned long long)(cycles - oc), (unsigned long long)(insns - oi));
    return 0;
}

static struct np_cpu cpu;
static struct np_calltrack *trk;

/* An RTOS kernel's name of the running task (np_calltrack_funcs
 * .thread_name), when the test sets one */
static const char *kernel_name;
static bool kernel_names;

static const char *thread_name(void *ctx, struct np_cpu *c)
{
    assert_ptr_equal(ctx, &kernel_name);
    assert_ptr_equal(c, &cpu);
    return kernel_name;
}

static void start(uint32_t switch_fn)
{
    log_buf[0] = 0;
    memset(&cpu, 0, sizeof cpu);
    cpu.r[13] = 0x8000;
    struct np_calltrack_out out = { NULL, on_thread, on_enter, on_exit, on_resync, on_resume };
    struct np_calltrack_funcs funcs = { .func_of = func_of, .name_of = name_of };
    if (kernel_names) {
        funcs.thread_name = thread_name;
        funcs.thread_ctx = &kernel_name;
    }
    struct np_calltrack_options opt = { .switch_fn = switch_fn };
    trk = np_calltrack_new(&out, &funcs, &opt);
    assert_non_null(trk);
}

static void finish(const char *expect)
{
    np_calltrack_finish(trk, &cpu);
    assert_string_equal(log_buf, expect);
}

/* Runs N instructions of 1 cycle each, then the PC write. */
static void br(unsigned n, uint8_t kind, uint32_t from, uint32_t to, uint8_t reg, uint8_t flags)
{
    cpu.insns += n;
    cpu.cycles += 3 * n;
    struct np_branch b = { from, to, kind, reg, flags, 0, 0 };
    np_calltrack_branch(trk, &cpu, &b);
}

/* A call from FROM to TO: LR = FROM + 4, the callee pushes 8 bytes. */
static void call(uint8_t kind, uint32_t from, uint32_t to)
{
    cpu.r[14] = from + 4;
    br(5, kind, from, to, kind == NP_BR_BLX_REG ? 3 : 15, 0);
}

static void ret(uint8_t kind, uint32_t from, uint32_t to)
{
    br(5, kind, from, to, kind == NP_BR_LDM_PC ? 13 : 14, 0);
}

static void bl_and_bx_lr(void **state)
{
    (void)state;
    start(0);
    call(NP_BR_BL, FN(0) + 0x10, FN(1));
    call(NP_BR_BL, FN(1) + 0x20, FN(2));
    ret(NP_BR_BX, FN(2) + 0x30, FN(1) + 0x24);
    call(NP_BR_BLX_REG, FN(1) + 0x40, FN(3));
    ret(NP_BR_LDM_PC, FN(3) + 0x8, FN(1) + 0x44);
    br(3, NP_BR_B, FN(1) + 0x48, FN(1) + 0x10, 15, NP_BRF_COND); /* a loop: a jump */
    ret(NP_BR_MOV_PC, FN(1) + 0x50, FN(0) + 0x14);
    finish("T1 main;E1 f1;E1 f2;X1;E1 f3;X1;X1;");
    const struct np_calltrack_stats *s = np_calltrack_stats(trk);
    assert_int_equal(s->calls, 3);
    assert_int_equal(s->returns, 3);
    assert_int_equal(s->jumps, 1);
    np_calltrack_free(trk);
}

/* mov lr, pc then bx r3 / ldr pc, [...]: calls; the same without the
 * link: a tail call (a jump). */
static void linked_idioms(void **state)
{
    (void)state;
    start(0);
    cpu.r[14] = FN(0) + 0x18;
    br(4, NP_BR_BX, FN(0) + 0x14, FN(4), 3, NP_BRF_LINKED);
    ret(NP_BR_BX, FN(4) + 0x10, FN(0) + 0x18);
    cpu.r[14] = FN(0) + 0x28;
    br(4, NP_BR_LDR_PC, FN(0) + 0x24, FN(5), 2, NP_BRF_LINKED);
    ret(NP_BR_LDR_PC, FN(5) + 0x10, FN(0) + 0x28);
    br(4, NP_BR_BX, FN(0) + 0x30, FN(6), 3, 0); /* tail call through a register */
    finish("T1 main;E1 f4;X1;E1 f5;X1;");
    assert_int_equal(np_calltrack_stats(trk)->jumps, 1);
    np_calltrack_free(trk);
}

/* bl to a veneer that jumps on (bx pc; b target): one call of the target. */
static void veneer(void **state)
{
    (void)state;
    start(0);
    uint32_t v = FN(15) + 0x80;
    call(NP_BR_BL, FN(0) + 0x10, v);
    cpu.insns++;
    struct np_branch b1 = { v, v + 4, NP_BR_BX, 15, 0, 0, 0 };
    np_calltrack_branch(trk, &cpu, &b1);
    cpu.insns++;
    struct np_branch b2 = { v + 4, FN(7), NP_BR_B, 15, 0, 0, 0 };
    np_calltrack_branch(trk, &cpu, &b2);
    ret(NP_BR_BX, FN(7) + 0x20, FN(0) + 0x14);
    /* a function that returns at its first instruction is no veneer */
    call(NP_BR_BL, FN(0) + 0x20, FN(8));
    br(1, NP_BR_BX, FN(8), FN(0) + 0x24, 14, 0);
    finish("T1 main;E1 f7;X1;E1 f8;X1;");
    assert_int_equal(np_calltrack_stats(trk)->veneers, 2);
    np_calltrack_free(trk);
}

/* A Thumb bl inside one function to a place that is no function start
 * (an ARM bl is always a call). */
static void long_jump(void **state)
{
    (void)state;
    start(0);
    cpu.r[14] = FN(1) + 0x14;
    br(5, NP_BR_BL, FN(1) + 0x10, FN(1) + 0x80, 15, NP_BRF_FROM_THUMB | NP_BRF_THUMB);
    call(NP_BR_BL, FN(1) + 0x84, FN(2));
    ret(NP_BR_BX, FN(2) + 0x10, FN(1) + 0x88);
    finish("T1 main;E1 f2;X1;");
    assert_int_equal(np_calltrack_stats(trk)->long_jumps, 1);
    np_calltrack_free(trk);
}

/* f1 -> f2 -> f3; f3 returns straight into f1 (f2's return address):
 * f3 returned, f2 missed its return. Then f5 -> f6, and f5 returns to
 * main: f6 missed its return. */
static void resync(void **state)
{
    (void)state;
    start(0);
    call(NP_BR_BL, FN(0) + 0x10, FN(1));
    call(NP_BR_BL, FN(1) + 0x10, FN(2));
    call(NP_BR_BL, FN(2) + 0x10, FN(3));
    ret(NP_BR_BX, FN(3) + 0x10, FN(1) + 0x14); /* bx r2 with f2's return address */
    ret(NP_BR_BX, FN(1) + 0x20, FN(0) + 0x14);
    call(NP_BR_BL, FN(0) + 0x30, FN(5));
    call(NP_BR_BL, FN(5) + 0x10, FN(6));
    ret(NP_BR_BX, FN(5) + 0x20, FN(0) + 0x34);
    finish("T1 main;E1 f1;E1 f2;E1 f3;X1;R1 1;X1;E1 f5;E1 f6;R1 1;X1;");
    assert_int_equal(np_calltrack_stats(trk)->resynced, 2);
    np_calltrack_free(trk);
}

/* An IRQ through its vector (ldr pc, [pc, #x]) into a handler that calls
 * a function, back with subs pc, lr, #4; an svc likewise with movs pc, lr. */
static void exceptions(void **state)
{
    (void)state;
    start(0);
    call(NP_BR_BL, FN(0) + 0x10, FN(1));
    struct np_branch irq = { FN(1) + 0x20, 0x18, NP_BR_EXCEPTION, 15, 0, NP_VEC_IRQ, 0 };
    uint32_t sp = cpu.r[13];
    cpu.r[13] = 0x9000; /* the IRQ mode's stack */
    cpu.r[14] = FN(1) + 0x24;
    np_calltrack_branch(trk, &cpu, &irq);
    br(1, NP_BR_LDR_PC, 0x18, FN(8), 15, 0);
    call(NP_BR_BL, FN(8) + 0x10, FN(9));
    ret(NP_BR_BX, FN(9) + 0x4, FN(8) + 0x14);
    cpu.r[13] = sp;
    br(2, NP_BR_EXC_RETURN, FN(8) + 0x20, FN(1) + 0x20, 14, 0);
    struct np_branch svc = { FN(1) + 0x30, 0x08, NP_BR_EXCEPTION, 15, 0, NP_VEC_SWI, 0 };
    np_calltrack_branch(trk, &cpu, &svc);
    br(1, NP_BR_B, 0x08, FN(10), 15, 0);
    br(3, NP_BR_EXC_RETURN, FN(10) + 0x8, FN(1) + 0x34, 14, 0);
    ret(NP_BR_BX, FN(1) + 0x40, FN(0) + 0x14);
    finish("T1 main;E1 f1;E1 f8;E1 f9;X1;X1;E1 f10;X1;X1;");
    assert_int_equal(np_calltrack_stats(trk)->exceptions, 2);
    np_calltrack_free(trk);
}

/* A cooperative switch: main calls yield (f11), which returns on a new
 * stack into task f12's start (a new thread); the task calls yield, which
 * returns on main's stack to main's call (back to thread 1). */
static void threads(void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        start(named ? FN(11) : 0);
        call(NP_BR_BL, FN(0) + 0x10, FN(11));
        uint32_t main_sp = 0x8000;
        cpu.r[13] = 0x4000; /* the task's stack */
        ret(NP_BR_BX, FN(11) + 0x40, FN(12));
        call(NP_BR_BL, FN(12) + 0x10, FN(2));
        ret(NP_BR_BX, FN(2) + 0x8, FN(12) + 0x14);
        call(NP_BR_BL, FN(12) + 0x20, FN(11));
        cpu.r[13] = main_sp;
        ret(NP_BR_LDM_PC, FN(11) + 0x40, FN(0) + 0x14);
        call(NP_BR_BL, FN(0) + 0x20, FN(11));
        cpu.r[13] = 0x4000;
        ret(NP_BR_LDM_PC, FN(11) + 0x40, FN(12) + 0x24);
        finish("T1 main;E1 f11;T2 f12;E2 f12;E2 f2;X2;E2 f11;S1 60 20;X1;E1 f11;S2 30 10;X2;");
        assert_int_equal(np_calltrack_stats(trk)->threads, 2);
        assert_int_equal(np_calltrack_stats(trk)->switches, 3);
        np_calltrack_free(trk);
    }
}

/* A preemptive switch in an IRQ handler: the handler's exception return
 * lands at a task's first instruction on another stack (a new thread);
 * the task's IRQ returns to where thread 1 was interrupted (thread 1
 * again, its interrupted handler call ending). */
static void preemptive(void **state)
{
    (void)state;
    start(0);
    call(NP_BR_BL, FN(0) + 0x10, FN(1));
    struct np_branch irq1 = { FN(1) + 0x20, 0x18, NP_BR_EXCEPTION, 15, 0, NP_VEC_IRQ, 0 };
    cpu.r[13] = 0x9000;
    np_calltrack_branch(trk, &cpu, &irq1);
    br(1, NP_BR_LDR_PC, 0x18, FN(8), 15, 0);
    cpu.r[13] = 0x4000; /* the task's stack, made up by the scheduler */
    br(9, NP_BR_EXC_RETURN, FN(8) + 0x40, FN(12), 14, 0);
    call(NP_BR_BL, FN(12) + 0x10, FN(2));
    ret(NP_BR_BX, FN(2) + 0x8, FN(12) + 0x14);
    struct np_branch irq2 = { FN(12) + 0x40, 0x18, NP_BR_EXCEPTION, 15, 0, NP_VEC_IRQ, 0 };
    cpu.r[13] = 0x9000;
    np_calltrack_branch(trk, &cpu, &irq2);
    br(1, NP_BR_LDR_PC, 0x18, FN(8), 15, 0);
    cpu.r[13] = 0x8000;
    br(9, NP_BR_EXC_RETURN, FN(8) + 0x40, FN(1) + 0x20, 14, 0);
    ret(NP_BR_BX, FN(1) + 0x30, FN(0) + 0x14);
    finish("T1 main;E1 f1;E1 f8;T2 f12;E2 f12;E2 f2;X2;E2 f8;S1 60 20;X1;X1;");
    assert_int_equal(np_calltrack_stats(trk)->threads, 2);
    assert_int_equal(np_calltrack_stats(trk)->resynced, 0);
    np_calltrack_free(trk);
}

/* Threads named by the kernel (--rtos): a new thread takes the name the
 * kernel has when it starts, not its function's; thread 1 stays "main",
 * and a thread switched back to is not named again. No name from the
 * kernel: the function's. */
static void kernel_thread_names(void **state)
{
    (void)state;
    kernel_names = true;
    for (int named = 0; named < 2; named++) {
        kernel_name = named ? "Blinky" : NULL;
        start(0);
        call(NP_BR_BL, FN(0) + 0x10, FN(11));
        cpu.r[13] = 0x4000;
        ret(NP_BR_BX, FN(11) + 0x40, FN(12));
        call(NP_BR_BL, FN(12) + 0x20, FN(11));
        kernel_name = "Logger";
        cpu.r[13] = 0x8000;
        ret(NP_BR_LDM_PC, FN(11) + 0x40, FN(0) + 0x14);
        call(NP_BR_BL, FN(0) + 0x20, FN(11));
        cpu.r[13] = 0x4000;
        ret(NP_BR_LDM_PC, FN(11) + 0x40, FN(12) + 0x24);
        finish(named ? "T1 main;E1 f11;T2 Blinky;E2 f12;E2 f11;S1 30 10;X1;E1 f11;S2 30 10;X2;"
                     : "T1 main;E1 f11;T2 f12;E2 f12;E2 f11;S1 30 10;X1;E1 f11;S2 30 10;X2;");
        np_calltrack_free(trk);
    }
    kernel_names = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bl_and_bx_lr), cmocka_unit_test(linked_idioms), cmocka_unit_test(veneer),
        cmocka_unit_test(long_jump),    cmocka_unit_test(resync),        cmocka_unit_test(exceptions),
        cmocka_unit_test(threads),      cmocka_unit_test(preemptive),    cmocka_unit_test(kernel_thread_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
