/* fpu.c - a Cortex-M4F firmware (hard float) that shows how its FP
 * context is stacked on exceptions (tests/test_emu_cortex_m.sh): lazily
 * as FPCCR.LSPEN asks by default, at once with LSPEN clear.
 *
 * svc_handler records FPCCR and FPCAR as it enters and the word at FPCAR
 * (the frame's s0 slot, which main filled with MARK below its stack),
 * then, when `with_fp` is set, runs an FP instruction (the lazy stacking
 * happens there) and reads the slot again. The lines that do not count
 * cycles are the same under qemu-system-arm -M mps2-an386; the `span_`
 * lines count the cycles of `svc 0` with its handler, by DWT_CYCCNT (0 in
 * QEMU). */
#include "cm.h"

#define CPACR (*(volatile uint32_t *)0xe000ed88)
#define FPCCR (*(volatile uint32_t *)0xe000ef34)
#define DEMCR (*(volatile uint32_t *)0xe000edfc)
#define DWT_CTRL (*(volatile uint32_t *)0xe0001000)
#define DWT_CYCCNT (*(volatile uint32_t *)0xe0001004)
#define MARK 0x5a5a5a5au

/* read by the handler, written by it (svc_handler below) */
volatile uint32_t with_fp, seen_fpccr, seen_offset, seen_before, seen_after;

/* svc_handler: on MSP, as main is, so FPCAR's offset from its sp is the
 * frame's (0x20 past the integer registers) */
__asm__(".global svc_handler\n"
        ".type svc_handler, %function\n"
        ".thumb_func\n"
        "svc_handler:\n"
        "  ldr r0, =0xe000ef34\n"   /* FPCCR */
        "  ldr r1, [r0]\n"
        "  ldr r2, =seen_fpccr\n"
        "  str r1, [r2]\n"
        "  ldr r1, [r0, #4]\n"      /* FPCAR */
        "  mov r3, sp\n"
        "  subs r3, r1, r3\n"
        "  ldr r2, =seen_offset\n"
        "  str r3, [r2]\n"
        "  ldr r3, [r1]\n"          /* the s0 slot before any FP instruction */
        "  ldr r2, =seen_before\n"
        "  str r3, [r2]\n"
        "  ldr r2, =with_fp\n"
        "  ldr r2, [r2]\n"
        "  cbz r2, 1f\n"
        "  vmov.f32 s1, #1.0\n"     /* the handler's FP instruction */
        "1:\n"
        "  ldr r3, [r1]\n"
        "  ldr r2, =seen_after\n"
        "  str r3, [r2]\n"
        "  bx lr\n"
        ".ltorg\n");

/* s0 and s1 set (CONTROL.FPCA with them), or FPCA cleared */
static void fp_context(int on)
{
    if (on) {
        __asm__ volatile("vmov.f32 s0, #2.5\nvmov.f32 s1, #3.0" ::: "s0", "s1");
    } else {
        uint32_t c;
        __asm__ volatile("mrs %0, control\nbic %0, %0, #4\nmsr control, %0\nisb" : "=r"(c));
    }
}

static uint32_t s1_bits(void)
{
    uint32_t v;
    __asm__ volatile("vmov %0, s1" : "=r"(v));
    return v;
}

/* The stack below sp filled with MARK, where the frames will go. */
static void __attribute__((noinline)) mark_stack(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (volatile uint32_t *p = (uint32_t *)(sp - 0x200); p < (uint32_t *)(sp - 0x40); p++)
        *p = MARK;
}

/* `svc 0` between two reads of DWT_CYCCNT, its frame seen by the handler */
static void one(const char *name, int fp_on, uint32_t use_fp)
{
    fp_context(fp_on);
    with_fp = use_fp;
    mark_stack();
    uint32_t a, b;
    __asm__ volatile("ldr %0, [%2]\nsvc 0\nldr %1, [%2]"
                     : "=&r"(a), "=&r"(b)
                     : "r"(&DWT_CYCCNT)
                     : "r0", "r1", "r2", "r3", "r12", "lr", "cc", "memory");
    put_str(name);
    put_uint("_fpccr=", seen_fpccr);
    put_str(name);
    put_uint("_fpcar_at=", (seen_fpccr & 1) ? seen_offset : 0); /* sp + 0x20 */
    put_str(name);
    put_uint("_slot_marked_before=", (seen_fpccr & 1) && seen_before == MARK);
    put_str(name);
    put_uint("_slot_marked_after=", (seen_fpccr & 1) && seen_after == MARK);
    if (fp_on) {
        put_str(name);
        put_uint("_s1_kept=", s1_bits() == 0x40400000u); /* 3.0f */
    }
    put_str("span_");
    put_str(name);
    put_uint("=", b - a);
}

int main(void)
{
    CPACR |= 0xfu << 20; /* CP10, CP11: full access */
    __asm__ volatile("dsb\nisb");
    DEMCR |= 1u << 24;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1;
    put_uint("fpccr_at_reset=", FPCCR);
    one("nofp", 0, 0);           /* no FP context: a frame of 8 words */
    one("lazy", 1, 0);           /* room kept, nothing written */
    one("lazy_used", 1, 1);      /* written at the handler's FP instruction */
    one("nofp_used", 0, 1);      /* the handler's own FP context only */
    FPCCR &= ~(1u << 30);        /* LSPEN clear: stacked at once */
    one("eager", 1, 0);
    put_uint("fpccr_at_end=", FPCCR);
    return 0;
}
