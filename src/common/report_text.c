/* report_text.c - a report's record as its lines (report_text.h), built
 * without printf: a target that formats (-lnanoprof-text) has none, and
 * links no 64-bit division (div10). */
#include "report_text.h"
#include "report_format.h"
#include "../runtime/np_config.h" /* NP_LINE_MAX */

#define NAME_MAX_BYTES 256

struct line {
    size_t n;
    char buf[NP_LINE_MAX];
};

static void put(struct line *l, char c)
{
    if (l->n < sizeof l->buf - 1)
        l->buf[l->n++] = c;
}

static void str(struct line *l, const char *s)
{
    while (*s)
        put(l, *s++);
}

/* V / 10, and its remainder in *REM: with 32-bit pointers, by 32-bit
 * divisions of 16 bits at a time. */
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

static void u64(struct line *l, uint64_t v)
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

static void hex(struct line *l, uint64_t v)
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

struct out {
    const struct np_report_names *names;
    np_report_emit_fn emit;
    void *ctx;
    struct line l;
};

static void emit(struct out *o)
{
    o->l.buf[o->l.n++] = '\n'; /* put() always leaves room for it */
    o->emit(o->ctx, o->l.buf, o->l.n);
    o->l.n = 0;
}

/* A string value; "?" when it cannot be read. */
static void text(struct out *o, uint64_t addr, int msg)
{
    char buf[NAME_MAX_BYTES];
    const char *s = o->names && o->names->string ? o->names->string(o->names->ctx, addr, msg, buf, sizeof buf) : 0;
    str(&o->l, s ? s : "?");
}

/* A function: its name (NAMED: the string at FN), else its address. */
static void function(struct out *o, uint64_t fn, uint64_t named)
{
    char name[NAME_MAX_BYTES];
    uint64_t off;
    if (named)
        text(o, fn, 0);
    else if (o->names && o->names->function && o->names->function(o->names->ctx, fn, name, sizeof name, &off))
        str(&o->l, name);
    else
        hex(&o->l, fn);
}

/* "(<n><after>" */
static void note(struct out *o, uint64_t n, const char *after)
{
    str(&o->l, "(");
    u64(&o->l, n);
    str(&o->l, after);
    emit(o);
}

/* "nanoprof: <where>: <n><after>" */
static void said(struct out *o, const char *where, uint64_t n, const char *after)
{
    str(&o->l, "nanoprof: ");
    str(&o->l, where);
    str(&o->l, ": ");
    u64(&o->l, n);
    str(&o->l, after);
    emit(o);
}

static void section(struct out *o, const uint64_t *v)
{
    struct line *l = &o->l;
    if (v[1])
        text(o, v[1], 0);
    else if (v[0] == 0)
        str(l, "global");
    else {
        str(l, "section ");
        u64(l, v[0]);
    }
    str(l, ": count ");
    u64(l, v[2]);
    str(l, ", time ");
    u64(l, v[3]);
    str(l, ", ");
    if (v[4]) {
        /* the ratio in 32 bits: no 64-bit division on a target */
        uint64_t t = v[3], g = v[4];
        while ((t | g) >> 22)
            t >>= 1, g >>= 1;
        uint32_t tenths = g ? ((uint32_t)t * 1000u + (uint32_t)g / 2) / (uint32_t)g : 0;
        u64(l, tenths / 10);
        str(l, ".");
        u64(l, tenths % 10);
    } else {
        str(l, "-");
    }
    str(l, "% of global");
    for (int i = 0; v[5] && i < 2; i++) {
        str(l, ", ");
        text(o, v[5 + 2 * i], 1);
        str(l, " ");
        u64(l, v[6 + 2 * i]);
    }
    emit(o);
}

