/* bins.c - the bins histogram (bins.h): a microcontroller profiler's
 * "which bin is the program in" counter array, ticked by a periodic timer.
 * Everything the tick touches is a lock-free atomic: it runs in a signal
 * handler (or an interrupt), possibly on two threads at once. */
#include "hooks.h"
#include "report.h"
#include "../port/port.h"
#include "nanoprof/bins.h"
#include "np_config.h"

#if NP_BIN_COUNTER_BITS == 16
typedef uint16_t bin_count;
#define BIN_COUNT_MAX UINT16_MAX
#elif NP_BIN_COUNTER_BITS == 32
typedef uint32_t bin_count;
#define BIN_COUNT_MAX UINT32_MAX
#else
#error "NP_BIN_COUNTER_BITS must be 16 or 32"
#endif

#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)

unsigned np_bin_current = 1;

/* The table: the user's buffer (np_bins_init_buf) or the built-in one
 * (np_bins_init, bins_builtin.c: an object apart, which a firmware that
 * never calls it does not link). */
static bin_count *counts;
static const char **names;
static unsigned nbins;        /* 0 when not running */
static uint64_t out_of_range, late_ticks;
static int state;             /* 0 stopped, 1 starting or stopping, 2 running */
static int signo;
static int dumping;

/* Adds N to *C, stopping at the counter's maximum. */
static void count_in(bin_count *c, uint32_t n)
{
    bin_count v = __atomic_load_n(c, __ATOMIC_RELAXED), to;
    do
        to = (uint32_t)(BIN_COUNT_MAX - v) <= n ? BIN_COUNT_MAX : (bin_count)(v + n);
    while (v != BIN_COUNT_MAX &&
           !__atomic_compare_exchange_n(c, &v, to, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* LATE ticks came due before this one without a signal of their own (the
 * process was not running, or the signal was blocked): the kernel keeps one
 * signal pending and counts the rest. They go to the current bin too,
 * which is where a process that was not running still is. */
static void tick(uint32_t late)
{
    unsigned n = __atomic_load_n(&nbins, __ATOMIC_ACQUIRE);
    if (!n)
        return;
    unsigned b = __atomic_load_n(&np_bin_current, __ATOMIC_RELAXED);
    if (b < n)
        count_in(&counts[b], 1 + late);
    else
        __atomic_fetch_add(&out_of_range, 1 + (uint64_t)late, __ATOMIC_RELAXED);
    if (late)
        __atomic_fetch_add(&late_ticks, late, __ATOMIC_RELAXED);
}

void np_bins_tick(void)
{
    tick(0);
}

/* Makes B current; returns the bin that was. */
static unsigned enter_bin(unsigned b)
{
    unsigned prev = __atomic_exchange_n(&np_bin_current, b, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return prev;
}

/* Makes PREV current again, unless the program marked another bin since
 * (from another thread): that mark wins. */
static void leave_bin(unsigned b, unsigned prev)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_compare_exchange_n(&np_bin_current, &b, prev, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static unsigned last_bin(void)
{
    unsigned n = __atomic_load_n(&nbins, __ATOMIC_ACQUIRE);
    return n ? n - 1 : 0;
}

unsigned np_bins_idle_begin(void)
{
    return enter_bin(last_bin());
}

void np_bins_idle_end(unsigned previous)
{
    leave_bin(last_bin(), previous);
}

void np_bins_delay_us(uint32_t us)
{
    unsigned prev = np_bins_idle_begin();
    np_port_delay_us(us);
    np_bins_idle_end(prev);
}

/* The counts and names go with the table (start clears them). */
static void forget(void)
{
    __atomic_store_n(&out_of_range, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&late_ticks, 0, __ATOMIC_RELAXED);
}

/* Starts N bins in the table at C and NM (WHERE: the caller's name, an
 * NP_MSG value). */
static int start(const char *where, bin_count *c, const char **nm, unsigned n, unsigned hz)
{
    if (hz > NP_BINS_HZ_MAX)
        return np_error_msg(NP_EINVAL, where, NP_MSG("at most " NP_STR(NP_BINS_HZ_MAX) " ticks a second"));
    int expect = 0;
    if (!__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return np_error_msg(NP_EALREADY, where, NP_MSG("already running (np_bins_shutdown first)"));
    for (unsigned i = 0; i < n; i++) {
        __atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&nm[i], NULL, __ATOMIC_RELAXED);
    }
    counts = c, names = nm; /* published with nbins below */
    __atomic_store_n(&out_of_range, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&late_ticks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&np_bin_current, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&nbins, n, __ATOMIC_RELEASE);
    if (hz) {
        const char *why = NP_MSG("");
        int sig = np_port_tick_start(hz, tick, &why);
        if (!sig) {
            __atomic_store_n(&nbins, 0, __ATOMIC_RELEASE);
            __atomic_store_n(&state, 0, __ATOMIC_RELEASE);
            return np_error_msg(NP_EINVAL, where, why); /* (the port's: an NP_MSG value) */
        }
        __atomic_store_n(&signo, sig, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_bins_start(const char *where, void *buf, unsigned n, unsigned hz)
{
    if (n < 3 || n > NP_BINS_MAX)
        return np_error_msg(NP_EINVAL, where, NP_MSG("needs 3 to " NP_STR(NP_BINS_MAX) " bins (np_bins_max)"));
    const char **nm = buf;
    return start(where, (bin_count *)(nm + n), nm, n, hz);
}

int np_bins_init_buf(void *buf, size_t size, unsigned n, unsigned hz)
{
    if (!buf || ((uintptr_t)buf & (_Alignof(const char *) - 1)))
        return np_error(NP_EINVAL, "np_bins_init_buf", "no buffer, or one not aligned for a pointer");
    if (n >= 3 && n <= NP_BINS_MAX && size < NP_BINS_BUF_BYTES(n))
        return np_error(NP_ESMALL, "np_bins_init_buf", "buffer smaller than NP_BINS_BUF_BYTES(nbins)");
    return np_bins_start(NP_MSG("np_bins_init_buf"), buf, n, hz);
}

int np_bins_shutdown(void)
{
    int expect = 2;
    if (!__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return np_error(NP_ENOTINIT, "np_bins_shutdown", "bins are not running");
    np_port_periodic_stop();
    np_port_tick_stop();
    __atomic_store_n(&signo, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&nbins, 0, __ATOMIC_RELEASE);
    forget();
    __atomic_store_n(&state, 0, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_bin_name(unsigned n, const char *name)
{
    unsigned running = __atomic_load_n(&nbins, __ATOMIC_ACQUIRE);
    if (!running)
        return np_error(NP_ENOTINIT, "np_bin_name", "bins are not running");
    if (n >= running)
        return np_error(NP_EINVAL, "np_bin_name", "bin out of range");
    __atomic_store_n(&names[n], name, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_bins_dump(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
        return np_error(NP_ENOTINIT, "np_bins_dump", "bins are not running");
    unsigned prev = enter_bin(0);
    /* One dump at a time (the periodic one and the program's), so that
     * their lines do not interleave. On one core the dump under way may
     * be the code this one interrupted: waiting would never end. */
    while (__atomic_exchange_n(&dumping, 1, __ATOMIC_ACQUIRE)) {
        if (!NP_PORT_CAN_SPIN) {
            leave_bin(0, prev);
            return np_error(NP_EBUSY, "np_bins_dump", "another dump is under way (an interrupt's?): not done");
        }
        np_port_relax();
    }
    unsigned n = __atomic_load_n(&nbins, __ATOMIC_ACQUIRE);
    for (unsigned b = 0; b < n; b++) {
        /* exchange: a tick between reading and clearing is not lost */
        bin_count c = __atomic_exchange_n(&counts[b], 0, __ATOMIC_RELAXED);
        const char *name = __atomic_load_n(&names[b], __ATOMIC_ACQUIRE);
        NP_REPORT(NP_REP_BIN, b, NP_RV(name), c, c == BIN_COUNT_MAX);
    }
    uint64_t oor = __atomic_exchange_n(&out_of_range, 0, __ATOMIC_RELAXED);
    uint64_t late = __atomic_exchange_n(&late_ticks, 0, __ATOMIC_RELAXED);
    if (oor)
        NP_REPORT(NP_REP_BINS_OUT_OF_RANGE, oor);
    if (late)
        NP_REPORT(NP_REP_BINS_LATE, late);
    __atomic_store_n(&dumping, 0, __ATOMIC_RELEASE);
    leave_bin(0, prev);
    return NP_OK;
}

static void periodic_dump(void)
{
    np_bins_dump();
}

int np_bins_dump_every(unsigned seconds)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
        return np_error(NP_ENOTINIT, "np_bins_dump_every", "bins are not running");
    if (!seconds) {
        np_port_periodic_stop();
        return NP_OK;
    }
    if (!np_port_periodic_start(seconds, periodic_dump))
        return np_error(NP_EINVAL, "np_bins_dump_every", "could not start the dump thread");
    return NP_OK;
}

uint32_t np_bins_count(unsigned n)
{
    return n < __atomic_load_n(&nbins, __ATOMIC_ACQUIRE) ? __atomic_load_n(&counts[n], __ATOMIC_RELAXED) : 0;
}

uint32_t np_bins_counter_max(void)
{
    return BIN_COUNT_MAX;
}

unsigned np_bins_max(void)
{
    return NP_BINS_MAX;
}

int np_bins_signal(void)
{
    return __atomic_load_n(&signo, __ATOMIC_RELAXED);
}
