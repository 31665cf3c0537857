/* args_workload.c - a function of four arguments for test_calltrace_args,
 * compiled once per hook (tests/CMakeLists.txt): ARGS_FN names it. It
 * calls args_probe, when set, while it is open (stack mode). */
#include <stdint.h>

extern void (*args_probe)(void);

__attribute__((noinline)) uintptr_t ARGS_FN(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d)
{
    if (args_probe)
        args_probe();
    __asm__ volatile("" ::: "memory");
    return a + b + c + d;
}