int np_report_text(unsigned type, const uint64_t *v, unsigned n, const struct np_report_names *names,
                   np_report_emit_fn emit_fn, void *ctx)
{
    static const unsigned char need[] = NP_REPORT_VALUES;
    if (type < 1 || type > NP_REPORT_TYPE_LAST || n < need[type])
        return -1;
    struct out o;
    o.names = names;
    o.emit = emit_fn;
    o.ctx = ctx;
    o.l.n = 0;
    struct line *l = &o.l;
    switch ((enum np_report_type)type) {
    case NP_REP_ERROR:
        str(l, "nanoprof: ");
        text(&o, v[1], 1);
        str(l, ": ");
        text(&o, v[2], 1);
        emit(&o);
        break;
    case NP_REP_COST_FN:
        function(&o, v[0], v[1]);
        str(l, ": count ");
        u64(l, v[2]);
        str(l, ", cost ");
        u64(l, v[3]);
        str(l, ", self ");
        u64(l, v[4]);
        str(l, ", min ");
        u64(l, v[5]);
        str(l, ", max ");
        u64(l, v[6]);
        emit(&o);
        break;
    case NP_REP_COST_LOST:
        note(&o, v[0], " records lost: a measurement buffer was full, or a thread ended without np_stats_calc)");
        break;
    case NP_REP_COST_FULL:
        str(l, "(statistics table full: ");
        u64(l, v[0]);
        str(l, " calls of functions not counted; give np_stats_init a larger buffer)");
        emit(&o);
        break;
    case NP_REP_CALLTRACE_HEAD:
        str(l, "calltrace: ");
        str(l, v[0] ? "stack" : "log");
        str(l, " mode, thread ");
        u64(l, v[1]);
        str(l, ", lr=");
        hex(l, v[2]);
        str(l, ", ");
        u64(l, v[3]);
        str(l, " records, ");
        u64(l, v[4]);
        str(l, " lost");
        emit(&o);
        break;
    case NP_REP_CALLTRACE_CALL:
        for (uint64_t i = 0; i < 2 * (v[0] < 64 ? v[0] : 64); i++)
            put(l, ' ');
        function(&o, v[1], v[2]);
        str(l, ": lr=");
        hex(l, v[3]);
        if (n >= 9 && v[4]) /* the arguments (NP_CALLTRACE_ARGS) */
            for (int i = 0; i < 4; i++) {
                str(l, ", arg");
                put(l, (char)('1' + i));
                put(l, '=');
                hex(l, v[5 + i]);
            }
        emit(&o);
        break;
    case NP_REP_SECTION:
        section(&o, v);
        break;
    case NP_REP_SECTIONS_HW_MISSING:
        str(l, "(hardware events missing from ");
        u64(l, v[0]);
        str(l, v[0] == 1 ? " thread: its counters" : " threads: their counters");
        str(l, " could not be opened)");
        emit(&o);
        break;
    case NP_REP_SECTIONS_HW_OFF:
        str(l, "nanoprof: np_sections_init: hardware events unavailable (");
        text(&o, v[0], 1);
        str(l, "): sections measure time only");
        emit(&o);
        break;
    case NP_REP_BIN:
        u64(l, v[0]);
        str(l, " ");
        if (v[1])
            text(&o, v[1], 0);
        else
            str(l, "-");
        str(l, " ");
        u64(l, v[2]);
        if (v[3])
            str(l, " (saturated)");
        emit(&o);
        break;
    case NP_REP_BINS_OUT_OF_RANGE:
        note(&o, v[0], " ticks in bins out of range)");
        break;
    case NP_REP_BINS_LATE:
        note(&o, v[0], " ticks counted late: the timer signal was blocked or the program was not running)");
        break;
    case NP_REP_BLOCKS_HEAD:
        str(l, "blocks: ");
        u64(l, v[0]);
        str(l, " blocks, ");
        u64(l, v[1]);
        str(l, " executions, ");
        u64(l, v[2]);
        str(l, " lost, ");
        u64(l, v[3]);
        str(l, " slots");
        emit(&o);
        if (!v[3]) {
            str(l, "(no table: a target's runtime counts in the one the program gives, np_blocks_init_buf)");
            emit(&o);
        }
        break;
    case NP_REP_BLOCK: {
        char name[NAME_MAX_BYTES];
        uint64_t off = 0;
        if (names && names->function && names->function(names->ctx, v[0], name, sizeof name, &off)) {
            str(l, name);
            str(l, "+");
            hex(l, off);
        } else {
            hex(l, v[0]);
        }
        str(l, ": ");
        u64(l, v[1]);
        emit(&o);
        break;
    }
    case NP_REP_GPROF_HIST_SMALL:
        str(l, "nanoprof: np_gprof_init: hist_size under ");
        u64(l, v[0]);
        emit(&o);
        break;
    case NP_REP_GPROF_OUTSIDE:
        said(&o, "np_gprof_write", v[0], " samples outside the text");
        break;
    case NP_REP_GPROF_ARCS_LOST:
        said(&o, "np_gprof_write", v[0], " calls lost (arc table full)");
        break;
    case NP_REP_GPROF_SAMPLES_LOST:
        said(&o, "np_gprof_write", v[0], " samples lost (a bin at 65535)");
        break;
    }
    return 0;
}
