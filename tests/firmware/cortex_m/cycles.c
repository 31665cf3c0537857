/* cycles.c - a Cortex-M firmware that times itself with the DWT cycle
 * counter (tests/test_emu_cortex_m.sh): sequences whose cycles the TRM's
 * tables give, each between two reads of DWT_CYCCNT, and a call of
 * fib(12), whose span the test checks against the cycles the emulator's
 * trace gives that call. Each span printed counts the first read's own
 * cycles (a load: 2) and the sequence; in QEMU the counter reads 0. Run
 * with flash wait states (--wait), the spans show them. */
#include "cm.h"

#define DEMCR (*(volatile uint32_t *)0xe000edfc)
#define DWT_CTRL (*(volatile uint32_t *)0xe0001000)
#define DWT_CYCCNT (*(volatile uint32_t *)0xe0001004)

/* ldr a; SEQ; ldr b: b - a */
#define SPAN(name, seq, ...)                                                                                 \
    do {                                                                                                     \
        uint32_t a_, b_;                                                                                     \
        __asm__ volatile("ldr %0, [%2]\n" seq "\nldr %1, [%2]"                                               \
                         : "=&r"(a_), "=&r"(b_)                                                              \
                         : "r"(&DWT_CYCCNT)__VA_ARGS__);                                                     \
        put_uint(name, b_ - a_);                                                                             \
    } while (0)

NOIPA int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
NOIPA void fib12(void) { fib(12); }

int main(void)
{
    DEMCR |= 1u << 24;  /* TRCENA */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1;      /* CYCCNTENA */
    SPAN("empty=", "");
    SPAN("nop4=", "nop\nnop\nnop\nnop");
    SPAN("add8=", "adds r3, #1\nadds r3, #1\nadds r3, #1\nadds r3, #1\n"
                  "adds r3, #1\nadds r3, #1\nadds r3, #1\nadds r3, #1", : "r3", "cc");
    SPAN("ldr=", "ldr r3, [%2]", : "r3");
    SPAN("lit=", "ldr r3, =0x12345678", : "r3"); /* a literal: a data read from flash */
    SPAN("mul=", "muls r3, r3", : "r3", "cc");
    SPAN("b=", "b 1f\n1:");
    /* the call: its span less the first read (2) and the bl (1 + P = 3)
     * is the call's own cycles, bl's target to the return's end */
    SPAN("call=", "bl fib12", : "r0", "r1", "r2", "r3", "r12", "lr", "cc", "memory");
    return 0;
}
