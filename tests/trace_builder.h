/* trace_builder.h - writes nanoprof traces for the tests, byte for byte as
 * docs/trace-format.md says: valid ones, and, with the raw calls, every
 * kind of damaged one (a cut, a bad varint, a reserved event kind, a
 * corrupt zstd frame, a version from the future).
 *
 * A struct tb holds one file image in memory; chunks are appended in the
 * order called. Events go into an open EVENTS chunk with absolute ticks;
 * the builder computes the deltas, the zigzag address deltas and the
 * count, and compresses with zstd when asked. It also knows the running
 * executable (tb_self): its real load bias, text range, build-id and path,
 * so a MODULE chunk can point at an ELF file the analysis will open, and
 * the sample functions below resolve to their names. Allocation failures
 * abort: this is test code. */
#ifndef NP_TRACE_BUILDER_H
#define NP_TRACE_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tb {
    uint8_t *data;          /* the file image */
    size_t len, cap;
    uint8_t *ev;            /* the open EVENTS chunk's stream */
    size_t evlen, evcap;
    uint32_t ev_tid, ev_count;
    uint64_t ev_base, ev_tick, ev_addr, ev_pc;
    bool ev_open;
    uint16_t version;       /* of the chunks: 0 is the version written today */
};

void tb_init(struct tb *b);
void tb_free(struct tb *b);

/* The 16-byte header of B's version: the one written today (2: chunks
 * with checksums) unless b->version was set (to 1, before the fixtures
 * below, for their version 1 files); or of VERSION: 1 makes the chunks
 * that follow version 1's (8-byte headers, no checksums), a version no
 * reader knows makes them the current version's. */
void tb_header(struct tb *b);
void tb_header_version(struct tb *b, uint16_t version);
/* Bytes as given (a chunk header that lies, garbage). */
void tb_raw(struct tb *b, const void *bytes, size_t len);
/* Any chunk, as given, its checksum right. */
void tb_chunk(struct tb *b, uint32_t type, const void *payload, size_t len);
/* The header bytes of a chunk in B's version (its checksum right for
 * LEN bytes of PAYLOAD) into H; their count. */
size_t tb_chunk_header(const struct tb *b, uint8_t *h, uint32_t type, const void *payload, size_t len);
void tb_info(struct tb *b, uint32_t pid, uint32_t ppid, double ns_per_tick, uint64_t start_tick,
             uint64_t start_ns, const char *clock, int argc, const char *const *argv);
void tb_module(struct tb *b, uint64_t bias, uint64_t start, uint64_t end, const void *build_id,
               size_t build_id_len, const char *path);
void tb_thread(struct tb *b, uint32_t tid, const char *name);
void tb_end(struct tb *b, uint64_t end_tick, uint64_t lost, double ns_per_tick);
/* A BLOCKS chunk claiming N blocks, holding NPAIRS (address, count) pairs
 * from PAIRS (N != NPAIRS for a lying one). */
void tb_blocks(struct tb *b, uint64_t lost, uint32_t n, const uint64_t *pairs, size_t npairs);
/* SAMPLING: the rate from TICK on (trace-format.md). */
void tb_sampling(struct tb *b, uint64_t tick, uint32_t hz, uint8_t unwinder, uint32_t flags, uint64_t period_ns,
                 uint16_t max_frames);

/* Events: begin a chunk, add records at absolute ticks, end it. */
void tb_events_begin(struct tb *b, uint32_t tid, uint64_t base_tick);
void tb_enter(struct tb *b, uint64_t tick, uint64_t address);
void tb_exit(struct tb *b, uint64_t tick);
void tb_lost(struct tb *b, uint64_t tick, uint64_t n);
void tb_switch(struct tb *b, uint64_t tick, uint64_t ticks);
/* RESYNC: the N innermost open calls end; COUNT: the second counter
 * advances by N (give a UNITS chunk with a count unit: tb_chunk). */
void tb_resync(struct tb *b, uint64_t tick, uint64_t n);
void tb_count(struct tb *b, uint64_t tick, uint64_t n);
/* A SAMPLE: FRAMES[0] the PC, N frames (any N: the reader refuses 0 and
 * more than NP_SAMPLE_MAX_FRAMES). */
void tb_sample(struct tb *b, uint64_t tick, const uint64_t *frames, unsigned n, uint64_t overrun,
               uint64_t skipped);
/* A record of any KIND (reserved ones too) with nothing after it. */
void tb_event_kind(struct tb *b, uint64_t tick, unsigned kind);
/* Raw bytes into the stream, counted as COUNT more events. */
void tb_event_bytes(struct tb *b, const void *bytes, size_t len, uint32_t count);
/* COMPRESSION: NP_COMPRESS_NONE or NP_COMPRESS_ZSTD. */
void tb_events_end(struct tb *b, unsigned compression);
/* An EVENTS chunk with every field given (for lies about count/length). */
void tb_events_chunk(struct tb *b, uint32_t tid, uint64_t base_tick, uint32_t count, uint8_t compression,
                     uint32_t decoded_len, const void *stream, size_t stream_len);

