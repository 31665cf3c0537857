/* app.c - a user's program for a board (tests/port/user_way_in.sh): built
 * against the installed runtime and board files only (and the calls the
 * target firmwares count, known_calls.h), it traces its calls
 * and dumps them through the port's default output (semihosting). main
 * returns the calls it read back: QEMU's exit status. */
#include "nanoprof/nanoprof.h"

#include "known_calls.h" /* leaf, mid, top */

static unsigned long long trace[2 * 16];

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
