/* pgexits.c - -pg alone on a Cortex-M target (NP_PG_EXITS, run.sh's
 * variant pgexits): the firmware built with -pg and not
 * -finstrument-functions, its calls' exits from the trampoline the hook
 * puts in place of each return address. In the call trace's log mode each
 * record's depth says whether the calls before it ended where they should:
 * checked exactly, with r0-r3, for calls that return from lr and from
 * their frame, a tail call, recursion deeper than the return stack (the
 * calls past it counted, not recorded), a longjmp out of four calls, an
 * interrupt handler (its return an exception return through the
 * trampoline), 64-bit return values, the prologues of pg_shapes.c
 * (-O0, a large frame, varargs), Thumb-1's saving of r8-r11 through lr,
 * and on the Cortex-M4 FPU registers saved by vpush (built with
 * -mfloat-abi=softfp there); on ARMv7-M, prologues written out in
 * assembly with subw, str.w and sub.w, and vpush of single registers.
 * Then the open calls in stack mode, and function cost's counts. */
#include <setjmp.h>
#include <stdint.h>
#include "check.h"

#define NOINL __attribute__((noinline))

static uint32_t buf[64 * 8]; /* 64 records of 32 bytes */
static np_calltrace_entry seen[48];
static int nseen;
static volatile int probing, sink, isr_ran;
static jmp_buf jb;

static NOPROF void snapshot(void) { nseen = np_calltrace_read(seen, 48); }

/* pg_shapes.c (-O0) */
int shape_leaf(int x);
int shape_o0(int a);
int shape_frame(int n);
int shape_varargs(int n, ...);

NOINL int test3(int a, int b, int c, int d)
{
    if (probing)
        snapshot();
    return a + b + c + d + 4;
}
NOINL int test2(int a, int b, int c, int d) { return test3(a + 2, b, c, d) + 1; }
NOINL int test1(int a, int b, int c, int d) { return test2(a + 1, b, c, d) + 1; }
NOINL uint64_t wide(uint32_t x) { return (uint64_t)x << 32 | (x ^ 0xffffffffu); }
NOINL int tail_callee(int x) { return x * 7 + sink; }
NOINL int tail_caller(int x) { return tail_callee(x * 3); } /* a sibling call at -O2 */
NOINL int recurse(int n)
{
    if (!n)
        return 0;
    int r = recurse(n - 1);
    sink = r;
    return r + 1;
}
NOINL void jump_deep(int n)
{
    if (n)
        jump_deep(n - 1);
    else if (!probing) /* (always: a path that returns, for the compiler) */
        longjmp(jb, 1);
    sink++;
}
NOINL int jumper(void)
{
    if (setjmp(jb))
        return 1;
    jump_deep(3);
    return 0;
}
NOINL void isr_work(void) { isr_ran++; }
void PendSV_Handler(void) { isr_work(); }
NOINL int with_irq(void)
{
    *(volatile uint32_t *)0xe000ed04u = 1u << 28; /* ICSR: PendSV pending */
    __asm__ __volatile__("dsb\n isb" ::: "memory");
    return isr_ran;
}
/* many values live across calls: push.w on ARMv7-M, on ARMv6-M high
 * registers saved through `mov lr, r8` and a second push */
NOINL int shape_many(int a, int b, int c, int d)
{
    int e = shape_leaf(a), f = shape_leaf(b), g = shape_leaf(c), h = shape_leaf(d);
    int i = shape_leaf(e + f), j = shape_leaf(g + h), k = shape_leaf(i ^ j);
    return a * b + c * d + e * f + g * h + i * j + k * e + f * g + h * i + j * k;
}
#if defined(__ARM_FP) /* the Cortex-M4's build: its FPU's registers saved by vpush */
NOINL int shape_float(float a, int n)
{
    float x = a * 1.5f, y = a * 2.5f;
    for (int i = 0; i < n; i++)
        x += (float)shape_leaf(i) * y;
    return (int)(x + y);
}
#endif
#if __ARM_ARCH_ISA_THUMB >= 2
/* Prologues GCC makes for other frames, written out: subw (a frame of
 * 1000 bytes), str.w lr with a modified-immediate sub.w, and (with the
 * FPU) vpush of single registers. Each calls -pg's hook as GCC does,
 * then shape_leaf(x). */
