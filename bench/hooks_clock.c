/* hooks_clock.c - the floor of a timed hook: each hook reads the CPU
 * counter once (as nanoprof's np_port_counter does: rdtsc on x86-64,
 * cntvct_el0 on AArch64) and stores it, so a call costs two clock reads and
 * nothing else. A function-cost profiler cannot do less. Built without
 * -finstrument-functions. */
#include <stdint.h>
#include "../src/port/port.h" /* np_port_counter: the very read nanoprof does */

#define NP_BENCH_HOOK __attribute__((no_instrument_function, noinline, used))

volatile uint64_t bench_clock_sink;

NP_BENCH_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn, (void)site;
    bench_clock_sink = np_port_counter();
}

NP_BENCH_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
    bench_clock_sink = np_port_counter();
}
