/* cm.c - the Cortex-M firmware of the QEMU execution log tests
 * (tests/test_qemu_log.sh): calls of every form with counts known by
 * construction, a SysTick interrupt that lands anywhere, an IRQ nested
 * in its handler, and svc; it prints how many ticks and IRQs it took,
 * the counts that depend on timing, and exits by semihosting. Bare:
 * cm_lib.c starts it, no C library. */
#include "cm.h"

volatile uint32_t ticks, svcs, irqs, sink;

/* SysTick's reload. QEMU counts it at the board's 25 MHz with one
 * instruction a nanosecond (-icount shift=0): 20 ticks are 800
 * instructions. `nanoprof emu` counts the CPU's cycles, as the hardware
 * does, where 20 are less than an exception's entry and return: its
 * builds (cm_calls_emu_*) tick every 400. */
#ifndef CM_TICK_RELOAD
#define CM_TICK_RELOAD 19
#endif

#define NVIC_ISER0 (*(volatile uint32_t *)0xe000e100)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xe000e200)
#define NVIC_IPR0 (*(volatile uint32_t *)0xe000e400)
#define SCB_SHPR3 (*(volatile uint32_t *)0xe000ed20)

/* ---- the exceptions: IRQ 0, of a higher priority than SysTick, pended
 * by every fourth tick's handler, preempts it there ---- */
NOIPA void irq_work(void) { irqs++; }
void irq0_handler(void) { irq_work(); }
NOIPA void tick_work(void) { ticks++; }
void systick_handler(void)
{
    tick_work();
    if (!(ticks & 3))
        NVIC_ISPR0 = 1;
}
NOIPA void svc_work(void) { svcs++; }
void svc_handler(void) { svc_work(); }

/* ---- calls ---- */
NOIPA int leaf(int x) { return x * 3 + 1; }
NOIPA int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
NOIPA int op_add(int a) { return a + 1; }
NOIPA int op_sub(int a) { return a - 1; }
int (*const ops[2])(int) = { op_add, op_sub };

/* a jump table (tbb): jumps inside pick, no calls */
NOIPA int pick(int k, int v)
{
    switch (k & 7) {
    case 0: return v + 3;
    case 1: return v * 5;
    case 2: return v - 7;
    case 3: return v ^ 0x55;
    case 4: return v << 2;
    case 5: return v >> 1;
    case 6: return v * v;
    default: return -v;
    }
}

/* nested: outer -> middle -> leaf, returns through pop {..., pc} */
NOIPA int middle(int x) { return leaf(x) + leaf(x + 1); }
NOIPA int outer(int x) { return middle(x) * 2 + spin(50); }

int main(void)
{
    SCB_SHPR3 |= 0xc0u << 24; /* SysTick's priority below IRQ 0's (0) */
    NVIC_IPR0 &= ~0xffu;
    NVIC_ISER0 = 1;
    SYST_RVR = CM_TICK_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 7;   /* on, its interrupt, the processor's clock */
    int s = 0;
    for (int i = 0; i < 50; i++)
        s += leaf(i);
    s += fib(12);
    for (int i = 0; i < 100; i++)
        s += ops[i & 1](i);
    for (int i = 0; i < 64; i++)
        s += pick(i, i);
    for (int i = 0; i < 10; i++)
        __asm__ volatile("svc 0" ::: "memory");
    for (int i = 0; i < 20; i++)
        s += outer(i);
    for (int i = 0; i < 3; i++)
        s += spin(3000);
    SYST_CSR = 0;
    sink = (uint32_t)s;
    put_uint("ticks=", ticks);
    put_uint("svcs=", svcs);
    put_uint("irqs=", irqs);
    return 0;
}

