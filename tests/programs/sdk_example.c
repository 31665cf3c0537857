/* sdk_example.c - the call trace and function cost examples of the console
 * SDK's profiler manual, done with nanoprof. tests/compilers.sh builds it
 * with GCC and Clang at -O0 and -O2, statically and against the shared
 * library, and compares the output with tests/expected/sdk_example.txt. */
#include <nanoprof/nanoprof.h>

static uint64_t trace[2 * 64], cost[2 * 1024], stats[1024];

int test1(int a);
static int test2(int a);
int test3(int a);

int test3(int a)
{
    if (a == 0x103)
        np_calltrace_dump(); /* stack mode: where are we now? */
    return a + 4;
}

static int test2(int a)
{
    return test3(a + 2);
}

int test1(int a)
{
    return test2(a + 1);
}

int main(void)
{
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK);
    (void)test1(0x100);
    np_calltrace_shutdown();

    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG);
    (void)test1(100);
    (void)test1(100);
    np_calltrace_dump();
    np_calltrace_shutdown();

    np_stats_init(stats, sizeof stats);
    np_cost_init(cost, sizeof cost);
    for (int i = 0; i < 3; i++)
        (void)test1(i);
    np_stats_calc(stats);
    np_stats_dump(stats);
    return 0;
}
