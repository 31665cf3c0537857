/* port.h - what the runtime asks of the platform: a clock, thread identity,
 * switch detection, the default output and symbol names. One implementation
 * per platform lives beside this file (posix.c, ...). The clock reads are
 * inline here because they sit on the hook path. */
#ifndef NP_PORT_H
#define NP_PORT_H

#include <stddef.h>
#include <stdint.h>

struct np_thread;

/* Clock sources, chosen once per process by np_port_clock_init(). */
enum np_clock_kind {
    NP_CLOCK_COUNTER = 0,   /* TSC / CNTVCT: raw ticks, switch-corrected */
    NP_CLOCK_THREAD_CPU,    /* per-thread CPU time in ns: needs no correction */
    NP_CLOCK_MONOTONIC,     /* wall time in ns: no switch exclusion */
    NP_CLOCK_STEPS          /* one tick per read, per thread: reproducible
                               times, for tests (NANOPROF_CLOCK=steps) */
};

extern int np_clock_kind;
/* Per-OS-thread flag word that the kernel clears when the thread is switched
 * out (rseq_cs); a word that is never 0 where the platform has none, or
 * until the thread arms it. */
extern __thread volatile uint64_t *np_switch_flag __attribute__((tls_model("initial-exec")));
extern const uint64_t np_switch_never __attribute__((visibility("default")));

uint64_t np_port_clock_slow(void);  /* the non-counter clocks, in ns */

static inline __attribute__((always_inline)) uint64_t np_port_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return np_port_clock_slow();
#endif
}

/* CLOCK_MONOTONIC in ns. */
uint64_t np_port_wall_ns(void);

/* Wall time now in ticks of the chosen clock: the counter when it is the
 * CPU's counter, else CLOCK_MONOTONIC in ns (a thread's CPU time would not
 * be wall time); np_port_ns_per_tick() converts both. */
static inline __attribute__((always_inline)) uint64_t np_port_wall_ticks(void)
{
    if (__builtin_expect(np_clock_kind == NP_CLOCK_COUNTER, 1))
        return np_port_counter();
    return np_port_wall_ns();
}

/* Raw time now, before the thread's switched-out time is taken off. */
static inline __attribute__((always_inline)) uint64_t np_port_ticks(void)
{
    if (__builtin_expect(np_clock_kind == NP_CLOCK_COUNTER, 1))
        return np_port_counter();
    return np_port_clock_slow();
}

/* True when the OS may have switched this thread out since the last
 * np_port_resync(). */
static inline __attribute__((always_inline)) int np_port_switched(void)
{
    return *np_switch_flag == 0;
}

/* Adds the time this OS thread spent switched out since the last resync to
 * T's offset, re-arms the switch flag and returns the raw time now. */
uint64_t np_port_resync(struct np_thread *t);
/* Called once per OS thread before its first hook. */
void np_port_thread_start(void);
/* Called by np_cost_init: chooses the clock (once per process) and sets up
 * switch detection for the calling OS thread (once per thread). */
void np_port_clock_thread(void);
/* Chooses the clock (once per process; cheap after the first call). */
void np_port_clock_init(void);
/* Nanoseconds per tick of the chosen clock (1.0 for the ns clocks). The
 * CPU's counter is measured against CLOCK_MONOTONIC_RAW from when the
 * clock is chosen: the first call waits until 1 ms has passed since then
 * (the rate within about 20 ppm); after 200 ms, the whole time is used. */
double np_port_ns_per_tick(void);
/* The same, or, within the first millisecond, a rate measured over what
 * has passed (50 us at least: within about 0.05%), without waiting
 * longer: for a figure that a later, finer one replaces. */
double np_port_ns_per_tick_soon(void);
const char *np_port_clock_name(void);

long np_port_tid(void);
/* Lets another thread run while waiting for a lock. */
void np_port_relax(void);
void np_port_write_default(const char *bytes, size_t len);
/* Writes the name of the function containing ADDR into BUF; returns 1 when
 * a name was found, 0 when BUF holds the address in hex. */
int np_port_symbolize(const void *addr, char *buf, size_t len);
/* The same, and *OFFSET (when found and OFFSET is not NULL) gets ADDR's
 * distance from the function's start. */
int np_port_symbolize_at(const void *addr, char *buf, size_t len, uint64_t *offset);

/* ---- Hardware event counters (sections) ----------------------------------
 * Two counters per OS thread, counting user-space instructions and cache
 * misses (Linux: perf_event_open, read with one read()). */
#define NP_HW_EVENTS 2
/* Opens the calling thread's counters (once; they are closed when the
 * thread ends). Returns 1 when they count, 0 when refused, with *REASON
 * (if REASON is not NULL) saying why. */
int np_port_hw_open(const char **reason);
/* The calling thread's counts since np_port_hw_open; 0 when unreadable. */
int np_port_hw_read(uint64_t v[NP_HW_EVENTS]);
/* What counter I counts, as dumps print it ("instructions", ...). */
const char *np_port_hw_name(int i);

/* ---- Periodic tick (bins) -------------------------------------------------
 * Calls FN HZ times a second until np_port_tick_stop: from a signal handler
 * on hosts, from a timer interrupt on targets. FN receives the ticks that
 * came due since the previous call without a call of their own (signal
 * blocked, process not running: timer overruns). FN must be
 * async-signal-safe. Returns the signal used (> 0; 1 where there is none),
 * or 0 with *REASON saying why the timer could not be set up. */
int np_port_tick_start(unsigned hz, void (*fn)(uint32_t late), const char **reason);
void np_port_tick_stop(void);
/* Waits US microseconds (resuming after signals). */
void np_port_delay_us(uint32_t us);
/* Calls FN every SECONDS seconds from its own thread until
 * np_port_periodic_stop; 0 when the thread could not be made. */
int np_port_periodic_start(unsigned seconds, void (*fn)(void));
void np_port_periodic_stop(void);

#endif
