/* blocks_prog.c - basic blocks with known counts (docs/blocks.md), built
 * with -fsanitize-coverage=trace-pc only (no function hooks) and linked
 * with libnanoprof.
 *
 *   blocks_prog loop N      bb_loop(N): bb_body runs N times, its branch
 *                           is taken N/4 times (N a multiple of 4)
 *   blocks_prog threads N   two threads, bb_loop(N) each
 *   blocks_prog check N     bb_loop(N), then checks through the API that
 *                           one block ran N/4 times and one N times
 *
 * The lines marked BB_ENTRY, BB_TAKEN and BB_JOIN start bb_body's three
 * blocks (GCC); the tests find their numbers by those marks. With
 * BLOCKS_NO_MAIN, only the workload (for test_blocks). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nanoprof/blocks.h"

/* SINK is the caller's (on its stack): threads do not share it. */

__attribute__((noinline)) void bb_body(int i, volatile unsigned *sink)
{
    unsigned r = (unsigned)i * 3; /* BB_ENTRY */
    if ((i & 3) == 0)
        *sink += r; /* BB_TAKEN */
    *sink ^= 1; /* BB_JOIN */
}

__attribute__((noinline)) void bb_loop(int n)
{
    volatile unsigned sink = 0;
    for (int i = 0; i < n; i++)
        bb_body(i, &sink);
}

#ifndef BLOCKS_NO_MAIN
static void *thread_main(void *arg)
{
    bb_loop(*(int *)arg);
    return NULL;
}

/* One block with exactly N/4 executions and one with exactly N. */
static int check(int n)
{
    np_block_count b[4096];
    size_t count = np_blocks_read(b, 4096), quarter = 0, full = 0;
    for (size_t i = 0; i < count && i < 4096; i++) {
        if (b[i].count == (uint64_t)n / 4 && np_blocks_count(b[i].pc) == (uint64_t)n / 4)
            quarter++;
        if (b[i].count == (uint64_t)n)
            full++;
    }
    if (quarter != 1 || !full) {
        printf("blocks check: %zu blocks with %d executions (want 1), %zu with %d (want 1 or more)\n", quarter,
               n / 4, full, n);
        return 1;
    }
    puts("blocks check: ok");
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    const char *mode = argc > 1 ? argv[1] : "loop";
    if (strcmp(mode, "threads") == 0) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, thread_main, &n);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        return 0;
    }
    bb_loop(n);
    return strcmp(mode, "check") == 0 ? check(n) : 0;
}
#endif
