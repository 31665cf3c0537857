/* app_timed.c - a user's program for a board that reads the time
 * (tests/port/user_way_in.sh): built against the installed runtime and
 * board files only, it measures function cost and a section around the
 * known calls, and returns 0 when the counts are exact and the times make
 * sense, else the number of the first check that failed (QEMU's exit
 * status). The clock comes with what uses it: on QEMU, whose DWT counter
 * does not move, SysTick extended to 64 bits, whose handler the library
 * links in for it. */
#include "nanoprof/nanoprof.h"

#include "known_calls.h" /* leaf, mid, top */

static uint64_t cost_buf[2048 / 8];
static uint64_t stats[2048 / 8];

static int check(void)
{
    np_func_stats l, m, t;
    if (np_stats_find(stats, (const void *)leaf, &l) != NP_OK || l.calls != 5)
        return 1;
    if (np_stats_find(stats, (const void *)mid, &m) != NP_OK || m.calls != 2)
        return 2;
    if (np_stats_find(stats, (const void *)top, &t) != NP_OK || t.calls != 1)
        return 3;
    /* the clock moves, and a caller's time holds its callees' */
    if (l.total_ns == 0 || l.min_ns == 0 || l.min_ns > l.max_ns)
        return 4;
    if (m.total_ns < l.total_ns || t.total_ns < m.total_ns || t.self_ns >= t.total_ns)
        return 5;
    if (np_stats_lost(stats) != 0)
        return 6;
    np_section_stats s;
    if (np_sections_get(1, &s) != NP_OK || s.count != 1 || s.time_ns < t.total_ns)
        return 7;
    return 0;
}

NP_NO_PROFILE int main(void)
{
    if (np_stats_init(stats, sizeof stats) != NP_OK || np_cost_init(cost_buf, sizeof cost_buf) != NP_OK ||
        np_sections_init(0) != NP_OK)
        return 100;
    NP_SECTION_BEGIN(1);
    top();
    NP_SECTION_END(1);
    np_cost_disable();
    if (np_stats_calc(stats) != NP_OK)
        return 101;
    np_stats_dump(stats);
    np_sections_dump();
    return check();
}
