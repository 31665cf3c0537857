/* workload.c - instrumented functions with known call patterns. */
#define _GNU_SOURCE
#include "workload.h"
#include <time.h>

#define NOINLINE __attribute__((noinline))

void (*wl_probe)(void);

NOINLINE int test3(int a)
{
    if (wl_probe)
        wl_probe();
    return a + 4;
}

/* static on purpose: names must come from the symbol table, not dladdr */
static NOINLINE int test2(int a)
{
    return test3(a + 2);
}

NOINLINE int test1(int a)
{
    return test2(a + 1);
}

NOINLINE unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

unsigned long fib_calls(unsigned n)
{
    return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2);
}

NOINLINE int square(int x)
{
    return x * x;
}

NOINLINE int twice(int x)
{
    return 2 * x;
}

NOINLINE int apply(int (*f)(int), int x)
{
    return f(x);
}

NOINLINE int recurse(int n)
{
    if (n == 0) {
        if (wl_probe)
            wl_probe();
        return 0;
    }
    return recurse(n - 1) + 1;
}

NOINLINE void jump_deep(int n, jmp_buf *env)
{
    if (n < 0)
        return;
    if (n == 0)
        longjmp(*env, 1);
    jump_deep(n - 1, env);
    __asm__ volatile("" ::: "memory"); /* keep it from being a tail call */
}

NOINLINE int jump_guard(int depth)
{
    jmp_buf env;
    if (setjmp(env) == 0) {
        jump_deep(depth, &env);
        return 0;
    }
    return 1;
}

NOINLINE int jump_then_call(int depth)
{
    jmp_buf env;
    volatile int r = 0;
    if (setjmp(env) == 0)
        jump_deep(depth, &env);
    r = test1(r);
    return r;
}

static __attribute__((no_instrument_function)) uint64_t now_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE void spin_thread_cpu_ns(uint64_t ns)
{
    uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
    while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
        ;
}

NOINLINE void spin_wall_ns(uint64_t ns)
{
    uint64_t end = now_ns(CLOCK_MONOTONIC) + ns;
    while (now_ns(CLOCK_MONOTONIC) < end)
        ;
}

NOINLINE void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE void spin_a(uint64_t ns)
{
    spin_thread_cpu_ns(ns);
}

NOINLINE void spin_b(uint64_t ns)
{
    spin_thread_cpu_ns(ns);
}

NOINLINE void handler_work(void)
{
    (void)test1(7);
}
