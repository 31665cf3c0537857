/* trace_fw.c - a firmware with known calls that records its trace on the
 * target (tests/port/trace_import.sh): the trace goes to semihosting's
 * stdout between the firmware's own lines; function cost counts the same
 * calls on the target, and "cost <function> <calls>" lines give its
 * counts for the host to compare with what it imports (not with
 * -DTRACE_ALONE: the trace alone takes its ring's own path). Misuse of the
 * trace's API is checked here: an error code and one error record. Prints "ok" or
 * "FAIL" per check and returns the failures. With -DLOSSY its writer
 * refuses one chunk of the trace (np_output_failed). Built with
 * -finstrument-functions; main and the checks are not. */
#include <stddef.h>
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "../target/check.h" /* tc_put (semihosting's stdout, as the trace goes), tc_check */
#include "common/report_format.h"
#include "common/trace_format.h"

/* ---- instrumented code with known calls ------------------------------------ */

#define LEAF_TURNS 20
#include "known_calls.h" /* leaf, mid, top */

__attribute__((noinline)) unsigned down(unsigned n)
{
    sink++;
    return n ? 1 + down(n - 1) : 0;
}

/* On the mps2 boards the test links .far_text 1.5 MiB from the rest of the
 * code: beyond the 1 MiB window of a ring's ENTRY words, its entries take
 * the ring's FAR words. */
__attribute__((noinline, section(".far_text"))) void far(void)
{
    sink++;
}

#if defined(TRACE_ALONE) && !defined(TICK_IRQ)
/* With the DWT clock (m4_unicorn): spin() times its own body, and the
 * trace's durations of it must be these and the hooks' few cycles more.
 * The calls come far apart and last long: an entry more than 4096 cycles
 * after the record before, an exit as long after its entry, where the
 * ring's reader takes the clock's high bits from a TIME word or an EXIT's
 * 30 bits; a record read with the wrong ones is 4096 cycles out. */
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define SPINS 4
static uint32_t spun[SPINS], nspun;

__attribute__((noinline)) void spin(unsigned n)
{
    uint32_t t0 = DWT_CYCCNT;
    for (unsigned i = 0; i < n; i++)
        sink++;
    uint32_t t1 = DWT_CYCCNT;
    if (nspun < SPINS)
        spun[nspun++] = t1 - t0;
}

static NOPROF void idle(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink++;
}

static NOPROF void spins(void)
{
    spin(10);
    idle(1000); /* about 5000 cycles */
    spin(1000);
    spin(10);
    idle(3000);
    spin(10);
}

static NOPROF void print_spins(void)
{
    tc_put("spun");
    for (uint32_t i = 0; i < nspun; i++) {
        tc_put(" ");
        tc_put_u64(spun[i]);
    }
    tc_put("\n");
}
#endif

#ifdef TICK_IRQ
/* SysTick's interrupt every TICK_IRQ cycles, the firmware's own handler
 * (as an RTOS's: the runtime built with NP_CM_SYSTICK_HANDLER=0), calls
 * an instrumented function: its records come into the ring between the
 * hooks' and inside them, where the hooks' claim of their word fails and
 * the full path writes it. While the full path holds the trace, the
 * interrupt's records are lost, and counted. */
#include "cortex_m.h"
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static volatile uint32_t ticks;

__attribute__((noinline)) void tick(void)
{
    sink++;
}

NOPROF void SysTick_Handler(void);
void SysTick_Handler(void)
{
    ticks++;
    tick();
    np_cm_systick_isr();
}
#endif

/* ---- misuse: an error code and one record ---------------------------------------- */

/* P's N bytes, little-endian (not trace_format.h's, which would be
 * instrumented here and counted) */
static NOPROF uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    while (n--)
        v = v << 8 | p[n];
    return v;
}

/* RC is WANT and the call sent one ERROR record of status WANT (a REPORT
 * chunk, after the new writer's stream opening), as libnanoprof reports
 * errors; its text is the host's (tests/port/reports.sh checks it). */
