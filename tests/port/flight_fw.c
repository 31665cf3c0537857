/* flight_fw.c - a firmware whose trace is a flight recorder
 * (np_trace_init_flight), read from its RAM by gdb at a breakpoint
 * (tests/port/flight.sh): known calls on the main thread and on two named
 * threads, then flight_here (not instrumented), where gdb stops and dumps
 * the RAM. Built with RING_BYTES (the flight buffer) and TOPS (top()
 * calls, 8 calls each): a buffer that holds the whole run, and one the
 * run wraps many times, whose newest calls (the threads', then last())
 * must be there whole. Checks print "ok"/"FAIL"; main returns the
 * failures. Built with -finstrument-functions; main and the checks are
 * not. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "../target/check.h"

#define LEAF_TURNS 5
#include "known_calls.h" /* leaf, mid, top: a top is 8 calls */

#ifndef RING_BYTES
#define RING_BYTES 8192
#endif
#ifndef TOPS
#define TOPS 10
#endif

static uint64_t flight[RING_BYTES / 8];
static uint64_t th_mem[2][NP_THREAD_SIZE / 8] __attribute__((aligned(16)));

__attribute__((noinline)) void last(void)
{
    sink++;
}

/* where gdb stops, to dump the RAM */
NOPROF __attribute__((noinline)) void flight_here(void)
{
    __asm__ __volatile__("" ::: "memory");
}

NOPROF int main(void)
{
    tc_check(np_trace_init_flight(flight, 100) == NP_ESMALL, "flight: a buffer too small refused");
    np_thread *a = np_thread_init(th_mem[0], sizeof th_mem[0]), *b = np_thread_init(th_mem[1], sizeof th_mem[1]);
    np_thread_name(a, "sensor");
    np_thread_name(b, "logger");
    tc_check(np_trace_init_flight(flight, sizeof flight) == NP_OK, "flight: init");
    tc_check(np_trace_init_flight(flight, sizeof flight) == NP_EALREADY, "flight: a second init refused");
    for (int i = 0; i < TOPS; i++)
        top();
    np_thread_switch(NULL, a);
    mid(2);
    np_thread_switch(a, b);
    leaf();
    np_thread_switch(b, NULL);
    last();
    flight_here();
    tc_check(np_trace_stop() == NP_OK, "flight: stop");
    return tc_finish();
}
