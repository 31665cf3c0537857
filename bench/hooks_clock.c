/* hooks_clock.c - the floor of a timed hook: each hook reads the CPU
 * counter once (as nanoprof's np_port_counter does: rdtsc on x86-64,
 * cntvct_el0 on AArch64) and stores it, so a call costs two clock reads and
 * nothing else. A function-cost profiler cannot do less. Built without
 * -finstrument-functions. */
#include <stdint.h>
#include <time.h>

#define NP_BENCH_HOOK __attribute__((no_instrument_function, noinline, used))

volatile uint64_t bench_clock_sink;

static inline __attribute__((always_inline)) uint64_t counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

NP_BENCH_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn, (void)site;
    bench_clock_sink = counter();
}

NP_BENCH_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
    bench_clock_sink = counter();
}
