/* stubs.c - instrumentation hooks that do nothing: the baseline each
 * mechanism's footprint is measured against (footprint.c). */
#include <stdint.h>

#define STUB __attribute__((no_instrument_function, used))

STUB void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn, (void)site;
}

STUB void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
}

STUB void __sanitizer_cov_trace_pc(void)
{
}

/* -pg's call: the caller pushed its lr; give it back and return (Thumb-1,
 * for every Cortex-M) */
__attribute__((naked)) void __gnu_mcount_nc(void)
{
    __asm__ __volatile__("push {r0}\n\t"
                         "ldr r0, [sp, #4]\n\t" /* the caller's lr */
                         "mov ip, r0\n\t"
                         "mov r0, lr\n\t"
                         "str r0, [sp, #4]\n\t" /* where to return */
                         "pop {r0}\n\t"
                         "mov lr, ip\n\t"
                         "pop {pc}\n");
}
