/* import.c - `nanoprof import`: a trace recorded on a target
 * (nanoprof/trace.h), captured from its output (semihosting's stdout, a
 * UART) with whatever else the firmware wrote around and between its
 * chunks, turned into a trace directory every view reads, its MODULE
 * pointing at the firmware's ELF, whose build-id must be the trace's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "import.h"
#include "options.h"
#include "trace_dir.h"
#include "common/debug_file.h"
#include "common/elf_symtab.h"
#include "common/byte_cursor.h"
#include "common/trace_format.h"

static const char usage_text[] =
    "usage: nanoprof import [options] CAPTURE --elf FIRMWARE.elf\n"
    "\n"
    "Imports the trace a Cortex-M firmware recorded with np_trace_init\n"
    "(docs/porting.md, \"Recording a trace on the target\"), from CAPTURE, the\n"
    "bytes its output writer sent (semihosting's stdout, a UART's capture).\n"
    "The firmware's own output before, after and between the trace's chunks\n"
    "is skipped. The calls are named from FIRMWARE.elf's symbols; its build-id\n"
    "must be the one the firmware recorded (link with -Wl,--build-id). The\n"
    "result is a trace directory that report, tree, graph, replay, flame and\n"
    "dump read, its times in cycles (give them --clock=HZ for time).\n"
    "\n"
    "options:\n"
    "      --elf FILE      the firmware's ELF (required)\n"
    "  -o, --output PATH   the trace directory (default nanoprof.data); an\n"
    "                      existing one is renamed PATH.old\n"
    "      --help          print this help and exit\n"
    "\n"
    "A capture cut short is imported up to its last whole chunk, and said;\n"
    "when there is no trace in it, it is corrupt, or the ELF is not the\n"
    "firmware's, one line says so and nothing is written.\n"
    "\n"
    "exit status: 0 imported, 1 nothing could be imported, 2 usage error.\n";

enum { OPT_ELF = NP_CLI_OWN };

/* The command whose messages these are: import, or a view given --elf. */
static const char *cmd_name = "import";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nanoprof %s: ", cmd_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* ---- the capture --------------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            errno = ENOMEM;
        }
        buf = bigger;
        cap *= 2;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The ENTRY addresses seen, for the NP_ENTER names (name_chunks). */
struct addrs {
    uint64_t *a;
    size_t n, cap;
};

static bool add_addr(struct addrs *s, uint64_t addr)
{
    if (s->n && s->a[s->n - 1] == addr)
        return true;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        uint64_t *a = realloc(s->a, cap * sizeof *a);
        if (!a)
            return false;
        s->a = a;
        s->cap = cap;
    }
    s->a[s->n++] = addr;
    return true;
}

/* An EVENTS stream of COUNT records, exactly [p, end); its ENTRY
 * addresses into ENTRIES. */
static bool events_ok(const uint8_t *p, const uint8_t *end, uint32_t count, struct addrs *entries)
{
    struct np_cursor c = { p, end, false };
    uint64_t addr = 0;
    for (uint32_t i = 0; i < count && !c.bad; i++) {
        uint64_t v, x, n = 0;
        if (!np_cursor_varint(&c, &v))
            break;
        switch (v & 7) {
        case NP_EV_EXIT:
            break;
        case NP_EV_ENTRY:
            if (np_cursor_varint(&c, &x)) {
                addr += (uint64_t)np_unzigzag(x);
                if (!add_addr(entries, addr))
                    c.bad = true;
            }
            break;
        case NP_EV_LOST:
        case NP_EV_SWITCH:
        case NP_EV_RESYNC:
        case NP_EV_COUNT:
            np_cursor_varint(&c, &x);
            break;
        case NP_EV_SAMPLE:
            if (np_cursor_varint(&c, &n) && (n == 0 || n > NP_SAMPLE_MAX_FRAMES))
                c.bad = true;
            n += 2; /* overrun, skipped, then the frames */
            for (uint64_t k = 0; k < n && np_cursor_varint(&c, &x); k++)
                ;
            break;
        default:
            c.bad = true;
        }
    }
    return !c.bad && c.p == c.end;
}

