/* badinput.c - bad input to every mechanism on a Cortex-M target
 * (run.sh): NULL, misaligned and too-small buffers, a second init, use
 * and dump before init, ids and arguments out of range. Each call must
 * return its error code and write exactly one line, "nanoprof: <the
 * function>: <why>\n", through np_output (captured here), and never
 * fault: a fault ends the firmware with status 99 (startup.c). Misuse
 * the runtime reports once per process (sections' bad ids, ends with no
 * begin) writes nothing the second time. The trace encoder, a building
 * block with no output of its own, says no by its status alone. Prints
 * ok/FAIL per check; the exit status is the failures. */
#include "check.h"
#include "cortex_m.h"
#include "runtime/np_config.h"
#include "runtime/trace_encode.h"

/* The call's status is WANT and it wrote one line naming WHO. */
static NOPROF void one_line(int rc, int want, const char *who, const char *what)
{
    int lines = 0;
    for (size_t i = 0; i < tc_ncaptured; i++)
        lines += tc_captured[i] == '\n';
    int ok = rc == want && lines == 1 && tc_captured[tc_ncaptured - 1] == '\n' &&
             tc_starts_with(tc_captured, "nanoprof: ") && tc_starts_with(tc_captured + 10, who) &&
             tc_starts_with(tc_captured + 10 + __builtin_strlen(who), ": ");
    if (!tc_check(ok, what)) {
        tc_put("  got status ");
        tc_put(rc < 0 ? "-" : "");
        tc_put_u64((uint64_t)(rc < 0 ? -rc : rc));
        tc_put(", output: ");
        tc_put(tc_captured);
        tc_put("\n");
    }
}

#define EXPECT(call, want, who, what)                                                                  \
    do {                                                                                               \
        tc_capture_begin();                                                                            \
        int rc_ = (call);                                                                              \
        tc_capture_end();                                                                              \
        one_line(rc_, want, who, what);                                                                \
    } while (0)

/* The call's status is WANT and it wrote nothing. */
#define SILENT(call, want, what)                                                                       \
    do {                                                                                               \
        tc_capture_begin();                                                                            \
        int rc_ = (call);                                                                              \
        tc_capture_end();                                                                              \
        tc_check(rc_ == (want) && tc_ncaptured == 0, what);                                            \
    } while (0)

static uint64_t buf[1024 / 8];
static uint64_t stats[1024 / 8];
static uint64_t small[1];

static NOPROF void calltrace(void)
{
    np_calltrace_entry e[4];
    EXPECT(np_calltrace_dump(), NP_ENOTINIT, "np_calltrace_dump", "calltrace: dump before init");
    EXPECT(np_calltrace_read(e, 4), NP_ENOTINIT, "np_calltrace_read", "calltrace: read before init");
    EXPECT(np_calltrace_clear(), NP_ENOTINIT, "np_calltrace_clear", "calltrace: clear before init");
    EXPECT(np_calltrace_shutdown(), NP_ENOTINIT, "np_calltrace_shutdown", "calltrace: shutdown before init");
    EXPECT(np_calltrace_enable(), NP_ENOTINIT, "np_calltrace_enable", "calltrace: enable before init");
    EXPECT(np_calltrace_init(NULL, 64, NP_CALLTRACE_LOG), NP_EINVAL, "np_calltrace_init", "calltrace: NULL buffer");
    EXPECT(np_calltrace_init((char *)buf + 2, 64, NP_CALLTRACE_LOG), NP_EINVAL, "np_calltrace_init",
           "calltrace: misaligned buffer");
    EXPECT(np_calltrace_init(buf, 8, NP_CALLTRACE_LOG), NP_ESMALL, "np_calltrace_init", "calltrace: too small");
    EXPECT(np_calltrace_init(buf, 64, (np_calltrace_mode)7), NP_EINVAL, "np_calltrace_init", "calltrace: bad mode");
    SILENT(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_OK, "calltrace: init");
    EXPECT(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG), NP_EALREADY, "np_calltrace_init",
           "calltrace: second init");
    EXPECT(np_calltrace_read(NULL, 4), NP_EINVAL, "np_calltrace_read", "calltrace: read into NULL");
    SILENT(np_calltrace_shutdown(), NP_OK, "calltrace: shutdown");
}

