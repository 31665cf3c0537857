/* pg_fast.c - what tests/test_pg_fast.sh runs: the call trace in log
 * mode, or function cost, in a program built with -pg (-mfentry or not).
 * The same binary prints the same lines whatever path the hooks take (a
 * thunk's fast path, or NANOPROF_PG_THUNKS=0's trampoline).
 *
 *   log plain|all    each part's records, oldest first: the function and
 *                    the call site as offsets from main (a site outside
 *                    the program: "ext"), the depth; the count lost
 *   cost plain|all   at the end, each function's calls (as an offset from
 *                    main), ordered by it; the count lost
 *   none plain|all   no mechanism started: for NANOPROF_RECORD, the
 *                    recorder's
 *
 *   plain     top x3 (each: mid x2, each: leaf x2), fib(15)
 *   all       plain, then: tail calls (tail_a tail-calls tail_b, which
 *             calls leaf and tail-calls tail_c); a longjmp out of jumper(5);
 *             SIGUSR1 raised inside nest(3), its handler calling hleaf x2;
 *             the mechanism switched off and on inside a call (quiet);
 *             deep(70000), deeper than the depth a record keeps (65535)
 *             and the return stack's first mapping; a second thread's own
 *             log or costs; the log in a ring of 512 records, printed and
 *             cleared after each part */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanoprof/nanoprof.h"

#define NOINLINE __attribute__((noinline))
#define NOCLONE __attribute__((noinline, noclone, noipa))

static volatile int sink;
extern char __executable_start[], etext[];
int main(int argc, char **argv);

NOINLINE void leaf(void) { sink++; }
NOINLINE void mid(void) { leaf(); leaf(); }
NOINLINE void top(void) { mid(); mid(); }
NOINLINE int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

NOCLONE void tail_c(void) { sink += 3; }
NOCLONE void tail_b(void)
{
    leaf();
    tail_c(); /* (a jump at -O2) */
}
NOCLONE void tail_a(void) { tail_b(); }

static jmp_buf env;
NOINLINE void jumper(int n)
{
    if (n == 0)
        longjmp(env, 1);
    jumper(n - 1);
    sink++;
}

NOINLINE void hleaf(void) { sink += 5; }
static void on_usr1(int sig)
{
    (void)sig;
    hleaf();
    hleaf();
}
NOINLINE void nest(int n)
{
    if (n == 0)
        raise(SIGUSR1);
    else
        nest(n - 1);
    sink++;
}

static int cost; /* the mechanism: function cost, else the call trace */
static int none;  /* none started (the recorder's, if any) */

NOINLINE void quiet(void)
{
    int was = none ? 0 : cost ? np_cost_disable() : np_calltrace_disable();
    leaf();
    if (cost)
        np_cost_restore(was);
    else if (!none)
        np_calltrace_restore(was);
    leaf();
}

NOINLINE void deep(int n)
{
    if (n > 0)
        deep(n - 1);
    sink++;
}

static void print_records(const char *part)
{
    static np_calltrace_entry e[4096];
    if (cost || none)
        return;
    int n = np_calltrace_read(e, 4096);
    uintptr_t lo = (uintptr_t)__executable_start, hi = (uintptr_t)etext, m = (uintptr_t)main;
    printf("%s: %d records, %llu lost\n", part, n, (unsigned long long)np_calltrace_lost());
    for (int i = n - 1; i >= 0; i--) { /* (newest first) */
        uintptr_t fn = (uintptr_t)e[i].fn, site = (uintptr_t)e[i].site;
        if (site - lo < hi - lo)
            printf("  %lx %lx %u\n", (unsigned long)(fn - m), (unsigned long)(site - m), e[i].depth);
        else
            printf("  %lx ext %u\n", (unsigned long)(fn - m), e[i].depth);
    }
    np_calltrace_clear();
}

static int start(void *buf, size_t size)
{
    if (none)
        return NP_OK;
    return cost ? np_cost_init(buf, size) : np_calltrace_init(buf, size, NP_CALLTRACE_LOG);
}

static void *second(void *arg)
{
    static char buf[64 << 10];
    (void)arg;
    if (start(buf, sizeof buf) != NP_OK)
        exit(3);
    top();
    fib(6);
    print_records("thread");
    if (cost)
        np_cost_shutdown(); /* (its sums merged) */
    else if (!none)
        np_calltrace_shutdown();
    return NULL;
}

static int by_fn(const void *a, const void *b)
{
    const np_func_stats *x = a, *y = b;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* Each function's calls, ordered by address. */
static void print_costs(void *stats)
{
    static np_func_stats v[64];
    np_stats_calc(stats);
    int n = np_stats_count(stats);
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        np_stats_get(stats, i, &v[i]);
    qsort(v, (size_t)n, sizeof *v, by_fn);
    printf("cost: %d functions, %llu lost\n", n, (unsigned long long)np_stats_lost(stats));
    for (int i = 0; i < n; i++)
        printf("  %lx %llu\n", (unsigned long)((uintptr_t)v[i].fn - (uintptr_t)main), (unsigned long long)v[i].calls);
}

int main(int argc, char **argv)
{
    static char buf[4 << 20], stats[64 << 10]; /* (70000 open calls: 1.7 MB of cost's) */
    cost = argc > 1 && !strcmp(argv[1], "cost");
    none = argc > 1 && !strcmp(argv[1], "none");
    int all = argc > 2 && !strcmp(argv[2], "all");
    if (argc != 3 || (!cost && !none && strcmp(argv[1], "log")) || (!all && strcmp(argv[2], "plain"))) {
        fprintf(stderr, "usage: pg_fast log|cost|none plain|all\n");
        return 2;
    }
    size_t size = all && !cost ? np_calltrace_buffer_size(512) : sizeof buf;
    if ((cost && np_stats_init(stats, sizeof stats) != NP_OK) || start(buf, size) != NP_OK)
        return 3;
    for (int i = 0; i < 3; i++)
        top();
    fib(15);
    print_records("plain");
    if (!all) {
        if (cost)
            print_costs(stats);
        return 0;
    }
    for (int i = 0; i < 3; i++)
        tail_a();
    print_records("tail");
    if (!setjmp(env))
        jumper(5);
    leaf();
    print_records("longjmp");
    signal(SIGUSR1, on_usr1);
    nest(3);
    print_records("signal");
    quiet();
    print_records("off and on");
    deep(70000);
    leaf();
    print_records("deep");
    pthread_t t;
    if (pthread_create(&t, NULL, second, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 4;
    if (cost)
        print_costs(stats);
    return 0;
}