struct np_import {
    const uint8_t *cap;
    size_t len;
    const char *capture;      /* its name, for messages */
    size_t trace_at;          /* the file header's offset */
    unsigned version, hsize;  /* the trace's format version; its chunk headers' bytes */
    uint64_t budget;          /* bytes the search for chunks may still checksum */
    bool spent;               /* it is spent: no more chunks are found */
    size_t damaged, damaged_bytes; /* stretches of damage, copied for the reader to skip */
    /* what was found */
    size_t chunks, skipped, events_chunks;
    uint64_t events, lost;
    struct addrs tids;        /* of THREAD chunks: a thread named again has another */
    uint32_t threads;         /* the distinct ones (count_threads) */
    bool has_info, has_module, has_end;
    struct addrs entries;     /* the calls' addresses */
    size_t names_at;          /* where NAME chunks go: after MODULE */
    const uint8_t *build_id;
    size_t build_id_len;
    size_t cut_at, cut_have, cut_want; /* a chunk the capture cuts (cut_want 0: none) */
    size_t next_trace;                 /* another trace's offset, or 0 */
    /* the file to write: the header and every chunk, MODULE's path set */
    uint8_t *out;
    size_t out_len, out_cap;
    uint8_t *names;           /* the NAME chunks, which go at names_at */
    size_t names_len;
};

static bool append(struct np_import *im, const void *p, size_t n)
{
    if (im->out_len + n > im->out_cap) {
        size_t cap = im->out_cap ? im->out_cap : 1 << 16;
        while (cap < im->out_len + n)
            cap *= 2;
        uint8_t *bigger = realloc(im->out, cap);
        if (!bigger)
            return false;
        im->out = bigger;
        im->out_cap = cap;
    }
    memcpy(im->out + im->out_len, p, n);
    im->out_len += n;
    return true;
}

/* The header of the chunk of TYPE, N bytes in all, at P in the trace's
 * version: its type, its length, its checksum (version 2). */
static void chunk_done(const struct np_import *im, uint8_t *p, uint32_t type, size_t n)
{
    np_trace_chunk_header(p, type, (uint32_t)(n - im->hsize));
    if (im->hsize == NP_TRACE_CHUNK_HEADER)
        np_trace_chunk_seal(p);
}

/* The chunk of TYPE whose payload is P (LEN bytes), at offset OFF of the
 * capture: checked, and kept. Returns 0, or 1 after the error line. */
