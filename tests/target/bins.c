/* bins.c - bins on a Cortex-M target with a known split (run.sh, built
 * twice: the runtime's counters 32 bits wide, the default, and 16 bits,
 * NP_BIN_COUNTER_BITS=16, as the host's libnanoprof-bins16; TC_BIN_BITS
 * says which).
 *
 * The split: SysTick ticks the bins every TICK_NS of virtual time, and
 * under -icount shift=0 that is TICK_NS instructions. The firmware marks
 * a bin and runs tc_spin for a known number of tick periods: the bin gets
 * that many ticks, give or take one (where the first and last tick fall
 * against the loop's ends). The delay, np_bins_delay_us, waits on the
 * port's clock and counts in the last bin; bin 0 is the profiler's own,
 * counted while np_bins_dump writes (here through a writer that spins a
 * tick period per line). The widths: ticks given by hand (np_bins_tick,
 * no timer, the table in the firmware's buffer) past 65535 saturate a
 * 16-bit counter, not a 32-bit one. */
#include "check.h"
#include "cortex_m.h"

#define TICK_HZ 10000u
#define TICK_INSNS (1000000000u / TICK_HZ) /* instructions per tick: 100000 */
#define NBINS 5u

static NOPROF void spin_ticks(uint32_t ticks)
{
    for (uint32_t i = 0; i < ticks; i++)
        tc_spin(TICK_INSNS / 2);
}

/* A writer that takes a tick period per line: the dump's time is seen in
 * bin 0. */
static char dumped[512];
static size_t ndumped;
static int slow;

static NOPROF void keep(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len && ndumped < sizeof dumped - 1; i++)
        dumped[ndumped++] = bytes[i];
    dumped[ndumped] = 0;
    if (slow)
        spin_ticks(1);
}

static NOPROF int dump(int slowly)
{
    ndumped = 0;
    dumped[0] = 0;
    slow = slowly;
    np_output_set(keep, NULL);
    int rc = np_bins_dump();
    np_output_set(NULL, NULL);
    return rc;
}

/* Reads "<n> <name> <count>[ (saturated)]\n" at *P, as bins.h says a line
 * reads; 0 when the line is not that. */
static NOPROF int parse_line(const char **p, uint32_t *n, const char *name, uint64_t *count, int *saturated)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    *n = (uint32_t)v;
    if (*s++ != ' ')
        return 0;
    while (*name)
        if (*s++ != *name++)
            return 0;
    if (*s++ != ' ' || *s < '0' || *s > '9')
        return 0;
    for (v = 0; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    *count = v;
    *saturated = tc_starts_with(s, " (saturated)");
    if (*saturated)
        s += 12;
    if (*s++ != '\n')
        return 0;
    *p = s;
    return 1;
}

static const char *const names[NBINS] = { "-", "-", "work", "more", "idle" };

/* The dump in DUMPED holds one line per bin with its name and a count
 * within one of WANT[]. */
static NOPROF void check_dump(const uint32_t want[NBINS], const char *what)
{
    const char *p = dumped;
    int ok = 1;
    for (uint32_t b = 0; b < NBINS && ok; b++) {
        uint32_t n;
        uint64_t c;
        int sat;
        ok = parse_line(&p, &n, names[b], &c, &sat) && n == b && !sat && c + 1 >= want[b] && c <= want[b] + 1;
    }
    ok = ok && *p == 0;
    if (!tc_check(ok, what))
        tc_put(dumped);
}

static NOPROF void split(void)
{
    np_cm_set_cpu_hz(TC_CPU_HZ);
    tc_check(np_bins_init(NBINS, TICK_HZ) == NP_OK, "bins init: 5 bins at 10 kHz");
    tc_check(np_bin_name(2, "work") == NP_OK && np_bin_name(3, "more") == NP_OK && np_bin_name(4, "idle") == NP_OK,
             "bins named");
    NP_BIN(2);
    spin_ticks(10);
    NP_BIN(3);
    spin_ticks(5);
    NP_BIN(1);
    spin_ticks(3);
    np_bins_delay_us(7 * 1000000u / TICK_HZ); /* 7 ticks, in the last bin */
    uint32_t c[NBINS];
    for (unsigned b = 0; b < NBINS; b++)
        c[b] = np_bins_count(b);
    tc_check_range(c[0], 0, 0, "bin 0: nothing in the profiler yet");
    tc_check_range(c[1], 2, 4, "bin 1: 3 ticks +-1");
    tc_check_range(c[2], 9, 11, "bin 2: 10 ticks +-1");
    tc_check_range(c[3], 4, 6, "bin 3: 5 ticks +-1");
    tc_check_range(c[4], 6, 8, "bin 4 (the delay): 7 ticks +-1");
    tc_check(np_bin_current == 1, "the delay gives back the bin it found");
    /* the dump: those counts, and a tick period per line in bin 0 */
    tc_check(dump(1) == NP_OK, "dump");
    check_dump(c, "dump: a line per bin, name and count");
    uint32_t after[NBINS] = { NBINS, 0, 0, 0, 0 };
    tc_check_range(np_bins_count(0), NBINS - 1, NBINS + 1, "bin 0: the dump's 5 lines, a tick each, +-1");
    tc_check(dump(0) == NP_OK, "second dump");
    check_dump(after, "second dump: the first dump's time in bin 0, the rest cleared");
    tc_check(np_bins_shutdown() == NP_OK, "bins shutdown");
}

/* The table in the firmware's buffer (np_bins_init_buf), exactly the
 * size NP_BINS_BUF_BYTES says. */
static void *table[NP_BINS_BUF_BYTES(3) / sizeof(void *)];

static NOPROF void width(void)
{
    tc_check(np_bins_init_buf(table, sizeof table, 3, 0) == NP_OK, "bins init: 3 bins in the firmware's buffer, ticked by hand");
    NP_BIN(2);
    for (uint32_t i = 0; i < 70000; i++)
        np_bins_tick();
    NP_BIN(1);
    for (int i = 0; i < 3; i++)
        np_bins_tick();
    NP_BIN(7); /* out of range */
    np_bins_tick();
    np_bins_tick();
    NP_BIN(1);
#if TC_BIN_BITS == 16
    tc_check_range(np_bins_counter_max(), 65535, 65535, "16-bit counters");
    tc_check_range(np_bins_count(2), 65535, 65535, "70000 ticks saturate at 65535");
    const char *want = "0 - 0\n1 - 3\n2 - 65535 (saturated)\n(2 ticks in bins out of range)\n";
#else
    tc_check_range(np_bins_counter_max(), 4294967295u, 4294967295u, "32-bit counters");
    tc_check_range(np_bins_count(2), 70000, 70000, "70000 ticks counted");
    const char *want = "0 - 0\n1 - 3\n2 - 70000\n(2 ticks in bins out of range)\n";
#endif
    tc_check(dump(0) == NP_OK && tc_streq(dumped, want), "dump, exactly");
    if (!tc_streq(dumped, want))
        tc_put(dumped);
    tc_check(np_bins_shutdown() == NP_OK, "bins shutdown");
}

NOPROF int main(void)
{
    split();
    width();
    return tc_finish();
}
