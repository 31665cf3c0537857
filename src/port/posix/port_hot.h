/* port_hot.h - the POSIX port's part of the hooks' path (port.h lists it):
 * the CPU's counter (TSC on x86-64, CNTVCT on AArch64), the rseq word that
 * tells a switch, the thread-local storage class. port.c says how the
 * clock is chosen and how switched-out time is found. */
#ifndef NP_PORT_HOT_H
#define NP_PORT_HOT_H

#ifndef NP_PORT_H
#error "include port.h, not port_hot.h"
#endif

/* One load from the thread pointer, in the shared library too (not
 * __tls_get_addr): src/CMakeLists.txt says what that asks of a dlopen. */
#define NP_PORT_TLS __thread __attribute__((tls_model("initial-exec")))
#if __SIZEOF_POINTER__ > 4
#define NP_PORT_ADDR_BITS 48
#else
#define NP_PORT_ADDR_BITS 32 /* (32-bit ARM Linux) */
#endif
/* On x86-64, code is mapped below 2^47 (with 5-level paging too: the
 * kernel maps higher only when asked to), so there is nothing to clear,
 * and the hooks save the instructions. */
#if defined(__x86_64__)
#define NP_PORT_CODE_ADDR_FITS 1
#else
#define NP_PORT_CODE_ADDR_FITS 0
#endif
#define NP_PORT_CAN_SPIN 1
#define NP_PORT_CAN_ALLOC 1
/* The hosted parts build here: the recorder, the sampler, setjmp
 * interposition (src/CMakeLists.txt's list for this port). */
#define NP_PORT_HOSTED 1
#define NP_PORT_HOOKS_MASK 0 /* signal handlers share the thread: the busy flag */
#define NP_PORT_OS_THREADS 1
#define NP_PORT_AT_START __attribute__((constructor))
/* The frame-pointer register, as the hooks (built with it fixed: the
 * caller's) have it: where a sample in a hook walks from when the walk
 * from its own registers gets lost (sample.c). */
#if defined(__x86_64__)
#define NP_PORT_FRAME() ({ uint64_t fp_; __asm__("movq %%rbp, %0" : "=r"(fp_)); fp_; })
#elif defined(__aarch64__)
#define NP_PORT_FRAME() ({ uint64_t fp_; __asm__("mov %0, x29" : "=r"(fp_)); fp_; })
#else
#define NP_PORT_FRAME() ((uint64_t)0)
#endif

/* -pg's thunks (mcount.c) call leaf functions (hooks_leaf.c) built
 * without vector registers (src/CMakeLists.txt), saving around the call
 * only the general registers that are live there. */
#if defined(__x86_64__) && defined(__GNUC__)
#define NP_PORT_THUNK_LEAVES 1
#endif

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
extern NP_PORT_TLS volatile uint64_t *np_switch_flag;
extern const uint64_t np_switch_never __attribute__((visibility("default")));

uint64_t np_port_clock_slow(void);  /* the non-counter clocks, in ns */
/* CLOCK_MONOTONIC in ns. */
uint64_t np_port_wall_ns(void);

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

static inline __attribute__((always_inline)) int np_port_counter_is_clock(void)
{
    return np_clock_kind == NP_CLOCK_COUNTER;
}

/* Wall time now in ticks of the chosen clock: the counter when it is the
 * CPU's counter (switched-out time then comes apart, in SWITCH records),
 * else CLOCK_MONOTONIC in ns (the thread CPU-time clock, function cost's
 * fallback, would leave out waiting); np_port_ns_per_tick() converts
 * both. */
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

static inline __attribute__((always_inline)) int np_port_switched(void)
{
    return *np_switch_flag == 0;
}

/* A spin lock: threads on other cores release it; a signal handler never
 * takes it (the thread is busy while it is held). */
typedef int np_port_crit;

static inline np_port_crit np_port_crit_enter(int *lock)
{
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
        np_port_relax();
    return 0;
}

static inline void np_port_crit_exit(int *lock, np_port_crit saved)
{
    (void)saved;
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

#endif
