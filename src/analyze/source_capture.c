/* source_capture.c - a target's capture as a source of events
 * (source_capture.h): the trace found among the firmware's output, its
 * chunks listed for the trace reader (np_trace_listed), the ELF checked,
 * and the events told through a sink that names what the ELF names.
 *
 * The walk reads the capture once from its trace header on. At each place
 * a known chunk type starts it checks the chunk's bounds and checksum;
 * between chunks, bytes without a NUL are the firmware's text (skipped),
 * others damage. Checksumming where no chunk is costs a budget of a few
 * times the capture's bytes, so that no input makes it crawl. Nothing is
 * copied: the reader decodes the chunks where they are. */
#define _GNU_SOURCE
#include "source_capture.h"
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/byte_cursor.h"
#include "common/debug_file.h"
#include "common/elf_symtab.h"
#include "common/report_format.h"
#include "common/trace_format.h"
#include "containers.h"
#include "flight_image.h"
#include "report_names.h"
#include "sinks.h"
#include "textfmt.h"
#include "trace_read.h"

#define SEARCH_SLACK (64u << 20) /* bytes the search may checksum beyond 4 times the capture's */
#define ENTRY_SETS 2048          /* ENTRY addresses known checked without a hash: sets of 2 (a power of 2) */

struct np_capture {
    const char *name;            /* the capture's path, for messages */
    uint8_t *cap;
    size_t len;
    size_t mapped;               /* its bytes when mapped (munmap), else 0 (free) */
    unsigned flags;
    const struct np_trace_hooks *hooks;
    struct np_trace_summary *sum;
    struct np_trace_listed *listed;
    /* the walk */
    size_t trace_at;             /* the file header's offset */
    unsigned version, hsize;     /* the trace's format version; its chunk headers' bytes */
    uint64_t budget;             /* bytes the search for chunks may still checksum */
    bool spent;                  /* it is spent: no more chunks are found */
    size_t chunks;               /* whole chunks listed */
    bool has_info, has_module, has_end;
    bool has_events;             /* THREAD or EVENTS chunks: a trace, not only reports */
    size_t *report_at;           /* the REPORT chunks' offsets, in order */
    size_t nreports, reports_cap;
    size_t reports_told;         /* of them, read so far */
    const uint8_t *build_id;
    size_t build_id_len;
    size_t cut_at, cut_have, cut_want; /* a chunk the capture cuts (cut_want 0: none) */
    size_t next_trace;           /* another trace's offset, or 0 */
    size_t after_end;            /* a whole chunk's after END (before another trace), or 0 */
    /* the ELF */
    char *elf_path;              /* absolute, as the module's path */
    int fd;
    Elf *elf;
    struct np_elf_funcs funcs;
    struct np_elf_names names;   /* what reports name */
    /* the read */
    const struct np_event_sink *out;
    struct np_hmap seen;         /* ENTRY addresses checked for a NAME */
    uint64_t recent[ENTRY_SETS][2]; /* some of them, by their bits mixed:
                                       a run's calls repeat a few (0: none) */
    struct np_capture_found found;
    struct np_hmap tids;         /* the THREAD chunks' distinct ids (found.threads
                                    counts them): a thread named again has
                                    another chunk */
    bool is_flight;              /* a flight recorder's RAM image, made a capture */
    struct np_flight_info flight;
    char ending[1024];
    char msg[NP_TRACE_MSG_MAX];
};

/* ---- messages ------------------------------------------------------------------- */

/* The line FMT says, to the diag hook at LEVEL (and, for an error, into
 * the summary with STATUS). Returns -1. */
