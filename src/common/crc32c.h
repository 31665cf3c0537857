/* crc32c.h - CRC-32C (Castagnoli), the trace format's checksum
 * (docs/trace-format.md): reflected polynomial 0x82F63B78, initial value
 * and final xor 0xFFFFFFFF; CRC-32C("123456789") = 0xE3069283.
 *
 * Header-only and freestanding: a target's runtime includes it too.
 * np_crc32c_small is the portable one, for targets: a table of 16 words
 * (64 bytes of ROM), two look-ups a byte. A hosted build on a Unix host
 * (the recorder, the reader) gets np_crc32c_update, which picks at run
 * time the SSE4.2 crc32 instruction on x86-64, the ARMv8 CRC32C
 * instructions on AArch64, or else slicing by 8 (tables built once).
 * All give the same values (tests/test_crc32c.c). Define NP_CRC32C_SMALL
 * to have np_crc32c_update be np_crc32c_small everywhere.
 *
 * The update functions take and return the register, not the checksum:
 * start from NP_CRC32C_INIT, feed the bytes in any pieces, and xor the
 * result with NP_CRC32C_XOROUT (np_crc32c does all three). */
#ifndef NP_CRC32C_H
#define NP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#define NP_CRC32C_POLY 0x82F63B78u /* reflected */
#define NP_CRC32C_INIT 0xFFFFFFFFu
#define NP_CRC32C_XOROUT 0xFFFFFFFFu

/* The register after each nibble value, four steps of the polynomial. */
static const uint32_t np_crc32c_nibble[16] = {
    0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
    0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9, 0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

static inline uint32_t np_crc32c_small(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    while (n--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ np_crc32c_nibble[crc & 15];
        crc = (crc >> 4) ^ np_crc32c_nibble[crc & 15];
    }
    return crc;
}

#if !defined(NP_CRC32C_SMALL) && __STDC_HOSTED__ && defined(__unix__) && (defined(__GNUC__) || defined(__clang__))
#define NP_CRC32C_HOST 1
#include <pthread.h>
#include <string.h>

/* ---- slicing by 8: any host ---- */

static uint32_t np_crc32c_tables[8][256];
static pthread_once_t np_crc32c_once = PTHREAD_ONCE_INIT;

static inline void np_crc32c_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ NP_CRC32C_POLY : c >> 1;
        np_crc32c_tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) {
            uint32_t c = np_crc32c_tables[t - 1][i];
            np_crc32c_tables[t][i] = (c >> 8) ^ np_crc32c_tables[0][c & 0xff];
        }
}

static inline uint32_t np_crc32c_sliced(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t(*t)[256] = np_crc32c_tables;
    pthread_once(&np_crc32c_once, np_crc32c_build);
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
              t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    }
    while (n--)
        crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
    return crc;
}

/* ---- the instructions ---- */

#if defined(__x86_64__)
#include <cpuid.h>
__attribute__((target("sse4.2"))) static inline uint32_t np_crc32c_hw(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    crc = (uint32_t)c;
    while (n--)
        crc = __builtin_ia32_crc32qi(crc, *p++);
    return crc;
}
/* One cpuid (leaf 1, ECX bit 20), at the first CRC: not libgcc's
 * __builtin_cpu_supports, whose constructor runs some thirty cpuids at
 * every start of a program that links it (each a trap to the hypervisor
 * in a VM: 6 us here), for the command and the preloaded runtime alike. */
static inline int np_crc32c_hw_ok(void)
{
    static int ok = -1; /* racy but idempotent: every thread stores the same */
    int k = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (k < 0) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
        __atomic_store_n(&ok, k, __ATOMIC_RELAXED);
    }
    return k;
}
#define NP_CRC32C_HW 1
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#ifdef __clang__
#define NP_CRC32C_TARGET __attribute__((target("crc")))
#else
#define NP_CRC32C_TARGET __attribute__((target("+crc")))
#endif
NP_CRC32C_TARGET static inline uint32_t np_crc32c_hw(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        __asm__("crc32cx %w0, %w0, %x1" : "+r"(crc) : "r"(v));
    }
    while (n--) {
        uint32_t b = *p++;
        __asm__("crc32cb %w0, %w0, %w1" : "+r"(crc) : "r"(b));
    }
    return crc;
}
static inline int np_crc32c_hw_ok(void)
{
    static int ok = -1; /* racy but idempotent: every thread stores the same */
    int k = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (k < 0)
        __atomic_store_n(&ok, k = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0, __ATOMIC_RELAXED);
    return k;
}
#define NP_CRC32C_HW 1
#endif

static inline uint32_t np_crc32c_update(uint32_t crc, const void *data, size_t n)
{
#ifdef NP_CRC32C_HW
    if (np_crc32c_hw_ok())
        return np_crc32c_hw(crc, data, n);
#endif
    return np_crc32c_sliced(crc, data, n);
}

#else

static inline uint32_t np_crc32c_update(uint32_t crc, const void *data, size_t n)
{
    return np_crc32c_small(crc, data, n);
}

#endif

/* The CRC-32C of N bytes at DATA. */
static inline uint32_t np_crc32c(const void *data, size_t n)
{
    return np_crc32c_update(NP_CRC32C_INIT, data, n) ^ NP_CRC32C_XOROUT;
}

#endif
