/* sections.c - sections on a Cortex-M target with known cycle counts
 * (run.sh): sections around tc_spin loops of known instruction counts,
 * nested sections, a section nested in itself, a repeated one and the
 * global section, checked against the instructions they bracket; the
 * table in the firmware's buffer (np_sections_init_buf).
 *
 * The figures: under -icount shift=0 one instruction is one nanosecond of
 * virtual time; SysTick, the port's clock here (QEMU's DWT counter does
 * not move), counts the board's core clock, TC_CPU_HZ, in that virtual
 * time, and np_cm_set_cpu_hz(TC_CPU_HZ) makes the port turn its counts
 * back into nanoseconds: a section's time_ns is the instructions it
 * brackets, read to one SysTick count Q = 1e9 / TC_CPU_HZ ns (40 ns on
 * mps2, 62.5 on the microbit) at each end. The instructions the runtime
 * itself runs inside a section (the tail of the begin after its clock
 * read, the head of the end before its own) are measured once, as an
 * empty section E; a loop's section then reads 2N + E, within 2Q (its own
 * two reads and E's) plus 8 instructions for the loop's set-up. */
#include "check.h"
#include "cortex_m.h"

#define Q ((1000000000u + TC_CPU_HZ - 1) / TC_CPU_HZ)
#define TOL (2 * Q + 8)

static NOPROF uint64_t ns(unsigned id)
{
    np_section_stats s = { 0 };
    np_sections_get(id, &s);
    return s.time_ns;
}

static NOPROF uint32_t count(unsigned id)
{
    np_section_stats s = { 0 };
    np_sections_get(id, &s);
    return s.count;
}

static NOPROF void within(uint64_t got, uint64_t want, uint64_t tol, const char *what)
{
    tc_check_range(got, want > tol ? want - tol : 0, want + tol, what);
}

/* "section <id>: count <c>, time <ns>, <P>% of global\n", as the dump
 * writes it, appended to OUT. */
static NOPROF char *dump_line(char *out, const char *name, unsigned id, uint32_t c, uint64_t t, uint64_t global)
{
    char num[24];
    while (*name)
        *out++ = *name++;
    if (id) {
        *out++ = ' ';
        *out++ = (char)('0' + id);
    }
    uint64_t v[3] = { c, t, (t * 1000 + global / 2) / global };
    const char *before[3] = { ": count ", ", time ", ", " };
    for (int k = 0; k < 3; k++) {
        for (const char *p = before[k]; *p; p++)
            *out++ = *p;
        uint64_t x = k == 2 ? v[k] / 10 : v[k];
        int i = sizeof num;
        do
            num[--i] = (char)('0' + x % 10);
        while ((x /= 10));
        while (i < (int)sizeof num)
            *out++ = num[i++];
        if (k == 2) {
            *out++ = '.';
            *out++ = (char)('0' + v[k] % 10);
        }
    }
    for (const char *p = "% of global\n"; *p; p++)
        *out++ = *p;
    *out = 0;
    return out;
}

#define N4 50000u
#define N5A 7000u
#define N6 20000u
#define N5B 3000u
#define N7 1000u
#define N8 12345u

/* the table and the core's open sections: ids 0 to 8 */
static uint64_t table[NP_SECTIONS_BUF_BYTES(9) / 8];

NOPROF int main(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    tc_check(np_sections_init_buf(table, sizeof table, 0) == NP_OK && np_sections_max() == 9,
             "sections init, in the firmware's buffer: ids 0 to 8");
    NP_SECTIONS_START();
    /* E: an empty section */
    NP_SECTION_BEGIN(1);
    NP_SECTION_END(1);
    /* P: a section holding an empty one, what a nested pair adds */
    NP_SECTION_BEGIN(2);
    NP_SECTION_BEGIN(3);
    NP_SECTION_END(3);
    NP_SECTION_END(2);
    /* a loop of 2 * N4 instructions */
    NP_SECTION_BEGIN(4);
    tc_spin(N4);
    NP_SECTION_END(4);
    /* nested: 5 holds two loops and section 6's */
    NP_SECTION_BEGIN(5);
    tc_spin(N5A);
    NP_SECTION_BEGIN(6);
    tc_spin(N6);
    NP_SECTION_END(6);
    tc_spin(N5B);
    NP_SECTION_END(5);
    /* ten times */
    for (int i = 0; i < 10; i++) {
        NP_SECTION_BEGIN(7);
        tc_spin(N7);
        NP_SECTION_END(7);
    }
    /* nested in itself: timed at the outermost level only */
    NP_SECTION_BEGIN(8);
    NP_SECTION_BEGIN(8);
    tc_spin(N8);
    NP_SECTION_END(8);
    NP_SECTION_END(8);
    NP_SECTIONS_STOP();

    uint64_t e = ns(1), p = ns(2);
    tc_put("empty section E = ");
    tc_put_u64(e);
    tc_put(" ns, nested pair P = ");
    tc_put_u64(p);
    tc_put(" ns\n");
    /* The runtime's own share is small: E a few dozen instructions, P
     * (E, plus one whole begin and end) a few hundred at most. */
    tc_check_range(e, 0, 200, "empty section: the runtime's own instructions");
    tc_check_range(p, e, e + 600, "a nested empty pair");
    within(ns(4), 2 * N4 + e, TOL, "section 4: 2*N4 + E");
    within(ns(6), 2 * N6 + e, TOL, "section 6 (nested): 2*N6 + E");
    /* 5 holds its loops and section 6 whole, P standing for 6's begin and
     * end: the tolerance is P's reads too */
    within(ns(5), 2 * (N5A + N6 + N5B) + p, TOL + Q, "section 5 (holding 6): its loops + 6's + P");
    within(ns(7), 10 * (2 * N7 + e), 10 * TOL, "section 7: ten times 2*N7 + E");
    within(ns(8), 2 * N8 + p, TOL + Q, "section 8 (in itself): 2*N8 + the inner pair");
    tc_check(count(1) == 1 && count(2) == 1 && count(3) == 1 && count(4) == 1 && count(5) == 1 &&
                 count(6) == 1 && count(7) == 10 && count(8) == 1 && count(0) == 1,
             "counts: 1 each, 10 for section 7, 1 for the nested-in-itself 8");
    /* The global section holds the top-level ones and, for each of their
     * 15 begins and ends, what runs outside their windows: P - E each at
     * most (a whole pair less its inside), and the loop of section 7. */
    uint64_t top = ns(1) + ns(2) + ns(4) + ns(5) + ns(7) + ns(8), g = ns(0);
    tc_check_range(g, top, top + 15 * (p - e) + 15 * 20 + 2 * Q, "global: the top-level sections and their calls");

    /* The dump, line for line as it should read. */
    static char want[1024];
    char *w = want;
    for (unsigned id = 1; id <= 8; id++)
        w = dump_line(w, "section", id, count(id), ns(id), g);
    dump_line(w, "global", 0, 1, g, g);
    tc_capture_begin();
    int rc = np_sections_dump();
    tc_capture_end();
    tc_check(rc == NP_OK && tc_streq(tc_captured, want), "dump: each section's line, exactly");
    if (!tc_streq(tc_captured, want)) {
        tc_put(tc_captured);
        tc_put(want);
    }
    return tc_finish();
}
