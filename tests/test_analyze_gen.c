/* test_analyze_gen.c - writes the traces test_analyze_cli.sh runs
 * `nanoprof report` on, and the fuzz seed corpus: `test_analyze_gen KIND
 * DIR`. Names resolve against this executable (tb_sample_trace). */
#define _GNU_SOURCE
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

static void sample(struct tb *b, bool with_end)
{
    struct tb_sample s;
    tb_sample_functions(&s);
    tb_sample_trace(b, &s, with_end);
}

/* A trace of SIZE bytes or more: many short chunks of calls. */
static void big(struct tb *b, size_t size)
{
    struct tb_sample s;
    tb_sample_functions(&s);
    tb_header(b);
    tb_info(b, 7, 1, 1.0, 0, 0, "monotonic", 0, NULL);
    tb_module_self(b);
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

/* Small traces for the fuzzer to start from: valid ones using every
 * chunk and event kind, and a few damaged ones. */
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
    tb_event_kind(&b, 5, 6);
    tb_events_end(&b, NP_COMPRESS_NONE);
    save(&b, "reserved-kind.npt", b.len);
    tb_free(&b);

    tb_init(&b);
    tb_header_version(&b, 2);
    save(&b, "version2.npt", b.len);
    tb_free(&b);

    struct tb_sample s;
    tb_sample_functions(&s);
    tb_init(&b);
    tb_blocks_trace(&b, &s);
    save(&b, "blocks.npt", b.len);
    tb_free(&b);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: test_analyze_gen sample|noend|truncated|version|corrupt|blocks|blocks_corrupt|big|corpus DIR\n", stderr);
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
    } else if (!strcmp(kind, "version")) {
        tb_header_version(&b, 2);
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
    } else if (!strcmp(kind, "blocks")) {
        struct tb_sample s;
        tb_sample_functions(&s);
        tb_blocks_trace(&b, &s);
        save(&b, "4343.npt", b.len);
    } else if (!strcmp(kind, "blocks_corrupt")) {
        tb_header(&b);
        tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
        tb_blocks(&b, 0, 3, (const uint64_t[]){ 0x1000, 1, 0x2000, 2 }, 2);
        tb_end(&b, 10, 0, 1.0);
        save(&b, "1.npt", b.len);
    } else if (!strcmp(kind, "big")) {
        big(&b, BIG_BYTES);
        save(&b, "7.npt", b.len);
    } else if (!strcmp(kind, "corpus")) {
        corpus();
    } else {
        fprintf(stderr, "test_analyze_gen: unknown kind '%s'\n", kind);
        return 2;
    }
    tb_free(&b);
    return 0;
}
