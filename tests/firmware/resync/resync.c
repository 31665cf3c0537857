/* resync.c - calls that end without returning (resync.S says how), among
 * calls that do, so that the tracker must find its way back each time:
 * expected/resync.calls counts every call, expected/resync.resync the
 * calls closed as re-synchronised. ARM code for the ARM7TDMI. */
#include "fw.h"
#include "resync.h"

NP_FW_FN int rs_outer(int x)
{
    return rs_mid(x) + 10;
}

NP_FW_FN int rs_outer2(int x)
{
    return rs_mid2a(x) + 20;
}

NP_FW_FN int rs_touter(int x)
{
    return rs_tmid(x) + 30;
}

static np_fw_jmp_buf jump;

/* Four deep, then a longjmp back into lj_case. */
NP_FW_FN int lj_deep(int n)
{
    if (n == 0) {
        np_fw_longjmp(jump, 7);
        return 0;
    }
    return lj_deep(n - 1) + 1;
}

NP_FW_FN int lj_case(int x)
{
    int v = np_fw_setjmp(jump);
    if (v)
        return v + x;
    return lj_deep(3);
}

NP_FW_FN int rs_after(int x)
{
    return x + 1;
}

int main(void)
{
    unsigned sum = 0;
    for (int i = 0; i < 3; i++)
        sum += (unsigned)rs_outer(i);
    for (int i = 0; i < 2; i++)
        sum += (unsigned)rs_outer2(i);
    for (int i = 0; i < 4; i++)
        sum += (unsigned)rs_touter(i);
    for (int i = 0; i < 2; i++)
        sum += (unsigned)lj_case(i);
    /* calls after the last skip: the tracker is back in step */
    for (int i = 0; i < 5; i++)
        sum += (unsigned)rs_after(i);
    np_fw_put_uint("sum", sum);
    return 0;
}