static NOPROF void one_record(int rc, int want, const char *what)
{
    const uint8_t *p = (const uint8_t *)tc_captured;
    size_t n = tc_ncaptured, errors = 0, at = 0;
    if (n >= NP_TRACE_HEADER_SIZE && p[0] == 'N' && p[1] == 'P')
        at = NP_TRACE_HEADER_SIZE;
    while (at + NP_TRACE_CHUNK_HEADER <= n) {
        uint64_t type = le(p + at, 4), len = le(p + at + 4, 4);
        const uint8_t *v = p + at + NP_TRACE_CHUNK_HEADER;
        if (len > n - at - NP_TRACE_CHUNK_HEADER)
            break;
        if (type == NP_CHUNK_REPORT && len == 2 + 3 * 8 && le(v, 2) == NP_REP_ERROR && (int64_t)le(v + 2, 8) == want)
            errors++;
        at += NP_TRACE_CHUNK_HEADER + len;
    }
    tc_check(rc == want && at == n && errors == 1, what);
    tc_ncaptured = 0;
}

#ifndef TRACE_BUF
#define TRACE_BUF 512 /* (a ring of NP_TRACE_RING_FAST or more: its hooks' own path) */
#endif
static uint8_t trace_buf[TRACE_BUF];

#ifdef LOSSY
/* A writer that refuses the trace's second EVENTS chunk (one of the
 * 200 calls' loop) and says so: that chunk's events are lost. At the
 * next write, an RTOS switches threads inside it (as PendSV would): the
 * thread switched in calls leaf, then the writer's thread comes back;
 * the trace is in use meanwhile, so the call (2 events) and the two
 * switches are lost. */
static unsigned nevents, nwrites; /* EVENTS chunks written; writes since the refused one, and it */
static uint32_t refused;    /* events of the refused chunk */
static np_thread *other;

static NOPROF void lossy(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    extern void np_port_write_default(const char *bytes, size_t len);
    const uint8_t *b = (const uint8_t *)bytes;
    if (nwrites && ++nwrites == 2) { /* the write after the refused one */
        np_thread *mine = np_thread_current();
        np_thread_switch(mine, other);
        leaf();
        np_thread_switch(other, mine);
    }
    if (!nwrites && len > 28 && b[0] == NP_CHUNK_EVENTS && ++nevents == 2) {
        /* the event count: after the 12-byte chunk header, tid and base tick */
        refused = (uint32_t)(b[24] | b[25] << 8 | b[26] << 16 | (uint32_t)b[27] << 24);
        nwrites = 1;
        np_output_failed();
        return;
    }
    np_port_write_default(bytes, len);
}
#endif

static NOPROF void misuse_before(void)
{
    tc_capture_begin();
    one_record(np_trace_stop(), NP_ENOTINIT, "misuse: stop before init");
    one_record(np_trace_flush(), NP_ENOTINIT, "misuse: flush before init");
    tc_capture_begin();
    one_record(np_trace_init(NULL, 512), NP_EINVAL, "misuse: NULL buffer");
    tc_capture_begin();
    one_record(np_trace_init(trace_buf, NP_TRACE_BUFFER_MIN - 1), NP_ESMALL, "misuse: too small a buffer");
    np_output_set(NULL, NULL);
}

/* ---- RTOS threads: each records apart ------------------------------------------ */

static uint64_t th_mem[2][NP_THREAD_SIZE / 8] __attribute__((aligned(16)));
#ifndef TRACE_ALONE
/* (room for down()'s depth wherever the linker puts them: the table is
 * aligned to 64 bytes inside) */
static uint64_t cost_main[1024 / 8], cost_a[1024 / 8], cost_b[1024 / 8];
static uint64_t stats[1024 / 8];
#endif

static NOPROF void threads(np_thread *a, np_thread *b)
{
    np_thread_switch(NULL, a);
    leaf();
    np_thread_switch(a, b);
    mid(2);
    np_thread_switch(b, a);
    leaf();
    np_thread_switch(a, NULL);
}