int asm_subw(int x);
int asm_strw(int x);
__asm__(".syntax unified\n.thumb\n"
        ".global asm_subw\n.type asm_subw, %function\n.thumb_func\nasm_subw:\n"
        "  push {r4, lr}\n  subw sp, sp, #1000\n  push {lr}\n  bl __gnu_mcount_nc\n"
        "  bl shape_leaf\n  addw sp, sp, #1000\n  pop {r4, pc}\n.size asm_subw, .-asm_subw\n"
        ".global asm_strw\n.type asm_strw, %function\n.thumb_func\nasm_strw:\n"
        "  str.w lr, [sp, #-4]!\n  sub.w sp, sp, #1020\n  push {lr}\n  bl __gnu_mcount_nc\n"
        "  bl shape_leaf\n  add.w sp, sp, #1020\n  ldr.w pc, [sp], #4\n.size asm_strw, .-asm_strw\n");
#if defined(__ARM_FP)
int asm_vpush(int x);
__asm__(".syntax unified\n.thumb\n"
        ".global asm_vpush\n.type asm_vpush, %function\n.thumb_func\nasm_vpush:\n"
        "  push {r4, lr}\n  vpush {s16-s17}\n  push {lr}\n  bl __gnu_mcount_nc\n"
        "  bl shape_leaf\n  vpop {s16-s17}\n  pop {r4, pc}\n.size asm_vpush, .-asm_vpush\n");
#endif
#endif
NOINL void marker(void) { sink++; }

struct want {
    const void *fn;
    uint32_t depth;
};

static NOPROF int is(const np_calltrace_entry *e, const void *fn, uint32_t depth)
{
    return (uintptr_t)e->fn - ((uintptr_t)fn & ~(uintptr_t)1) < 64 && e->depth == depth;
}

/* The records, oldest first, are exactly W. */
static NOPROF int records_are(const struct want *w, int n)
{
    snapshot();
    int ok = nseen == n;
    for (int i = 0; ok && i < n; i++)
        ok = is(&seen[n - 1 - i], w[i].fn, w[i].depth);
    for (int i = 0; !ok && i < nseen; i++) { /* what differs */
        tc_put("  record ");
        tc_put_u64((uint64_t)i);
        tc_put(": fn ");
        tc_put_u64((uintptr_t)seen[nseen - 1 - i].fn);
        tc_put(", depth ");
        tc_put_u64(seen[nseen - 1 - i].depth);
        tc_put(i < n ? ", want fn " : "\n");
        if (i < n) {
            tc_put_u64((uintptr_t)w[i].fn);
            tc_put(", depth ");
            tc_put_u64(w[i].depth);
            tc_put("\n");
        }
    }
    return ok;
}

static NOPROF int args_are(const np_calltrace_entry *e, uint32_t a0)
{
    return e->has_args && e->args[0] == a0 && e->args[1] == 0x80 && e->args[2] == 0x80 && e->args[3] == 0x2000001f;
}

static uint64_t cost_buf[128];
static uint64_t stats_buf[160];

NOPROF int main(void)
{
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xe000ed88u |= 0xfu << 20; /* CPACR: the FPU on */
    __asm__ __volatile__("dsb\n isb" ::: "memory");
#endif
    tc_check(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG) == NP_OK, "log mode init");
    int r = test1(0x100, 0x80, 0x80, 0x2000001f);
    uint64_t w = wide(0x12345678u);
    int t = tail_caller(5);
    int k = recurse(10);
    int j = jumper();
    int q = with_irq();
    int s0 = shape_o0(3), s1 = shape_frame(7), s2 = shape_varargs(3, 5, 6, 7), s3 = shape_many(1, 2, 3, 4);
#if defined(__ARM_FP)
    int s4 = shape_float(2.0f, 3);
#else
    int s4 = 38;
#endif
#if __ARM_ARCH_ISA_THUMB >= 2
    int s5 = asm_subw(4) + asm_strw(5);
#if defined(__ARM_FP)
    s5 += asm_vpush(6) - 7;
#endif
#else
    int s5 = 11;
