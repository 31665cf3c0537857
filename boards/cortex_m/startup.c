/* startup.c - the least start-up a firmware needs on QEMU's Cortex-M
 * boards: a vector table, RAM set up (.data copied, .bss cleared), main
 * called as C calls it, what the runtime asked to run at the end
 * (np_cm_run_at_exit: gprof's gmon.out), then exit(status), as a return
 * from main is in C: the C library's stdio flushed, its atexit functions
 * run, and main's return value back to the host by semihosting's exit. A
 * fault exits with status 99.
 *
 * main may be int main(void) or int main(int argc, char **argv): it gets
 * argc 0 and an argv holding NULL alone, which either takes. Compiled with
 * -DNP_BOARD_CMDLINE=N, the arguments are the command line the host
 * gives through semihosting (QEMU: -semihosting-config's arg=..., else
 * the -kernel file and -append), split at spaces, up to N - 1 bytes; a
 * longer line is said in one line and exits with status 98.
 *
 * What newlib's stdio and malloc ask of the system, with semihosting
 * (weak: a firmware's own take their place): _write to the host's stdout
 * and stderr; _fstat and _isatty calling them a terminal, so that stdout
 * flushes at each newline, in order with the runtime's own output; _sbrk
 * growing the heap of sections.ld from `end` up to __HeapLimit, never into
 * the main stack (libnosys's has no limit); _exit. The layout's symbols
 * come from sections.ld. Its functions stay out of -pg and
 * -finstrument-functions: they run before RAM is set up, after the
 * program, or inside the C library. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _stack_top;
extern char end[], __HeapLimit[];
int main(int argc, char **argv);
/* weak: there when the runtime's port is linked */
void np_cm_run_at_exit(void) __attribute__((weak));
void SVC_Handler(void);
void PendSV_Handler(void);

#define NOT_PROFILED __attribute__((no_instrument_function))
#define SYSCALL __attribute__((weak, no_instrument_function))

NOT_PROFILED static long semihost(uint32_t op, void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (long)r0;
}

#define SYS_OPEN 0x01
#define SYS_WRITE0 0x04
#define SYS_WRITE 0x05
#define SYS_GET_CMDLINE 0x15
#define SYS_EXIT_EXTENDED 0x20

__attribute__((noreturn)) NOT_PROFILED static void semihost_exit(int status)
{
    uint32_t block[2] = { 0x20026, (uint32_t)status }; /* ADP_Stopped_ApplicationExit */
    semihost(SYS_EXIT_EXTENDED, block);
    for (;;)
        ;
}

/* ---- main's arguments ------------------------------------------------------------ */

#ifndef NP_BOARD_CMDLINE
#define NP_BOARD_CMDLINE 0
#endif

#if NP_BOARD_CMDLINE > 0
static char cmdline[NP_BOARD_CMDLINE];
static char *args[NP_BOARD_CMDLINE / 2 + 1]; /* every word is a byte and a space at least */

NOT_PROFILED static int get_args(char ***argv)
{
    uint32_t block[2] = { (uint32_t)(uintptr_t)cmdline, sizeof cmdline };
    if (semihost(SYS_GET_CMDLINE, block) != 0) {
        semihost(SYS_WRITE0, (void *)"startup.c: the command line is longer than NP_BOARD_CMDLINE - 1 bytes\n");
        semihost_exit(98);
    }
    int n = 0;
    for (char *p = cmdline; *p;) {
        if (*p == ' ') {
            *p++ = 0;
            continue;
        }
        args[n++] = p;
        while (*p && *p != ' ')
            p++;
    }
    args[n] = NULL;
    *argv = args;
    return n;
}
#else
static char *args[1]; /* argv[argc], NULL */

NOT_PROFILED static int get_args(char ***argv)
{
    *argv = args;
    return 0;
}
#endif

/* ---- start and end --------------------------------------------------------------- */

__attribute__((noreturn)) void Reset_Handler(void);
NOT_PROFILED void Reset_Handler(void)
{
    for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;)
        *d++ = *s++;
    for (uint32_t *d = &_sbss; d < &_ebss;)
        *d++ = 0;
    char **argv;
    int argc = get_args(&argv);
    int status = main(argc, argv);
    if (np_cm_run_at_exit)
        np_cm_run_at_exit();
    exit(status);
}

SYSCALL void _exit(int status)
{
    semihost_exit(status);
}

NOT_PROFILED static void fault(void)
{
    semihost_exit(99);
}

/* An RTOS brings its own (its context switch): until then, a fault. */
void SVC_Handler(void) __attribute__((weak, alias("fault")));
void PendSV_Handler(void) __attribute__((weak, alias("fault")));
/* The runtime's port brings SysTick's handler with its clock and tick
 * (clock.c), or the firmware its own; a SysTick with neither, a fault. */
void SysTick_Handler(void) __attribute__((weak, alias("fault")));

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&_stack_top, Reset_Handler, fault, fault, fault, fault, fault, 0, 0, 0, 0, SVC_Handler, fault, 0,
    PendSV_Handler, SysTick_Handler,
};

/* ---- what the C library asks of the system ---------------------------------------- */

int _write(int fd, const void *buf, size_t n);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t incr);

/* fd 1 and 2: the host's stdout and stderr (":tt" opened "w" and "a"),
 * opened at the first write; semihosting's handle + 1, or -1 refused */
static long tt[2];

SYSCALL int _write(int fd, const void *buf, size_t n)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    long *h = &tt[fd - 1];
    if (!*h) {
        uint32_t open[3] = { (uint32_t)(uintptr_t)":tt", fd == 1 ? 4u : 8u, 3 };
        long got = semihost(SYS_OPEN, open);
        *h = got < 0 ? -1 : got + 1;
    }
    if (*h < 0) {
        errno = EIO;
        return -1;
    }
    uint32_t write[3] = { (uint32_t)(*h - 1), (uint32_t)(uintptr_t)buf, (uint32_t)n };
    return (int)(n - (size_t)semihost(SYS_WRITE, write)); /* it returns the bytes not written */
}

SYSCALL int _fstat(int fd, struct stat *st)
{
    if (fd < 0 || fd > 2) {
        errno = EBADF;
        return -1;
    }
    *st = (struct stat){ .st_mode = S_IFCHR };
    return 0;
}

SYSCALL int _isatty(int fd)
{
    if (fd >= 0 && fd <= 2)
        return 1;
    errno = EBADF;
    return 0;
}

SYSCALL void *_sbrk(ptrdiff_t incr)
{
    static char *brk;
    char *old = brk ? brk : end;
    if (incr > __HeapLimit - old || incr < end - old) {
        errno = ENOMEM;
        return (void *)-1;
    }
    brk = old + incr;
    return old;
}
