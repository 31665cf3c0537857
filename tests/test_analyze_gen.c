/* test_analyze_gen.c - writes the traces the shell tests of the view
 * commands run on (test_analyze_cli.sh, test_views_cli.sh, test_dump_cli.sh,
 * test_flame_cli.sh), and the fuzz seed corpus: `test_analyze_gen KIND DIR`.
 * Names resolve against this executable (tb_sample_trace), or against a
 * copy of it with one symbol renamed to hostile bytes (hostile). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/trace_format.h"
#include "trace_builder.h"

#define BIG_BYTES (9u << 20) /* over the progress bar's 8 MiB */

static const char *out_dir;

static void save(const struct tb *b, const char *name, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    if (tb_write_prefix(b, path, len) != 0) {
        perror(path);
        exit(1);
    }
}

/* "hostile": a copy of this executable in which this function's name is
 * HOSTILE_NAME (markup, a control character, bytes that are not UTF-8, a
 * noncharacter), and a trace calling it, on a thread with a name as bad. */
#define PLACEHOLDER hostile_name_placeholder_for_the_flame_test
#define STR(x) STR_(x)
#define STR_(x) #x
#define HOSTILE_NAME "x<&\">'\x01\xff\xfe]]>\xc3(\xef\xbf\xbe--y"
static volatile int hostile_sink;
__attribute__((noinline)) static void PLACEHOLDER(void) { hostile_sink++; }

/* Writes this executable to PATH with every PLACEHOLDER name (.strtab,
 * .debug_str) replaced by HOSTILE_NAME; the build-id stays. */
static void write_renamed_self(const char *path)
{
    FILE *in = fopen("/proc/self/exe", "rb");
    if (!in) {
        perror("/proc/self/exe");
        exit(1);
    }
    struct tb image;
    tb_init(&image);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        tb_raw(&image, buf, n);
    fclose(in);
    static const char from[] = STR(PLACEHOLDER), to[] = HOSTILE_NAME;
    _Static_assert(sizeof to <= sizeof from, "the new name must fit in the old one's place");
    int renamed = 0;
    for (uint8_t *p = image.data; (p = memmem(p, image.len - (size_t)(p - image.data), from, sizeof from));
         p += sizeof from, renamed++) {
        memset(p, 0, sizeof from);
        memcpy(p, to, sizeof to);
    }
    if (!renamed || tb_write(&image, path) != 0) {
        fprintf(stderr, "test_analyze_gen: cannot write %s\n", path);
        exit(1);
    }
    tb_free(&image);
}

static void hostile(struct tb *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/renamed.elf", out_dir);
    write_renamed_self(path);
    struct tb_self self;
    tb_self(&self);
    struct tb_sample s;
    tb_sample_functions(&s);
    tb_header(b);
    tb_info(b, 4343, 1, 1.0, 0, 0, "monotonic", 0, NULL);
    tb_module(b, self.bias, self.start, self.end, self.build_id, self.build_id_len, path);
    tb_thread(b, 7, "t<&>\"\xff\x02");
    tb_events_begin(b, 7, 0);
    tb_enter(b, 0, (uint64_t)(uintptr_t)PLACEHOLDER);
    tb_enter(b, 10, s.main);
    tb_exit(b, 30);
    tb_exit(b, 100);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 100, 0, 1.0);
}

/* "twins": this executable mapped twice, the second time as a copy
 * (twin.elf, beside the trace) TWIN_OFFSET bytes higher, so that the
 * sample functions are in two modules under one name each. Thread 9:
 *   0 main { 10 main (twin) { 20 leaf } 30 } 40; 50 helper (twin) } 60
 * Expected names: "sample_main [test_analyze_gen]" (1 call, total 40,
 * self 20), "sample_main [twin.elf]" (1/20/10), sample_leaf (1/10/10),
 * sample_helper (1/10/10): one module each, their names alone. */
