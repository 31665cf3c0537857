/* exclude.c - opting out of instrumentation: NP_NO_PROFILE on a function,
 * and (GCC) -finstrument-functions-exclude-function-list=skipped_by_list.
 * Each excluded function calls an instrumented one, which then shows up as
 * a direct child of the instrumented caller. */
#include <nanoprof/nanoprof.h>

static uint64_t trace[2 * 64];

int leaf(int a)
{
    return a + 1;
}

NP_NO_PROFILE int not_profiled(int a)
{
    return leaf(a) * 2;
}

int skipped_by_list(int a)
{
    return leaf(a) * 3;
}

int top(int a)
{
    return not_profiled(a) + skipped_by_list(a);
}

int main(void)
{
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG);
    (void)top(1);
    np_calltrace_dump();
    return 0;
}
