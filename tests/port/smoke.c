/* smoke.c - the Cortex-M port under QEMU (tests/port/run.sh): the core's
 * mechanisms on the port's clock, critical sections, SysTick tick and
 * semihosting output, each checked from inside the firmware through the
 * read API with exact counts. Prints "ok <what>" or "FAIL <what>" per
 * check and returns the failures (the exit status QEMU gives back).
 * Built with -finstrument-functions; main and the checks are not. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "runtime/trace_encode.h"
#include "../target/check.h" /* tc_put, tc_check, the capturing writer */

/* ---- instrumented code with known calls -------------------------------- */

#include "known_calls.h" /* leaf, mid, top */

/* ---- the checks ------------------------------------------------------------ */

static uint64_t ct_buf[2 * 16];
static uint64_t cost_buf[1024 / 8];
static uint64_t stats_buf[1024 / 8];

static NOPROF void calltrace(void)
{
    tc_check(np_calltrace_init(ct_buf, sizeof ct_buf, NP_CALLTRACE_LOG) == NP_OK, "calltrace init");
    top();
    np_calltrace_disable();
    np_calltrace_entry e[16];
    int n = np_calltrace_read(e, 16);
    tc_check(n == 8, "calltrace: 8 calls");
    /* newest first: leaf leaf mid leaf leaf leaf mid top */
    static const int depth[8] = { 2, 2, 1, 2, 2, 2, 1, 0 };
    int ok = n == 8;
    for (int i = 0; ok && i < 8; i++)
        ok = e[i].depth == (uint32_t)depth[i];
    tc_check(ok, "calltrace: nesting");
    tc_check(n == 8 && e[0].fn == (const void *)leaf && e[2].fn == (const void *)mid && e[7].fn == (const void *)top,
          "calltrace: function addresses");
    tc_capture_begin();
    np_calltrace_dump();
    tc_capture_end();
    tc_check(tc_starts_with(tc_captured, "calltrace: log mode, thread 0, lr="), "calltrace: dump through the program's writer");
    np_calltrace_shutdown();
}

static NOPROF void cost(void)
{
    tc_check(np_stats_init(stats_buf, sizeof stats_buf) == NP_OK, "stats init");
    tc_check(np_cost_init(cost_buf, sizeof cost_buf) == NP_OK, "cost init");
    const char *clock = np_cost_clock_name();
    tc_check(clock[0] == 'c' && clock[1] == 'y' && clock[5] == 's' && !clock[6], "cost: the clock is cycles");
    top();
    top();
    np_cost_disable();
    tc_check(np_stats_calc(stats_buf) == NP_OK, "cost: calc");
    np_func_stats l = { 0 }, m = { 0 }, t = { 0 };
    tc_check(np_stats_find(stats_buf, (const void *)leaf, &l) == NP_OK && l.calls == 10, "cost: leaf 10 calls");
    tc_check(np_stats_find(stats_buf, (const void *)mid, &m) == NP_OK && m.calls == 4, "cost: mid 4 calls");
    tc_check(np_stats_find(stats_buf, (const void *)top, &t) == NP_OK && t.calls == 2, "cost: top 2 calls");
    tc_check(l.total_ns > 0 && m.total_ns > l.total_ns / 3 && t.total_ns >= m.total_ns && t.self_ns <= t.total_ns,
          "cost: times add up");
    np_stats_dump(stats_buf);
    np_cost_shutdown();
}

static NOPROF void sections(void)
{
    tc_check(np_sections_init(0) == NP_OK, "sections init");
    NP_SECTIONS_START();
    for (int i = 0; i < 5; i++) {
        NP_SECTION_BEGIN(1);
        NP_SECTION_BEGIN(1); /* nested: the outermost is timed */
        leaf();
        NP_SECTION_END(1);
        NP_SECTION_END(1);
    }
    NP_SECTIONS_STOP();
    np_section_stats s, g;
    tc_check(np_sections_get(1, &s) == NP_OK && s.count == 5 && s.time_ns > 0, "sections: 5 timed");
    tc_check(np_sections_get(NP_SECTION_GLOBAL, &g) == NP_OK && g.count == 1 && g.time_ns >= s.time_ns,
          "sections: inside the global one");
    np_sections_dump();
}

