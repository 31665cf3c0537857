/* port.c - the Cortex-M port (port.h): ARMv6-M, ARMv7-M and ARMv7E-M with
 * no OS and no heap.
 *
 * Clock: CPU cycles, 64 bits. The DWT cycle counter where the core has one
 * and it moves (QEMU's boards do not run it: it reads 0), else SysTick on
 * the processor clock, counting down from its reload value. Either
 * hardware counter is narrower than 64 bits: each read (port_hot.h,
 * np_cm_systick_read) adds what it moved since the previous one, with
 * interrupts masked, so the clock stays right as long as it is read at
 * least once per counter period. SysTick's interrupt sees to that when
 * SysTick is the clock (one period is 2^24 cycles: 0.67 s at 25 MHz);
 * the DWT counter wraps after 2^32 cycles (a minute at 72 MHz), read by
 * every hook while function cost or sections run, and by each bins tick.
 *
 * Threads: one OS thread, the core. An RTOS's threads are the runtime's
 * user-level threads (np_thread_switch, docs/porting.md).
 *
 * Output: semihosting's stdout (":tt" opened for writing) unless the
 * program sets its own writer (np_output_set: a UART, RTT, ...).
 *
 * No symbols (the host names addresses from the firmware's ELF), no
 * hardware event counters, no heap, no environment. */
#include "../port.h"
#include "cortex_m.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* the processor clock */
#define SYST_PERIOD_MAX (1u << 24)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25)
#define DEMCR REG(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_OPEN_WB 5 /* fopen's "wb" */

struct np_cm_clock np_cm_clock;

static uint32_t cpu_hz = NP_CM_CPU_HZ;
static int clock_ready;
static uint32_t systick_period; /* SysTick's reload + 1 while it runs, else 0 */
static void (*tick_fn)(uint32_t late);
static void (*pc_fn)(uintptr_t pc);   /* gprof's sampling (np_port_pc_sample_start) */
static void (*at_exit_fn)(void);

void np_cm_set_cpu_hz(uint32_t hz)
{
    if (hz)
        cpu_hz = hz;
}

uint32_t np_cm_cpu_hz(void)
{
    return cpu_hz;
}

/* ---- clock ------------------------------------------------------------------ */

uint64_t np_cm_systick_read(void)
{
    np_port_crit m = np_port_crit_enter(0);
    uint64_t now = np_cm_clock.now;
    if (systick_period) {
        uint32_t v = SYST_CVR, last = np_cm_clock.last;
        now += last >= v ? last - v : last + systick_period - v; /* it counts down */
        np_cm_clock.now = now;
        np_cm_clock.last = v;
    }
    np_port_crit_exit(0, m);
    return now;
}

/* SysTick counts PERIOD cycles per interrupt from now on (0: stopped). When
 * it is the clock, what it counted so far is kept. */
static void systick_set(uint32_t period)
{
    np_port_crit m = np_port_crit_enter(0);
    if (!np_cm_clock.dwt)
        (void)np_cm_systick_read();
    SYST_CSR = 0;
    systick_period = period;
    if (period) {
        SYST_RVR = period - 1;
        SYST_CVR = 0; /* reloads at the next cycle */
        np_cm_clock.last = np_cm_clock.dwt ? np_cm_clock.last : 0;
        SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    }
    np_port_crit_exit(0, m);
}

#if NP_CM_HAS_DWT
/* The DWT counter, enabled, when it is there and moves. */
static int dwt_start(void)
{
    DEMCR |= DEMCR_TRCENA;
    if (DWT_CTRL & DWT_CTRL_NOCYCCNT)
        return 0;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;
    uint32_t a = NP_CM_DWT_CYCCNT;
    for (volatile int i = 0; i < 8; i++)
        ;
    if (NP_CM_DWT_CYCCNT == a)
        return 0;
    np_cm_clock.last = NP_CM_DWT_CYCCNT;
    return 1;
}
#endif

void np_port_clock_init(void)
{
    if (clock_ready)
        return;
    clock_ready = 1;
#if NP_CM_HAS_DWT
    if (dwt_start()) {
        np_cm_clock.dwt = 1;
        return;
    }
#endif
    systick_set(SYST_PERIOD_MAX);
}

void np_port_clock_thread(void)
{
    np_port_clock_init();
}

uint64_t np_port_resync(uint64_t *switched)
{
    *switched = 0;
    return np_port_counter();
}

double np_port_ns_per_tick(void)
{
    return 1e9 / (double)cpu_hz;
}

double np_port_ns_per_tick_soon(void)
{
    return np_port_ns_per_tick();
}