static int take_chunk(struct np_import *im, uint32_t type, const uint8_t *p, uint32_t len, size_t off,
                      const char *elf_path)
{
    struct np_cursor c = { p, p + len, false };
    const uint8_t *s;
    size_t n;
    if (!im->has_info && type != NP_CHUNK_INFO)
        return fail("corrupt trace: chunk %" PRIu32 " at offset %zu before its INFO chunk", type, off);
    switch (type) {
    case NP_CHUNK_INFO:
        if (im->has_info)
            return fail("corrupt trace: a second INFO chunk at offset %zu", off);
        (void)np_cursor_skip(&c, 4 + 4 + 8 + 8 + 8);
        np_cursor_str(&c, &s);
        n = (size_t)np_cursor_take(&c, 2);
        for (size_t i = 0; i < n && !c.bad; i++)
            np_cursor_str(&c, &s);
        im->has_info = true;
        break;
    case NP_CHUNK_MODULE: {
        uint64_t bias = np_cursor_take(&c, 8), start = np_cursor_take(&c, 8), end = np_cursor_take(&c, 8);
        im->build_id_len = np_cursor_str(&c, &im->build_id);
        np_cursor_str(&c, &s);
        if (c.bad || c.p != c.end || start > end)
            break;
        if (im->has_module)
            return fail("corrupt trace: a second MODULE chunk at offset %zu (a firmware is one module)", off);
        im->has_module = true;
        /* the same chunk, its path the ELF's */
        size_t plen = strlen(elf_path);
        if (plen > 0xffff)
            return fail("%s: path too long", elf_path);
        uint8_t h[NP_TRACE_CHUNK_HEADER + 26], l[2];
        uint8_t *f = h + im->hsize; /* the fields */
        np_put_u64(f, bias);
        np_put_u64(f + 8, start);
        np_put_u64(f + 16, end);
        np_put_u16(f + 24, (uint16_t)im->build_id_len);
        np_put_u16(l, (uint16_t)plen);
        size_t at = im->out_len;
        if (!append(im, h, im->hsize + 26) || !append(im, im->build_id, im->build_id_len) || !append(im, l, 2) ||
            !append(im, elf_path, plen))
            return fail("out of memory");
        chunk_done(im, im->out + at, NP_CHUNK_MODULE, im->out_len - at);
        im->names_at = im->out_len;
        im->chunks++;
        return 0;
    }
    case NP_CHUNK_THREAD: {
        uint32_t tid = (uint32_t)np_cursor_take(&c, 4);
        np_cursor_str(&c, &s);
        if (!c.bad && !add_addr(&im->tids, tid))
            return fail("out of memory");
        break;
    }
    case NP_CHUNK_EVENTS: {
        (void)np_cursor_skip(&c, 4 + 8);
        uint32_t count = (uint32_t)np_cursor_take(&c, 4);
        unsigned comp = (unsigned)np_cursor_take(&c, 1);
        uint32_t decoded = (uint32_t)np_cursor_take(&c, 4);
        if (c.bad)
            break;
        if (comp != NP_COMPRESS_NONE)
            return fail("corrupt trace: EVENTS chunk at offset %zu is compressed (a target writes none)", off);
        if (decoded != (size_t)(c.end - c.p) || !events_ok(c.p, c.end, count, &im->entries))
            return fail("corrupt trace: EVENTS chunk at offset %zu does not hold its %" PRIu32 " records", off,
                        count);
        c.p = c.end;
        im->events += count;
        im->events_chunks++;
        break;
    }
    case NP_CHUNK_END:
        np_cursor_take(&c, 8);
        im->lost = np_cursor_take(&c, 8);
        np_cursor_take(&c, 8);
        im->has_end = true;
        break;
    case NP_CHUNK_NAME:
        np_cursor_take(&c, 8);
        if (np_cursor_str(&c, &s) > NP_TRACE_NAME_MAX)
            c.bad = true;
        break;
    default: /* the target writes no other chunk: a reader skips it */
        c.p = c.end;
        break;
    }
    if (c.bad || c.p != c.end)
        return fail("corrupt trace: chunk %" PRIu32 " at offset %zu (%" PRIu32 " bytes) does not hold its fields",
                    type, off, len);
    if (!append(im, p - im->hsize, im->hsize + (size_t)len))
        return fail("out of memory");
    im->chunks++;
    return 0;
}

static bool is_magic(const uint8_t *p, size_t left)
{
    return left >= NP_TRACE_MAGIC_LEN && memcmp(p, NP_TRACE_MAGIC, NP_TRACE_MAGIC_LEN) == 0;
}

/* Where a chunk may start: a type the format knows (its three high bytes
 * zero, which the firmware's text never has). */
static bool chunk_start(const uint8_t *p, size_t left)
{
    return left >= 4 && np_trace_chunk_name(np_get_u32(p));
}

#define SEARCH_SLACK (64u << 20) /* bytes the search may checksum beyond 4 times the capture's */

/* What comes next in the capture, from where the walk is. */
enum next_kind { NEXT_CHUNK, NEXT_TRACE, NEXT_NONE, NEXT_CUT, NEXT_TOO_LONG };
struct next {
    enum next_kind kind;
    size_t at;                /* where (NEXT_NONE: the capture's end) */
    uint32_t type, len;       /* the chunk's */
};

/* np_trace_chunk_at for the chunk at AT, its checksumming paid from the
 * budget: once that is spent (hostile input), nothing is a chunk any
 * more (NP_CHUNK_CUT_HEADER, and im->spent). */
static enum np_chunk_check chunk_at(struct np_import *im, size_t at, uint32_t *type, uint32_t *len)
{
    uint64_t left = im->len - at;
    if (im->version > NP_TRACE_VERSION_V1 && left >= im->hsize && np_get_u32(im->cap + at + 4) <= left - im->hsize) {
        uint32_t claim = np_get_u32(im->cap + at + 4);
        if (im->spent || claim > im->budget) {
            im->spent = true;
            return NP_CHUNK_CUT_HEADER;
        }
        im->budget -= claim;
    }
    return np_trace_chunk_at(im->cap + at, left, im->version, type, len);
}