static int say(struct np_capture *c, enum np_diag_level level, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int say(struct np_capture *c, enum np_diag_level level, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    np_scrub_line(c->msg);
    if (c->hooks && c->hooks->diag)
        c->hooks->diag(c->hooks->ctx, level, c->msg);
    if (level == NP_DIAG_ERROR && status > c->sum->status) {
        c->sum->status = status;
        snprintf(c->sum->message, sizeof c->sum->message, "%s", c->msg);
    }
    return -1;
}

#define FAIL(c, status, ...) say(c, NP_DIAG_ERROR, status, __VA_ARGS__)

/* ---- the capture ----------------------------------------------------------------- */

/* PATH's bytes at c->cap: a regular file mapped (read where it is, no
 * copy), anything else read. 0, or -1 after the line. */
static int read_capture(struct np_capture *c, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return FAIL(c, NP_TRACE_ENOENT, "%s: %s", path, strerror(e));
    }
    c->sum->files = 1;
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            c->cap = m;
            c->len = c->mapped = (size_t)st.st_size;
            return 0;
        }
    }
    /* a pipe's size is not known: it grows as it comes */
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (buf && !err) {
        if (n == cap) {
            uint8_t *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!bigger) {
                err = ENOMEM;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            err = errno;
        else if (got == 0)
            break;
        else
            n += (size_t)got;
    }
    close(fd);
    if (err) {
        free(buf);
        return FAIL(c, err == ENOMEM ? NP_TRACE_ENOMEM : NP_TRACE_EIO, "%s: %s", path, strerror(err));
    }
    c->cap = buf;
    c->len = n;
    return 0;
}

/* A flight recorder's RAM image in place of the capture, as the capture
 * it stands for (flight_image.c). 0, or -1 after the line. */
static int flight_image(struct np_capture *c)
{
    uint8_t *cap;
    size_t len;
    char err[512];
    int k = np_flight_capture(c->cap, c->len, &cap, &len, &c->flight, err, sizeof err);
    if (k < 0)
        return FAIL(c, strcmp(err, "out of memory") ? NP_TRACE_ECORRUPT : NP_TRACE_ENOMEM, "%s: %s", c->name, err);
    if (k == 0)
        return 0;
    if (c->mapped)
        munmap(c->cap, c->mapped);
    else
        free(c->cap);
    c->cap = cap;
    c->len = len;
    c->mapped = 0;
    c->is_flight = true;
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
    return left >= 4 && p[1] == 0 && p[2] == 0 && p[3] == 0 && np_trace_chunk_name(p[0]);
}

/* What comes next in the capture, from where the walk is. */
enum next_kind { NEXT_CHUNK, NEXT_TRACE, NEXT_NONE, NEXT_CUT, NEXT_TOO_LONG };
struct next {
    enum next_kind kind;
    size_t at;                /* where (NEXT_NONE: the capture's end) */
    uint32_t type, len;       /* the chunk's */
};

/* np_trace_chunk_at for the chunk at AT, its checksumming paid from the
 * budget: once that is spent (hostile input), nothing is a chunk any
 * more (NP_CHUNK_CUT_HEADER, and c->spent). */
static enum np_chunk_check chunk_at(struct np_capture *c, size_t at, uint32_t *type, uint32_t *len)
{
    uint64_t left = c->len - at;
    if (c->version > NP_TRACE_VERSION_V1 && left >= c->hsize && np_get_u32(c->cap + at + 4) <= left - c->hsize) {
        uint32_t claim = np_get_u32(c->cap + at + 4);
        if (c->spent || claim > c->budget) {
            c->spent = true;
            return NP_CHUNK_CUT_HEADER;
        }
        c->budget -= claim;
    }
    return np_trace_chunk_at(c->cap + at, left, c->version, type, len);
}

/* Whether a whole chunk, its checksum good, starts at AT (or the capture
 * ends there). */
static bool good_at(struct np_capture *c, size_t at)
{
    uint32_t type, len;
    return at == c->len ||
           (chunk_start(c->cap + at, c->len - at) && chunk_at(c, at, &type, &len) == NP_CHUNK_WHOLE);
}

/* The first thing from AT on: a whole chunk (of version 2: its checksum
 * good), another trace's header, or nothing. Version 1 has no checksum:
 * the first place a known chunk type starts is a chunk, or where the
 * capture is cut, or a chunk too long (corrupt). Version 2 looks past
 * damage for the next whole chunk: a chunk the capture ends inside is a
 * cut only when none follows. */
