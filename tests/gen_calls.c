/* gen_calls.c - writes a trace of about CALLS calls, fast, for the tests
 * and benchmarks of the views that walk every call (replay, the Chrome
 * export): `gen_calls DIR CALLS [THREADS [UNITS_PER_CHUNK]]` writes
 * DIR/1.npt and prints the number of calls written.
 *
 * The calls are a unit of seven repeated (ticks of 1 ns):
 *   outer { mid { leaf(2) leaf(5) } leaf(1) mid { leaf(3) } }
 * UNITS_PER_CHUNK units (default 4096) to an EVENTS chunk, zstd-compressed,
 * the chunks dealt to the THREADS threads (default 1) in turn, each
 * thread's units inside one call of main that spans all its chunks. A
 * chunk's first record counts from the chunk's base tick, so every full
 * chunk has the same compressed stream: it is compressed once and written
 * again with another thread and base tick, at the speed of the disk (500M
 * calls are a few MB). Names come from NAME chunks: no ELF file needed. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/trace_format.h"
#include "trace_builder.h"

enum { MAIN = 0x1000, OUTER = 0x1100, MID = 0x1200, LEAF = 0x1300 };
#define UNIT_CALLS 7
#define FIRST_TID 100

/* One unit from tick T on; returns the tick after it. */
static uint64_t unit(struct tb *b, uint64_t t)
{
    tb_enter(b, ++t, OUTER);
    tb_enter(b, ++t, MID);
    tb_enter(b, ++t, LEAF);
    tb_exit(b, t += 2);
    tb_enter(b, ++t, LEAF);
    tb_exit(b, t += 5);
    tb_exit(b, ++t);
    tb_enter(b, ++t, LEAF);
    tb_exit(b, ++t);
    tb_enter(b, ++t, MID);
    tb_enter(b, ++t, LEAF);
    tb_exit(b, t += 3);
    tb_exit(b, ++t);
    tb_exit(b, t += 2);
    return t;
}

/* An EVENTS chunk of N units from base tick 0, as bytes (header
 * included); *SPAN: the ticks it covers. */
static struct tb chunk_template(uint64_t n, uint64_t *span)
{
    struct tb b;
    tb_init(&b);
    tb_events_begin(&b, FIRST_TID, 0);
    uint64_t t = 0;
    for (uint64_t i = 0; i < n; i++)
        t = unit(&b, t);
    tb_events_end(&b, NP_COMPRESS_ZSTD);
    *span = t;
    return b;
}

/* Writes the chunk C again for thread TID from BASE. */
static void put_chunk(FILE *out, struct tb *c, uint32_t tid, uint64_t base)
{
    np_put_u32(c->data + NP_TRACE_CHUNK_HEADER, tid);
    np_put_u64(c->data + NP_TRACE_CHUNK_HEADER + 4, base);
    np_trace_chunk_seal(c->data);
    if (fwrite(c->data, 1, c->len, out) != c->len) {
        perror("gen_calls: write");
        exit(1);
    }
}

static void put_image(FILE *out, struct tb *b)
{
    if (fwrite(b->data, 1, b->len, out) != b->len) {
        perror("gen_calls: write");
        exit(1);
    }
    tb_free(b);
    tb_init(b);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fputs("usage: gen_calls DIR CALLS [THREADS [UNITS_PER_CHUNK]]\n", stderr);
        return 2;
    }
    uint64_t calls = strtoull(argv[2], NULL, 10);
    unsigned threads = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
    uint64_t per_chunk = argc > 4 ? strtoull(argv[4], NULL, 10) : 4096;
    if (!threads || threads > 1000 || !per_chunk || per_chunk > 100000) {
        fputs("gen_calls: THREADS from 1 to 1000, UNITS_PER_CHUNK from 1 to 100000\n", stderr);
        return 2;
    }
    uint64_t units = calls > threads ? (calls - threads + UNIT_CALLS - 1) / UNIT_CALLS : 0;
    mkdir(argv[1], 0777);
    char path[4096];
    snprintf(path, sizeof path, "%s/1.npt", argv[1]);
    FILE *out = fopen(path, "wb");
    if (!out) {
        perror(path);
        return 1;
    }
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 1000000000, "monotonic", 1, (const char *const[]){ "gen_calls" });
    static const struct {
        uint64_t addr;
        const char *name;
    } names[] = { { MAIN, "main" }, { OUTER, "outer" }, { MID, "mid" }, { LEAF, "leaf" } };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        uint8_t payload[8 + 2 + 16];
        size_t len = strlen(names[i].name);
        np_put_u64(payload, names[i].addr);
        np_put_u16(payload + 8, (uint16_t)len);
        memcpy(payload + 10, names[i].name, len);
        tb_chunk(&b, NP_CHUNK_NAME, payload, 10 + len);
    }
    uint64_t *tick = calloc(threads, sizeof *tick);
    for (unsigned t = 0; t < threads; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", t);
        tb_thread(&b, FIRST_TID + t, name);
        tb_events_begin(&b, FIRST_TID + t, t);
        tb_enter(&b, tick[t] = t, MAIN);
        tb_events_end(&b, NP_COMPRESS_NONE);
    }
    put_image(out, &b);
    uint64_t span, last_span;
    struct tb full = chunk_template(per_chunk, &span), last = chunk_template(units % per_chunk, &last_span);
    uint64_t chunks = units / per_chunk;
    for (uint64_t k = 0; k <= chunks; k++) {
        bool partial = k == chunks;
        if (partial && !(units % per_chunk))
            break;
        unsigned t = (unsigned)(k % threads);
        put_chunk(out, partial ? &last : &full, FIRST_TID + t, tick[t]);
        tick[t] += (partial ? last_span : span) + 1;
    }
    uint64_t end = 0;
    for (unsigned t = 0; t < threads; t++) {
        tb_events_begin(&b, FIRST_TID + t, tick[t]);
        tb_exit(&b, ++tick[t]);
        tb_events_end(&b, NP_COMPRESS_NONE);
        if (tick[t] > end)
            end = tick[t];
    }
    tb_end(&b, end, 0, 1.0);
    put_image(out, &b);
    if (fclose(out) != 0) {
        perror(path);
        return 1;
    }
    printf("%" PRIu64 "\n", threads + units * UNIT_CALLS);
    tb_free(&b);
    tb_free(&full);
    tb_free(&last);
    free(tick);
    return 0;
}
