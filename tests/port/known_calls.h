/* known_calls.h - the instrumented functions whose calls the target
 * firmwares count: top calls mid twice (3 and 2 times leaf), so a top is
 * 1 + 2 + 5 calls. Defined here, included once per firmware (smoke.c,
 * trace_fw.c, app.c, app_timed.c), built with its
 * -finstrument-functions; LEAF_TURNS sets the work of a leaf. */
#ifndef NP_KNOWN_CALLS_H
#define NP_KNOWN_CALLS_H

#ifndef LEAF_TURNS
#define LEAF_TURNS 50
#endif

volatile unsigned sink;

__attribute__((noinline)) void leaf(void)
{
    for (unsigned i = 0; i < LEAF_TURNS; i++)
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

#endif