static struct next find_next(struct np_capture *c, size_t at)
{
    bool checked = c->version > NP_TRACE_VERSION_V1;
    struct next cut = { NEXT_NONE, c->len, 0, 0 };
    const uint8_t *cap = c->cap;
    for (size_t p = at; p < c->len; p++) {
        /* text and damage hold few NULs: look only where one is (a chunk
         * type's high bytes, the magic's last) */
        if (cap[p] && cap[p + 1 < c->len ? p + 1 : p]) {
            const uint8_t *z = memchr(cap + p + 1, 0, c->len - p - 1);
            size_t nul = z ? (size_t)(z - cap) : c->len;
            /* a chunk starts 1 byte before its type's first NUL, the magic 7 */
            p = nul >= p + 8 ? nul - 8 : p;
        }
        if (cap[p] == 'N' && is_magic(cap + p, c->len - p))
            return (struct next){ NEXT_TRACE, p, 0, 0 };
        if (!chunk_start(cap + p, c->len - p))
            continue;
        uint32_t type = cap[p], len = 0; /* (chunk_start: its type's bytes are there) */
        enum np_chunk_check k = chunk_at(c, p, &type, &len);
        if (c->spent)
            break;
        if (k == NP_CHUNK_WHOLE)
            return (struct next){ NEXT_CHUNK, p, type, len };
        if (!checked)
            return (struct next){ k == NP_CHUNK_TOO_LONG ? NEXT_TOO_LONG : NEXT_CUT, p, type, len };
        if ((k == NP_CHUNK_CUT || k == NP_CHUNK_CUT_HEADER) && cut.kind == NEXT_NONE)
            cut = (struct next){ NEXT_CUT, p, type, k == NP_CHUNK_CUT ? len : 0 };
        /* damaged, its length good when a whole chunk follows it: past it */
        if (k == NP_CHUNK_DAMAGED && p + c->hsize + len < c->len && good_at(c, p + c->hsize + len))
            p += c->hsize + len - 1;
    }
    return cut;
}

/* The bytes [FROM, TO) between the trace's chunks: the firmware's text,
 * skipped; or, holding a NUL (which no text has: a chunk's header does),
 * damage: listed, to be said, counted and skipped. Text before the damage
 * is left out, and text after a damaged chunk whose length ends where
 * that text begins. 0, or -1 after the line. */
static int between(struct np_capture *c, size_t from, size_t to)
{
    const uint8_t *p = c->cap;
    if (c->version == NP_TRACE_VERSION_V1 || !memchr(p + from, 0, to - from))
        return 0;
    size_t at = from, end = to;
    /* (a REPORT chunk's type, 10, reads as a newline: a chunk ends the text) */
    while (at < to && !chunk_start(p + at, to - at) &&
           (p[at] == '\n' || p[at] == '\r' || (p[at] >= ' ' && p[at] < 0x7f)))
        at++;
    uint32_t type, len;
    char what[NP_TRACE_LISTED_WHAT];
    const char *name = chunk_start(p + at, to - at) ? np_trace_chunk_name(np_get_u32(p + at)) : NULL;
    enum np_chunk_check k = name ? chunk_at(c, at, &type, &len) : NP_CHUNK_CUT;
    if (!name)
        snprintf(what, sizeof what, "bytes that are neither a chunk nor text");
    else if (k == NP_CHUNK_DAMAGED)
        snprintf(what, sizeof what, "%s chunk (checksum mismatch)", name);
    else
        snprintf(what, sizeof what, "%s chunk (its length is wrong)", name);
    if (k == NP_CHUNK_DAMAGED && at + c->hsize + len <= to &&
        !memchr(p + at + c->hsize + len, 0, to - (at + c->hsize + len)))
        end = at + c->hsize + len;
    if (!c->has_info) /* no trace to read */
        return FAIL(c, NP_TRACE_ECORRUPT, "%s: offset %zu: damaged %s where INFO should be: the trace cannot be read",
                    c->name, at, what);
    if (np_trace_listed_damage(c->listed, at, end - at, what))
        return FAIL(c, NP_TRACE_ENOMEM, "out of memory");
    return 0;
}

/* The whole chunk of TYPE at OFF, LEN bytes of payload: what the walk
 * needs of it (MODULE's build-id), then listed. 0, or -1 after the line. */
