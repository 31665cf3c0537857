/* irq.c - the irq firmware's C side: main (System mode) enables IRQs,
 * runs a loop of known calls and makes 5 svc #1 along the way, then masks
 * IRQs and prints how many IRQs it took ("irqs N") and svcs it served.
 * Each IRQ calls irq_service, which calls irq_tick; each svc calls
 * swi_service (vectors.S). expected/irq.calls: IRQS stands for N.
 * ARM code, for the ARM7TDMI and the ARM946E-S alike. */
#include "fw.h"

#define LOOPS 1000
#define SVC_EVERY 200

static volatile unsigned irqs, swis, ticks;

static inline __attribute__((always_inline)) void irq_enable(void)
{
    unsigned r;
    __asm__ volatile("mrs %0, cpsr\n\tbic %0, %0, #0x80\n\tmsr cpsr_c, %0" : "=r"(r) : : "memory");
}

static inline __attribute__((always_inline)) void irq_disable(void)
{
    unsigned r;
    __asm__ volatile("mrs %0, cpsr\n\torr %0, %0, #0x80\n\tmsr cpsr_c, %0" : "=r"(r) : : "memory");
}

NP_FW_FN void irq_tick(unsigned n)
{
    ticks += n & 3;
}

/* from irq_handler */
NP_FW_FN void irq_service(void)
{
    irqs++;
    irq_tick(irqs);
}

/* from swi_handler, with the svc's number */
NP_FW_FN void swi_service(unsigned number)
{
    if (number == 1)
        swis++;
}

NP_FW_FN unsigned main_leaf(unsigned x)
{
    return x * 3 + 1;
}

NP_FW_FN unsigned main_work(unsigned x)
{
    return main_leaf(x) ^ main_leaf(x + 1);
}

int main(void)
{
    unsigned sum = 0, next_svc = 0;
    irq_enable();
    for (unsigned i = 0; i < LOOPS; i++) {
        sum += main_work(i);
        if (i == next_svc) {
            __asm__ volatile("svc #1" : : : "memory");
            next_svc += SVC_EVERY;
        }
    }
    irq_disable();
    np_fw_put_uint("irqs", irqs);
    np_fw_put_uint("swis", swis);
    np_fw_put_uint("sum", sum);
    return 0;
}
