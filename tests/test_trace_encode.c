/* test_trace_encode.c - the runtime's freestanding encoder
 * (src/runtime/trace_encode.h) writes a trace as a target would: through
 * a byte sink, from buffers too small for one chunk of the run, in cycles;
 * the host's reader (src/analyze/trace_read.h) gives back exactly the
 * events encoded. Bad buffers are refused, and a chunk that does not fit
 * is never written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>
#include "analyze/trace_read.h"
#include "runtime/trace_encode.h"

/* The sink: a file, written the way a target's UART would take bytes. */
struct file_sink {
    FILE *f;
    unsigned writes;
};

static int to_file(void *ctx, const void *bytes, size_t len)
{
    struct file_sink *s = ctx;
    s->writes++;
    return fwrite(bytes, 1, len, s->f) == len ? 0 : -1;
}

/* What the reader gives back. */
struct got {
    char clock[16];
    int time_unit;
    uint32_t tid;
    char thread[16];
    unsigned enters, exits, switches, lost;
    uint64_t last_time, sum_addr;
    int ended;
    uint64_t end_lost;
};

static int on_begin(void *ctx, const struct np_trace_process *p)
{
    struct got *g = ctx;
    snprintf(g->clock, sizeof g->clock, "%s", p->clock);
    g->time_unit = (int)p->time_unit;
    g->end_lost = p->events_lost;
    return 0;
}

static int on_thread(void *ctx, uint32_t tid, const char *name)
{
    struct got *g = ctx;
    g->tid = tid;
    snprintf(g->thread, sizeof g->thread, "%s", name);
    return 0;
}

static int on_enter(void *ctx, uint32_t tid, uint64_t t, uint64_t addr)
{
    struct got *g = ctx;
    assert_int_equal(tid, 7);
    assert_true(t >= g->last_time);
    g->last_time = t;
    g->enters++;
    g->sum_addr += addr;
    return 0;
}

static int on_ret(void *ctx, uint32_t tid, uint64_t t)
{
    struct got *g = ctx;
    assert_int_equal(tid, 7);
    assert_true(t >= g->last_time);
    g->last_time = t;
    g->exits++;
    return 0;
}

static int on_switch(void *ctx, uint32_t tid, uint64_t t, uint64_t d)
{
    struct got *g = ctx;
    (void)tid, (void)t;
    assert_int_equal(d, 500);
    g->switches++;
    return 0;
}

static int on_lost(void *ctx, uint32_t tid, uint64_t t, uint64_t n)
{
    struct got *g = ctx;
    (void)tid, (void)t;
    g->lost += (unsigned)n;
    return 0;
}

static int on_end(void *ctx)
{
    ((struct got *)ctx)->ended = 1;
    return 0;
}

/* A run of 1000 calls two deep, every call 10 cycles apart, encoded
 * through a 128-byte buffer: the reader's events are those. */
