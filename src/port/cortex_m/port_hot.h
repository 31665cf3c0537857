/* port_hot.h - the Cortex-M port's part of the hooks' path (port.h lists
 * it): one core, no OS threads of its own (an RTOS's threads are the
 * runtime's user-level threads, np_thread_switch), so per-thread storage
 * is plain globals and a critical section masks interrupts (PRIMASK). The
 * clock is 64 bits of CPU cycles: the DWT cycle counter where the core has
 * one that moves (ARMv7-M, ARMv7E-M; not QEMU's, which reads 0), else
 * SysTick (clock.c), extended to 64 bits in software. */
#ifndef NP_PORT_HOT_H
#define NP_PORT_HOT_H

#ifndef NP_PORT_H
#error "include port.h, not port_hot.h"
#endif

#define NP_PORT_TLS /* one OS thread: the current thread is a plain global */
#define NP_PORT_ADDR_BITS 32
#define NP_PORT_CODE_ADDR_FITS 1
#define NP_PORT_CAN_SPIN 0
#define NP_PORT_CAN_ALLOC 0 /* no heap of the runtime's */
#define NP_PORT_HOSTED 0
#define NP_PORT_HOOKS_MASK 1 /* one core, no signals: masking keeps interrupts' hooks out */
#define NP_PORT_OS_THREADS 0
#define NP_PORT_AT_START __attribute__((unused)) /* no start-up but the board's */

/* The DWT cycle counter exists from ARMv7-M on (optional there: port.c
 * checks that it is present and moves). */
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || \
    defined(__ARM_ARCH_8_1M_MAIN__)
#define NP_CM_HAS_DWT 1
#else
#define NP_CM_HAS_DWT 0
#endif
#define NP_CM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define NP_CM_SYST_CVR (*(volatile uint32_t *)0xE000E018u) /* SysTick's count */
#define NP_CM_SYST_PERIOD_MAX (1u << 24)                    /* its longest period */
#if NP_CM_HAS_DWT
/* The clock's low word in one load, when NP_PORT_CYCLES32_ON() (the DWT
 * counter is the clock): the ring trace's hooks (trace_target.h). */
#define NP_PORT_CYCLES32() NP_CM_DWT_CYCCNT
#define NP_PORT_CYCLES32_ON() (np_cm_clock.dwt != 0)

/* The ring's sum over N aligned words at P (words_sum.c): its chunks are
 * sealed with it (trace_seal.c). */
void np_cm_words_sum(const uint8_t *p, uint32_t n, uint8_t out[4]);
#define NP_PORT_WORDS_SUM np_cm_words_sum
#endif

/* The 64-bit clock: the cycles counted up to the last read (with the DWT
 * counter, its low word is the counter's value then); with SysTick, the
 * clock when its counter last reached 0 (a wrap counted) or was restarted
 * from 0 by the runtime, and its reload + 1 as last seen (0 until the
 * runtime starts it); whether the DWT counter is the clock (else
 * SysTick). clock.c and systick.c keep it. One object: the hooks reach it
 * by one address. */
struct np_cm_clock {
    uint64_t now;
    uint64_t base;
    uint32_t dwt;
    uint32_t period;
};
extern struct np_cm_clock np_cm_clock;
uint64_t np_cm_systick_read(void);
/* systick.c, for tick.c: SysTick at PERIOD cycles an interrupt (0:
 * stopped), the clock kept; the period it keeps when no tick asks for a
 * rate; the ticks its interrupt calls (bins', gprof's samples). */
void np_cm_systick_set(uint32_t period);
uint32_t np_cm_systick_idle_period(void);
extern void (*np_cm_tick_fn)(uint32_t late);
extern void (*np_cm_pc_fn)(uintptr_t pc);

/* Interrupts masked, as they were saved: an interrupt cannot come between
 * the reads and writes, whatever its priority. LOCK is not needed on one
 * core. */
typedef uint32_t np_port_crit;

static inline __attribute__((always_inline)) np_port_crit np_port_crit_enter(int *lock)
{
    uint32_t primask;
    (void)lock;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
    return primask;
}