#define TWIN_OFFSET 0x10000000u
static void twins(struct tb *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/twin.elf", out_dir);
    FILE *in = fopen("/proc/self/exe", "rb");
    if (!in) {
        perror("/proc/self/exe");
        exit(1);
    }
    struct tb image;
    tb_init(&image);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        tb_raw(&image, buf, n);
    fclose(in);
    if (tb_write(&image, path) != 0) {
        perror(path);
        exit(1);
    }
    tb_free(&image);
    struct tb_self self;
    tb_self(&self);
    struct tb_sample s;
    tb_sample_functions(&s);
    tb_header(b);
    tb_info(b, 9, 1, 1.0, 0, 1000000000ull, "monotonic", 0, NULL);
    tb_module_self(b);
    tb_module(b, self.bias + TWIN_OFFSET, self.start + TWIN_OFFSET, self.end + TWIN_OFFSET, self.build_id,
              self.build_id_len, path);
    tb_events_begin(b, 9, 0);
    tb_enter(b, 0, s.main);
    tb_enter(b, 10, s.main + TWIN_OFFSET);
    tb_enter(b, 20, s.leaf);
    tb_exit(b, 30);
    tb_exit(b, 30);
    tb_exit(b, 40);
    tb_enter(b, 50, s.helper + TWIN_OFFSET);
    tb_exit(b, 60);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 60, 0, 1.0);
}

static void sample(struct tb *b, bool with_end)
{
    struct tb_sample s;
    tb_sample_functions(&s);
    tb_sample_trace(b, &s, with_end);
}

/* The start of a trace of process PID (1 ns per tick) calling the sample
 * functions, whose addresses go to *S. */
static void begin_self(struct tb *b, uint32_t pid, struct tb_sample *s)
{
    tb_sample_functions(s);
    tb_header(b);
    tb_info(b, pid, 1, 1.0, 0, 0, "monotonic", 0, NULL);
    tb_module_self(b);
}

/* A trace of SIZE bytes or more: many short chunks of calls. */
static void big(struct tb *b, size_t size)
{
    struct tb_sample s;
    begin_self(b, 7, &s);
    uint64_t t = 0;
    while (b->len < size) {
        tb_events_begin(b, 7, t);
        for (int i = 0; i < 4096; i++) {
            tb_enter(b, t += 3, s.main);
            tb_enter(b, t += 2, s.leaf);
            tb_exit(b, t += 5);
            tb_exit(b, t += 1);
        }
        tb_events_end(b, NP_COMPRESS_NONE);
    }
    tb_end(b, t, 0, 1.0);
}

/* sample_fib recursing DEPTH deep, one tick per entry and exit: the
 * views walk deep trees without recursing themselves. */
static void deep(struct tb *b, int depth)
{
    struct tb_sample s;
    begin_self(b, 8, &s);
    uint64_t t = 0;
    tb_events_begin(b, 8, t);
    for (int i = 0; i < depth; i++)
        tb_enter(b, t++, s.fib);
    for (int i = 0; i < depth; i++)
        tb_exit(b, t++);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, t, 0, 1.0);
}

/* "deepmix": main calling fib, which recurses 150 deep; the innermost fib
 * calls leaf, and so does the outermost once the recursion is back:
 *   0 main { 1 fib { 2 fib { ... 150 fib { 151 leaf } 152 } 153 ... } 301
 *   302 leaf } 303 } 304 } 305
 * (fib at level k, 1 to 150, runs from k to 303 - k). */
static void deep_mix(struct tb *b)
{
    struct tb_sample s;
    begin_self(b, 8, &s);
    tb_events_begin(b, 8, 0);
    tb_enter(b, 0, s.main);
    for (uint64_t k = 1; k <= 150; k++)
        tb_enter(b, k, s.fib);
    tb_enter(b, 151, s.leaf);
    tb_exit(b, 152);
    for (uint64_t t = 153; t <= 301; t++)
        tb_exit(b, t);
    tb_enter(b, 302, s.leaf);
    tb_exit(b, 303);
    tb_exit(b, 304);
    tb_exit(b, 305);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 305, 0, 1.0);
}

