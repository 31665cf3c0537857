/* reports_fw.c - every mechanism's reports sent as records, as the
 * runtime of the user's line (-lnanoprof) sends them (tests/port/
 * reports.sh). The writer passes the bytes on (semihosting's stdout)
 * and, for each REPORT chunk, writes the line the host should print for
 * it, "want: LINE", made here by the formatter the host uses with what
 * the firmware knows: its strings in memory, its functions by address
 * (reports.sh names them from the ELF). An error's text is in the ELF
 * alone (.np_msg): its line is written here before the call. */
#include "../target/check.h"
#include "common/report_format.h"
#include "common/report_text.h"
#include "common/trace_format.h"
#include "nanoprof/nanoprof.h"

#include "known_calls.h" /* leaf, mid, top */

extern void np_port_write_default(const char *bytes, size_t len);
void __sanitizer_cov_trace_pc(void); /* the runtime's coverage callback */

static NOPROF void want_line(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    np_port_write_default("\nwant: ", 7);
    np_port_write_default(line, len);
}

static NOPROF const char *in_memory(void *ctx, uint64_t addr, int msg, char *buf, size_t len)
{
    (void)ctx, (void)buf, (void)len;
    return msg ? NULL : (const char *)(uintptr_t)addr;
}

static NOPROF void tee(void *ctx, const char *bytes, size_t len)
{
    static const struct np_report_names names = { NULL, NULL, in_memory };
    const uint8_t *p = (const uint8_t *)bytes;
    (void)ctx;
    np_port_write_default(bytes, len);
    if (len < NP_TRACE_CHUNK_HEADER + 2 || np_get_u32(p) != NP_CHUNK_REPORT)
        return;
    unsigned type = np_get_u16(p + NP_TRACE_CHUNK_HEADER), n = 0;
    uint64_t v[NP_REPORT_VALUES_MAX];
    for (size_t at = NP_TRACE_CHUNK_HEADER + 2; at + 8 <= len && n < NP_REPORT_VALUES_MAX; at += 8)
        v[n++] = np_get_u64(p + at);
    if (type != NP_REP_ERROR)
        tc_check(np_report_text(type, v, n, &names, want_line, NULL) == 0, "a record the formatter knows");
}

static NOPROF void want_error(const char *where, const char *what)
{
    tc_put("\nwant: nanoprof: ");
    tc_put(where);
    tc_put(": ");
    tc_put(what);
    tc_put("\n");
}

/* A block at each of two places, executed 3 and 5 times. */
static NOPROF __attribute__((noinline)) void blocks(void)
{
    for (volatile int i = 0; i < 3; i++)
        __sanitizer_cov_trace_pc();
    for (volatile int i = 0; i < 5; i++)
        __sanitizer_cov_trace_pc();
}

static uint64_t stats[256] __attribute__((aligned(8)));
static uint64_t cost[128] __attribute__((aligned(8)));
static unsigned long long trace[2 * 16];
static uint64_t block_table[NP_BLOCKS_BUF_BYTES(8) / 8];

int main(void)
{
    np_output_set(tee, NULL);

    want_error("np_stats_dump", "not a statistics table (np_stats_init first)");
    tc_check(np_stats_dump(NULL) == NP_EINVAL, "stats: a dump of NULL refused");
    want_error("np_calltrace_dump", "call trace not initialised on this thread");
    tc_check(np_calltrace_dump() == NP_ENOTINIT, "calltrace: a dump before init refused");

    /* function cost: top 1, mid 2, leaf 5, and an NP_ENTER region */
    tc_check(np_stats_init(stats, sizeof stats) == NP_OK, "stats init");
    tc_check(np_cost_init(cost, sizeof cost) == NP_OK, "cost init");
    top();
    NP_ENTER("region");
    leaf();
    NP_EXIT();
    tc_check(np_cost_disable() == 1, "cost off");
    tc_check(np_stats_calc(stats) == NP_OK, "stats calc");
    tc_check(np_stats_dump(stats) == NP_OK, "stats dump");

    /* the call trace of one top */
    tc_check(np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG) == NP_OK, "calltrace init");
    top();
    np_calltrace_disable();
    tc_check(np_calltrace_dump() == NP_OK, "calltrace dump");

    /* sections: a named one and a numbered one */
    tc_check(np_sections_init(0) == NP_OK, "sections init");
    np_section_name(1, "phase one");
    np_section_begin(1);
    tc_spin(1000);
    np_section_end(1);
    np_section_begin(2);
    tc_spin(500);
    np_section_end(2);
    want_error("np_section_begin", "section id out of range (see np_sections_max; reported once)");
    tc_check(np_section_begin(1000) == NP_EINVAL, "sections: an id out of range refused");
    tc_check(np_sections_dump() == NP_OK, "sections dump");

    /* bins: no timer (hz 0), so the counts are all 0; names */
    tc_check(np_bins_init(3, 0) == NP_OK, "bins init");
    np_bin_name(1, "work");
    tc_check(np_bins_dump() == NP_OK, "bins dump");

    /* blocks: a table of 8 slots, two blocks */
    tc_check(np_blocks_init_buf(block_table, sizeof block_table) == NP_OK, "blocks init");
    blocks();
    tc_check(np_blocks_dump() == NP_OK, "blocks dump");

    np_output_set(NULL, NULL);
    return tc_finish();
}
