/* hooks_empty.c - the floor of any hook: entry and exit hooks that do
 * nothing. What an instrumented program costs with these is the price of
 * the instrumentation itself (two calls per function and their argument
 * set-up), before a profiler does any work. Built without
 * -finstrument-functions. */
#define NP_BENCH_HOOK __attribute__((no_instrument_function, noinline, used))

NP_BENCH_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn, (void)site;
}

NP_BENCH_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
}