/* sample_fib and sample_helper calling each other DEPTH deep in all. */
static void deep_ab(struct tb *b, int depth)
{
    struct tb_sample s;
    begin_self(b, 8, &s);
    uint64_t t = 0;
    tb_events_begin(b, 8, t);
    for (int i = 0; i < depth; i++)
        tb_enter(b, t++, i % 2 ? s.helper : s.fib);
    for (int i = 0; i < depth; i++)
        tb_exit(b, t++);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, t, 0, 1.0);
}

/* Calls at equal times, for the exporters' nesting (test_dump_cli.sh):
 * main [100,100] { leaf [100,100] }, helper [100,105] { leaf [100,102] },
 * fib [105,105], fib [105,110] { fib [105,105] }, leaf [110,110]. */
static void ties(struct tb *b)
{
    struct tb_sample s;
    begin_self(b, 7, &s);
    tb_events_begin(b, 7, 100);
    tb_enter(b, 100, s.main);
    tb_enter(b, 100, s.leaf);
    tb_exit(b, 100);
    tb_exit(b, 100);
    tb_enter(b, 100, s.helper);
    tb_enter(b, 100, s.leaf);
    tb_exit(b, 102);
    tb_exit(b, 105);
    tb_enter(b, 105, s.fib);
    tb_exit(b, 105);
    tb_enter(b, 105, s.fib);
    tb_enter(b, 105, s.fib);
    tb_exit(b, 105);
    tb_exit(b, 110);
    tb_enter(b, 110, s.leaf);
    tb_exit(b, 110);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 200, 0, 1.0);
}

/* Recording began inside two calls (a forked child, a late start): their
 * returns come first, with no call open, then one whole call. */
static void before(struct tb *b)
{
    struct tb_sample s;
    begin_self(b, 7, &s);
    tb_events_begin(b, 7, 100);
    tb_enter(b, 100, s.leaf);
    tb_exit(b, 110);
    tb_exit(b, 120); /* of a call that began before recording */
    tb_exit(b, 130); /* and of its caller */
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 200, 0, 1.0);
}

/* Small traces for the fuzzer to start from: valid ones using every
 * chunk and event kind, and a few damaged ones. */
/* The offset of the Nth (from 1) chunk of TYPE in B. */
static size_t nth_chunk(const struct tb *b, uint32_t type, int n)
{
    size_t hs = np_trace_chunk_header_size(b->version ? b->version : NP_TRACE_VERSION);
    for (size_t at = NP_TRACE_HEADER_SIZE; at + hs <= b->len; at += hs + np_get_u32(b->data + at + 4))
        if (np_get_u32(b->data + at) == type && !--n)
            return at;
    fprintf(stderr, "test_analyze_gen: no such chunk\n");
    exit(1);
}