#endif
    marker();
    static const struct want log[] = {
        { test1, 0 }, { test2, 1 }, { test3, 2 }, { wide, 0 }, { tail_caller, 0 }, { tail_callee, 1 },
        { recurse, 0 }, { recurse, 1 }, { recurse, 2 }, { recurse, 3 }, { recurse, 4 }, { recurse, 5 },
        { recurse, 6 }, { recurse, 7 }, { jumper, 0 }, { jump_deep, 1 }, { jump_deep, 2 }, { jump_deep, 3 },
        { jump_deep, 4 }, { with_irq, 0 }, { PendSV_Handler, 1 }, { isr_work, 2 }, { shape_o0, 0 },
        { shape_leaf, 1 }, { shape_frame, 0 }, { shape_leaf, 1 }, { shape_varargs, 0 }, { shape_leaf, 1 },
        { shape_many, 0 }, { shape_leaf, 1 }, { shape_leaf, 1 }, { shape_leaf, 1 }, { shape_leaf, 1 },
        { shape_leaf, 1 }, { shape_leaf, 1 }, { shape_leaf, 1 },
#if defined(__ARM_FP)
        { shape_float, 0 }, { shape_leaf, 1 }, { shape_leaf, 1 }, { shape_leaf, 1 },
#endif
#if __ARM_ARCH_ISA_THUMB >= 2
        { asm_subw, 0 }, { shape_leaf, 1 }, { asm_strw, 0 }, { shape_leaf, 1 },
#if defined(__ARM_FP)
        { asm_vpush, 0 }, { shape_leaf, 1 },
#endif
#endif
        { marker, 0 },
    };
    tc_check(records_are(log, (int)(sizeof log / sizeof log[0])),
             "log mode: each call at its depth (every exit seen, through the trampoline)");
    tc_check(args_are(&seen[nseen - 1], 0x100) && args_are(&seen[nseen - 3], 0x103), "log mode: r0-r3 with -pg alone");
    tc_check(r == 0x103 + 0x80 + 0x80 + 0x2000001f + 4 + 2, "return value through the trampoline");
    tc_check(w == ((uint64_t)0x12345678u << 32 | 0xedcba987u), "64-bit return value (r0, r1) through the trampoline");
    tc_check(t == 105 && k == 10 && j == 1 && q == 1, "tail call, recursion, longjmp, interrupt: values");
    tc_check(s0 == 4 && s1 == 8 && s2 == 19 && s3 == 298 && s4 == 38 && s5 == 11,
             "pg_shapes: values");
    tc_check(np_pg_unhooked() == 3, "recursion past NP_PG_EXITS (8): the 3 calls deeper counted");
    np_calltrace_shutdown();

    tc_check(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK) == NP_OK, "stack mode init");
    probing = 1;
    test1(0x200, 0x80, 0x80, 0x2000001f);
    probing = 0;
    tc_check(nseen == 3 && is(&seen[0], test3, 2) && is(&seen[1], test2, 1) && is(&seen[2], test1, 0) &&
                 args_are(&seen[0], 0x203),
             "stack mode: the open calls");
    snapshot();
    tc_check(nseen == 0, "stack mode: none open after the return");
    /* each shape's exit at its return, not at the next call */
    int open_after = 0;
#define RETURNED(call) (void)(call), snapshot(), open_after += nseen
    RETURNED(shape_o0(1));
    RETURNED(shape_frame(1));
    RETURNED(shape_varargs(2, 1, 2));
    RETURNED(shape_many(1, 2, 3, 4));
    RETURNED(tail_caller(1));
    RETURNED(with_irq());
#if defined(__ARM_FP)
    RETURNED(shape_float(1.0f, 2));
#endif
#if __ARM_ARCH_ISA_THUMB >= 2
    RETURNED(asm_subw(1));
    RETURNED(asm_strw(1));
#if defined(__ARM_FP)
    RETURNED(asm_vpush(1));
#endif
#endif
    tc_check(open_after == 0, "stack mode: every shape's call closed at its return");
    np_calltrace_shutdown();

    tc_check(np_stats_init(stats_buf, sizeof stats_buf) == NP_OK && np_cost_init(cost_buf, sizeof cost_buf) == NP_OK,
             "cost init");
    for (int i = 0; i < 3; i++)
        test1(i, 0x80, 0x80, 0x2000001f);
    recurse(5);
    np_func_stats st1, st3, rec;
    tc_check(np_stats_calc(stats_buf) == NP_OK && np_stats_find(stats_buf, test1, &st1) == NP_OK &&
                 np_stats_find(stats_buf, test3, &st3) == NP_OK && np_stats_find(stats_buf, recurse, &rec) == NP_OK,
             "cost: the functions found by their addresses");
    tc_check(st1.calls == 3 && st3.calls == 3 && rec.calls == 6, "cost: exact counts");
    tc_check(st1.total_ns >= st3.total_ns && st1.self_ns < st1.total_ns, "cost: a caller's time holds its callees'");
    np_cost_shutdown();
    return tc_finish();
}