/* Whether a whole chunk, its checksum good, starts at AT (or the capture
 * ends there). */
static bool good_at(struct np_import *im, size_t at)
{
    uint32_t type, len;
    return at == im->len ||
           (chunk_start(im->cap + at, im->len - at) && chunk_at(im, at, &type, &len) == NP_CHUNK_WHOLE);
}

/* The first thing from AT on: a whole chunk (of version 2: its checksum
 * good), another trace's header, or nothing. Version 1 has no checksum:
 * the first place a known chunk type starts is a chunk, or where the
 * capture is cut, or a chunk too long (corrupt). Version 2 looks past
 * damage for the next whole chunk: a chunk the capture ends inside is a
 * cut only when none follows. */
static struct next find_next(struct np_import *im, size_t at)
{
    bool checked = im->version > NP_TRACE_VERSION_V1;
    struct next cut = { NEXT_NONE, im->len, 0, 0 };
    for (size_t p = at; p < im->len; p++) {
        if (is_magic(im->cap + p, im->len - p))
            return (struct next){ NEXT_TRACE, p, 0, 0 };
        if (!chunk_start(im->cap + p, im->len - p))
            continue;
        uint32_t type = 0, len = 0;
        enum np_chunk_check k = chunk_at(im, p, &type, &len);
        if (im->spent)
            break;
        if (k == NP_CHUNK_WHOLE)
            return (struct next){ NEXT_CHUNK, p, type, len };
        if (!checked)
            return (struct next){ k == NP_CHUNK_TOO_LONG ? NEXT_TOO_LONG : NEXT_CUT, p, type, len };
        if ((k == NP_CHUNK_CUT || k == NP_CHUNK_CUT_HEADER) && cut.kind == NEXT_NONE)
            cut = (struct next){ NEXT_CUT, p, type, k == NP_CHUNK_CUT ? len : 0 };
        /* damaged, its length good when a whole chunk follows it: past it */
        if (k == NP_CHUNK_DAMAGED && p + im->hsize + len < im->len && good_at(im, p + im->hsize + len))
            p += im->hsize + len - 1;
    }
    return cut;
}

/* The bytes [FROM, TO) between the trace's chunks: the firmware's text,
 * skipped; or, holding a NUL (which no text has: a chunk's header does),
 * damage: said, counted, and copied, so that the reader finds it where
 * it was, skips it and closes the calls it may have held. Text before
 * the damage is left out, and text after a damaged chunk whose length
 * ends where that text begins. 0, or 1 after the error line. */
static int between(struct np_import *im, size_t from, size_t to)
{
    const uint8_t *p = im->cap;
    if (im->version == NP_TRACE_VERSION_V1 || !memchr(p + from, 0, to - from)) {
        im->skipped += to - from;
        return 0;
    }
    size_t at = from, end = to;
    while (at < to && (p[at] == '\n' || p[at] == '\r' || (p[at] >= ' ' && p[at] < 0x7f)))
        at++;
    uint32_t type, len;
    char what[96];
    const char *name = chunk_start(p + at, to - at) ? np_trace_chunk_name(np_get_u32(p + at)) : NULL;
    enum np_chunk_check k = name ? chunk_at(im, at, &type, &len) : NP_CHUNK_CUT;
    if (!name)
        snprintf(what, sizeof what, "bytes that are neither a chunk nor text");
    else if (k == NP_CHUNK_DAMAGED)
        snprintf(what, sizeof what, "%s chunk (checksum mismatch)", name);
    else
        snprintf(what, sizeof what, "%s chunk (its length is wrong)", name);
    if (k == NP_CHUNK_DAMAGED && at + im->hsize + len <= to && !memchr(p + at + im->hsize + len, 0,
                                                                       to - (at + im->hsize + len)))
        end = at + im->hsize + len;
    im->skipped += (at - from) + (to - end);
    fprintf(stderr, "nanoprof %s: warning: %s: offset %zu: damaged %s: skipped %zu bytes\n", cmd_name, im->capture,
            at, what, end - at);
    im->damaged++;
    im->damaged_bytes += end - at;
    return append(im, p + at, end - at) ? 0 : fail("out of memory");
}

