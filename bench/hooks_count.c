/* hooks_count.c - counts hook entries, so the harness can print exactly how
 * many calls one run of a workload makes (bench/run.sh divides by this).
 * Not a timed variant. Built without -finstrument-functions. */
#define NP_BENCH_HOOK __attribute__((no_instrument_function, noinline, used))

volatile unsigned long long bench_hook_calls;

NP_BENCH_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn, (void)site;
    bench_hook_calls++;
}

NP_BENCH_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
}