static NOPROF void bins(void)
{
    tc_check(np_bins_init(4, 1000) == NP_OK, "bins init at 1 kHz");
    NP_BIN(2);
    for (uint32_t spins = 0; np_bins_count(2) < 5 && spins < 50000000u; spins++)
        sink++;
    NP_BIN(1);
    np_bins_delay_us(10000);
    tc_check(np_bins_count(2) >= 5, "bins: ticks in bin 2");
    tc_check(np_bins_count(3) >= 5, "bins: the delay in the idle bin");
    tc_capture_begin();
    tc_check(np_bins_dump() == NP_OK, "bins: dump");
    tc_capture_end();
    tc_check(tc_starts_with(tc_captured, "0 - "), "bins: dump lines");
    tc_check(np_bins_shutdown() == NP_OK, "bins shutdown");
}

/* Two threads of an RTOS: each records apart. */
static uint64_t th_mem[2][NP_THREAD_SIZE / 8] __attribute__((aligned(16)));
static uint64_t ct_a[2 * 8], ct_b[2 * 8];

static NOPROF void threads(void)
{
    np_thread *a = np_thread_init(th_mem[0], sizeof th_mem[0]), *b = np_thread_init(th_mem[1], sizeof th_mem[1]);
    tc_check(a && b, "threads init");
    np_thread_switch(NULL, a);
    np_calltrace_init(ct_a, sizeof ct_a, NP_CALLTRACE_STACK);
    np_thread_switch(a, b);
    np_calltrace_init(ct_b, sizeof ct_b, NP_CALLTRACE_LOG);
    mid(2);
    np_thread_switch(b, a);
    leaf();
    np_calltrace_entry e[8];
    tc_check(np_calltrace_read(e, 8) == 0, "threads: a's stack is empty after its call");
    np_thread_switch(a, b);
    tc_check(np_calltrace_read(e, 8) == 3, "threads: b logged its 3 calls");
    np_thread_switch(b, NULL);
    tc_check(np_thread_current() != a && np_thread_current() != b, "threads: back to the core's own");
}

/* The trace encoder on the target: chunks through a sink. */
static uint8_t trace_out[1024];
static size_t trace_len;

static NOPROF int to_ram(void *ctx, const void *p, size_t n)
{
    (void)ctx;
    if (n > sizeof trace_out - trace_len)
        return -1;
    for (size_t i = 0; i < n; i++)
        trace_out[trace_len + i] = ((const uint8_t *)p)[i];
    trace_len += n;
    return 0;
}

static NOPROF void encoder(void)
{
    static uint8_t chunk[NP_TRACE_ENC_MIN];
    struct np_trace_sink sink = { to_ram, NULL, 0 };
    struct np_trace_enc e;
    tc_check(np_trace_enc_init(&e, chunk, sizeof chunk, 1, np_trace_flush_to_sink, &sink) == 0, "encoder init");
    for (unsigned i = 0; i < 20; i++) {
        np_trace_enc_put(&e, NP_EV_ENTRY, (uint64_t)(uintptr_t)leaf, 100 * i);
        np_trace_enc_put(&e, NP_EV_EXIT, 0, 100 * i + 50);
    }
    np_trace_enc_flush(&e);
    tc_check(sink.failed == 0 && trace_len > 0 && trace_out[0] == NP_CHUNK_EVENTS, "encoder: EVENTS chunks out");
    uint32_t count = 0;
    size_t off = 0;
    while (off + NP_TRACE_EVENTS_PREFIX <= trace_len) {
        uint32_t type, len;
        if (np_trace_chunk_at(trace_out + off, trace_len - off, NP_TRACE_VERSION, &type, &len) != NP_CHUNK_WHOLE)
            break; /* cut, or its checksum fails */
        count += np_get_u32(trace_out + off + NP_TRACE_CHUNK_HEADER + 12);
        off += NP_TRACE_CHUNK_HEADER + len;
    }
    tc_check(count == 40 && off == trace_len, "encoder: 40 records, every chunk's checksum good");
}

static NOPROF void misuse(void)
{
    tc_capture_begin();
    int rc = np_calltrace_init(NULL, 64, NP_CALLTRACE_LOG);
    tc_capture_end();
    tc_check(rc == NP_EINVAL && tc_starts_with(tc_captured, "nanoprof: np_calltrace_init: buffer is NULL\n"),
          "misuse: an error code and one line");
}

NOPROF int main(void)
{
    calltrace();
    cost();
    sections();
    bins();
    threads();
    encoder();
    misuse();
    return tc_finish();
}
