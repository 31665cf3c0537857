/* record_decode.h - a small, strict reader of trace files for the recorder's
 * tests (docs/trace-format.md), built on the codecs of trace_format.h and
 * libzstd. It checks every rule the format states and counts, per thread
 * and function address, the calls that began (ENTRY) and returned (EXIT,
 * matched to its ENTRY by nesting). The real reader is src/analyze/. */
#ifndef NP_RECORD_DECODE_H
#define NP_RECORD_DECODE_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>
#include "common/trace_format.h"

#define DEC_MAX_FNS 64
#define DEC_MAX_THREADS 16
#define DEC_MAX_DEPTH 4096

struct dec_fn {
    uint64_t addr, entries, exits;
};

struct dec_thread {
    uint32_t tid;
    char name[32];
    int named;
    struct dec_fn fns[DEC_MAX_FNS];
    int nfns;
    uint64_t events, lost, switches, switched;
    uint64_t last_tick;
    int depth;
    uint64_t stack[DEC_MAX_DEPTH];
    uint64_t beyond;   /* open calls deeper than the stack above */
    uint64_t orphan_exits;
};

#define DEC_MAX_MODULES 64

struct dec_file {
    char path[512];
    uint64_t mod_start[DEC_MAX_MODULES], mod_end[DEC_MAX_MODULES];
    char mod_path[DEC_MAX_MODULES][128];
    size_t bytes;
    uint32_t pid, ppid;
    double ns_per_tick;
    char clock[32];
    int argc;
    char argv0[256];
    int has_end;
    uint64_t end_lost;
    int modules, events_chunks, zstd_chunks, thread_chunks;
    uint64_t events;
    struct dec_thread threads[DEC_MAX_THREADS];
    int nthreads;
    char err[512];
};