static void target_trace_reads_back(void **state)
{
    (void)state;
    char path[] = "/tmp/np_trace_encode_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    struct file_sink fs = { fdopen(fd, "wb"), 0 };
    assert_non_null(fs.f);
    struct np_trace_sink sink = { to_file, &fs, 0 };

    uint8_t chunk[128];
    uint8_t head[NP_TRACE_HEADER_SIZE];
    np_trace_file_header(head);
    assert_int_equal(to_file(&fs, head, sizeof head), 0);
    struct np_trace_info info = { .ns_per_tick = 1.0, .start_tick = 1000, .clock = "cycles" };
    size_t n = np_trace_info_chunk(chunk, sizeof chunk, &info);
    assert_true(n > 0);
    to_file(&fs, chunk, n);
    n = np_trace_thread_chunk(chunk, sizeof chunk, 7, "main", 4);
    assert_true(n > 0);
    to_file(&fs, chunk, n);

    uint8_t buf[128];
    struct np_trace_enc e;
    assert_int_equal(np_trace_enc_init(&e, buf, sizeof buf, 7, np_trace_flush_to_sink, &sink), 0);
    uint64_t t = 1000, sum = 0;
    for (unsigned i = 0; i < 1000; i++) {
        uint64_t a = 0x08000100u + 4 * (i % 13), b = 0x08002000u;
        np_trace_enc_put(&e, NP_EV_ENTRY, a, t += 10);
        np_trace_enc_put(&e, NP_EV_ENTRY, b, t += 10);
        np_trace_enc_put(&e, NP_EV_EXIT, 0, t += 10);
        np_trace_enc_put(&e, NP_EV_EXIT, 0, t += 10);
        sum += a + b;
        if (i % 100 == 0)
            np_trace_enc_put(&e, NP_EV_SWITCH, 500, t += 500);
    }
    np_trace_enc_put(&e, NP_EV_LOST, 3, t);
    np_trace_enc_flush(&e);
    n = np_trace_end_chunk(chunk, sizeof chunk, t, 3, 1.0);
    assert_true(n > 0);
    to_file(&fs, chunk, n);
    assert_int_equal(sink.failed, 0);
    assert_true(fs.writes > 100); /* many small chunks */
    fclose(fs.f);

    struct got g = { 0 };
    struct np_event_sink s = { .ctx = &g, .begin = on_begin, .thread = on_thread, .enter = on_enter,
                               .exit = on_ret, .switch_out = on_switch, .lost = on_lost, .end = on_end };
    struct np_trace_summary sum_read = { 0 };
    assert_int_equal(np_trace_read(path, &s, NULL, &sum_read), NP_TRACE_OK);
    unlink(path);
    assert_string_equal(g.clock, "cycles");
    assert_int_equal(g.time_unit, NP_UNIT_CYCLES);
    assert_int_equal(g.tid, 7);
    assert_string_equal(g.thread, "main");
    assert_int_equal(g.enters, 2000);
    assert_int_equal(g.exits, 2000);
    assert_int_equal(g.switches, 10);
    assert_int_equal(g.lost, 3);
    assert_int_equal(g.sum_addr, sum);
    assert_int_equal(g.last_time, t - 1000); /* cycles from the start tick */
    assert_int_equal(g.end_lost, 3);
    assert_true(g.ended);
}

/* Too small a buffer is refused; a chunk that does not fit is not built;
 * a sample larger than the buffer keeps its innermost frames. */
static void small_buffers(void **state)
{
    (void)state;
    uint8_t buf[NP_TRACE_ENC_MIN];
    struct np_trace_enc e;
    assert_int_equal(np_trace_enc_init(&e, buf, sizeof buf - 1, 1, np_trace_flush_to_sink, NULL), -1);
    assert_int_equal(np_trace_enc_init(&e, NULL, 4096, 1, np_trace_flush_to_sink, NULL), -1);
    uint8_t small[20];
    assert_int_equal(np_trace_thread_chunk(small, sizeof small, 1, "a thread name", 13), 0);
    assert_int_equal(np_trace_thread_chunk(small, sizeof small, 1, "t", 1), NP_TRACE_CHUNK_HEADER + 4 + 2 + 1);
    struct np_trace_info info = { .clock = "cycles" };
    assert_int_equal(np_trace_info_chunk(small, sizeof small, &info), 0);

    struct file_sink fs = { fopen("/dev/null", "wb"), 0 };
    struct np_trace_sink sink = { to_file, &fs, 0 };
    assert_int_equal(np_trace_enc_init(&e, buf, sizeof buf, 1, np_trace_flush_to_sink, &sink), 0);
    uint64_t frames[NP_SAMPLE_MAX_FRAMES];
    for (unsigned i = 0; i < NP_SAMPLE_MAX_FRAMES; i++)
        frames[i] = 0x1000 + i;
    np_trace_enc_sample(&e, 5, NP_SAMPLE_MAX_FRAMES, 0, 0, frames);
    assert_int_equal(e.count, 1);
    assert_true(e.len <= sizeof buf - NP_TRACE_EVENTS_PREFIX);
    np_trace_enc_flush(&e);
    assert_int_equal(fs.writes, 1);
    fclose(fs.f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(target_trace_reads_back),
        cmocka_unit_test(small_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