/* Finds the trace in the capture and walks its chunks. */
static int walk(struct np_import *im, const char *capture, const char *elf_path)
{
    const uint8_t *cap = im->cap;
    size_t len = im->len, at = 0;
    while (at < len && !is_magic(cap + at, len - at))
        at++;
    if (at == len)
        return fail("%s: no trace in it (no NPTRACE header: did the firmware call np_trace_init?)", capture);
    if (len - at < NP_TRACE_HEADER_SIZE)
        return fail("%s: the capture ends inside the trace's header", capture);
    uint16_t version = np_get_u16(cap + at + 8), head = np_get_u16(cap + at + 10);
    if (version < NP_TRACE_VERSION_V1 || version > NP_TRACE_VERSION)
        return fail("%s: trace format version %u, this nanoprof reads versions %d to %d", capture, version,
                    NP_TRACE_VERSION_V1, NP_TRACE_VERSION);
    if (version > NP_TRACE_VERSION_V1 && !np_trace_header_sum_ok(cap + at))
        return fail("corrupt trace: damaged header (checksum mismatch) at offset %zu", at);
    if (head < NP_TRACE_HEADER_SIZE || head > len - at)
        return fail("corrupt trace: header size %u at offset %zu", head, at);
    im->trace_at = at;
    im->version = version;
    im->hsize = np_trace_chunk_header_size(version);
    im->budget = 4 * (uint64_t)len + SEARCH_SLACK;
    uint8_t fh[NP_TRACE_HEADER_SIZE] = { 0 };
    if (version == NP_TRACE_VERSION_V1) {
        memcpy(fh, cap + at, 12); /* version 1's: flags 0 */
        np_put_u16(fh + 10, NP_TRACE_HEADER_SIZE);
    } else {
        np_trace_file_header(fh);
    }
    if (!append(im, fh, sizeof fh))
        return fail("out of memory");
    at += head;
    for (;;) {
        struct next n = find_next(im, at);
        if (between(im, at, n.at))
            return 1;
        if (n.kind == NEXT_TRACE)
            im->next_trace = n.at;
        if (n.kind == NEXT_TOO_LONG)
            return fail("corrupt trace: chunk %" PRIu32 " at offset %zu claims %" PRIu32 " bytes", n.type, n.at,
                        n.len);
        if (n.kind == NEXT_CUT) {
            im->cut_at = n.at;
            im->cut_have = len - n.at;
            im->cut_want = im->hsize + (size_t)n.len;
            return 0;
        }
        if (n.kind != NEXT_CHUNK)
            break;
        if (take_chunk(im, n.type, cap + n.at + im->hsize, n.len, n.at, elf_path))
            return 1;
        at = n.at + im->hsize + (size_t)n.len;
        if (im->has_end) { /* the trace ends: the rest is the firmware's */
            while (at < len && !is_magic(cap + at, len - at))
                at++;
            if (at < len)
                im->next_trace = at;
            break;
        }
    }
    if (!im->has_info)
        return fail("%s: the trace at offset %zu has no INFO chunk", capture, im->trace_at);
    if (!im->has_module)
        return fail("%s: the trace at offset %zu has no MODULE chunk (the firmware's build-id)", capture,
                    im->trace_at);
    return 0;
}

/* ---- the ELF --------------------------------------------------------------------- */

static void hex(char *out, const uint8_t *id, size_t n)
{
    for (size_t i = 0; i < n && i < 64; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
    if (!n)
        strcpy(out, "none");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The string at ADDR in ELF's loaded bytes (a firmware's constants may
 * share .text: the caller knows ADDR is in no function), at most
 * NP_TRACE_NAME_MAX bytes, into OUT; its length, 0 when there is none. */
static size_t string_at(Elf *elf, uint64_t addr, char *out)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
            sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr || addr >= sh.sh_addr + sh.sh_size)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || addr - sh.sh_addr >= d->d_size)
            return 0;
        const char *p = (const char *)d->d_buf + (addr - sh.sh_addr);
        size_t left = d->d_size - (addr - sh.sh_addr), n = 0;
        while (n < left && n < NP_TRACE_NAME_MAX && p[n] >= ' ' && p[n] < 0x7f)
            n++;
        if (n == 0 || n == left || p[n] != 0)
            return 0; /* not a C string */
        memcpy(out, p, n);
        return n;
    }
    return 0;
}