static NOPROF void cost(void)
{
    np_func_stats s;
    EXPECT(np_cost_shutdown(), NP_ENOTINIT, "np_cost_shutdown", "cost: shutdown before init");
    EXPECT(np_cost_clear(), NP_ENOTINIT, "np_cost_clear", "cost: clear before init");
    EXPECT(np_cost_enable(), NP_ENOTINIT, "np_cost_enable", "cost: enable before init");
    EXPECT(np_stats_calc(stats), NP_EINVAL, "np_stats_calc", "stats: calc into a table never made");
    EXPECT(np_stats_dump(stats), NP_EINVAL, "np_stats_dump", "stats: dump before init");
    EXPECT(np_stats_dump(NULL), NP_EINVAL, "np_stats_dump", "stats: dump of NULL");
    EXPECT(np_stats_get(stats, 0, &s), NP_EINVAL, "np_stats_get", "stats: get before init");
    EXPECT(np_cost_init(NULL, 1024), NP_EINVAL, "np_cost_init", "cost: NULL buffer");
    EXPECT(np_cost_init((char *)buf + 4, 512), NP_EINVAL, "np_cost_init", "cost: misaligned buffer");
    EXPECT(np_cost_init(small, sizeof small), NP_ESMALL, "np_cost_init", "cost: too small");
    EXPECT(np_stats_init(NULL, 1024), NP_EINVAL, "np_stats_init", "stats: NULL buffer");
    EXPECT(np_stats_init((char *)stats + 4, 512), NP_EINVAL, "np_stats_init", "stats: misaligned buffer");
    EXPECT(np_stats_init(small, sizeof small), NP_ESMALL, "np_stats_init", "stats: too small");
    SILENT(np_stats_init(stats, sizeof stats), NP_OK, "stats: init");
    EXPECT(np_stats_calc(stats), NP_ENOTINIT, "np_stats_calc", "cost: calc before init");
    SILENT(np_cost_init(buf, sizeof buf), NP_OK, "cost: init");
    EXPECT(np_cost_init(buf, sizeof buf), NP_EALREADY, "np_cost_init", "cost: second init");
    EXPECT(np_stats_get(stats, 5, &s), NP_EINVAL, "np_stats_get", "stats: index out of range");
    EXPECT(np_stats_find(stats, (const void *)cost, NULL), NP_EINVAL, "np_stats_find", "stats: find into NULL");
    SILENT(np_cost_shutdown(), NP_OK, "cost: shutdown");
    SILENT(np_stats_shutdown(stats), NP_OK, "stats: shutdown");
}

