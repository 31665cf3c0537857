/* insns.c - the Cortex-M firmware bench/target_insns counts instructions
 * in: each phase calls one instrumented function CALLS times with one
 * mechanism on, between two calls of bench_phase (not instrumented),
 * which the counter watches. Phase numbers are bench/target_insns.c's. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"

#define CALLS 1000
#define NOPROF NP_NO_PROFILE __attribute__((noinline))

volatile unsigned sink;

__attribute__((noinline)) void leaf(void)
{
    sink++;
}

/* The counter stops here at each phase's start and end (ID 0: the end of
 * the phase before; 99: the run is over; 100 + N: step N failed). */
NOPROF void bench_phase(unsigned id)
{
    __asm__ __volatile__("" : : "r"(id) : "memory");
}

static NOPROF void calls(unsigned phase)
{
    bench_phase(phase);
    for (unsigned i = 0; i < CALLS; i++)
        leaf();
    if (phase < 7)
        bench_phase(0);
}

static uint8_t ct_buf[2048 * NP_CALLTRACE_RECORD_SIZE] __attribute__((aligned(8))); /* no wrap in a phase */
static uint64_t cost_buf[2048 / 8];
static uint64_t stats_buf[2048 / 8];

/* bytes of trace written, by np_trace_init's and np_trace_init_ring's,
 * and those of the RING chunks' words (after the chunk's header and the
 * RING fields): target_insns reads them at the end */
volatile uint32_t bench_trace_bytes[3];
/* a RING chunk's type, and where its words start: after the chunk's
 * header (12 bytes) and the RING fields (20) (src/common/trace_format.h,
 * which a firmware's include path does not have) */
#define RING_CHUNK 11
#define RING_WORDS_AT 32
static unsigned bench_trace_mode;
/* the ring: no drain among the calls (np_trace_stop's) */
static uint8_t ring_buf[16384] __attribute__((aligned(8)));
static uint8_t trace_buf[1024] __attribute__((aligned(8)));

static NOPROF void count_bytes(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    bench_trace_bytes[bench_trace_mode] += (uint32_t)len;
    if (bench_trace_mode == 1 && len >= RING_WORDS_AT && (uint8_t)bytes[0] == RING_CHUNK)
        bench_trace_bytes[2] += (uint32_t)(len - RING_WORDS_AT);
}

NOPROF int main(void)
{
#ifndef TRACE_ONLY
#ifndef COST_ONLY /* (linked with libnanoprof-cost.a: function cost alone) */
    calls(1); /* no mechanism on: what the hooks cost when idle */
    if (np_calltrace_init(ct_buf, sizeof ct_buf, NP_CALLTRACE_LOG) != NP_OK)
        bench_phase(101);
    calls(2);
    np_calltrace_shutdown();
    if (np_calltrace_init(ct_buf, sizeof ct_buf, NP_CALLTRACE_STACK) != NP_OK)
        bench_phase(102);
    calls(3);
    np_calltrace_shutdown();
#endif
    if (np_stats_init(stats_buf, sizeof stats_buf) != NP_OK || np_cost_init(cost_buf, sizeof cost_buf) != NP_OK)
        bench_phase(104);
    leaf(); /* the function's slot made: the phase measures the common path */
    calls(4);
    bench_phase(5);
    np_stats_calc(stats_buf);
    bench_phase(0);
    np_func_stats s;
    /* every call is 17 cycles (target_insns' counter), 680 ns at 25 MHz,
     * the one across the counter's wrap too */
    if (np_stats_find(stats_buf, (const void *)leaf, &s) != NP_OK || s.calls != CALLS + 1 || s.min_ns < 600 ||
        s.max_ns > 800)
        bench_phase(105);
    np_cost_shutdown();
#ifndef COST_ONLY
    if (np_sections_init(0) != NP_OK)
        bench_phase(106);
    bench_phase(6);
    for (unsigned i = 0; i < CALLS; i++) {
        NP_SECTION_BEGIN(1);
        NP_SECTION_END(1);
    }
    bench_phase(0);
    /* the trace recorded on the target, streamed to a writer that only
     * counts the bytes: the phase ends with np_trace_stop (the last chunk
     * and END) */
    np_output_set(count_bytes, NULL);
    if (np_trace_init(trace_buf, sizeof trace_buf) != NP_OK)
        bench_phase(107);
    calls(7);
    bench_phase(7);
    if (np_trace_stop() != NP_OK || np_trace_lost() != 0)
        bench_phase(108);
    bench_phase(0);
#endif
#else /* linked with libnanoprof-trace.a, whose hooks call the trace alone */
    np_output_set(count_bytes, NULL);
#endif
#ifndef COST_ONLY
    /* the same in ring mode */
    bench_trace_mode = 1;
    if (np_trace_init_ring(ring_buf, sizeof ring_buf) != NP_OK)
        bench_phase(109);
    calls(8); /* the hooks, the ring's drains among them */
    bench_phase(9);
    if (np_trace_stop() != NP_OK || np_trace_lost() != 0)
        bench_phase(110);
    bench_phase(0);
    np_output_set(NULL, NULL);
#endif
    bench_phase(99);
    return 0;
}
