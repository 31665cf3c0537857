/* app.c - a user's program for a board (tests/port/user_way_in.sh): built
 * against the installed runtime and board files only, it traces its calls
 * and dumps them through the port's default output (semihosting). main
 * returns the calls it read back: QEMU's exit status. */
#include "nanoprof/nanoprof.h"

static unsigned long long trace[2 * 16];
volatile unsigned sink;

__attribute__((noinline)) void leaf(void)
{
    for (unsigned i = 0; i < 50; i++)
        sink += i;
}

__attribute__((noinline)) void mid(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

__attribute__((noinline)) void top(void)
{
    mid(3);
    mid(2);
}

NP_NO_PROFILE int main(void)
{
    if (np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG) != NP_OK)
        return 100;
    top();
    np_calltrace_disable();
    np_calltrace_dump();
    np_calltrace_entry calls[16];
    return np_calltrace_read(calls, 16);
}