uint64_t np_port_ns_per_tick_q32(void)
{
    /* 10^9 * 2^32 / cpu_hz, the fraction bit by bit: no 64-bit division */
    uint32_t hz = cpu_hz, whole = 1000000000u / hz, frac = 0;
    uint64_t r = 1000000000u % hz;
    for (int i = 0; i < 32; i++) {
        r <<= 1;
        frac <<= 1;
        if (r >= hz) {
            r -= hz;
            frac |= 1;
        }
    }
    return (uint64_t)whole << 32 | frac;
}

const char *np_port_clock_name(void)
{
    return "cycles";
}

const char *np_port_wall_clock_name(void)
{
    return "cycles";
}

void np_cm_systick_isr(void)
{
    (void)np_port_counter(); /* one read per period keeps the clock */
    void (*fn)(uint32_t) = __atomic_load_n(&tick_fn, __ATOMIC_RELAXED);
    if (fn)
        fn(0);
}

void np_cm_systick_isr_frame(const uint32_t *frame)
{
    np_cm_systick_isr();
    void (*fn)(uintptr_t) = __atomic_load_n(&pc_fn, __ATOMIC_RELAXED);
    if (fn)
        fn(frame[6]); /* the stacked PC: r0-r3, r12, lr, pc, xpsr */
}

#if NP_CM_SYSTICK_HANDLER
/* The exception frame is on the stack the interrupted code used: the
 * process stack when EXC_RETURN (lr on entry) has bit 2 set, else the
 * main stack, where nothing was pushed since (this handler pushes nothing
 * before it looks).
 * Thumb-1 only, for ARMv6-M too. */
__asm__(".pushsection .text.SysTick_Handler,\"ax\",%progbits\n"
        ".syntax unified\n"
        ".global SysTick_Handler\n"
        ".thumb_func\n"
        ".type SysTick_Handler, %function\n"
        "SysTick_Handler:\n"
        "  mov r0, lr\n"
        "  movs r1, #4\n"
        "  tst r0, r1\n"
        "  bne 1f\n"
        "  mrs r0, msp\n"
        "  b 2f\n"
        "1: mrs r0, psp\n"
        "2: ldr r1, 3f\n"
        "  bx r1\n"
        "  .align 2\n"
        "3: .word np_cm_systick_isr_frame\n"
        ".size SysTick_Handler, . - SysTick_Handler\n"
        ".popsection\n");
#endif

/* ---- threads ------------------------------------------------------------------ */

long np_port_tid(void)
{
    return 0;
}

void np_port_relax(void)
{
}

void np_port_thread_start(void (*on_exit)(void))
{
    (void)on_exit; /* the core's one thread never ends */
}

/* The one OS thread's blocks, from a static arena. */
static uint64_t arena[(NP_CM_THREAD_MEM_BYTES + 7) / 8];
static size_t arena_used;

void *np_port_thread_alloc(size_t size, void (*forget)(void))
{
    (void)forget;
    size = (size + 7) & ~(size_t)7;
    np_port_crit m = np_port_crit_enter(0);
    void *p = NULL;
    if (size <= sizeof arena - arena_used) {
        p = (char *)arena + arena_used;
        arena_used += size;
    }
    np_port_crit_exit(0, m);
    return p;
}

/* ---- memory and settings: none ------------------------------------------------- */

void *np_port_map(size_t size)
{
    (void)size;
    return NULL;
}

void *np_port_alloc(size_t size)
{
    (void)size;
    return NULL;
}

void np_port_free(void *p)
{
    (void)p;
}

const char *np_port_getenv(const char *name)
{
    (void)name;
    return NULL;
}

void np_port_atfork_child(void (*fn)(void))
{
    (void)fn;
}

/* ---- output and names ------------------------------------------------------------ */