static NOPROF void sections(void)
{
    np_section_stats s;
    static uint64_t buf[NP_SECTIONS_BUF_BYTES(2) / 8];
    /* a target's sections have no table before an init */
    EXPECT(np_sections_dump(), NP_ENOTINIT, "np_sections_dump", "sections: dump before init");
    EXPECT(np_sections_get(0, &s), NP_ENOTINIT, "np_sections_get", "sections: get before init");
    EXPECT(np_section_name(1, "x"), NP_ENOTINIT, "np_section_name", "sections: name before init");
    EXPECT(np_section_begin(1), NP_EINVAL, "np_section_begin", "sections: begin before init");
    tc_check(np_sections_max() == NP_SECTIONS_MAX, "sections: before init, max is the built-in table's");
    EXPECT(np_sections_init_buf(NULL, sizeof buf, 0), NP_EINVAL, "np_sections_init_buf", "sections: no buffer");
    EXPECT(np_sections_init_buf((char *)buf + 4, sizeof buf - 4, 0), NP_EINVAL, "np_sections_init_buf",
           "sections: a misaligned buffer");
    EXPECT(np_sections_init_buf(buf, sizeof buf - 1, 0), NP_ESMALL, "np_sections_init_buf", "sections: a buffer too small");
    EXPECT(np_sections_init(8), NP_EINVAL, "np_sections_init", "sections: unknown flag");
    SILENT(np_sections_init(0), NP_OK, "sections: init");
    EXPECT(np_sections_init(0), NP_EALREADY, "np_sections_init", "sections: second init");
    EXPECT(np_sections_init_buf(buf, sizeof buf, 0), NP_EALREADY, "np_sections_init_buf", "sections: a buffer after init");
    EXPECT(np_sections_get(np_sections_max(), &s), NP_EINVAL, "np_sections_get", "sections: get, id out of range");
    EXPECT(np_sections_get(1, NULL), NP_EINVAL, "np_sections_get", "sections: get into NULL");
    EXPECT(np_section_begin(np_sections_max()), NP_EINVAL, "np_section_begin", "sections: begin, id out of range");
    SILENT(np_section_end(np_sections_max()), NP_EINVAL, "sections: a bad id again, not reported again");
    EXPECT(np_section_end(3), NP_EINVAL, "np_section_end", "sections: end with no begin");
    SILENT(np_section_end(3), NP_EINVAL, "sections: an end with no begin again, not reported again");
    tc_check(np_sections_get(3, &s) == NP_OK && s.count == 0 && s.time_ns == 0, "sections: nothing counted");
}

static NOPROF void bins(void)
{
    EXPECT(np_bins_dump(), NP_ENOTINIT, "np_bins_dump", "bins: dump before init");
    EXPECT(np_bins_shutdown(), NP_ENOTINIT, "np_bins_shutdown", "bins: shutdown before init");
    EXPECT(np_bins_dump_every(1), NP_ENOTINIT, "np_bins_dump_every", "bins: dump_every before init");
    EXPECT(np_bins_init(2, 1000), NP_EINVAL, "np_bins_init", "bins: too few bins");
    EXPECT(np_bins_init(np_bins_max() + 1, 1000), NP_EINVAL, "np_bins_init", "bins: too many bins");
    EXPECT(np_bins_init(4, 100001), NP_EINVAL, "np_bins_init", "bins: too fast");
    /* 100 MHz / 1 Hz does not fit SysTick's 24 bits; 100 kHz at 1 MHz is
     * under its least period */
    np_cm_set_cpu_hz(100000000);
    EXPECT(np_bins_init(4, 1), NP_EINVAL, "np_bins_init", "bins: a rate SysTick cannot count (too slow)");
    np_cm_set_cpu_hz(1000000);
    EXPECT(np_bins_init(4, 100000), NP_EINVAL, "np_bins_init", "bins: a rate SysTick cannot count (too fast)");
    np_cm_set_cpu_hz(TC_CPU_HZ);
    SILENT(np_bins_init(4, 1000), NP_OK, "bins: init");
    EXPECT(np_bins_init(4, 1000), NP_EALREADY, "np_bins_init", "bins: second init");
    EXPECT(np_bin_name(4, "x"), NP_EINVAL, "np_bin_name", "bins: name out of range");
    EXPECT(np_bins_dump_every(1), NP_EINVAL, "np_bins_dump_every", "bins: periodic dump, no thread to run it");
    tc_check(np_bins_count(np_bins_max()) == 0, "bins: count out of range is 0");
    SILENT(np_bins_shutdown(), NP_OK, "bins: shutdown");
}

