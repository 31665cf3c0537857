/* footprint.c - what one mechanism of the runtime adds to a firmware
 * (bench/target.sh): built once per mechanism with -DMECH=<name> against
 * libnanoprof.a, and once with -DMECH_STUB and the same instrumentation
 * flags against stubs.c (hooks that do nothing). The difference of the
 * two, by arm-none-eabi-size, is the mechanism's ROM and RAM. The user's
 * buffers are in both, so they cancel. */
#include <stdint.h>
#include "nanoprof/nanoprof.h"

#define NOPROF NP_NO_PROFILE __attribute__((noinline))
#define calltrace 1
#define cost 2
#define sections 3
#define bins 4
#define blocks 5
#define gprof 6
#define trace 7
#define ring 8

volatile unsigned sink;

__attribute__((noinline)) void work(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink += i;
}

/* the user's buffers: in both builds */
static uint64_t ct_buf[2 * 32];
static uint64_t cost_buf[1024 / 8];
static uint64_t stats_buf[1024 / 8];
static uint32_t arcs[NP_GPROF_ARCS_SIZE(32) / 4];
static uint16_t hist[256];
static uint64_t trace_buf[1024 / 8];
static void *bins_buf[NP_BINS_BUF_BYTES(4) / sizeof(void *)];
static uint64_t blocks_buf[NP_BLOCKS_BUF_BYTES(64) / 8];
static uint64_t sections_buf[NP_SECTIONS_BUF_BYTES(4) / 8];

NOPROF int main(void)
{
    __asm__ __volatile__("" : : "r"(ct_buf), "r"(cost_buf), "r"(stats_buf), "r"(arcs), "r"(hist),
                         "r"(trace_buf), "r"(bins_buf), "r"(blocks_buf), "r"(sections_buf) : "memory");
#if defined(MECH_STUB)
    work(10);
#elif MECH == calltrace
    np_calltrace_init(ct_buf, sizeof ct_buf, NP_CALLTRACE_LOG);
    work(10);
    np_calltrace_dump();
#elif MECH == cost
    np_stats_init(stats_buf, sizeof stats_buf);
    np_cost_init(cost_buf, sizeof cost_buf);
    work(10);
    np_stats_calc(stats_buf);
    np_stats_dump(stats_buf);
#elif MECH == sections
    np_sections_init_buf(sections_buf, sizeof sections_buf, 0);
    NP_SECTION_BEGIN(1);
    work(10);
    NP_SECTION_END(1);
    np_sections_dump();
#elif MECH == bins
    np_bins_init_buf(bins_buf, sizeof bins_buf, 4, 1000);
    NP_BIN(2);
    work(10);
    NP_BIN(1);
    np_bins_dump();
#elif MECH == blocks
    np_blocks_init_buf(blocks_buf, sizeof blocks_buf);
    work(10);
    np_blocks_dump();
#elif MECH == gprof
    np_gprof_config c = { arcs, sizeof arcs, hist, sizeof hist, 100, 0, 0 };
    np_gprof_init(&c);
    work(10);
#elif MECH == trace
    np_trace_init(trace_buf, sizeof trace_buf);
    work(10);
    np_trace_stop();
#elif MECH == ring
    np_trace_init_ring(trace_buf, sizeof trace_buf);
    work(10);
    np_trace_stop();
#endif
    return 0;
}
