/* textfmt.c - durations, CSV, JSON and the progress bar (see textfmt.h). */
#include "textfmt.h"
#include "common/trace_format.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_WIDTH 40

static const struct unit {
    const char *name;
    double ns;
} units[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 } };

size_t np_put_decimal(char *buf, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10));
    for (size_t i = 0; i < n; i++)
        buf[i] = digits[n - 1 - i];
    return n;
}

char *np_format_duration(char *buf, size_t size, uint64_t ns)
{
    /* nanoseconds and microseconds are exact: written here, without
     * snprintf, as they are the most of a replay's lines */
    if (ns < 1000000 && size >= NP_DURATION_MAX) {
        size_t n = np_put_decimal(buf, ns < 1000 ? ns : ns / 1000);
        if (ns >= 1000) {
            buf[n++] = '.';
            buf[n++] = (char)('0' + ns / 100 % 10);
            buf[n++] = (char)('0' + ns / 10 % 10);
            buf[n++] = (char)('0' + ns % 10);
        }
        memcpy(buf + n, ns < 1000 ? " ns" : " us", 4);
        return buf;
    }
    if (ns < 1000) {
        snprintf(buf, size, "%u ns", (unsigned)ns);
        return buf;
    }
    const struct unit *u = &units[0];
    while (u->ns > 1 && (double)ns < u->ns)
        u++;
    if (u > units && (double)ns / u->ns >= 999.9995) /* would print as 1000.000 */
        u--;
    snprintf(buf, size, "%.3f %s", (double)ns / u->ns, u->name);
    return buf;
}

char *np_format_time(char *buf, size_t size, uint64_t value, enum np_time_unit unit)
{
    if (unit == NP_UNIT_NS)
        return np_format_duration(buf, size, value);
    static const char prefixes[] = "MGTPE";
    const char *name = unit == NP_UNIT_CYCLES ? "cyc" : "insn";
    if (value < 1000000) {
        snprintf(buf, size, "%u %s", (unsigned)value, name);
        return buf;
    }
    size_t p = 0;
    double scale = 1e6;
    /* the largest prefix the value reaches, or the next when it would
     * print as 1000.00 */
    while (p + 1 < sizeof prefixes - 1 && (double)value >= scale * 1e3 - scale * 5e-3) {
        p++;
        scale *= 1e3;
    }
    snprintf(buf, size, "%.2f %c%s", (double)value / scale, prefixes[p], name);
    return buf;
}

int np_parse_duration(const char *text, uint64_t *ns)
{
    char *end;
    if (!text || !*text || *text == '-' || *text == '+')
        return -1;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0)
        return -1;
    double scale = 1;
    if (*end) {
        const struct unit *u = units;
        while (u < units + sizeof units / sizeof *units && strcmp(end, u->name) != 0)
            u++;
        if (u == units + sizeof units / sizeof *units)
            return -1;
        scale = u->ns;
    }
    v = v * scale + 0.5;
    if (v >= 0x1p64)
        return -1;
    *ns = (uint64_t)v;
    return 0;
}

char *np_scrub_line(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
    return s;
}

char *np_format_line(char *buf, size_t size, const char *fmt, va_list ap)
{
    vsnprintf(buf, size, fmt, ap);
    return np_scrub_line(buf);
}

void np_text_field(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

void np_csv_field(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

/* The length of the valid UTF-8 sequence at S, or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x3f >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void np_json_string(FILE *out, const char *str)
{
    if (!str) {
        fputs("null", out);
        return;
    }
    const unsigned char *s = (const unsigned char *)str;
    putc('"', out);
    while (*s) {
        size_t n = utf8_len(s);
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if (*s < 0x20)
            fprintf(out, "\\u%04x", *s);
        else if (n)
            fwrite(s, 1, n, out);
        else
            fputs("\\ufffd", out);
        s += n ? n : 1;
    }
    putc('"', out);
}

size_t np_utf8_chars(const char *str)
{
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)str; *s; n++) {
        size_t len = utf8_len(s);
        s += len ? len : 1;
    }
    return n;
}

void np_xml_text(FILE *out, const char *str, size_t max)
{
    for (const unsigned char *s = (const unsigned char *)str; *s && max; max--) {
        size_t n = utf8_len(s);
        /* U+FFFE and U+FFFF (EF BF BE, EF BF BF): one replacement each */
        bool valid = n && !(n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe);
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if (*s < 0x20 || *s == 0x7f)
                putc('?', out);
            else if (valid)
                fwrite(s, 1, n, out);
            else
                fputs("\xef\xbf\xbd", out); /* U+FFFD */
        }
        s += n ? n : 1;
    }
}