static int dec_fail(struct dec_file *f, const char *fmt, ...)
{
    if (!f->err[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->err, sizeof f->err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static struct dec_thread *dec_thread_of(struct dec_file *f, uint32_t tid)
{
    for (int i = 0; i < f->nthreads; i++)
        if (f->threads[i].tid == tid)
            return &f->threads[i];
    if (f->nthreads == DEC_MAX_THREADS)
        return NULL;
    struct dec_thread *t = &f->threads[f->nthreads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

static struct dec_fn *dec_fn_of(struct dec_thread *t, uint64_t addr)
{
    for (int i = 0; i < t->nfns; i++)
        if (t->fns[i].addr == addr)
            return &t->fns[i];
    if (t->nfns == DEC_MAX_FNS)
        return NULL;
    struct dec_fn *fn = &t->fns[t->nfns++];
    fn->addr = addr;
    fn->entries = fn->exits = 0;
    return fn;
}

static int dec_events(struct dec_file *f, const uint8_t *p, size_t n)
{
    if (n < 21)
        return dec_fail(f, "EVENTS chunk too short");
    uint32_t tid = np_get_u32(p), count = np_get_u32(p + 12), dlen = np_get_u32(p + 17);
    uint64_t base = np_get_u64(p + 4);
    uint8_t comp = p[16];
    const uint8_t *data = p + 21;
    size_t len = n - 21;
    uint8_t *dec = NULL;
    if (comp == NP_COMPRESS_ZSTD) {
        dec = malloc(dlen ? dlen : 1);
        size_t r = ZSTD_decompress(dec, dlen, data, len);
        if (ZSTD_isError(r) || r != dlen) {
            free(dec);
            return dec_fail(f, "EVENTS: zstd data does not decode to %u bytes", dlen);
        }
        data = dec;
        len = dlen;
        f->zstd_chunks++;
    } else if (comp != NP_COMPRESS_NONE) {
        return dec_fail(f, "EVENTS: compression %u", comp);
    } else if (len != dlen) {
        return dec_fail(f, "EVENTS: decoded length %u, payload %zu", dlen, len);
    }
    struct dec_thread *t = dec_thread_of(f, tid);
    int rc = 0;
    if (!t) {
        rc = dec_fail(f, "too many threads");
        goto out;
    }
    if (t->events && base < t->last_tick) {
        rc = dec_fail(f, "tid %u: chunk base tick goes backwards", tid);
        goto out;
    }
    const uint8_t *q = data, *end = data + len;
    uint64_t tick = base, prev_addr = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t v, x;
        if (!np_get_varint(&q, end, &v)) {
            rc = dec_fail(f, "tid %u: event %u cut short", tid, i);
            goto out;
        }
        tick += v >> NP_EV_KIND_BITS;
        switch (v & 7) {
        case NP_EV_ENTRY:
            if (!np_get_varint(&q, end, &x)) {
                rc = dec_fail(f, "ENTRY without address");
                goto out;
            }
            prev_addr += (uint64_t)np_unzigzag(x);
            {
                int m = 0;
                while (m < f->modules && m < DEC_MAX_MODULES &&
                       !(prev_addr >= f->mod_start[m] && prev_addr < f->mod_end[m]))
                    m++;
                if (m == f->modules || m == DEC_MAX_MODULES) {
                    rc = dec_fail(f, "ENTRY %#llx in no MODULE listed before", (unsigned long long)prev_addr);
                    goto out;
                }
            }
            if (t->depth == DEC_MAX_DEPTH)
                t->beyond++; /* counted, not followed */
            else
                t->stack[t->depth++] = prev_addr;
            {
                struct dec_fn *fn = dec_fn_of(t, prev_addr);
                if (!fn) {
                    rc = dec_fail(f, "too many functions");
                    goto out;
                }
                fn->entries++;
            }
            break;
        case NP_EV_EXIT:
            if (t->beyond) {
                t->beyond--;
            } else if (!t->depth) {
                t->orphan_exits++;
            } else {
                struct dec_fn *fn = dec_fn_of(t, t->stack[--t->depth]);
                fn->exits++;
            }
            break;
        case NP_EV_LOST:
            if (!np_get_varint(&q, end, &x)) {
                rc = dec_fail(f, "LOST without count");
                goto out;
            }
            t->lost += x;
            break;
        case NP_EV_SWITCH:
            if (!np_get_varint(&q, end, &x)) {
                rc = dec_fail(f, "SWITCH without ticks");
                goto out;
            }
            t->switches++;
            t->switched += x;
            break;
        default:
            rc = dec_fail(f, "reserved event kind %u", (unsigned)(v & 7));
            goto out;
        }
        t->events++;
        f->events++;
    }
    if (q != end)
        rc = dec_fail(f, "tid %u: %zu bytes after the %u events", tid, (size_t)(end - q), count);
    t->last_tick = tick;
out:
    free(dec);
    return rc;
}

static int dec_str(const uint8_t **p, const uint8_t *end, char *out, size_t size)
{
    if (end - *p < 2)
        return 0;
    size_t n = np_get_u16(*p);
    if ((size_t)(end - *p - 2) < n)
        return 0;
    if (out) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(out, *p + 2, c);
        out[c] = 0;
    }
    *p += 2 + n;
    return 1;
}

/* Reads and checks one file; 0 when it is well-formed. */
static int dec_file(const char *path, struct dec_file *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return dec_fail(f, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    size_t n = fread(buf, 1, (size_t)size, fp);
    fclose(fp);
    f->bytes = n;
    int rc = 0, chunks = 0;
    if (n < NP_TRACE_HEADER_SIZE || memcmp(buf, NP_TRACE_MAGIC, NP_TRACE_MAGIC_LEN) != 0 ||
        np_get_u16(buf + 8) != NP_TRACE_VERSION || np_get_u16(buf + 10) != NP_TRACE_HEADER_SIZE ||
        np_get_u32(buf + 12) != np_crc32c(buf, 12)) {
        rc = dec_fail(f, "bad file header");
        goto out;
    }
    for (size_t off = NP_TRACE_HEADER_SIZE; off < n; chunks++) {
        if (n - off < NP_TRACE_CHUNK_HEADER) {
            rc = dec_fail(f, "partial chunk header at %zu", off);
            goto out;
        }
        uint32_t type = np_get_u32(buf + off), len = np_get_u32(buf + off + 4);
        if (len > NP_TRACE_CHUNK_MAX || n - off - NP_TRACE_CHUNK_HEADER < len) {
            rc = dec_fail(f, "chunk at %zu cut short or too long (%u)", off, len);
            goto out;
        }
        /* the checksum as docs/trace-format.md computes it: CRC-32C of
         * the type and length, then the payload */
        uint32_t sum = np_crc32c_update(np_crc32c_update(~0u, buf + off, 8), buf + off + 12, len) ^ ~0u;
        if (np_get_u32(buf + off + 8) != sum) {
            rc = dec_fail(f, "chunk at %zu: checksum 0x%08x, its bytes give 0x%08x", off, np_get_u32(buf + off + 8),
                          sum);
            goto out;
        }
        const uint8_t *p = buf + off + NP_TRACE_CHUNK_HEADER, *e = p + len;
        if (f->has_end) {
            rc = dec_fail(f, "chunk after END");
            goto out;
        }
        if (chunks == 0 && type != NP_CHUNK_INFO) {
            rc = dec_fail(f, "first chunk is not INFO");
            goto out;
        }
        switch (type) {
        case NP_CHUNK_INFO:
            if (chunks || len < 32) {
                rc = dec_fail(f, "INFO misplaced or short");
                goto out;
            }
            f->pid = np_get_u32(p);
            f->ppid = np_get_u32(p + 4);
            {
                uint64_t bits = np_get_u64(p + 8);
                memcpy(&f->ns_per_tick, &bits, 8);
                const uint8_t *q = p + 32;
                if (!dec_str(&q, e, f->clock, sizeof f->clock) || e - q < 2) {
                    rc = dec_fail(f, "INFO strings");
                    goto out;
                }
                f->argc = np_get_u16(q);
                q += 2;
                for (int i = 0; i < f->argc; i++)
                    if (!dec_str(&q, e, i == 0 ? f->argv0 : NULL, sizeof f->argv0)) {
                        rc = dec_fail(f, "INFO argv");
                        goto out;
                    }
                if (q != e) {
                    rc = dec_fail(f, "INFO: trailing bytes");
                    goto out;
                }
            }
            break;
        case NP_CHUNK_MODULE: {
            const uint8_t *q = p + 24;
            char path[512];
            if (len < 28 || !dec_str(&q, e, NULL, 0) || !dec_str(&q, e, path, sizeof path) || q != e ||
                np_get_u64(p + 16) <= np_get_u64(p + 8)) {
                rc = dec_fail(f, "bad MODULE");
                goto out;
            }
            if (f->modules < DEC_MAX_MODULES) {
                f->mod_start[f->modules] = np_get_u64(p + 8);
                f->mod_end[f->modules] = np_get_u64(p + 16);
                memcpy(f->mod_path[f->modules], path, sizeof f->mod_path[0] - 1);
                f->mod_path[f->modules][sizeof f->mod_path[0] - 1] = 0;
            }
            f->modules++;
            break;
        }
        case NP_CHUNK_THREAD: {
            const uint8_t *q = p + 4;
            char name[32];
            if (len < 6 || !dec_str(&q, e, name, sizeof name) || q != e) {
                rc = dec_fail(f, "bad THREAD");
                goto out;
            }
            struct dec_thread *t = dec_thread_of(f, np_get_u32(p));
            if (t) {
                snprintf(t->name, sizeof t->name, "%s", name);
                t->named = 1;
            }
            f->thread_chunks++;
            break;
        }
        case NP_CHUNK_EVENTS:
            if (!f->modules) {
                rc = dec_fail(f, "EVENTS before any MODULE");
                goto out;
            }
            f->events_chunks++;
            if (dec_events(f, p, len) < 0) {
                rc = -1;
                goto out;
            }
            break;
        case NP_CHUNK_END:
            if (len != 24) {
                rc = dec_fail(f, "bad END");
                goto out;
            }
            f->has_end = 1;
            f->end_lost = np_get_u64(p + 8);
            break;
        default:
            rc = dec_fail(f, "unknown chunk type %u", type);
            goto out;
        }
        off += NP_TRACE_CHUNK_HEADER + len;
    }
out:
    free(buf);
    return rc;
}

/* Calls of ADDR in file F: over all threads (tid 0) or one. */
static uint64_t dec_count(const struct dec_file *f, uint32_t tid, uint64_t addr, int exits)
{
    uint64_t n = 0;
    for (int i = 0; i < f->nthreads; i++) {
        if (tid && f->threads[i].tid != tid)
            continue;
        for (int k = 0; k < f->threads[i].nfns; k++)
            if (f->threads[i].fns[k].addr == addr)
                n += exits ? f->threads[i].fns[k].exits : f->threads[i].fns[k].entries;
    }
    return n;
}

/* The .npt files of DIR, sorted by name, into NAMES (each malloc'd). */
static int dec_list(const char *dir, char names[][256], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < max) {
        size_t l = strlen(de->d_name);
        if (l > 4 && strlen(dir) + l < 250 && strcmp(de->d_name + l - 4, NP_TRACE_FILE_SUFFIX) == 0) {
            strcpy(names[n], dir);
            strcat(names[n], "/");
            strcat(names[n++], de->d_name);
        }
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j], names[j - 1]) < 0; j--) {
            char tmp[256];
            memcpy(tmp, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], tmp, 256);
        }
    return n;
}

#endif