/* A BLOCKS chunk that claims 3 blocks and holds 2. */
static void blocks_corrupt(struct tb *b)
{
    tb_header(b);
    tb_info(b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_blocks(b, 0, 3, (const uint64_t[]){ 0x1000, 1, 0x2000, 2 }, 2);
    tb_end(b, 10, 0, 1.0);
}

static void corpus(void)
{
    struct tb b;
    tb_init(&b);
    sample(&b, true);
    save(&b, "sample.npt", b.len);
    save(&b, "sample-cut.npt", b.len - 30);
    tb_free(&b);

    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 9, 1, 0.5, 100, 5000, "tsc", 1, (const char *const[]){ "x" });
    tb_module(&b, 0x1000, 0x2000, 0x3000, "\xab\xcd", 2, "/nonexistent");
    tb_thread(&b, 9, "t");
    tb_events_begin(&b, 9, 100);
    tb_enter(&b, 100, 0x2100);
    tb_lost(&b, 110, 4);
    tb_switch(&b, 120, 3);
    tb_enter(&b, 130, 0x2010);
    tb_exit(&b, 140);
    tb_events_end(&b, NP_COMPRESS_ZSTD);
    tb_chunk(&b, 99, "skip", 4); /* unknown type: skipped */
    tb_end(&b, 150, 0, 0.5);
    save(&b, "kinds.npt", b.len);
    tb_free(&b);

    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 9, 1, 1.0, 0, 0, "c", 0, NULL);
    tb_events_begin(&b, 9, 0);
    tb_event_kind(&b, 5, 7);
    tb_events_end(&b, NP_COMPRESS_NONE);
    save(&b, "reserved-kind.npt", b.len);
    tb_free(&b);

    /* samples: SAMPLING, then SAMPLEs among calls, plain and zstd */
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 11, 1, 1.0, 0, 0, "tsc", 0, NULL);
    tb_module(&b, 0, 0x1000, 0x3000, "", 0, "/nonexistent");
    tb_sampling(&b, 0, 997, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 1003009, 128);
    for (unsigned z = 0; z < 2; z++) {
        tb_events_begin(&b, 11 + z, 10 * z);
        tb_enter(&b, 10 * z, 0x1100);
        tb_sample(&b, 10 * z + 2, (const uint64_t[]){ 0x1180, 0x2010, 0x7f0000001000 }, 3, 0, 0);
        tb_sample(&b, 10 * z + 4, (const uint64_t[]){ 0x1104 }, 1, 3, 1);
        tb_exit(&b, 10 * z + 6);
        tb_events_end(&b, z ? NP_COMPRESS_ZSTD : NP_COMPRESS_NONE);
    }
    tb_sampling(&b, 30, 0, NP_UNWIND_FP, 0, 0, 128);
    tb_end(&b, 40, 0, 1.0);
    save(&b, "samples.npt", b.len);
    tb_free(&b);

    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 12, 1, 1.0, 0, 0, "tsc", 0, NULL);
    tb_events_begin(&b, 12, 0);
    tb_sample(&b, 1, (const uint64_t[]){ 0x1180 }, 1, 0, 0);
    tb_event_bytes(&b, (const uint8_t[]){ NP_EV_SAMPLE, 0x81, 0x02, 0, 0 }, 5, 1); /* 257 frames */
    tb_events_end(&b, NP_COMPRESS_NONE);
    save(&b, "sample-too-deep.npt", b.len);
    tb_free(&b);

    tb_init(&b);
    tb_header_version(&b, NP_TRACE_VERSION + 1);
    save(&b, "version-next.npt", b.len);
    tb_free(&b);

    /* version 1, without checksums; damage the checksums find: a bit of
     * an EVENTS chunk's stream, of a chunk's length (resynchronised) */
    tb_init(&b);
    b.version = NP_TRACE_VERSION_V1;
    sample(&b, true);
    save(&b, "sample-v1.npt", b.len);
    tb_free(&b);
    tb_init(&b);
    sample(&b, true);
    size_t first = NP_TRACE_HEADER_SIZE, events = 0;
    for (size_t at = first; at + NP_TRACE_CHUNK_HEADER <= b.len && !events;
         at += NP_TRACE_CHUNK_HEADER + np_get_u32(b.data + at + 4))
        if (np_get_u32(b.data + at) == NP_CHUNK_EVENTS)
            events = at;
    b.data[events + NP_TRACE_CHUNK_HEADER + 21 + 3] ^= 0x10;
    save(&b, "sample-damaged.npt", b.len);
    b.data[events + NP_TRACE_CHUNK_HEADER + 21 + 3] ^= 0x10;
    b.data[events + 5] ^= 0x02;
    save(&b, "sample-length.npt", b.len);
    tb_free(&b);

    struct tb_sample s;
    tb_sample_functions(&s);
    tb_init(&b);
    tb_blocks_trace(&b, &s);
    save(&b, "blocks.npt", b.len);
    tb_free(&b);

    tb_init(&b);
    blocks_corrupt(&b);
    save(&b, "blocks-corrupt.npt", b.len);
    tb_free(&b);
}