/* The distinct thread ids of the THREAD chunks into im->threads. */
static void count_threads(struct np_import *im)
{
    struct addrs *t = &im->tids;
    if (t->n)
        qsort(t->a, t->n, sizeof *t->a, cmp_u64);
    im->threads = 0;
    for (size_t i = 0; i < t->n; i++)
        im->threads += !i || t->a[i] != t->a[i - 1];
}

/* NAME chunks for the calls that are no function of ELF's but a string:
 * an NP_ENTER name (the target records the string's address). */
static int name_chunks(struct np_import *im, Elf *elf, uint8_t **out, size_t *len)
{
    struct np_elf_funcs funcs;
    *out = NULL;
    *len = 0;
    if (np_elf_funcs_read(elf, NULL, &funcs) < 0)
        return fail("out of memory");
    struct addrs *e = &im->entries;
    if (e->n)
        qsort(e->a, e->n, sizeof *e->a, cmp_u64);
    size_t cap = 0;
    for (size_t i = 0; i < e->n; i++) {
        char name[NP_TRACE_NAME_MAX];
        size_t n;
        if ((i && e->a[i] == e->a[i - 1]) || np_elf_funcs_find(&funcs, e->a[i]) >= 0 ||
            !(n = string_at(elf, e->a[i], name)))
            continue;
        size_t need = *len + im->hsize + 8 + 2 + n;
        if (need > cap) {
            cap = need * 2;
            uint8_t *bigger = realloc(*out, cap);
            if (!bigger) {
                np_elf_funcs_free(&funcs);
                return fail("out of memory");
            }
            *out = bigger;
        }
        uint8_t *p = *out + *len, *f = p + im->hsize;
        np_put_u64(f, e->a[i]);
        np_put_u16(f + 8, (uint16_t)n);
        memcpy(f + 10, name, n);
        chunk_done(im, p, NP_CHUNK_NAME, need - *len);
        *len = need;
    }
    np_elf_funcs_free(&funcs);
    return 0;
}

/* The ELF's build-id against the trace's; the NAME chunks it gives. */
static int check_elf(struct np_import *im, const char *path, uint8_t **names, size_t *names_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail("%s: %s", path, strerror(errno));
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        if (elf)
            elf_end(elf);
        close(fd);
        return fail("%s: not an ELF file", path);
    }
    uint8_t id[NP_BUILD_ID_MAX];
    size_t n = np_elf_build_id(elf, id, sizeof id);
    char want[2 * 64 + 1], have[2 * 64 + 1];
    hex(want, im->build_id, im->build_id_len);
    hex(have, id, n);
    int rc = 0;
    if (!im->build_id_len)
        fprintf(stderr, "nanoprof %s: warning: the firmware recorded no build-id (link it with "
                        "-Wl,--build-id): %s is not checked\n", cmd_name, path);
    else if (n != im->build_id_len || memcmp(id, im->build_id, n) != 0)
        rc = fail("%s is not the firmware that recorded the trace: its build-id is %s, the trace's %s", path,
                  have, want);
    if (!rc)
        rc = name_chunks(im, elf, names, names_len);
    elf_end(elf);
    close(fd);
    return rc;
}

/* ---- the import ---------------------------------------------------------------------- */

void np_import_free(struct np_import *im)
{
    if (!im)
        return;
    free(im->names);
    free(im->entries.a);
    free(im->tids.a);
    free(im->out);
    free((void *)im->cap);
    free(im);
}

struct np_import *np_import_read(const char *cmd, const char *capture, const char *elf)
{
    cmd_name = cmd;
    char elf_abs[PATH_MAX];
    if (!realpath(elf, elf_abs)) {
        fail("%s: %s", elf, strerror(errno));
        return NULL;
    }
    struct np_import *im = calloc(1, sizeof *im);
    if (!im) {
        fail("out of memory");
        return NULL;
    }
    im->capture = capture;
    im->cap = read_all(capture, &im->len);
    if (!im->cap) {
        fail("%s: %s", capture, strerror(errno));
        np_import_free(im);
        return NULL;
    }
    if (walk(im, capture, elf_abs) || check_elf(im, elf_abs, &im->names, &im->names_len)) {
        np_import_free(im);
        return NULL;
    }
    return im;
}

