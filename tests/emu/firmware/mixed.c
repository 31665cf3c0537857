/* mixed.c - ARM and Thumb functions in one program calling each other
 * directly and through pointers (blx on ARMv5TE; veneers and bx on
 * ARMv4T), saturating and halfword arithmetic (the v5TE DSP instructions
 * where the CPU has them), leading-zero counts, 64-bit values, a jump
 * table and setjmp/longjmp (lockstep firmware). */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#endif

#if defined(__ARM_ARCH_ISA_ARM)
#define ARM_CODE __attribute__((target("arm"), noinline))
#define THUMB_CODE __attribute__((target("thumb"), noinline))
#else
/* a Cortex-M (Thumb only): every function Thumb, calls through blx/bx */
#define ARM_CODE __attribute__((noinline))
#define THUMB_CODE __attribute__((noinline))
#endif

static jmp_buf escape;
static volatile int depth_limit = 40;

ARM_CODE static int32_t sat_add(int32_t a, int32_t b)
{
#if defined(__ARM_FEATURE_DSP)
    return __qadd(a, b);
#else
    int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
#endif
}

/* a dot product of halfwords, each product doubled and the sum
 * saturating */
ARM_CODE static int32_t dot16(const int16_t *a, const int16_t *b, int n)
{
    int32_t acc = 0;
    for (int i = 0; i < n; i++) {
        int32_t p = (int32_t)a[i] * b[i];
        acc = sat_add(acc, sat_add(p, p));
    }
    return acc;
}

ARM_CODE static unsigned leading_zeros(uint32_t x)
{
    return x ? (unsigned)__builtin_clz(x) : 32;
}

THUMB_CODE static unsigned log2_sum(const uint32_t *v, int n)
{
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        s += 31 - leading_zeros(v[i] | 1);
    return s;
}

THUMB_CODE static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

ARM_CODE static uint64_t mac64(const uint32_t *a, const uint32_t *b, int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++)
        acc += (uint64_t)a[i] * b[i];
    return acc;
}

/* ARM and Thumb recursing into each other, escaping by longjmp when too
 * deep */
THUMB_CODE static int ping(int n, int d);

ARM_CODE static int pong(int n, int d)
{
    if (d > depth_limit)
        longjmp(escape, d);
    return n <= 1 ? 1 : ping(n - 1, d + 1) + ping(n - 2, d + 1);
}

THUMB_CODE static int ping(int n, int d)
{
    return n <= 1 ? n : pong(n - 1, d + 1) + 2 * pong(n - 3, d + 1);
}

ARM_CODE static int op_arm(int x)
{
    return x * 3 + 1;
}

THUMB_CODE static int op_thumb(int x)
{
    return x / 2 - 7;
}

/* a dense switch: a jump table */
ARM_CODE static int classify(int k)
{
    switch (k) {
    case 0: return 11;
    case 1: return 7;
    case 2: return -3;
    case 3: return 42;
    case 4: return 5;
    case 5: return 19;
    case 6: return -8;
    case 7: return 23;
    default: return 0;
    }
}

THUMB_CODE static int classify_thumb(int k)
{
    switch (k) {
    case 0: return 2;
    case 1: return 9;
    case 2: return 4;
    case 3: return -1;
    case 4: return 16;
    case 5: return 8;
    default: return 1;
    }
}

int main(void)
{
    int16_t a[64], b[64];
    uint32_t u[64], w[64];
    uint32_t x = 7;
    for (int i = 0; i < 64; i++) {
        x = x * 69069u + 1;
        a[i] = (int16_t)(x >> 8);
        b[i] = (int16_t)(x >> 16);
        u[i] = x >> (i % 31);
        w[i] = x ^ 0x5a5a5a5au;
    }
    printf("dot16 %ld %ld\n", (long)dot16(a, b, 64), (long)dot16(a, a, 64));
    printf("log2 sum %u, clz %u %u %u\n", log2_sum(u, 64), leading_zeros(0), leading_zeros(1),
           leading_zeros(0x00f00000));
    uint64_t h = 0;
    for (int i = 0; i < 16; i++)
        h = mix64(h + i);
    uint64_t m = mac64(u, w, 64);
    printf("mix64 %08lx%08lx mac64 %08lx%08lx\n", (unsigned long)(h >> 32), (unsigned long)h,
           (unsigned long)(m >> 32), (unsigned long)m);

    int (*ops[4])(int) = {op_arm, op_thumb, op_thumb, op_arm};
    int v = 1000;
    for (int i = 0; i < 40; i++)
        v = ops[(v ^ i) & 3](v) % 100003;
    int t = 0;
    for (int k = -1; k < 10; k++)
        t = t * 3 + classify(k) + classify_thumb(k);
    printf("pointers %d table %d\n", v, t);

    int r = setjmp(escape);
    if (r == 0) {
        printf("ping(12) = %d\n", ping(12, 0));
        depth_limit = 6;
        printf("ping(20) = %d\n", ping(20, 0));
    } else {
        printf("escaped at depth %d\n", r);
    }
    struct {
        uint64_t q[4];
        char s[12];
    } p1 = {{1, 2, 3, 4}, "copied"}, p2;
    memcpy(&p2, &p1, sizeof p1);
    p2.q[2] += p1.q[3] << 40;
    printf("%s %lu %lu\n", p2.s, (unsigned long)(p2.q[2] >> 32), (unsigned long)p2.q[1]);
    return 0;
}