/* "gmon" (tests/test_gmon_cli.sh): pid 4545, 1 ns per tick, the running
 * executable as module, sampled at 997 Hz (period 1003009 ns, CPU time);
 * thread 100:
 *   0 main { 10 helper { [20: PC helper+4, 1 period] [30: helper+4, 3
 *   periods] 40 leaf { [50: leaf+2, 1 period] } 60 } 70 80 helper { } 90
 *   100 0x10 { [105: PC 0x10, outside every module] } 110 } 130
 *   200 fib { 210 fib { } 220 } 230
 * then blocks: fib 7 times, leaf 4, address 0x10 twice; END at 300.
 * Expected: arcs main -> helper 2, helper -> leaf 1, fib -> fib 1 (and
 * main -> 0x10 1, outside the program); calls from the root: main, fib;
 * periods: helper+4 4, leaf+2 1 (0x10: 1, outside). */
static void gmon(struct tb *b)
{
    struct tb_sample s;
    begin_self(b, 4545, &s);
    tb_sampling(b, 0, 997, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 1003009, 128);
    tb_thread(b, 100, "main");
    tb_events_begin(b, 100, 0);
    tb_enter(b, 0, s.main);
    tb_enter(b, 10, s.helper);
    tb_sample(b, 20, (const uint64_t[]){ s.helper + 4, s.main + 8 }, 2, 0, 0);
    tb_sample(b, 30, (const uint64_t[]){ s.helper + 4, s.main + 8 }, 2, 2, 0);
    tb_enter(b, 40, s.leaf);
    tb_sample(b, 50, (const uint64_t[]){ s.leaf + 2, s.helper + 8, s.main + 8 }, 3, 0, 0);
    tb_exit(b, 60);
    tb_exit(b, 70);
    tb_enter(b, 80, s.helper);
    tb_exit(b, 90);
    tb_enter(b, 100, 0x10);
    tb_sample(b, 105, (const uint64_t[]){ 0x10 }, 1, 0, 0);
    tb_exit(b, 110);
    tb_exit(b, 130);
    tb_enter(b, 200, s.fib);
    tb_enter(b, 210, s.fib);
    tb_exit(b, 220);
    tb_exit(b, 230);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_blocks(b, 0, 3, (const uint64_t[]){ s.fib, 7, s.leaf, 4, 0x10, 2 }, 3);
    tb_end(b, 300, 0, 1.0);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: test_analyze_gen sample|noend|truncated|v1|damaged|impossible|version|corrupt|ties|blocks|blocks_corrupt|samples|samples_calls|gmon|gmon_empty|gmon_saturate|lossy|before|big|deep|deep-N|deepab-N|deepmix|twins|hostile|corpus DIR\n", stderr);
        return 2;
    }
    const char *kind = argv[1];
    out_dir = argv[2];
    mkdir(out_dir, 0777);
    struct tb b;
    tb_init(&b);
    if (!strcmp(kind, "sample") || !strcmp(kind, "noend") || !strcmp(kind, "truncated")) {
        sample(&b, strcmp(kind, "sample") == 0);
        save(&b, "4242.npt", !strcmp(kind, "truncated") ? b.len - 5 : b.len);
    } else if (!strcmp(kind, "v1")) { /* the sample trace in version 1 */
        b.version = NP_TRACE_VERSION_V1;
        sample(&b, true);
        save(&b, "4242.npt", b.len);
    } else if (!strcmp(kind, "damaged")) { /* a bit of thread 100's second chunk, the third */
        sample(&b, true);
        b.data[nth_chunk(&b, NP_CHUNK_EVENTS, 3) + NP_TRACE_CHUNK_HEADER + 21 + 2] ^= 0x08;
        save(&b, "4242.npt", b.len);
    } else if (!strcmp(kind, "impossible")) { /* version 1, END's lost count with bit 56 flipped */
        b.version = NP_TRACE_VERSION_V1;
        sample(&b, true);
        b.data[nth_chunk(&b, NP_CHUNK_END, 1) + NP_TRACE_CHUNK_HEADER_V1 + 8 + 7] ^= 0x01;
        save(&b, "4242.npt", b.len);
    } else if (!strcmp(kind, "version")) {
        tb_header_version(&b, NP_TRACE_VERSION + 1);
        tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
        save(&b, "1.npt", b.len);
    } else if (!strcmp(kind, "corrupt")) {
        tb_header(&b);
        tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
        tb_events_begin(&b, 1, 0);
        tb_enter(&b, 0, 0x1234);
        tb_exit(&b, 10);
        tb_event_kind(&b, 12, 7);
        tb_events_end(&b, NP_COMPRESS_NONE);
        save(&b, "1.npt", b.len);
    } else if (!strcmp(kind, "before")) {
        before(&b);
        save(&b, "7.npt", b.len);
    } else if (!strcmp(kind, "ties")) {
        ties(&b);
        save(&b, "7.npt", b.len);
    } else if (!strcmp(kind, "lossy")) {
        struct tb_sample s;
        tb_sample_functions(&s);
        tb_lossy_trace(&b, &s);
        save(&b, "4646.npt", b.len);
    } else if (!strcmp(kind, "blocks")) {
        struct tb_sample s;
        tb_sample_functions(&s);
        tb_blocks_trace(&b, &s);
        save(&b, "4343.npt", b.len);
    } else if (!strcmp(kind, "samples") || !strcmp(kind, "samples_calls")) {
        struct tb_sample s;
        tb_sample_functions(&s);
        tb_samples_trace(&b, &s, !strcmp(kind, "samples_calls"));
        save(&b, "4545.npt", b.len);
    } else if (!strcmp(kind, "blocks_corrupt")) {
        blocks_corrupt(&b);
        save(&b, "1.npt", b.len);
    } else if (!strcmp(kind, "gmon")) {
        gmon(&b);
        save(&b, "4545.npt", b.len);
    } else if (!strcmp(kind, "gmon_empty")) { /* a process that did nothing to profile */
        struct tb_sample s;
        begin_self(&b, 4546, &s);
        tb_end(&b, 10, 0, 1.0);
        save(&b, "4546.npt", b.len);
    } else if (!strcmp(kind, "gmon_saturate")) { /* 80002 periods at main+4: over a 16-bit bin */
        struct tb_sample s;
        begin_self(&b, 4547, &s);
        tb_sampling(&b, 0, 997, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME, 1003009, 128);
        tb_events_begin(&b, 1, 0);
        tb_enter(&b, 0, s.main);
        tb_sample(&b, 10, (const uint64_t[]){ s.main + 4 }, 1, 40000, 0);
        tb_sample(&b, 20, (const uint64_t[]){ s.main + 4 }, 1, 40000, 0);
        tb_exit(&b, 30);
        tb_events_end(&b, NP_COMPRESS_NONE);
        tb_end(&b, 40, 0, 1.0);
        save(&b, "4547.npt", b.len);
    } else if (!strcmp(kind, "big")) {
        big(&b, BIG_BYTES);
        save(&b, "7.npt", b.len);
    } else if (!strcmp(kind, "deep")) {
        deep(&b, 1000);
        save(&b, "8.npt", b.len);
    } else if (!strcmp(kind, "deepmix")) {
        deep_mix(&b);
        save(&b, "8.npt", b.len);
    } else if (!strncmp(kind, "deepab-", 7) && atoi(kind + 7) > 0) {
        deep_ab(&b, atoi(kind + 7));
        save(&b, "8.npt", b.len);
    } else if (!strncmp(kind, "deep-", 5) && atoi(kind + 5) > 0) { /* deep-N: N deep */
        deep(&b, atoi(kind + 5));
        save(&b, "8.npt", b.len);
    } else if (!strcmp(kind, "twins")) {
        twins(&b);
        save(&b, "9.npt", b.len);
    } else if (!strcmp(kind, "hostile")) {
        hostile(&b);
        save(&b, "4343.npt", b.len);
    } else if (!strcmp(kind, "corpus")) {
        corpus();
    } else {
        fprintf(stderr, "test_analyze_gen: unknown kind '%s'\n", kind);
        return 2;
    }
    tb_free(&b);
    return 0;
}