static inline __attribute__((always_inline)) void np_port_crit_exit(int *lock, np_port_crit primask)
{
    (void)lock;
    __asm__ __volatile__("msr primask, %0" : : "r"(primask) : "memory");
}

/* The 64-bit clock: the DWT counter is its low word, and the high word
 * counts the counter's wraps, seen as a value below the last one read:
 * reads at most 2^32 cycles apart, which SysTick's interrupt ensures
 * (systick.c); interrupts masked by the caller. */
static inline __attribute__((always_inline)) uint64_t np_cm_dwt_now(struct np_cm_clock *c)
{
    uint32_t lo = NP_CM_DWT_CYCCNT, hi = (uint32_t)(c->now >> 32);
    if (lo < (uint32_t)c->now)
        hi++;
    uint64_t now = (uint64_t)hi << 32 | lo;
    c->now = now;
    return now;
}

static inline __attribute__((always_inline)) uint64_t np_port_counter(void)
{
#if NP_CM_HAS_DWT
    struct np_cm_clock *c = &np_cm_clock;
    if (__builtin_expect(c->dwt, 1)) {
        np_port_crit m = np_port_crit_enter(0);
        uint64_t now = np_cm_dwt_now(c);
        np_port_crit_exit(0, m);
        return now;
    }
#endif
    return np_cm_systick_read();
}

/* The counter less *OFF (a thread's switched-out time), interrupts
 * masked by the caller. */
static inline __attribute__((always_inline)) uint64_t np_port_ticks_less_masked(const volatile uint64_t *off)
{
    uint64_t now;
#if NP_CM_HAS_DWT
    if (__builtin_expect(np_cm_clock.dwt, 1))
        now = np_cm_dwt_now(&np_cm_clock);
    else
#endif
        now = np_cm_systick_read(); /* masks again: PRIMASK nests */
    return now - *off;
}

/* *P += V as one 64-bit read-modify-write (LDRD, ADDS, ADC, STRD: four
 * instructions where GCC's split halves take six): function cost's sums.
 * "o": a base register and a constant offset, as LDRD takes (an offset it
 * cannot encode fails the build, never the sum); "rI": V's halves as
 * immediates where they are constants (a count's 1 and 0). */
static inline __attribute__((always_inline)) void np_port_add64(uint64_t *p, uint64_t v)
{
#if NP_CM_HAS_DWT /* (Thumb-2: ARMv7-M on) */
    uint32_t lo, hi;
    __asm__ __volatile__("ldrd %0, %1, %2\n\t"
                         "adds %0, %0, %3\n\t"
                         "adc %1, %1, %4\n\t"
                         "strd %0, %1, %2"
                         : "=&r"(lo), "=&r"(hi), "+o"(*p)
                         : "rI"((uint32_t)v), "rI"((uint32_t)(v >> 32))
                         : "cc");
#else
    *p += v;
#endif
}
#define NP_PORT_ADD64 np_port_add64

/* The same, both read under one mask: an interrupt that switches threads
 * (np_thread_switch, which adds to *OFF) comes before both reads or after
 * both. */
static inline __attribute__((always_inline)) uint64_t np_port_ticks_less(const volatile uint64_t *off)
{
    np_port_crit m = np_port_crit_enter(0);
    uint64_t now = np_port_ticks_less_masked(off);
    np_port_crit_exit(0, m);
    return now;
}

static inline __attribute__((always_inline)) int np_port_counter_is_clock(void)
{
    return 1;
}

static inline __attribute__((always_inline)) uint64_t np_port_ticks(void)
{
    return np_port_counter();
}

/* Cycles are wall time here: nothing else runs on the core but what the
 * program runs. */
static inline __attribute__((always_inline)) uint64_t np_port_wall_ticks(void)
{
    return np_port_counter();
}

/* No OS switches the thread out behind the runtime's back: an RTOS says
 * so through np_thread_switch. */
static inline __attribute__((always_inline)) int np_port_switched(void)
{
    return 0;
}

#endif