static NOPROF void blocks(void)
{
    /* no table given: a dump before any block says it has no slot */
    tc_capture_begin();
    int rc = np_blocks_dump();
    tc_capture_end();
    tc_check(rc == NP_OK && tc_streq(tc_captured, "blocks: 0 blocks, 0 executions, 0 lost, 0 slots\n(no table: a "
                                                  "target's runtime counts in the one the program gives, "
                                                  "np_blocks_init_buf)\n"),
             "blocks: dump before any block");
    EXPECT(np_blocks_init_buf(NULL, 64), NP_EINVAL, "np_blocks_init_buf", "blocks: no buffer");
    EXPECT(np_blocks_log(16), NP_ESMALL, "np_blocks_log", "blocks: a ring, no memory to map on a target");
    EXPECT(np_blocks_log((size_t)1 << 30), NP_EINVAL, "np_blocks_log", "blocks: a ring too large");
    tc_check(np_blocks_read(NULL, 0) == 0 && np_blocks_recent(NULL, 0) == 0, "blocks: reads into nothing");
}

static NOPROF void threads(void)
{
    static uint64_t mem[NP_THREAD_SIZE / 8 + 2] __attribute__((aligned(16)));
    np_thread *t = (np_thread *)1;
    EXPECT((t = np_thread_init(NULL, NP_THREAD_SIZE)) ? 0 : -1, -1, "np_thread_init", "threads: NULL memory");
    EXPECT((t = np_thread_init((char *)mem + 8, NP_THREAD_SIZE)) ? 0 : -1, -1, "np_thread_init",
           "threads: misaligned memory");
    EXPECT((t = np_thread_init(mem, np_thread_size() - 1)) ? 0 : -1, -1, "np_thread_init", "threads: too small");
    tc_check(np_thread_size() <= NP_THREAD_SIZE, "threads: NP_THREAD_SIZE holds one");
}

/* np_trace_init_ring refuses under its own name, and a buffer too small
 * once its start is aligned to a word (it fell back on np_trace_init). */
static NOPROF void trace(void)
{
    static uint32_t ring[NP_TRACE_BUFFER_MIN / 4 + 1];
    EXPECT(np_trace_flush(), NP_ENOTINIT, "np_trace_flush", "trace: flush before init");
    EXPECT(np_trace_stop(), NP_ENOTINIT, "np_trace_stop", "trace: stop before init");
    EXPECT(np_trace_init(NULL, 512), NP_EINVAL, "np_trace_init", "trace: NULL buffer");
    EXPECT(np_trace_init(ring, NP_TRACE_BUFFER_MIN - 1), NP_ESMALL, "np_trace_init", "trace: too small a buffer");
    EXPECT(np_trace_init_ring(NULL, 512), NP_EINVAL, "np_trace_init_ring", "trace: ring, NULL buffer");
    EXPECT(np_trace_init_ring(ring, NP_TRACE_BUFFER_MIN - 1), NP_ESMALL, "np_trace_init_ring",
           "trace: ring, too small a buffer");
    EXPECT(np_trace_init_ring((char *)ring + 1, NP_TRACE_BUFFER_MIN), NP_ESMALL, "np_trace_init_ring",
           "trace: ring, too small once aligned");
    EXPECT(np_trace_init_flight(NULL, 4096), NP_EINVAL, "np_trace_init_flight", "trace: flight, NULL buffer");
    EXPECT(np_trace_init_flight(ring, sizeof ring), NP_ESMALL, "np_trace_init_flight", "trace: flight, too small");
}

static NOPROF void encoder(void)
{
    static uint8_t chunk[NP_TRACE_ENC_MIN];
    struct np_trace_sink sink = { NULL, NULL, 0 };
    struct np_trace_enc e;
    SILENT(np_trace_enc_init(&e, NULL, sizeof chunk, 1, np_trace_flush_to_sink, &sink), -1, "encoder: NULL buffer");
    SILENT(np_trace_enc_init(&e, chunk, sizeof chunk - 1, 1, np_trace_flush_to_sink, &sink), -1,
           "encoder: a buffer too small");
}

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    calltrace();
    cost();
    sections();
    bins();
    blocks();
    threads();
    trace();
    encoder();
    return tc_finish();
}
