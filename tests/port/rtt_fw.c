/* rtt_fw.c - a firmware that records its trace into the RTT ring
 * (nanoprof/rtt.h) for a debugger to read while it runs
 * (tests/port/rtt.sh, which reads it through gdb as a probe does). Its
 * own lines go to semihosting's stdout. Built three ways:
 * - default: NP_RTT_BLOCK with a ring far smaller than the trace, so the
 *   host must drain it while the calls run; the trace is whole.
 * - -DSEMIHOST: the same calls, the trace to semihosting's stdout (the
 *   port's default writer): the counts the RTT capture must give.
 * - -DSKIP: NP_RTT_SKIP, the calls in one burst far larger than the ring
 *   while the host reads slowly: chunks are dropped, and the firmware
 *   prints what it counted lost ("lost EVENTS dropped BYTES").
 * Checks print "ok"/"FAIL"; main returns the failures. Built with
 * -finstrument-functions; main and the checks are not. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "../target/check.h"

#define LEAF_TURNS 5
#include "known_calls.h" /* leaf, mid, top: a top is 8 calls */

#ifndef RING_BYTES
#define RING_BYTES 256
#endif
#ifndef TOPS
#define TOPS 300
#endif

static uint8_t trace_buf[512];
#ifndef SEMIHOST
static uint8_t ring[RING_BYTES];
#endif

/* Until the host has read everything (a debugger reads while we spin). */
static NOPROF void drain(void)
{
#ifndef SEMIHOST
    while (np_rtt_pending())
        ;
#endif
}

NOPROF int main(void)
{
#ifndef SEMIHOST
    /* misuse first, through semihosting: an error code and no ring */
    tc_check(np_rtt_init(NULL, 64, NP_RTT_BLOCK) == NP_EINVAL, "np_rtt_init NULL buffer");
    tc_check(np_rtt_init(ring, 8, NP_RTT_BLOCK) == NP_ESMALL, "np_rtt_init 8 bytes");
    tc_check(np_rtt_init(ring, sizeof ring, (enum np_rtt_mode)1) == NP_EINVAL, "np_rtt_init mode 1");
#ifdef SKIP
    enum np_rtt_mode mode = NP_RTT_SKIP;
#else
    enum np_rtt_mode mode = NP_RTT_BLOCK;
#endif
    if (!tc_check(np_rtt_init(ring, sizeof ring, mode) == NP_OK, "np_rtt_init"))
        return tc_finish();
#endif
    if (!tc_check(np_trace_init(trace_buf, sizeof trace_buf) == NP_OK, "np_trace_init"))
        return tc_finish();
#ifdef SKIP
    /* the header chunks and the thread's first chunk while the host
     * keeps up; then a burst it cannot */
    top();
    np_trace_flush();
    drain();
#endif
    for (int i = 0; i < TOPS; i++)
        top();
    drain();
    np_trace_stop();
    tc_put("\n"); /* the lines below start lines after the trace's bytes */
    drain();
#ifndef SEMIHOST
    /* a second init is refused, through the ring */
    tc_check(np_rtt_init(ring, sizeof ring, mode) == NP_EALREADY, "np_rtt_init again");
    drain();
#endif
#ifdef SKIP
    tc_check(np_trace_lost() > 0 && np_rtt_dropped() > 0, "chunks dropped in the burst");
    tc_put("lost ");
    tc_put_u64(np_trace_lost());
    tc_put(" dropped ");
    tc_put_u64(np_rtt_dropped());
    tc_put("\n");
#elif !defined SEMIHOST
    tc_check(np_trace_lost() == 0 && np_rtt_dropped() == 0, "nothing lost");
#endif
    return tc_finish();
}