#ifndef TRACE_ALONE
static NOPROF void print_cost(const char *name, const void *fn)
{
    np_func_stats s = { 0 };
    tc_put("cost ");
    tc_put(name);
    tc_put(" ");
    tc_put_u64(np_stats_find(stats, fn, &s) == NP_OK ? s.calls : 0);
    tc_put("\n");
}
#endif

NOPROF int main(void)
{
    tc_put("firmware starts\n");
    misuse_before();
    np_thread *a = np_thread_init(th_mem[0], sizeof th_mem[0]), *b = np_thread_init(th_mem[1], sizeof th_mem[1]);
#ifndef TRACE_ALONE
    np_stats_init(stats, sizeof stats);
    tc_check(np_cost_init(cost_main, sizeof cost_main) == NP_OK, "cost init");
    np_thread_switch(NULL, a);
    np_cost_init(cost_a, sizeof cost_a);
    np_thread_switch(a, b);
    np_cost_init(cost_b, sizeof cost_b);
    np_thread_switch(b, NULL);
#endif

#ifdef LOSSY
    other = b;
    np_output_set(lossy, NULL);
#endif
    tc_check(np_trace_init(trace_buf, sizeof trace_buf) == NP_OK, "trace init");
    tc_capture_begin();
    one_record(np_trace_init(trace_buf, sizeof trace_buf), NP_EALREADY, "misuse: second init");
#ifdef LOSSY
    np_output_set(lossy, NULL);
#else
    np_output_set(NULL, NULL);
#endif
#ifdef TICK_IRQ
    SYST_CSR = 0;
    SYST_CVR = 0;
    SYST_RVR = TICK_IRQ - 1;
    SYST_CSR = 7;
#endif
    top();
    top();
    tc_put("a line between the trace's chunks\n");
    tc_check(np_trace_flush() == NP_OK, "trace flush");
    for (int i = 0; i < 200; i++) /* chunks fill: streamed as they do */
        leaf();
    tc_check(down(6) == 6, "recursion");
    for (int i = 0; i < 3; i++)
        far();
    for (int i = 0; i < 3; i++) {
        NP_ENTER("phase");
        leaf();
        NP_EXIT();
    }
    threads(a, b);
#if defined(TRACE_ALONE) && !defined(TICK_IRQ)
    spins();
#endif
#ifdef LOSSY
    uint64_t lost = np_trace_lost();
    tc_check(refused > 0 && lost == refused + 4, "trace: a refused chunk's events, a call and two switches lost");
    tc_put("lost ");
    tc_put_u64(lost);
    tc_put(" refused ");
    tc_put_u64(refused);
    tc_put("\n");
#elif defined(TICK_IRQ)
    SYST_CSR = 0;
    tc_put("ticks ");
    tc_put_u64(ticks);
    tc_put(" lost ");
    tc_put_u64(np_trace_lost());
    tc_put("\n");
    tc_check(ticks > 100, "the interrupts came");
#else
    tc_check(np_trace_lost() == 0, "trace: nothing lost");
#endif
    tc_check(np_trace_stop() == NP_OK, "trace stop");
    tc_capture_begin();
    one_record(np_trace_stop(), NP_ENOTINIT, "misuse: stop after stop");
    np_output_set(NULL, NULL);
#if defined(TRACE_ALONE) && !defined(TICK_IRQ)
    print_spins();
#endif

#ifndef TRACE_ALONE
    /* every thread's sums into the table: the counts of all threads */
    np_cost_disable();
    np_stats_calc(stats);
    np_thread_switch(NULL, a);
    np_stats_calc(stats);
    np_thread_switch(a, b);
    np_stats_calc(stats);
    np_thread_switch(b, NULL);
    print_cost("leaf", (const void *)leaf);
    print_cost("mid", (const void *)mid);
    print_cost("top", (const void *)top);
    print_cost("down", (const void *)down);
    print_cost("far", (const void *)far);
    print_cost("phase", "phase");
#endif
    return tc_finish();
}