/* The running executable as mapped now. */
struct tb_self {
    uint64_t bias, start, end;
    uint8_t build_id[64];
    size_t build_id_len;
    char path[4096];
};
void tb_self(struct tb_self *s);
/* A MODULE chunk for the running executable. */
void tb_module_self(struct tb *b);

/* Writes the image (or its first LEN bytes) to PATH; 0 or -1. */
int tb_write(const struct tb *b, const char *path);
int tb_write_prefix(const struct tb *b, const char *path, size_t len);

/* ---- the sample trace --------------------------------------------------- */

/* Run-time addresses of the sample functions (defined in trace_builder.c;
 * sample_helper is static, so only .symtab names it). */
struct tb_sample {
    uint64_t main, helper, leaf, fib, square, twice;
    unsigned helper_line; /* the line sample_helper is declared on */
    unsigned fib_line;    /* the line sample_fib is defined on (one line) */
};
void tb_sample_functions(struct tb_sample *s);

/* The sample trace: pid 4242, INFO ns_per_tick 2 (END refines it to 1),
 * start tick 1000 = Unix ns 1e9, the running executable as module, and:
 *   thread 100 "main", two uncompressed chunks (calls stay open across):
 *     1000 main { 1010 helper { 1020 leaf } 1050 } 1060 } 1100
 *     1200 fib { 1210 fib { 1220 fib } 1230 } 1240 1250 fib } 1255 } 1300
 *   thread 101 "worker", one zstd chunk:
 *     2000 square { 2010 [0x10] } 2020; switched out 5 ticks at 2030; } 2040
 *     2060 twice { 2090 square } 2100
 *     (twice still open: it ends at 2100)
 *   END at tick 3000, no event lost.
 * Expected, in ns: main 1 call total 100 self 50; helper 1/50/20; leaf
 * 1/30/30; fib 4 calls total 100 self 100 min 5 max 100 sum 145; square 2
 * calls total 50 self 40 min 10 max 40 switched 5; 0x10 1/10/10; twice
 * 1/40/30. Thread totals 200 and 80. WITH_END false leaves END out. */
void tb_sample_trace(struct tb *b, const struct tb_sample *s, bool with_end);

/* Losses: pid 4646, 1 ns per tick, the running executable as module:
 *   thread 300 "main": 0 main { 10 helper { 20 leaf } 25 [LOST 20 at 30]
 *     40 leaf } 50, then exits at 60 and 70 with nothing open (ignored);
 *   thread 301 "worker": 100 square } 110;
 *   thread 302 (no name): a LOST of 150 at 200, nothing else;
 *   thread 303 "waiting": a name, no event;
 *   END at tick 300, 270 events lost (100 more than the LOST records say).
 * (Each count is one a thread can have lost: at most one event a ns.)
 * Expected: main 1 call total 30 self 10 and helper 1/20/15, both closed
 * at the LOST (thread 300: lost 20, closed_at_loss 2); leaf 2 calls
 * total 15; square 1/10/10; thread totals 40 and 10; 4 threads, 2 of them
 * (302, 303) without calls; 270 events lost in threads 300 and 302. */
void tb_lossy_trace(struct tb *b, const struct tb_sample *s);

/* Basic-block counts (docs/blocks.md): pid 4343, the running executable
 * as module, no events, two BLOCKS chunks: lost 5, sample_fib 7 times,
 * sample_leaf 4; lost 2, sample_fib 3 times, address 0x10 twice; END.
 * Expected: sample_fib 10 (one block, on fib_line), sample_leaf 4, 0x10 2
 * (no function, no line), 7 executions lost. */
void tb_blocks_trace(struct tb *b, const struct tb_sample *s);

/* Samples (docs/sampling.md): pid 4545, ns_per_tick 1, start tick 0 = Unix
 * ns 1e9, the running executable as module, SAMPLING at tick 0: 1000 Hz,
 * period 1 ms, frame pointers, CPU time, return addresses. Stacks:
 *   thread 200 "main": 3 samples main > helper > leaf (overruns 0, 1, 0:
 *     4 periods), at ticks 1000, 2000, 3000; main > square at 4000
 *     (skipped 2); main > fib > fib at 5000;
 *   thread 201 "worker": twice > square at 1500 and 2500; twice > 0x10 (in
 *     no module) at 3500.
 *   END at tick 10000.
 * WITH_CALLS adds one call of main on thread 200 from tick 500 to 6000.
 * Expected: 8 samples, 9 periods, 2 skipped; PCs leaf 3 samples 4 periods,
 * square 3/3, fib 1/1, 0x10 1/1 (no function). From the samples (in ms):
 * main 5 samples total 6 self 0; helper 3/4/0; leaf 3/4/4; square 3/3/3;
 * fib 1/1/1 (recursion once); twice 3/3/0; 0x10 1/1/1. Threads: 5 samples
 * 6 ms, 3 samples 3 ms. */
void tb_samples_trace(struct tb *b, const struct tb_sample *s, bool with_calls);

#endif
