/* output.c - the output sink, line building and error reporting. */
#include "output.h"
#include "hooks.h"
#include "thread.h"
#include "../port/port.h"
#include "nanoprof/nanoprof.h"

static np_write_fn sink;
static void *sink_ctx;

void np_output_set(np_write_fn write, void *ctx)
{
    sink_ctx = ctx;
    sink = write;
}

uint32_t np_output_failures;

void np_output_failed(void)
{
    np_output_failures++;
}

void np_write(const char *bytes, size_t len)
{
    np_write_fn w = sink;
    if (w)
        w(sink_ctx, bytes, len);
    else
        np_port_write_default(bytes, len);
}

static void put(struct np_line *l, char c)
{
    if (l->n < NP_LINE_MAX - 1)
        l->buf[l->n++] = c;
}

/* noinline: called a few times in each of the lines' writers, it would
 * otherwise be copied into each of this file's at -O2 (a firmware's ROM) */
__attribute__((noinline)) void np_line_str(struct np_line *l, const char *s)
{
    while (*s)
        put(l, *s++);
}

/* V / 10, and its remainder in *REM: with 32-bit pointers, by 32-bit
 * divisions of 16 bits at a time, so that a target links no 64-bit
 * division. */
static uint64_t div10(uint64_t v, unsigned *rem)
{
#if UINTPTR_MAX > 0xffffffffu
    *rem = (unsigned)(v % 10);
    return v / 10;
#else
    uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
    uint32_t q_hi = hi / 10, r = hi % 10;
    uint32_t mid = r << 16 | lo >> 16;
    uint32_t q_mid = mid / 10;
    uint32_t low = (mid % 10) << 16 | (lo & 0xffffu);
    *rem = low % 10;
    return (uint64_t)q_hi << 32 | q_mid << 16 | low / 10;
#endif
}

void np_line_u64(struct np_line *l, uint64_t v)
{
    char tmp[20];
    int i = 0;
    do {
        unsigned r;
        v = div10(v, &r);
        tmp[i++] = (char)('0' + r);
    } while (v);
    while (i)
        put(l, tmp[--i]);
}

void np_line_hex(struct np_line *l, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int i = 0;
    do {
        tmp[i++] = digits[v & 15];
        v >>= 4;
    } while (v);
    put(l, '0');
    put(l, 'x');
    while (i)
        put(l, tmp[--i]);
}

void np_line_indent(struct np_line *l, unsigned n)
{
    while (n--)
        put(l, ' ');
}

void np_line_func(struct np_line *l, const void *fn, int named)
{
    char name[256];
    if (named) {
        np_line_str(l, (const char *)fn);
    } else if (np_port_symbolize(fn, name, sizeof name)) {
        np_port_display_name(name, sizeof name); /* as the views name it */
        np_line_str(l, name);
    } else {
        np_line_hex(l, (uint64_t)(uintptr_t)fn);
    }
}

void np_line_emit(struct np_line *l)
{
    l->buf[l->n++] = '\n'; /* put() always leaves room for this */
    np_write(l->buf, l->n);
    l->n = 0;
}

int np_error(int status, const char *where, const char *what)
{
    struct np_line l = { 0 };
    np_line_str(&l, "nanoprof: ");
    np_line_str(&l, where);
    np_line_str(&l, ": ");
    np_line_str(&l, what);
    np_line_emit(&l);
    return status;
}

int np_api_enter(struct np_thread *t, const char *where)
{
    if (np_thread_lock(t))
        return 1;
    np_error(NP_EBUSY, where, "called from inside a hook (a signal handler?): not done");
    return 0;
}

const char *np_version(void)
{
    return NP_VERSION_STRING;
}

const char *np_strerror(int status)
{
    switch (status) {
    case NP_OK: return "success";
    case NP_EINVAL: return "invalid argument";
    case NP_ESMALL: return "buffer too small";
    case NP_EALREADY: return "already initialised on this thread";
    case NP_ENOTINIT: return "not initialised on this thread";
    case NP_EFULL: return "table full, results incomplete";
    case NP_EBUSY: return "busy: called from inside a hook";
    default: return "unknown status";
    }
}
