/* atomic.c - the atomic operations a Cortex-M lacks, for the compiler's
 * calls (__atomic_*_N, which a hosted toolchain finds in libatomic): on
 * one core an operation with interrupts masked is atomic. 64-bit ones
 * everywhere (the core's 64-bit counters); 8-, 16- and 32-bit ones on
 * ARMv6-M, which has no LDREX/STREX. Defined under C names of their own
 * with the library's assembler names (the compiler reserves the latter). */
#include "../port.h"

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define NP_CM_NARROW_ATOMICS 1
#else
#define NP_CM_NARROW_ATOMICS 0
#endif

#define CRIT_BEGIN np_port_crit m_ = np_port_crit_enter(0)
#define CRIT_END np_port_crit_exit(0, m_)

#define NP_CM_ATOMICS(N, T)                                                                         \
    T np_cm_atomic_load_##N(const volatile void *p, int order) __asm__("__atomic_load_" #N);      \
    T np_cm_atomic_load_##N(const volatile void *p, int order)                                      \
    {                                                                                               \
        (void)order;                                                                                \
        CRIT_BEGIN;                                                                                 \
        T v = *(const volatile T *)p;                                                               \
        CRIT_END;                                                                                   \
        return v;                                                                                   \
    }                                                                                               \
    void np_cm_atomic_store_##N(volatile void *p, T v, int order) __asm__("__atomic_store_" #N);  \
    void np_cm_atomic_store_##N(volatile void *p, T v, int order)                                   \
    {                                                                                               \
        (void)order;                                                                                \
        CRIT_BEGIN;                                                                                 \
        *(volatile T *)p = v;                                                                       \
        CRIT_END;                                                                                   \
    }                                                                                               \
    T np_cm_atomic_exchange_##N(volatile void *p, T v, int order) __asm__("__atomic_exchange_" #N); \
    T np_cm_atomic_exchange_##N(volatile void *p, T v, int order)                                   \
    {                                                                                               \
        (void)order;                                                                                \
        CRIT_BEGIN;                                                                                 \
        T old = *(volatile T *)p;                                                                   \
        *(volatile T *)p = v;                                                                       \
        CRIT_END;                                                                                   \
        return old;                                                                                 \
    }                                                                                               \
    _Bool np_cm_atomic_cas_##N(volatile void *p, void *expected, T desired, int ok, int fail)       \
        __asm__("__atomic_compare_exchange_" #N);                                                   \
    _Bool np_cm_atomic_cas_##N(volatile void *p, void *expected, T desired, int ok, int fail)       \
    {                                                                                               \
        (void)ok, (void)fail;                                                                       \
        CRIT_BEGIN;                                                                                 \
        T cur = *(volatile T *)p;                                                                   \
        _Bool same = cur == *(T *)expected;                                                         \
        if (same)                                                                                   \
            *(volatile T *)p = desired;                                                             \
        else                                                                                        \
            *(T *)expected = cur;                                                                   \
        CRIT_END;                                                                                   \
        return same;                                                                                \
    }                                                                                               \
    NP_CM_FETCH(N, T, add, +)                                                                       \
    NP_CM_FETCH(N, T, sub, -)                                                                       \
    NP_CM_FETCH(N, T, or, |)                                                                        \
    NP_CM_FETCH(N, T, and, &)

#define NP_CM_FETCH(N, T, name, op)                                                                 \
    T np_cm_atomic_fetch_##name##_##N(volatile void *p, T v, int order)                             \
        __asm__("__atomic_fetch_" #name "_" #N);                                                    \
    T np_cm_atomic_fetch_##name##_##N(volatile void *p, T v, int order)                             \
    {                                                                                               \
        (void)order;                                                                                \
        CRIT_BEGIN;                                                                                 \
        T old = *(volatile T *)p;                                                                   \
        *(volatile T *)p = (T)(old op v);                                                           \
        CRIT_END;                                                                                   \
        return old;                                                                                 \
    }

NP_CM_ATOMICS(8, uint64_t)
#if NP_CM_NARROW_ATOMICS
NP_CM_ATOMICS(4, uint32_t)
NP_CM_ATOMICS(2, uint16_t)
NP_CM_ATOMICS(1, uint8_t)
#endif