void np_progress_init(struct np_progress *p, FILE *out, uint64_t total, uint64_t min_bytes)
{
    p->out = out;
    p->enabled = total >= min_bytes && isatty(fileno(out));
    p->shown = -1;
}

void np_progress_update(struct np_progress *p, uint64_t done, uint64_t total)
{
    if (!p->enabled || !total)
        return;
    int pct = done >= total ? 100 : (int)(done * 100.0 / (double)total);
    if (pct == p->shown)
        return;
    p->shown = pct;
    int fill = pct * PROGRESS_WIDTH / 100;
    fputs("\rreading [", p->out);
    for (int i = 0; i < PROGRESS_WIDTH; i++)
        putc(i < fill ? '#' : ' ', p->out);
    fprintf(p->out, "] %3d%%", pct);
    fflush(p->out);
}

void np_progress_done(struct np_progress *p)
{
    if (p->enabled && p->shown >= 0)
        fprintf(p->out, "\r%*s\r", PROGRESS_WIDTH + 16, "");
    p->shown = -1;
}

/* ---- argument and return values ------------------------------------------- */

size_t np_value_text(char *buf, size_t size, const struct np_value *v)
{
    char t[4 * NP_VALUE_STR_MAX + 32];
    size_t n = 0;
    switch (v->format) {
    case NP_VAL_INT:
        n = (size_t)snprintf(t, sizeof t, "%" PRId64, (int64_t)v->v);
        break;
    case NP_VAL_AUTO:
        if (!np_value_auto_hex(v->v))
            n = (size_t)snprintf(t, sizeof t, "%" PRId64,
                                 v->v >> 32 ? (int64_t)v->v : (int64_t)(int32_t)(uint32_t)v->v);
        else
            n = (size_t)snprintf(t, sizeof t, "0x%" PRIx64, v->v);
        break;
    case NP_VAL_UINT:
        n = (size_t)snprintf(t, sizeof t, "%" PRIu64, v->v);
        break;
    case NP_VAL_HEX:
        n = (size_t)snprintf(t, sizeof t, "0x%" PRIx64, v->v);
        break;
    case NP_VAL_OCT:
        n = (size_t)snprintf(t, sizeof t, "0%" PRIo64, v->v);
        break;
    case NP_VAL_PTR:
        n = v->v ? (size_t)snprintf(t, sizeof t, "0x%" PRIx64, v->v) : (size_t)snprintf(t, sizeof t, "NULL");
        break;
    case NP_VAL_CHAR:
    case NP_VAL_STR: {
        char q = v->format == NP_VAL_CHAR ? '\'' : '"';
        char one = (char)v->v;
        const char *s = v->format == NP_VAL_CHAR ? &one : v->str;
        size_t len = v->format == NP_VAL_CHAR ? 1 : v->len;
        t[n++] = q;
        for (size_t i = 0; i < len && s; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == (unsigned char)q || c == '\\')
                t[n++] = '\\', t[n++] = (char)c;
            else if (c >= 0x20 && c < 0x7f)
                t[n++] = (char)c;
            else
                n += (size_t)snprintf(t + n, sizeof t - n, "\\x%02x", c);
        }
        t[n++] = q;
        t[n] = 0;
        break;
    }
    default:
        n = (size_t)snprintf(t, sizeof t, "?");
        break;
    }
    if (!size)
        return 0;
    if (n >= size)
        n = size - 1;
    memcpy(buf, t, n);
    buf[n] = 0;
    return n;
}

size_t np_values_text(char *buf, size_t size, const struct np_value *v, unsigned n)
{
    size_t len = 0;
    if (size)
        buf[0] = 0;
    for (unsigned i = 0; i < n && len + 1 < size; i++) {
        if (i && len + 3 < size) {
            memcpy(buf + len, ", ", 3);
            len += 2;
        }
        len += np_value_text(buf + len, size - len, &v[i]);
    }
    return len;
}
