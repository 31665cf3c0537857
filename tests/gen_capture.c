/* gen_capture.c - writes a target's capture as a Cortex-M firmware's
 * output writer sends it (nanoprof/trace.h): the trace's header, INFO
 * (clock "cycles") and MODULE (ELF's build-id), then THREAD and EVENTS
 * chunks of about 500 bytes built by the runtime's encoder
 * (runtime/trace_encode.c, the code a target runs) from a buffer of a
 * target's size, the firmware's own text lines between some of them, and
 * END; for `nanoprof import`'s tests and its benchmark.
 *
 *   gen_capture [options] OUT BYTES ELF
 *
 * The calls are of ELF's functions (its first 64 by address), nested,
 * cycles apart by a fixed pseudo-random sequence, on 3 threads that
 * switch (SWITCH records) every few hundred events, until the capture
 * holds about BYTES bytes. Options:
 *   --unknown-kind N  the Nth EVENTS chunk (from 1) ends in a record of
 *                     kind 7 (VALUES) with nothing after its kind: a
 *                     record cut short (its checksum good)
 *   --no-end          no END chunk (np_trace_stop was not called)
 *   --map FILE        a line per EVENTS chunk into FILE: its offset, its
 *                     end's, and the events of it and the chunks before
 * Prints "events E calls C chunks K", and with --unknown-kind "before B":
 * the events before the unknown record. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/debug_file.h"
#include "common/elf_symtab.h"
#include "runtime/trace_encode.h"

#define TARGET_BUFFER 512 /* a target's trace buffer */
#define THREADS 3
#define MAX_DEPTH 12

static FILE *out, *map;
static uint64_t events, calls, chunks, written, recorded;
static uint64_t bad_chunk, before_bad; /* --unknown-kind */
static unsigned nchunk;                /* EVENTS chunks written */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void put(const void *p, size_t n)
{
    if (fwrite(p, 1, n, out) != n) {
        perror("gen_capture: write");
        exit(1);
    }
    written += n;
}

/* The firmware's text between chunks, now and then. */
static void text(void)
{
    char line[64];
    int n = snprintf(line, sizeof line, "ok step %" PRIu64 "\n", chunks);
    put(line, (size_t)n);
}

static void flush_chunk(struct np_trace_enc *e, void *ctx)
{
    (void)ctx;
    nchunk++;
    recorded += e->count;
    if (nchunk == bad_chunk) {
        /* a record of kind 7 after the ones there: its checksum good */
        before_bad = recorded;
        uint8_t *o = e->buf + NP_TRACE_EVENTS_PREFIX + e->len;
        size_t n = np_put_varint(o, (uint64_t)1 << NP_EV_KIND_BITS | 7);
        e->len += n;
        e->count++;
    }
    uint64_t at = written;
    put(e->buf, np_trace_enc_chunk(e));
    chunks++;
    if (map)
        fprintf(map, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", at, written, recorded);
    if (next_rand() % 8 == 0)
        text();
}

int main(int argc, char **argv)
{
    int a = 1;
    bool end = true;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--unknown-kind") && a + 1 < argc)
            bad_chunk = strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--no-end"))
            end = false;
        else if (!strcmp(argv[a], "--map") && a + 1 < argc) {
            if (!(map = fopen(argv[++a], "w"))) {
                perror(argv[a]);
                return 1;
            }
        }
        else
            break;
    }
    if (argc - a != 3) {
        fprintf(stderr, "usage: gen_capture [--unknown-kind N] [--no-end] [--map FILE] OUT BYTES ELF\n");
        return 2;
    }
    uint64_t want = strtoull(argv[a + 1], NULL, 0);
    int fd = open(argv[a + 2], O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    struct np_elf_funcs funcs;
    uint8_t id[NP_BUILD_ID_MAX];
    size_t idlen = elf ? np_elf_build_id(elf, id, sizeof id) : 0;
    if (!elf || np_elf_funcs_read(elf, NULL, &funcs) < 0 || funcs.n < 4) {
        fprintf(stderr, "gen_capture: %s: not an ELF with functions\n", argv[a + 2]);
        return 1;
    }
    size_t nf = funcs.n < 64 ? funcs.n : 64;
    if (!(out = fopen(argv[a], "wb"))) {
        perror(argv[a]);
        return 1;
    }
    static uint8_t mem[1024];
    put("boot: firmware v1\n", 18);
    uint8_t h[NP_TRACE_HEADER_SIZE];
    np_trace_file_header(h);
    put(h, sizeof h);
    struct np_trace_info info = { 0, 0, 1.0, 0, 0, "cycles", 0, NULL };
    put(mem, np_trace_info_chunk(mem, sizeof mem, &info));
    put(mem, np_trace_module_chunk(mem, sizeof mem, 0, 0, 1ull << 32, id, idlen, "", 0));

    static uint8_t buf[TARGET_BUFFER];
    struct np_trace_enc enc;
    np_trace_enc_init(&enc, buf, sizeof buf, 1, flush_chunk, NULL);
    uint64_t now = 1000, out_at[THREADS + 1] = { 0 };
    unsigned depth[THREADS + 1] = { 0 }, cur = 1;
    bool seen[THREADS + 1] = { false };
    uint32_t until_switch = 300;
    for (;;) {
        if (!seen[cur]) {
            seen[cur] = true;
            put(mem, np_trace_thread_chunk(mem, sizeof mem, cur, "", 0));
        }
        now += 2 + next_rand() % 300;
        unsigned *d = &depth[cur];
        bool enter = *d == 0 || (*d < MAX_DEPTH && next_rand() % 2);
        if (enter) {
            uint64_t fn = funcs.v[next_rand() % nf].addr;
            (*d)++;
            np_trace_enc_put(&enc, NP_EV_ENTRY, fn, now);
            calls++;
        } else {
            (*d)--;
            np_trace_enc_put(&enc, NP_EV_EXIT, 0, now);
        }
        events++;
        if (bad_chunk && nchunk >= bad_chunk)
            break;
        if (--until_switch == 0 || written >= want) {
            /* the thread that leaves ends its chunk; the next one says how long it was out */
            np_trace_enc_flush(&enc);
            if (written >= want)
                break;
            out_at[cur] = now;
            cur = cur % THREADS + 1;
            np_trace_enc_thread(&enc, cur);
            now += 50;
            if (out_at[cur]) {
                np_trace_enc_put(&enc, NP_EV_SWITCH, now - out_at[cur], now);
                events++;
            }
            until_switch = 100 + next_rand() % 400;
        }
    }
    np_trace_enc_flush(&enc);
    if (end)
        put(mem, np_trace_end_chunk(mem, sizeof mem, now + 10, 0, 1.0));
    put("done\n", 5);
    if (fclose(out) != 0) {
        perror(argv[a]);
        return 1;
    }
    printf("events %" PRIu64 " calls %" PRIu64 " chunks %" PRIu64, events, calls, chunks);
    if (bad_chunk)
        printf(" before %" PRIu64, before_bad);
    printf("\n");
    if (map && fclose(map) != 0) {
        perror("gen_capture: the map");
        return 1;
    }
    np_elf_funcs_free(&funcs);
    elf_end(elf);
    close(fd);
    return 0;
}
