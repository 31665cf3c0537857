/* blocks_covered.c - the blocks firmware's workload (blocks.c), the only
 * code built with -fsanitize-coverage=trace-pc: bb_loop(N) runs bb_body
 * N times, whose branch is taken N/4 times (N a multiple of 4), as the
 * host's tests/programs/blocks_prog.c does. */

void bb_body(int i, volatile unsigned *sink);
void bb_loop(int n);

__attribute__((noinline)) void bb_body(int i, volatile unsigned *sink)
{
    unsigned r = (unsigned)i * 3;
    if ((i & 3) == 0)
        *sink += r;
    *sink ^= 1;
}

__attribute__((noinline)) void bb_loop(int n)
{
    volatile unsigned sink = 0;
    for (int i = 0; i < n; i++)
        bb_body(i, &sink);
}