static int take_chunk(struct np_capture *c, uint32_t type, size_t off, uint32_t len)
{
    const uint8_t *s, *payload = c->cap + off + c->hsize;
    if (!c->has_info && type != NP_CHUNK_INFO)
        return FAIL(c, NP_TRACE_ECORRUPT, "corrupt trace: chunk %" PRIu32 " at offset %zu before its INFO chunk", type,
                    off);
    switch (type) {
    case NP_CHUNK_INFO:
        c->has_info = true; /* (a second one: the reader says so where it is) */
        break;
    case NP_CHUNK_MODULE: {
        if (c->has_module)
            return FAIL(c, NP_TRACE_ECORRUPT,
                        "corrupt trace: a second MODULE chunk at offset %zu (a firmware is one module)", off);
        struct np_cursor cur = { payload, payload + len, false };
        (void)np_cursor_skip(&cur, 3 * 8);
        c->build_id_len = np_cursor_str(&cur, &c->build_id);
        np_cursor_str(&cur, &s);
        if (cur.bad || cur.p != cur.end)
            return FAIL(c, NP_TRACE_ECORRUPT,
                        "corrupt trace: chunk %" PRIu32 " at offset %zu (%" PRIu32 " bytes) does not hold its fields",
                        type, off, len);
        c->has_module = true;
        break;
    }
    case NP_CHUNK_EVENTS:
    case NP_CHUNK_RING:
        c->has_events = true;
        break;
    case NP_CHUNK_REPORT:
        if (NP_GROW(c->report_at, c->reports_cap, c->nreports + 1) < 0)
            return FAIL(c, NP_TRACE_ENOMEM, "out of memory");
        c->report_at[c->nreports++] = off;
        break;
    case NP_CHUNK_THREAD:
        c->has_events = true;
        if (len >= 4 && np_hmap_put(&c->tids, (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
                                                  (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24, 1))
            return FAIL(c, NP_TRACE_ENOMEM, "out of memory");
        c->found.threads = (uint32_t)c->tids.len;
        break;
    case NP_CHUNK_END:
        c->has_end = true;
        break;
    default:
        break;
    }
    c->chunks++;
    return np_trace_listed_chunk(c->listed, off, type, len) ? FAIL(c, NP_TRACE_ENOMEM, "out of memory") : 0;
}

/* Whole chunks in the capture though no trace header is: a ring that
 * wrapped over the trace's start, or the firmware's output caught after
 * it. The first one's offset, or the capture's length. */
static size_t headless_chunk(struct np_capture *c)
{
    c->version = NP_TRACE_VERSION;
    c->hsize = NP_TRACE_CHUNK_HEADER;
    c->budget = 4 * (uint64_t)c->len + SEARCH_SLACK;
    struct next n = find_next(c, 0);
    return n.kind == NEXT_CHUNK ? n.at : c->len;
}

/* After the trace's END the firmware's reports may follow (it stopped
 * its trace, then dumped): they are read as the trace's chunks are. Any
 * other chunk there, N (from AT on), ends the walk: the rest is the
 * firmware's, whole chunks said and not read (a ring that wrapped put
 * older ones after END), and another trace's start. */
static void past_end(struct np_capture *c, size_t at, const struct next *n)
{
    const uint8_t *next =
        c->len - at >= NP_TRACE_MAGIC_LEN ? memmem(c->cap + at, c->len - at, NP_TRACE_MAGIC, NP_TRACE_MAGIC_LEN) : NULL;
    if (next)
        c->next_trace = (size_t)(next - c->cap);
    if (n->kind == NEXT_CHUNK)
        c->after_end = n->at;
}

/* Finds the trace in the capture and lists its chunks. 0, or -1 after
 * the line. */
static int walk(struct np_capture *c, const struct np_source_options *o)
{
    const uint8_t *cap = c->cap;
    size_t len = c->len, at = 0;
    const uint8_t *m = len >= NP_TRACE_MAGIC_LEN ? memmem(cap, len, NP_TRACE_MAGIC, NP_TRACE_MAGIC_LEN) : NULL;
    if (!m) {
        size_t first = headless_chunk(c);
        if (first < len)
            return FAIL(c, NP_TRACE_ENOTTRACE,
                        "%s: no NPTRACE header, but a whole trace chunk at offset %zu: the capture lost the trace's "
                        "start (a ring that wrapped over it?); the trace cannot be read without its header, INFO and "
                        "MODULE", c->name, first);
        return FAIL(c, NP_TRACE_ENOTTRACE, "%s: no trace in it (no NPTRACE header: did the firmware call np_trace_init?)",
                    c->name);
    }
    at = (size_t)(m - cap);
    if (len - at < NP_TRACE_HEADER_SIZE)
        return FAIL(c, NP_TRACE_ETRUNC, "%s: the capture ends inside the trace's header", c->name);
    uint16_t version = np_get_u16(cap + at + 8), head = np_get_u16(cap + at + 10);
    if (version < NP_TRACE_VERSION_V1 || version > NP_TRACE_VERSION)
        return FAIL(c, NP_TRACE_EVERSION, "%s: trace format version %u, this nanoprof reads versions %d to %d", c->name,
                    version, NP_TRACE_VERSION_V1, NP_TRACE_VERSION);
    if (version > NP_TRACE_VERSION_V1 && !np_trace_header_sum_ok(cap + at))
        return FAIL(c, NP_TRACE_ECORRUPT, "corrupt trace: damaged header (checksum mismatch) at offset %zu", at);
    if (head < NP_TRACE_HEADER_SIZE || head > len - at)
        return FAIL(c, NP_TRACE_ECORRUPT, "corrupt trace: header size %u at offset %zu", head, at);
    c->trace_at = at;
    c->version = version;
    c->hsize = np_trace_chunk_header_size(version);
    c->budget = 4 * (uint64_t)len + SEARCH_SLACK;
    c->listed = np_trace_listed_new(cap, len, version, c->name, NP_TRACE_LISTED_QUIET_END, o, c->hooks, c->sum);
    if (!c->listed)
        return FAIL(c, NP_TRACE_ENOMEM, "out of memory");
    c->sum->files = 1; /* (the listing counted one too) */
    at += head;
    for (;;) {
        struct next n = find_next(c, at);
        if (c->has_end && n.kind != NEXT_NONE && n.kind != NEXT_TRACE && n.type != NP_CHUNK_REPORT) {
            past_end(c, at, &n);
            break;
        }
        if (between(c, at, n.at))
            return -1;
        if (n.kind == NEXT_TRACE)
            c->next_trace = n.at;
        if (n.kind == NEXT_TOO_LONG)
            return FAIL(c, NP_TRACE_ECORRUPT, "corrupt trace: chunk %" PRIu32 " at offset %zu claims %" PRIu32 " bytes",
                        n.type, n.at, n.len);
        if (n.kind == NEXT_CUT) {
            c->cut_at = n.at;
            c->cut_have = len - n.at;
            c->cut_want = c->hsize + (size_t)n.len;
            break;
        }
        if (n.kind != NEXT_CHUNK)
            break;
        if (take_chunk(c, n.type, n.at, n.len))
            return -1;
        at = n.at + c->hsize + (size_t)n.len;
    }
    if (!c->has_info)
        return FAIL(c, NP_TRACE_ECORRUPT, "%s: the trace at offset %zu has no INFO chunk", c->name, c->trace_at);
    if (!c->has_module)
        return FAIL(c, NP_TRACE_ECORRUPT, "%s: the trace at offset %zu has no MODULE chunk (the firmware's build-id)",
                    c->name, c->trace_at);
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

/* The ELF's build-id against the trace's; its functions read. 0, or -1
 * after the line. */
static int check_elf(struct np_capture *c, const char *elf)
{
    char abs[PATH_MAX];
    if (!realpath(elf, abs) || !(c->elf_path = strdup(abs)))
        return FAIL(c, NP_TRACE_ENOENT, "%s: %s", elf, strerror(errno));
    c->fd = open(abs, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return FAIL(c, NP_TRACE_ENOENT, "%s: %s", abs, strerror(errno));
    elf_version(EV_CURRENT);
    c->elf = elf_begin(c->fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh))
        return FAIL(c, NP_TRACE_ENOTTRACE, "%s: not an ELF file", abs);
    uint8_t id[NP_BUILD_ID_MAX];
    size_t n = np_elf_build_id(c->elf, id, sizeof id);
    char want[2 * 64 + 1], have[2 * 64 + 1];
    hex(want, c->build_id, c->build_id_len);
    hex(have, id, n);
    if (!c->build_id_len)
        say(c, NP_DIAG_WARNING, 0, "the firmware recorded no build-id (link it with -Wl,--build-id): %s is not checked",
            abs);
    else if (n != c->build_id_len || memcmp(id, c->build_id, n) != 0)
        return FAIL(c, NP_TRACE_ENOTTRACE,
                    "%s is not the firmware that recorded the trace: its build-id is %s, the trace's %s", abs, have,
                    want);
    if (np_elf_funcs_read(c->elf, NULL, &c->funcs) < 0)
        return FAIL(c, NP_TRACE_ENOMEM, "out of memory");
    np_elf_names_init(&c->names, c->elf, &c->funcs);
    return 0;
}

/* ---- the read: the sink between the reader and the caller's ---------------------- */

/* ADDR's set in c->recent: its bits mixed (functions' addresses are
 * aligned, and often a power of 2 apart). */
static inline size_t recent_set(uint64_t addr)
{
    return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 53) & (ENTRY_SETS - 1);
}

/* Whether ADDR is in c->recent. */
static inline bool recent(const struct np_capture *c, uint64_t addr)
{
    const uint64_t *set = c->recent[recent_set(addr)];
    return (set[0] == addr) | (set[1] == addr);
}

/* ENTRY address ADDR, seen for the first time: a NAME for it before its
 * first call when it is a string of the ELF's in no function. */
static int name_entry(struct np_capture *c, uint64_t addr)
{
    uint64_t *set = c->recent[recent_set(addr)];
    set[1] = set[0]; /* the older one goes */
    set[0] = addr;
    if (!c->elf || np_hmap_find(&c->seen, addr))
        return 0;
    if (np_hmap_put(&c->seen, addr, 1))
        return NP_TRACE_ENOMEM;
    char name[NP_TRACE_NAME_MAX + 1];
    if (np_elf_funcs_find(&c->funcs, addr) >= 0 || !np_elf_string_at(c->elf, addr, name, sizeof name))
        return 0;
    return c->out->name ? c->out->name(c->out->ctx, addr, name) : 0;
}

static int on_begin(void *ctx, const struct np_trace_process *p)
{
    struct np_capture *c = ctx;
    c->found.has_end = p->has_end;
    c->found.lost = p->has_end ? p->events_lost : 0;
    return c->out->begin ? c->out->begin(c->out->ctx, p) : 0;
}

static int on_module(void *ctx, const struct np_trace_module *m)
{
    struct np_capture *c = ctx;
    struct np_trace_module named = *m;
    if (c->elf_path)
        named.path = c->elf_path; /* the target's is empty */
    return c->out->module ? c->out->module(c->out->ctx, &named) : 0;
}

/* One event as the callbacks of a sink without runs take it. */
static int on_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct np_capture *c = ctx;
    const struct np_event_sink *s = c->out;
    /* the NAMEs of the run's new addresses first (before their calls is
     * all a NAME needs); whether there is any, found without a branch on
     * the kind (calls and returns alternate at random) */
    unsigned any = 0;
    for (size_t i = 0; i < n && c->elf; i++)
        any |= (unsigned)(ev[i].kind == NP_EVENT_ENTER) & (unsigned)!recent(c, ev[i].arg);
    for (size_t i = 0; i < n && any; i++) {
        uint64_t a = ev[i].arg;
        int rc = ev[i].kind == NP_EVENT_ENTER && !recent(c, a) ? name_entry(c, a) : 0;
        if (rc) {
            *done = 0;
            return rc;
        }
    }
    return np_sink_events(s, tid, ev, n, done);
}

#define FORWARD(fn, params, ...)                                                  \
    static int fwd_##fn params                                                    \
    {                                                                             \
        struct np_capture *c = ctx;                                               \
        return c->out->fn ? c->out->fn(c->out->ctx, __VA_ARGS__) : 0;            \
    }
FORWARD(thread, (void *ctx, uint32_t tid, const char *name), tid, name)
FORWARD(blocks, (void *ctx, const struct np_trace_block *b, size_t n, uint64_t lost), b, n, lost)
FORWARD(sample, (void *ctx, uint32_t tid, uint64_t t, const uint64_t *f, unsigned n, uint64_t p, uint64_t s), tid, t,
        f, n, p, s)
FORWARD(sampling, (void *ctx, const struct np_trace_sampling *s), s)
FORWARD(name, (void *ctx, uint64_t address, const char *name), address, name)
FORWARD(damaged, (void *ctx, const uint8_t *bytes, size_t n), bytes, n)
#undef FORWARD

static int fwd_end(void *ctx)
{
    struct np_capture *c = ctx;
    return c->out->end ? c->out->end(c->out->ctx) : 0;
}

/* A record of the next REPORT chunk listed (the reader reads them in
 * order): one of a type this nanoprof does not know is said with the
 * chunk's offset and skipped. */
static int fwd_report(void *ctx, unsigned type, const uint64_t *values, unsigned n)
{
    struct np_capture *c = ctx;
    size_t at = c->reports_told < c->nreports ? c->report_at[c->reports_told] : 0;
    c->reports_told++;
    if (type < 1 || type > NP_REPORT_TYPE_LAST) {
        c->found.reports_unknown++;
        say(c, NP_DIAG_WARNING, 0, "a report record of unknown type %u at offset %zu: skipped", type, at);
        return 0;
    }
    c->found.reports++;
    return c->out->report ? c->out->report(c->out->ctx, type, values, n) : 0;
}

/* ---- the source ---------------------------------------------------------------- */

struct np_capture *np_capture_open(const char *capture, const char *elf, unsigned flags,
                                   const struct np_source_options *o, const struct np_trace_hooks *hooks,
                                   struct np_trace_summary *summary)
{
    memset(summary, 0, sizeof *summary);
    struct np_capture *c = calloc(1, sizeof *c);
    if (!c) {
        summary->status = NP_TRACE_ENOMEM;
        snprintf(summary->message, sizeof summary->message, "%s: out of memory", capture);
        return NULL;
    }
    c->name = capture;
    c->flags = flags;
    c->hooks = hooks;
    c->sum = summary;
    c->fd = -1;
    np_hmap_init(&c->seen);
    np_hmap_init(&c->tids);
    if (read_capture(c, capture) || flight_image(c) || walk(c, o) || (elf && check_elf(c, elf))) {
        np_capture_free(c);
        return NULL;
    }
    /* how the trace ends, said once it is read */
    size_t n = 0;
    const char *prefix = flags & NP_CAPTURE_KEEP_ENDING ? "" : capture, *sep = *prefix ? ": " : "";
    char line[512];
    if (c->is_flight) {
        const struct np_flight_info *f = &c->flight;
        n += (size_t)snprintf(c->ending + n, sizeof c->ending - n, "%s%sa flight recorder's RAM (its block at 0x%08x): "
                              "the newest calls, %u words of its ring of %u%s\n", prefix, sep, f->block, f->kept,
                              f->nwords, f->laps ? ", which wrapped: older calls were overwritten" : "");
        if (f->dropped && n < sizeof c->ending)
            n += (size_t)snprintf(c->ending + n, sizeof c->ending - n, "%s%s%u of its chunks (thread names) did not "
                                  "fit its room in RAM (NP_TRACE_FLIGHT_META): not kept\n", prefix, sep, f->dropped);
    }
    if (c->cut_want) {
        snprintf(line, sizeof line, "%s%sthe capture is cut: it ends %zu bytes into the %zu-byte chunk at offset %zu, "
                 "%s; the trace holds the %zu whole chunks before it", prefix, sep, c->cut_have, c->cut_want,
                 c->cut_at, c->has_end ? "after the trace's END" : "with no END", c->chunks);
        np_trace_listed_stop(c->listed, NP_TRACE_ETRUNC, c->cut_at, line);
        n += (size_t)snprintf(c->ending + n, sizeof c->ending - n, "%s\n", line);
    }
    if (c->after_end && n < sizeof c->ending)
        n += (size_t)snprintf(c->ending + n, sizeof c->ending - n, "%s%swhole chunks follow the trace's END, from "
                              "offset %zu: not read (a ring that wrapped, its older chunks after its newer?)\n",
                              prefix, sep, c->after_end);
    if (c->next_trace && n < sizeof c->ending)
        snprintf(c->ending + n, sizeof c->ending - n, "%s%sanother trace starts at offset %zu: not %s\n", prefix, sep,
                 c->next_trace, flags & NP_CAPTURE_KEEP_ENDING ? "imported" : "read");
    return c;
}

/* The line on a trace without END (nor a cut), at the start of the
 * ending's lines. */
static void say_unended(struct np_capture *c)
{
    const char *keep = c->flags & NP_CAPTURE_KEEP_ENDING ? "" : c->name, *sep = *keep ? ": " : "";
    char line[sizeof c->ending];
    int n = snprintf(line, sizeof line, "%s%sthe trace has no END chunk (%s): its lost events are not known\n", keep,
                     sep, c->is_flight ? "a flight recorder read while it ran"
                          : c->sum->chunks_damaged ? "the firmware did not call np_trace_stop, or its END was damaged"
                                                   : "the firmware did not call np_trace_stop");
    if (n > 0 && (size_t)n < sizeof line) {
        memcpy(line + n, c->ending, sizeof line - (size_t)n - 1);
        line[sizeof line - 1] = 0;
    }
    memcpy(c->ending, line, sizeof c->ending);
}

int np_capture_read(struct np_capture *c, const struct np_event_sink *sink)
{
    static const struct np_event_sink none = { 0 };
    c->out = sink ? sink : &none;
    const struct np_event_sink *s = c->out;
    struct np_event_sink mine = {
        .ctx = c,
        .begin = on_begin,
        .module = on_module,
        .thread = fwd_thread,
        .events = on_events,
        .end = fwd_end,
        .blocks = fwd_blocks,
        .sample = fwd_sample,
        .sampling = fwd_sampling,
        .name = fwd_name,
        .damaged = s->damaged ? fwd_damaged : NULL, /* (its presence decides: see events.h) */
        .report = fwd_report,
    };
    if (np_capture_reports_only(c))
        np_trace_listed_no_trace(c->listed); /* nothing to end: no trace file cut short */
    int st = np_trace_listed_read(c->listed, &mine);
    if (!c->found.has_end && !c->cut_want && c->sum->files_read && !np_capture_reports_only(c))
        say_unended(c);
    if (!(c->flags & NP_CAPTURE_KEEP_ENDING) && c->hooks && c->hooks->diag && np_capture_reports_only(c)) {
        char line[512];
        snprintf(line, sizeof line, "%s: the firmware's reports (%" PRIu64 ") and no trace: `nanoprof import` prints "
                 "them", c->name, c->found.reports);
        c->hooks->diag(c->hooks->ctx, NP_DIAG_NOTE, line);
    }
    if (!(c->flags & NP_CAPTURE_KEEP_ENDING) && c->hooks && c->hooks->diag) {
        /* each line: a warning, but for another trace's (a note) */
        for (char *line = c->ending, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            *nl = 0;
            c->hooks->diag(c->hooks->ctx, strstr(line, "another trace starts") ? NP_DIAG_NOTE : NP_DIAG_WARNING, line);
            *nl = '\n';
        }
    }
    return st;
}

const struct np_capture_found *np_capture_found(const struct np_capture *c)
{
    return &c->found;
}

bool np_capture_reports_only(const struct np_capture *c)
{
    return c->nreports && !c->has_events;
}

struct np_report_names np_capture_report_names(struct np_capture *c)
{
    return c->elf ? np_elf_report_names(&c->names) : (struct np_report_names){ NULL, NULL, NULL };
}

const char *np_capture_ending(const struct np_capture *c)
{
    return c->ending;
}

void np_capture_free(struct np_capture *c)
{
    if (!c)
        return;
    np_trace_listed_free(c->listed);
    np_elf_funcs_free(&c->funcs);
    if (c->elf)
        elf_end(c->elf);
    if (c->fd >= 0)
        close(c->fd);
    np_hmap_free(&c->seen);
    free(c->elf_path);
    np_hmap_free(&c->tids);
    free(c->report_at);
    if (c->mapped)
        munmap(c->cap, c->mapped);
    else
        free(c->cap);
    free(c);
}

int np_source_capture_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                           const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_trace_summary local;
    if (!summary)
        summary = &local;
    const char *elf = NULL;
    for (const char *const *a = o && o->args ? o->args : NULL; a && *a; a++)
        if (strncmp(*a, "elf=", 4) == 0)
            elf = *a + 4;
    struct np_capture *c = np_capture_open(path, elf, 0, o, hooks, summary);
    if (!c)
        return summary->status;
    np_capture_read(c, sink);
    np_capture_free(c);
    return summary->status;
}
