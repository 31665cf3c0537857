/* demo.c - a small program profiled with nanoprof: calls through several
 * levels, recursion, and two threads. Each thread records its own call trace
 * and measures its own function costs; main prints the statistics of both.
 *
 * Build it like any instrumented program:
 *   cc -O2 $(pkg-config --cflags nanoprof) demo.c $(pkg-config --libs nanoprof) */
#include <pthread.h>
#include <stdio.h>
#include <nanoprof/nanoprof.h>

#define TRACE_LINES 64
#define COST_LINES 4096

static uint64_t stats[8192];

static int test3(int a)
{
    return a + 4;
}

static int test2(int a)
{
    return test3(a + 2);
}

static int test1(int a)
{
    return test2(a + 1);
}

static unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned checksum(const unsigned char *p, unsigned n)
{
    unsigned h = 2166136261u;
    for (unsigned i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void where_am_i(void)
{
    np_calltrace_dump(); /* stack mode: the chain of calls active now */
}

static unsigned parse_block(const unsigned char *p, unsigned n)
{
    if (n > 32)
        where_am_i();
    return checksum(p, n);
}

static unsigned load_file(unsigned blocks)
{
    static unsigned char data[256];
    unsigned h = 0;
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7);
    for (unsigned b = 0; b < blocks; b++)
        h ^= parse_block(data, b == blocks - 1 ? 64 : 16);
    return h;
}

static void *worker(void *arg)
{
    static uint64_t trace[TRACE_LINES * 2], cost[COST_LINES * 2];
    (void)arg;
    /* This thread keeps a log of its most recent calls. */
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG);
    np_cost_init(cost, sizeof cost);
    (void)test1(0x100);
    (void)test1(0x200);
    np_calltrace_dump(); /* log mode: the most recent calls, newest first */
    unsigned f = fib(15);
    np_stats_calc(stats);
    return (void *)(uintptr_t)f;
}

int main(void)
{
    static uint64_t trace[TRACE_LINES * 2], cost[COST_LINES * 2];
    pthread_t th;
    void *res;

    np_stats_init(stats, sizeof stats);
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK);
    np_cost_init(cost, sizeof cost);

    pthread_create(&th, NULL, worker, NULL);
    unsigned h = load_file(8);
    pthread_join(th, &res);

    np_stats_calc(stats);
    printf("demo: load_file -> %08x, fib(15) -> %u (cost clock: %s)\n", h,
           (unsigned)(uintptr_t)res, np_cost_clock_name());
    fflush(stdout);
    fputs("function cost statistics (both threads):\n", stderr);
    np_stats_dump(stats);
    return 0;
}
