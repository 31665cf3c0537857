/* consumer.c - a tiny program built against an installed nanoprof, the way a
 * user's program would be (tests/install/run.sh builds it with pkg-config and
 * with the CMake package). It is compiled with -finstrument-functions, so
 * its own functions must appear by name in the call trace and the cost
 * statistics.
 *
 * Expected output (stderr), with the all-in-one library:
 *   calltrace: stack mode, thread <tid>, lr=<hex>, 2 records, 0 lost
 *     consumer_leaf: lr=<hex>
 *   consumer_middle: lr=<hex>
 *   ...
 *   consumer_middle: count 3, cost ...
 *   consumer_leaf: count 3, cost ...
 * With a single-mechanism library (libnanoprof-calltrace.a), np_cost_init
 * may refuse; the program then says so and skips the statistics. */
#include <stdio.h>
#include <nanoprof/nanoprof.h>

static uint64_t trace[64 * NP_CALLTRACE_RECORD_SIZE / sizeof(uint64_t)];
static uint64_t cost[1024 * NP_COST_RECORD_SIZE / sizeof(uint64_t)];
static uint64_t stats[2048];

__attribute__((noinline)) int consumer_leaf(int x)
{
    if (x == 2)
        np_calltrace_dump(); /* stack mode: the calls active now */
    return 2 * x + 1;
}

__attribute__((noinline)) int consumer_middle(int x)
{
    return consumer_leaf(x) + 1;
}

int main(void)
{
    int cost_on, sum = 0, rc;

    if ((rc = np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK)) != NP_OK) {
        printf("consumer: np_calltrace_init: %s\n", np_strerror(rc));
        return 1;
    }
    cost_on = np_cost_init(cost, sizeof cost) == NP_OK;
    if (cost_on && (rc = np_stats_init(stats, sizeof stats)) != NP_OK) {
        printf("consumer: np_stats_init: %s\n", np_strerror(rc));
        return 1;
    }

    for (int i = 0; i < 3; i++)
        sum += consumer_middle(i);

    printf("consumer: nanoprof %s, sum %d, cost %s\n", np_version(), sum,
           cost_on ? np_cost_clock_name() : "off");
    fflush(stdout);
    if (cost_on) {
        if ((rc = np_stats_calc(stats)) != NP_OK || (rc = np_stats_dump(stats)) != NP_OK) {
            printf("consumer: stats: %s\n", np_strerror(rc));
            return 1;
        }
    }
    return sum == 12 ? 0 : 1;
}
