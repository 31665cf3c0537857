/* words_sum.c - the ring's sum (common/trace_format.h's
 * np_ring_words_sum) over aligned words, eight a load: the drain of a
 * ring trace sums every word it sends, where the C loop takes about 2.2
 * instructions a word and this 1.4 (bench/target.sh). ARMv7-M and later:
 * Thumb-2's LDM of high registers and ADD with a rotated operand. An
 * object of its own, linked with the ring alone. */
#include <stdint.h>
#include "../port.h"

#ifdef NP_PORT_WORDS_SUM
/* N words at P (4-byte aligned) into OUT (any alignment: the M3 and later
 * store words at any), as np_ring_words_sum: the sum rotated left by one
 * (right by 31) before each word is added. */
__attribute__((naked)) void np_cm_words_sum(const uint8_t *p, uint32_t n, uint8_t out[4])
{
    (void)p, (void)n, (void)out;
    __asm__ __volatile__(
        "push {r4-r11}\n\t"
        "movs r3, #0\n\t"
        "subs r1, #8\n\t"
        "blo 2f\n"
        "1:\n\t"
        "ldmia r0!, {r4-r11}\n\t"
        "add.w r3, r4, r3, ror #31\n\t"
        "add.w r3, r5, r3, ror #31\n\t"
        "add.w r3, r6, r3, ror #31\n\t"
        "add.w r3, r7, r3, ror #31\n\t"
        "add.w r3, r8, r3, ror #31\n\t"
        "add.w r3, r9, r3, ror #31\n\t"
        "add.w r3, r10, r3, ror #31\n\t"
        "add.w r3, r11, r3, ror #31\n\t"
        "subs r1, #8\n\t"
        "bhs 1b\n"
        "2:\n\t"
        "adds r1, #8\n\t"
        "beq 4f\n"
        "3:\n\t"
        "ldr r4, [r0], #4\n\t"
        "add.w r3, r4, r3, ror #31\n\t"
        "subs r1, #1\n\t"
        "bne 3b\n"
        "4:\n\t"
        "str r3, [r2]\n\t"
        "pop {r4-r11}\n\t"
        "bx lr\n");
}
#endif
