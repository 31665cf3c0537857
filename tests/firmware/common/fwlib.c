/* fwlib.c - text out and exit for the bare firmware, by semihosting: the
 * trap of the state this file is compiled in (svc 0x123456 in ARM, svc
 * 0xab in Thumb), as qemu-arm and `nanoprof emu` both serve it. Text goes
 * to stdout through a ":tt" handle opened for writing, as newlib's rdimon
 * does (SYS_WRITE0 would go to the debug channel: stderr). Each function
 * is one call whatever the text, so that call counts stay known. */
#include "fw.h"

#define SYS_OPEN 0x01
#define SYS_WRITE 0x05
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define MODE_W 4 /* fopen's "w": ":tt" opened so is stdout */

static inline unsigned semihost(unsigned op, const void *param)
{
    register unsigned r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = param;
#ifdef __thumb__
    __asm__ volatile("svc 0xab" : "+r"(r0) : "r"(r1) : "memory");
#else
    __asm__ volatile("svc 0x123456" : "+r"(r0) : "r"(r1) : "memory");
#endif
    return r0;
}

static unsigned stdout_handle; /* 0 until opened */

/* Writes LEN bytes of S to stdout. */
static inline void write_out(const char *s, unsigned len)
{
    if (!stdout_handle) {
        const unsigned open_block[3] = { (unsigned)":tt", MODE_W, 3 };
        stdout_handle = semihost(SYS_OPEN, open_block);
    }
    const unsigned block[3] = { stdout_handle, (unsigned)s, len };
    semihost(SYS_WRITE, block);
}

NP_FW_FN void np_fw_puts(const char *s)
{
    unsigned len = 0;
    while (s[len])
        len++;
    write_out(s, len);
}

NP_FW_FN void np_fw_put_uint(const char *label, unsigned value)
{
    char buf[80];
    unsigned n = 0;
    while (*label && n < sizeof buf - 13)
        buf[n++] = *label++;
    buf[n++] = ' ';
    /* by powers of ten, without a division: the ARM7TDMI has none, and
     * libgcc's would be calls of its own */
    static const unsigned powers[] = { 1000000000, 100000000, 10000000, 1000000, 100000,
                                       10000, 1000, 100, 10, 1 };
    int started = 0;
    for (unsigned i = 0; i < sizeof powers / sizeof *powers; i++) {
        char c = '0';
        while (value >= powers[i])
            value -= powers[i], c++;
        if (c != '0' || started || powers[i] == 1)
            buf[n++] = c, started = 1;
    }
    buf[n++] = '\n';
    write_out(buf, n);
}

NP_FW_FN void np_fw_exit(int code)
{
    unsigned block[2] = { ADP_STOPPED_APPLICATION_EXIT, (unsigned)code };
    semihost(SYS_EXIT_EXTENDED, block);
    for (;;)
        ;
}
