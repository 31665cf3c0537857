/* gprof_fw.c - a firmware with known calls and a known hot spot, built
 * with -pg for tests/port/gprof.sh: main calls a() CALLS_A times, a calls
 * b() CALLS_B times each, then main runs busy(): BUSY_LOOPS iterations of
 * two instructions, far more than the rest of the program. main returns 0
 * and the board's startup.c writes gmon.out. BOARD_HZ (the board's
 * SysTick clock), HZ, CALLS_A, CALLS_B and BUSY_LOOPS come from the
 * script's -D. */
#include <nanoprof/nanoprof.h>
#include <nanoprof/cortex_m.h>

static uint32_t arcs[NP_GPROF_ARCS_SIZE(16) / 4];
static uint16_t hist[4096]; /* 8 KiB of code at 2 bytes a bin */
volatile unsigned b_calls;

__attribute__((noinline)) void b(void)
{
    b_calls++;
}

volatile unsigned sink;

/* Many values live across b()'s calls: on ARMv6-M GCC saves r8-r11
 * through lr before -pg's hook (`mov lr, r11 ... push {..., lr}`), whose
 * pushed lr then holds r11's value and not the return address: the arc
 * from main must come from the prologue's own copy. */
__attribute__((noinline)) void a(void)
{
    unsigned v0 = b_calls, v1 = v0 * 3 + 1, v2 = v0 * 5 + 2, v3 = v0 * 7 + 3, v4 = v0 * 11 + 4, v5 = v0 * 13 + 5,
             v6 = v0 * 17 + 6;
    for (int i = 0; i < CALLS_B; i++) {
        b();
        v0 += v1, v1 ^= v2, v2 += v3, v3 ^= v4, v4 += v5, v5 ^= v6, v6 += v0;
    }
    sink = v0 + v1 + v2 + v3 + v4 + v5 + v6;
}

__attribute__((noinline)) void busy(unsigned n)
{
    /* Thumb-1, for every core: subs and bne, BUSY_LOOPS times */
    __asm__ __volatile__(".syntax unified\n1: subs %0, %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
}

int main(void)
{
    np_cm_set_cpu_hz(BOARD_HZ);
    np_gprof_config c = { .arcs = arcs, .arcs_size = sizeof arcs, .hist = hist, .hist_size = sizeof hist,
                          .hz = HZ };
    if (np_gprof_init(&c) != NP_OK)
        return 1;
    for (int i = 0; i < CALLS_A; i++)
        a();
    busy(BUSY_LOOPS);
    return b_calls == CALLS_A * CALLS_B ? 0 : 2;
}