int np_import_write(struct np_import *im, const char *file, const char *said_as)
{
    FILE *f = fopen(file, "wb");
    /* the NAME chunks after MODULE, before the calls */
    bool ok = f && fwrite(im->out, 1, im->names_at, f) == im->names_at &&
              (!im->names_len || fwrite(im->names, 1, im->names_len, f) == im->names_len) &&
              fwrite(im->out + im->names_at, 1, im->out_len - im->names_at, f) == im->out_len - im->names_at;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        return fail("%s: %s", file, strerror(errno));
    count_threads(im);
    if (said_as && im->damaged)
        fprintf(stderr, "nanoprof %s: %" PRIu64 " events of %" PRIu32 " thread%s, %" PRIu64 " lost, %zu damaged "
                        "chunk%s skipped (%zu bytes), into %s\n",
                cmd_name, im->events, im->threads, im->threads == 1 ? "" : "s", im->lost, im->damaged,
                im->damaged == 1 ? "" : "s", im->damaged_bytes, said_as);
    else if (said_as)
        fprintf(stderr, "nanoprof %s: %" PRIu64 " events of %" PRIu32 " thread%s, %" PRIu64 " lost, into %s\n",
                cmd_name, im->events, im->threads, im->threads == 1 ? "" : "s", im->lost, said_as);
    if (im->cut_want)
        fprintf(stderr, "nanoprof %s: the capture is cut: it ends %zu bytes into the %zu-byte chunk at offset "
                        "%zu, with no END; the trace holds the %zu whole chunks before it\n",
                cmd_name, im->cut_have, im->cut_want, im->cut_at, im->chunks);
    else if (!im->has_end)
        fprintf(stderr, "nanoprof %s: the trace has no END chunk (%s): its lost events are not known\n", cmd_name,
                im->damaged ? "the firmware did not call np_trace_stop, or its END was damaged"
                            : "the firmware did not call np_trace_stop");
    if (im->next_trace)
        fprintf(stderr, "nanoprof %s: another trace starts at offset %zu: not imported\n", cmd_name,
                im->next_trace);
    return 0;
}

/* ---- the command ------------------------------------------------------------------- */

static const struct np_cli_option options[] = {
    { "output", 'o', NP_CLI_VALUE, 'o' },
    { "elf", 0, NP_CLI_VALUE, OPT_ELF },
    { NULL, 0, 0, 0 },
};

struct import_cmd {
    const char *out, *elf;
};

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

static int option(void *ctx, int id, const char *value)
{
    struct import_cmd *c = ctx;
    *(id == 'o' ? &c->out : &c->elf) = value;
    return 0;
}

int np_cmd_import(int argc, char **argv)
{
    struct import_cmd c = { NP_TRACE_DEFAULT_PATH, NULL };
    struct np_cli cli = { "import", options, NP_CLI_PERMUTE, usage, option, NULL };
    int first, rc = np_cli_parse(&cli, &c, argc, argv, &first);
    if (rc)
        return rc == NP_CLI_HELP ? 0 : rc;
    if (first >= argc)
        return np_cli_usage_error("import", "no capture given");
    if (first + 1 < argc)
        return np_cli_usage_error("import", "one capture at a time");
    if (!c.elf)
        return np_cli_usage_error("import", "--elf FIRMWARE.elf is required: the calls are named from it");
    const char *out = c.out, *elf = c.elf;
    struct np_import *im = np_import_read("import", argv[first], elf);
    if (!im)
        return 1;
    char dir[PATH_MAX], file[PATH_MAX + 16];
    rc = 1;
    if (np_trace_dir_prepare("import", out, dir, sizeof dir)) {
        snprintf(file, sizeof file, "%s/firmware%s", dir, NP_TRACE_FILE_SUFFIX);
        rc = np_import_write(im, file, out);
    }
    np_import_free(im);
    return rc;
}
