/* port.c - the Cortex-M port (port.h): ARMv6-M, ARMv7-M and ARMv7E-M with
 * no OS and no heap.
 *
 * The clock is clock.c's and systick.c's, files of their own, so that a
 * firmware that reads no time links neither (nor SysTick's handler).
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

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_OPEN_WB 5 /* fopen's "wb" */

static void (*at_exit_fn)(void);

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

void np_port_display_name(char *name, size_t len)
{
    (void)name, (void)len; /* no names here (above) */
}

/* ---- hardware event counters: none ---------------------------------------------- */

int np_port_hw_open(const char **reason)
{
    if (reason)
        *reason = NP_MSG("this port has no hardware event counters");
    return 0;
}

int np_port_hw_read(uint64_t v[NP_HW_EVENTS])
{
    (void)v;
    return 0;
}

const char *np_port_hw_name(int i)
{
    return i == 0 ? NP_MSG("instructions") : i == 1 ? NP_MSG("cache-misses") : NP_MSG("?");
}

/* ---- the GNU profiler (gprof.c): the text, the end, the host's files ----------- */

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