long np_cm_semihost(int op, void *arg)
{
    register long r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static long out_handle = -1; /* semihosting's stdout once opened; -2: refused */

void np_port_write_default(const char *bytes, size_t len)
{
    if (out_handle == -1) {
        static const char tt[] = ":tt";
        uint32_t open[3] = { (uint32_t)(uintptr_t)tt, 4 /* "w": stdout */, 3 };
        long h = np_cm_semihost(SYS_OPEN, open);
        out_handle = h < 0 ? -2 : h;
    }
    if (out_handle < 0 || !len)
        return;
    uint32_t write[3] = { (uint32_t)out_handle, (uint32_t)(uintptr_t)bytes, (uint32_t)len };
    (void)np_cm_semihost(SYS_WRITE, write);
}

int np_port_symbolize(const void *addr, char *buf, size_t len)
{
    return np_port_symbolize_at(addr, buf, len, NULL);
}

int np_port_symbolize_at(const void *addr, char *buf, size_t len, uint64_t *offset)
{
    (void)addr, (void)buf, (void)len, (void)offset;
    return 0; /* the host has the firmware's ELF: dumps print addresses */
}

/* ---- hardware event counters: none ---------------------------------------------- */

int np_port_hw_open(const char **reason)
{
    if (reason)
        *reason = "this port has no hardware event counters";
    return 0;
}

int np_port_hw_read(uint64_t v[NP_HW_EVENTS])
{
    (void)v;
    return 0;
}

const char *np_port_hw_name(int i)
{
    return i == 0 ? "instructions" : i == 1 ? "cache-misses" : "?";
}

/* ---- periodic tick: SysTick -------------------------------------------------------- */

/* SysTick at HZ for bins' tick or gprof's samples (np_port_pc_sample_start):
 * they share it, at one rate. 1, or 0 with *REASON. */
static int systick_rate(unsigned hz, const char **reason)
{
    np_port_clock_init();
    uint32_t period = hz ? cpu_hz / hz : 0;
    if (period < 64 || period > SYST_PERIOD_MAX) {
        *reason = "the tick rate does not fit SysTick at this core clock (np_cm_set_cpu_hz)";
        return 0;
    }
    if ((tick_fn || pc_fn) && period != systick_period) {
        *reason = "SysTick ticks for bins or gprof at another rate: give both the same";
        return 0;
    }
    if (period != systick_period)
        systick_set(period);
    return 1;
}

int np_port_tick_start(unsigned hz, void (*fn)(uint32_t late), const char **reason)
{
    if (!systick_rate(hz, reason))
        return 0;
    __atomic_store_n(&tick_fn, fn, __ATOMIC_RELAXED);
    return 1;
}

/* SysTick back to the clock's period (or off) when no one ticks. */
static void systick_idle(void)
{
    if (!tick_fn && !pc_fn)
        systick_set(np_cm_clock.dwt ? 0 : SYST_PERIOD_MAX); /* the clock keeps its SysTick */
}

void np_port_tick_stop(void)
{
    __atomic_store_n(&tick_fn, NULL, __ATOMIC_RELAXED);
    systick_idle();
}

void np_port_delay_us(uint32_t us)
{
    np_port_clock_init();
    uint64_t end = np_port_counter() + (uint64_t)us * cpu_hz / 1000000u;
    while ((int64_t)(np_port_counter() - end) < 0)
        ;
}

int np_port_periodic_start(unsigned seconds, void (*fn)(void))
{
    (void)seconds, (void)fn;
    return 0; /* no thread to run it: the program dumps when it wants */
}

void np_port_periodic_stop(void)
{
}

/* ---- the GNU profiler (gprof.c): sampling, the text, the end, the host's files -- */

int np_port_pc_sample_start(unsigned hz, void (*fn)(uintptr_t pc), const char **reason)
{
    if (!systick_rate(hz, reason))
        return 0;
    __atomic_store_n(&pc_fn, fn, __ATOMIC_RELAXED);
    return 1;
}

void np_port_pc_sample_stop(void)
{
    __atomic_store_n(&pc_fn, NULL, __ATOMIC_RELAXED);
    systick_idle();
}

/* The boards' link.ld marks the code with these (boards/cortex_m/sections.ld). */
extern const char _stext[] __attribute__((weak)), _etext[] __attribute__((weak));

int np_port_text(uintptr_t *start, uintptr_t *end)
{
    if (!_stext || !_etext)
        return 0;
    *start = (uintptr_t)_stext;
    *end = (uintptr_t)_etext;
    return 1;
}

void np_port_at_exit(void (*fn)(void))
{
    at_exit_fn = fn;
}

void np_cm_run_at_exit(void)
{
    void (*fn)(void) = at_exit_fn;
    at_exit_fn = NULL;
    if (fn)
        fn();
}

long np_port_host_open(const char *path)
{
    size_t len = 0;
    while (path[len])
        len++;
    uint32_t open[3] = { (uint32_t)(uintptr_t)path, SYS_OPEN_WB, (uint32_t)len };
    return np_cm_semihost(SYS_OPEN, open);
}

int np_port_host_write(long handle, const void *bytes, size_t len)
{
    uint32_t write[3] = { (uint32_t)handle, (uint32_t)(uintptr_t)bytes, (uint32_t)len };
    return np_cm_semihost(SYS_WRITE, write) != 0; /* the bytes not written */
}

void np_port_host_close(long handle)
{
    uint32_t h = (uint32_t)handle;
    (void)np_cm_semihost(SYS_CLOSE, &h);
}
