/* chain.c - exceptions that follow one another (tests/test_emu_cortex_m.sh).
 *
 * Tail-chaining: IRQ0 and PendSV pended together, IRQ0 first; PendSV's
 * handler starts where IRQ0's returns. Each handler reads DWT_CYCCNT as
 * it starts and before it returns: `chain=` is the cycles from IRQ0's
 * last read to PendSV's first.
 *
 * Late arrival: SysTick (the highest priority) made to come due K cycles
 * after it is enabled, just before an `svc 0` (the lowest priority), for
 * K = 0, 1, ...: its handler says where it found itself by its EXC_RETURN,
 * the return address its frame holds and whether the SVC's handler ran.
 * One letter per K in `late=`:
 *   B  before the svc: it interrupted the thread, the svc was still to run
 *   L  late arrival: it came while the SVC's frame was stacked, and was
 *      taken in the SVC's place, returning to the thread after the svc
 *      (the SVC then tail-chained after it)
 *   N  nested: it preempted the SVC's handler
 *   A  after the SVC's handler had run (in its return, or later)
 * The thread spins after the svc long enough for the tick to come. */
#include "cm.h"

#define ICSR (*(volatile uint32_t *)0xe000ed04)
#define SHPR2 (*(volatile uint32_t *)0xe000ed1c)
#define SHPR3 (*(volatile uint32_t *)0xe000ed20)
#define NVIC_ISER0 (*(volatile uint32_t *)0xe000e100)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xe000e200)
#define NVIC_IPR0 (*(volatile uint32_t *)0xe000e400)
#define DEMCR (*(volatile uint32_t *)0xe000edfc)
#define DWT_CTRL (*(volatile uint32_t *)0xe0001000)
#define DWT_CYCCNT (*(volatile uint32_t *)0xe0001004)

volatile uint32_t irq_start, irq_end, pendsv_start, pendsv_end;
volatile uint32_t st_lr, st_pc, st_svc_done, svc_done;
extern char svc_at[], svc_after[];

/* The two chained handlers: the same instructions, timestamps apart. */
#define TIMED_HANDLER(name, start, end)                                                                      \
    __asm__(".global " name "\n.type " name ", %function\n.thumb_func\n" name ":\n"                          \
            "  ldr r0, =0xe0001004\n"                                                                        \
            "  ldr r1, [r0]\n"                                                                               \
            "  ldr r2, =" start "\n"                                                                         \
            "  str r1, [r2]\n"                                                                               \
            "  ldr r1, [r0]\n"                                                                               \
            "  ldr r2, =" end "\n"                                                                           \
            "  str r1, [r2]\n"                                                                               \
            "  bx lr\n"                                                                                      \
            ".ltorg\n")
TIMED_HANDLER("irq0_handler", "irq_start", "irq_end");
TIMED_HANDLER("pendsv_handler", "pendsv_start", "pendsv_end");

/* SysTick: where it was taken, then stopped (one tick a try) */
__asm__(".global systick_handler\n.type systick_handler, %function\n.thumb_func\nsystick_handler:\n"
        "  ldr r0, =st_lr\n"
        "  mov r1, lr\n"
        "  str r1, [r0]\n"
        "  ldr r1, [sp, #24]\n"      /* the frame's return address */
        "  ldr r0, =st_pc\n"
        "  str r1, [r0]\n"
        "  ldr r0, =svc_done\n"
        "  ldr r1, [r0]\n"
        "  ldr r0, =st_svc_done\n"
        "  str r1, [r0]\n"
        "  ldr r0, =0xe000e010\n"    /* SYST_CSR: off */
        "  movs r1, #0\n"
        "  str r1, [r0]\n"
        "  ldr r0, =0xe000ed04\n"    /* ICSR.PENDSTCLR: a tick that came since, */
        "  ldr r1, =0x02000000\n"    /* the period being a few cycles, dropped */
        "  str r1, [r0]\n"
        "  bx lr\n"
        ".ltorg\n");

__asm__(".global svc_handler\n.type svc_handler, %function\n.thumb_func\nsvc_handler:\n"
        "  ldr r0, =svc_done\n"
        "  movs r1, #1\n"
        "  str r1, [r0]\n"
        "  bx lr\n"
        ".ltorg\n");

/* arm_and_svc(&SYST_CSR, 7): SysTick on, then at once the svc */
__asm__(".global arm_and_svc\n.type arm_and_svc, %function\n.thumb_func\narm_and_svc:\n"
        "  str r1, [r0]\n"
        ".global svc_at\nsvc_at:\n"
        "  svc 0\n"
        ".global svc_after\nsvc_after:\n"
        "  bx lr\n");
void arm_and_svc(volatile uint32_t *csr, uint32_t value);

static char late_class(void)
{
    char *pc = (char *)(st_pc & ~1u);
    if (st_lr == 0xfffffff1u)
        return 'N';
    if (st_svc_done)
        return 'A';
    if (pc >= (char *)((uintptr_t)arm_and_svc & ~1u) && pc <= svc_at)
        return 'B';
    return pc == svc_after ? 'L' : '?';
}

int main(void)
{
#if __ARM_ARCH >= 7
    DEMCR |= 1u << 24;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1;
#endif
    /* tail-chaining: IRQ0 (priority 0x40) first, PendSV (the lowest) next */
    __asm__ volatile("cpsid i");
    NVIC_IPR0 = 0x40;
    SHPR3 = 0xc0u << 16;
    NVIC_ISER0 = 1;
    NVIC_ISPR0 = 1;
    ICSR = 1u << 28; /* PENDSVSET */
    __asm__ volatile("cpsie i" ::: "memory");
    spin(2);
#if __ARM_ARCH >= 7
    put_uint("chain=", pendsv_start - irq_end);
    put_uint("irq_then_pendsv=", irq_start && pendsv_start && irq_end < pendsv_start);
#endif

    /* late arrival: SysTick 0x00, SVC 0xc0 */
    SHPR3 = 0xc0u << 16; /* SysTick 0 */
    SHPR2 = 0xc0u << 24;
    char late[49];
    for (uint32_t k = 0; k < 48; k++) {
        SYST_CSR = 0;
        SYST_RVR = k;
        SYST_CVR = 0;
        st_lr = st_pc = st_svc_done = svc_done = 0;
        arm_and_svc(&SYST_CSR, 7);
        spin(12); /* time for the tick when it comes after the SVC */
        SYST_CSR = 0;
        late[k] = st_lr ? late_class() : '-';
    }
    late[48] = 0;
    put_str("late=");
    put_str(late);
    put_str("\n");
    return 0;
}
