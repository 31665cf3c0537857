/* pg_inproc.c - the in-process mechanisms through -pg's hooks
 * (tests/port/linux_a64.sh): the call trace in log and stack mode and
 * function cost, read back by the program and printed, one line each, so
 * that a -pg build's output can be held to a -finstrument-functions
 * build's. -pg names a call by an address inside its function (after the
 * prologue): each is printed as the function it lies in. */
#include <stdio.h>
#include <nanoprof/nanoprof.h>

#define NOINLINE __attribute__((noinline))
static volatile int sink;
static np_calltrace_entry seen[64];
static int nseen;
NOINLINE void leaf(void) { sink++; }
NOINLINE void inner(void) { nseen = np_calltrace_read(seen, 64); }
NOINLINE void mid(void) { leaf(); leaf(); }
NOINLINE void top(void) { mid(); mid(); }
NOINLINE void chain(void) { inner(); }

static void (*const fns[])(void) = { leaf, inner, mid, top, chain };
static const char *const names[] = { "leaf", "inner", "mid", "top", "chain" };
#define NFNS (int)(sizeof fns / sizeof fns[0])

NP_NO_PROFILE static const char *name_of(const void *a)
{
    int best = -1;
    for (int k = 0; k < NFNS; k++)
        if ((const char *)a >= (const char *)fns[k] && (const char *)a - (const char *)fns[k] < 256 &&
            (best < 0 || (const char *)fns[k] > (const char *)fns[best]))
            best = k;
    return best < 0 ? "?" : names[best];
}

static unsigned long long ct[2 * 64];
static unsigned char cost_buf[16384] __attribute__((aligned(16)));
static unsigned char stats[16384] __attribute__((aligned(16)));

NP_NO_PROFILE int main(void)
{
    if (np_calltrace_init(ct, sizeof ct, NP_CALLTRACE_LOG) != NP_OK)
        return 1;
    top();
    np_calltrace_disable();
    nseen = np_calltrace_read(seen, 64);
    for (int i = nseen - 1; i >= 0; i--)
        printf("log %u %s\n", seen[i].depth, name_of(seen[i].fn));
    np_calltrace_shutdown();
    if (np_calltrace_init(ct, sizeof ct, NP_CALLTRACE_STACK) != NP_OK)
        return 2;
    chain();
    np_calltrace_disable();
    for (int i = nseen - 1; i >= 0; i--)
        printf("stack %u %s\n", seen[i].depth, name_of(seen[i].fn));
    np_calltrace_shutdown();
    if (np_stats_init(stats, sizeof stats) != NP_OK || np_cost_init(cost_buf, sizeof cost_buf) != NP_OK)
        return 3;
    for (int i = 0; i < 5; i++)
        top();
    np_cost_disable();
    np_stats_calc(stats);
    for (int i = 0; i < np_stats_count(stats); i++) {
        np_func_stats f;
        np_stats_get(stats, i, &f);
        printf("cost %s %llu%s\n", name_of(f.fn), (unsigned long long)f.calls,
               f.self_ns <= f.total_ns && f.min_ns <= f.max_ns ? "" : " (inconsistent)");
    }
    printf("lost %llu\n", (unsigned long long)np_stats_lost(stats));
    return 0;
}
