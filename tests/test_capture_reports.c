/* test_capture_reports.c - a firmware's reports (REPORT chunks, records
 * of common/report_format.h) printed by `nanoprof import` on stdout,
 * exactly, named from the firmware's ELF (tests/programs/report_fw.c,
 * cross-compiled: Thumb functions, a C++ one, strings in .rodata, the
 * runtime's messages in .np_msg), on captures built here byte by byte as
 * a target sends them: reports beside a trace (before and after its END),
 * reports only (nothing written), a chunk other than REPORT after END, no
 * END, a capture cut inside a report after END, a damaged report, a
 * malformed one, and records of types no nanoprof writes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/debug_file.h"
#include "common/report_format.h"
#include "common/trace_format.h"

#ifndef REPORT_FW
#error "REPORT_FW: the ELF of tests/programs/report_fw.c"
#endif

/* ---- the firmware's ELF ------------------------------------------------------------- */

static int elf_fd = -1;
static Elf *elf;
static uint8_t build_id[NP_BUILD_ID_MAX];
static size_t build_id_len;

static int open_elf(void **state)
{
    (void)state;
    elf_version(EV_CURRENT);
    elf_fd = open(REPORT_FW, O_RDONLY);
    elf = elf_fd >= 0 ? elf_begin(elf_fd, ELF_C_READ, NULL) : NULL;
    if (!elf)
        return -1;
    build_id_len = np_elf_build_id(elf, build_id, sizeof build_id);
    return build_id_len ? 0 : -1;
}

static int close_elf(void **state)
{
    (void)state;
    elf_end(elf);
    close(elf_fd);
    return 0;
}

/* The value of the symbol NAME: an address (a Thumb function's with bit 0
 * set), or, in .np_msg, an offset there. */
static uint64_t sym(const char *name)
{
    Elf_Scn *scn = np_elf_section(elf, ".symtab");
    GElf_Shdr sh;
    Elf_Data *d = scn && gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
    for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
        GElf_Sym s;
        const char *n = gelf_getsym(d, (int)i, &s) ? elf_strptr(elf, sh.sh_link, s.st_name) : NULL;
        if (n && strcmp(n, name) == 0)
            return s.st_value;
    }
    fail_msg("%s: no symbol %s", REPORT_FW, name);
    return 0;
}

/* ---- captures, byte by byte ------------------------------------------------------------ */

struct bytes {
    uint8_t b[4096];
    size_t n;
};

static void put(struct bytes *c, const void *p, size_t n)
{
    assert_true(c->n + n <= sizeof c->b);
    memcpy(c->b + c->n, p, n);
    c->n += n;
}

static void put_int(struct bytes *c, uint64_t v, unsigned size)
{
    uint8_t b[8];
    np_put_u64(b, v);
    put(c, b, size);
}

static void put_str(struct bytes *c, const void *s, size_t n)
{
    put_int(c, n, 2);
    put(c, s, n);
}

static void put_one(struct bytes *c) /* 1.0 as a double's bits: ns_per_tick */
{
    double one = 1.0;
    uint64_t bits;
    memcpy(&bits, &one, sizeof bits);
    put_int(c, bits, 8);
}

/* The firmware's own text, between chunks. */
static void text(struct bytes *c, const char *s)
{
    put(c, s, strlen(s));
}

/* A chunk of TYPE with payload P, sealed; its offset. */
static size_t chunk(struct bytes *c, uint32_t type, const struct bytes *p)
{
    size_t at = c->n;
    uint8_t h[NP_TRACE_CHUNK_HEADER];
    np_trace_chunk_header(h, type, (uint32_t)p->n);
    put(c, h, sizeof h);
    put(c, p->b, p->n);
    np_trace_chunk_seal(c->b + at);
    return at;
}

/* A firmware's start: text, the trace's header, INFO (cycles), MODULE
 * (the ELF's build-id, the whole address space). */
static void start(struct bytes *c)
{
    uint8_t h[NP_TRACE_HEADER_SIZE];
    struct bytes p = { .n = 0 };
    text(c, "boot\n");
    np_trace_file_header(h);
    put(c, h, sizeof h);
    put_int(&p, 0, 4); /* pid, ppid */
    put_int(&p, 0, 4);
    put_one(&p);
    put_int(&p, 0, 8); /* start tick, start ns */
    put_int(&p, 0, 8);
    put_str(&p, "cycles", 6);
    put_int(&p, 0, 2); /* argc */
    chunk(c, NP_CHUNK_INFO, &p);
    p.n = 0;
    put_int(&p, 0, 8); /* bias, start, end */
    put_int(&p, 0, 8);
    put_int(&p, 0xffffffffu, 8);
    put_str(&p, build_id, build_id_len);
    put_str(&p, "", 0);
    chunk(c, NP_CHUNK_MODULE, &p);
}

/* Thread 1 and one call of worker in it: 2 events. */
static void events(struct bytes *c)
{
    struct bytes p = { .n = 0 };
    put_int(&p, 1, 4);
    put_str(&p, "main", 4);
    chunk(c, NP_CHUNK_THREAD, &p);
    uint8_t rec[2 * NP_TRACE_RECORD_MAX], head[NP_TRACE_EVENTS_PREFIX];
    uint64_t prev = 0;
    size_t n = np_trace_put_record(rec, 10, NP_EV_ENTRY, sym("worker"), &prev);
    n += np_trace_put_record(rec + n, 5, NP_EV_EXIT, 0, &prev);
    np_trace_events_prefix(head, 1, 100, 2, NP_COMPRESS_NONE, (uint32_t)n, (uint32_t)n);
    size_t at = c->n;
    put(c, head, sizeof head);
    put(c, rec, n);
    np_trace_chunk_seal(c->b + at);
}

static void end(struct bytes *c)
{
    struct bytes p = { .n = 0 };
    put_int(&p, 200, 8); /* end tick, lost */
    put_int(&p, 0, 8);
    put_one(&p);
    chunk(c, NP_CHUNK_END, &p);
}

/* A REPORT chunk of record TYPE with its N values V; its offset. */
static size_t report(struct bytes *c, unsigned type, const uint64_t *v, size_t n)
{
    struct bytes p = { .n = 0 };
    put_int(&p, type, NP_TRACE_REPORT_TYPE);
    for (size_t i = 0; i < n; i++)
        put_int(&p, v[i], NP_TRACE_REPORT_VALUE);
    return chunk(c, NP_CHUNK_REPORT, &p);
}
#define VALUES(...) (const uint64_t[]){ __VA_ARGS__ }, sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)

/* Records every test uses, and their lines. */
static size_t error_report(struct bytes *c)
{
    return report(c, NP_REP_ERROR, VALUES(1, sym("msg_where"), sym("msg_what")));
}
#define ERROR_LINE "nanoprof: np_stats_init: buffer is NULL\n"
static size_t worker_report(struct bytes *c)
{
    return report(c, NP_REP_COST_FN, VALUES(sym("worker"), 0, 3, 3000, 2000, 900, 1100));
}
#define WORKER_LINE "worker: count 3, cost 3000, self 2000, min 900, max 1100\n"
static size_t block_report(struct bytes *c)
{
    return report(c, NP_REP_BLOCK, VALUES((sym("helper") & ~(uint64_t)1) + 6, 12));
}
#define BLOCK_LINE "helper+0x6: 12\n"

/* ---- nanoprof import -------------------------------------------------------------------- */

struct run {
    char base[200];
    char cap[256], out[256], err[256], dir[256];
    int status;
    char stdout_text[4096], stderr_text[4096];
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = 0;
}

/* `nanoprof import CAPTURE --elf REPORT_FW -o DIR` on capture C, in a
 * fresh directory named NAME: its exit status, stdout and stderr. */
static void import(struct run *r, const char *name, const struct bytes *c)
{
    snprintf(r->base, sizeof r->base, "%s/reports_%s_%d", TMP_DIR, name, (int)getpid());
    nftw(r->base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    assert_int_equal(mkdir(r->base, 0755), 0);
    snprintf(r->cap, sizeof r->cap, "%s/capture", r->base);
    snprintf(r->out, sizeof r->out, "%s/stdout", r->base);
    snprintf(r->err, sizeof r->err, "%s/stderr", r->base);
    snprintf(r->dir, sizeof r->dir, "%s/trace", r->base);
    FILE *f = fopen(r->cap, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(c->b, 1, c->n, f), c->n);
    assert_int_equal(fclose(f), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(r->out, "w", stdout) || !freopen(r->err, "w", stderr))
            _exit(126);
        execl(NP_CLI, NP_CLI, "import", r->cap, "--elf", REPORT_FW, "-o", r->dir, (char *)NULL);
        _exit(126);
    }
    assert_true(pid > 0);
    while (waitpid(pid, &r->status, 0) < 0)
        ;
    assert_true(WIFEXITED(r->status));
    slurp(r->out, r->stdout_text, sizeof r->stdout_text);
    slurp(r->err, r->stderr_text, sizeof r->stderr_text);
}

static void run_cleanup(struct run *r)
{
    nftw(r->base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static bool written(const struct run *r)
{
    struct stat st;
    char file[300];
    snprintf(file, sizeof file, "%s/firmware.npt", r->dir);
    return stat(file, &st) == 0;
}

/* The exit status, the exact stdout and stderr (STDERR_FMT formatted). */
static void expect(const struct run *r, int status, const char *out, const char *stderr_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void expect(const struct run *r, int status, const char *out, const char *stderr_fmt, ...)
{
    char want[4096];
    va_list ap;
    va_start(ap, stderr_fmt);
    vsnprintf(want, sizeof want, stderr_fmt, ap);
    va_end(ap);
    assert_string_equal(r->stderr_text, want);
    assert_string_equal(r->stdout_text, out);
    assert_int_equal(WEXITSTATUS(r->status), status);
}

/* ---- the tests ----------------------------------------------------------------------------- */

/* Reports among the trace's chunks and after its END, every kind of name:
 * a runtime message (.np_msg), functions (Thumb, C++), an offset in one,
 * the program's strings (.rodata); a value more than the type has is
 * ignored, an address in no function shown as it is. The trace is
 * written, the reports counted in the summary. */
static void test_reports_and_trace(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    events(&c);
    text(&c, "tick\n");
    error_report(&c);
    worker_report(&c);
    report(&c, NP_REP_COST_FN, VALUES(sym("_ZN6Sensor4readEi"), 0, 1, 50, 50, 50, 50));
    block_report(&c);
    end(&c);
    text(&c, "stats\n");
    report(&c, NP_REP_SECTION,
           VALUES(1, sym("section_name"), 10, 500, 1000, sym("msg_cycles"), 42, sym("msg_insns"), 7));
    report(&c, NP_REP_COST_FN, VALUES(sym("region_name"), 1, 2, 80, 60, 30, 50));
    report(&c, NP_REP_BLOCK, VALUES(0x10, 5, 99));
    text(&c, "done\n");
    struct run r;
    import(&r, "trace", &c);
    expect(&r, 0,
           ERROR_LINE WORKER_LINE "Sensor::read: count 1, cost 50, self 50, min 50, max 50\n" BLOCK_LINE
           "sensor loop: count 10, time 500, 50.0% of global, cycles 42, instructions 7\n"
           "filter stage: count 2, cost 80, self 60, min 30, max 50\n"
           "0x10: 5\n",
           "nanoprof import: 2 events of 1 thread, 0 lost, 7 reports, into %s\n", r.dir);
    assert_true(written(&r));
    run_cleanup(&r);
}

/* A firmware that only dumps: its reports printed, no trace directory,
 * no line on a missing END (there is no trace to have lost events). */
static void test_reports_only(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    text(&c, "dump:\n");
    error_report(&c);
    worker_report(&c);
    text(&c, "end of dump\n");
    struct run r;
    import(&r, "only", &c);
    expect(&r, 0, ERROR_LINE WORKER_LINE, "nanoprof import: 2 reports, no trace events (nothing written)\n");
    assert_false(written(&r));
    assert_int_equal(access(r.dir, F_OK), -1);
    run_cleanup(&r);
}

/* After END a chunk other than REPORT ends the walk, said as before; the
 * reports before it are printed, those after it not. */
static void test_other_chunk_after_end(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 }, p = { .n = 0 };
    start(&c);
    events(&c);
    end(&c);
    block_report(&c);
    put_int(&p, 2, 4);
    put_str(&p, "", 0);
    size_t other = chunk(&c, NP_CHUNK_THREAD, &p);
    worker_report(&c);
    struct run r;
    import(&r, "other", &c);
    expect(&r, 0, BLOCK_LINE,
           "nanoprof import: 2 events of 1 thread, 0 lost, 1 report, into %s\n"
           "nanoprof import: whole chunks follow the trace's END, from offset %zu: not read (a ring that wrapped, "
           "its older chunks after its newer?)\n",
           r.dir, other);
    run_cleanup(&r);
}

/* Events and reports without END: the missing END is said. */
static void test_trace_without_end(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    events(&c);
    worker_report(&c);
    struct run r;
    import(&r, "noend", &c);
    expect(&r, 0, WORKER_LINE,
           "nanoprof import: 2 events of 1 thread, 0 lost, 1 report, into %s\n"
           "nanoprof import: the trace has no END chunk (the firmware did not call np_trace_stop): its lost "
           "events are not known\n",
           r.dir);
    run_cleanup(&r);
}

/* The capture ends inside a report after END: the reports before it
 * printed, the cut said. */
static void test_cut_after_end(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    events(&c);
    end(&c);
    worker_report(&c);
    size_t cut = block_report(&c);
    size_t whole = c.n - cut;
    c.n = cut + 20;
    struct run r;
    import(&r, "cut", &c);
    expect(&r, 0, WORKER_LINE,
           "nanoprof import: 2 events of 1 thread, 0 lost, 1 report, into %s\n"
           "nanoprof import: the capture is cut: it ends 20 bytes into the %zu-byte chunk at offset %zu, after "
           "the trace's END; the trace holds the 6 whole chunks before it\n",
           r.dir, whole, cut);
    run_cleanup(&r);
}

/* A report whose checksum fails: said with its offset, skipped and
 * counted; the others printed. */
static void test_damaged_report(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    error_report(&c);
    text(&c, "a\n");
    size_t bad = worker_report(&c);
    size_t bytes = c.n - bad;
    /* a bit of its count */
    c.b[bad + NP_TRACE_CHUNK_HEADER + NP_TRACE_REPORT_TYPE + 2 * NP_TRACE_REPORT_VALUE] ^= 0x10;
    text(&c, "b\n");
    block_report(&c);
    struct run r;
    import(&r, "damaged", &c);
    expect(&r, 0, ERROR_LINE BLOCK_LINE,
           "nanoprof import: warning: %s: offset %zu: damaged REPORT chunk (checksum mismatch): skipped %zu bytes\n"
           "nanoprof import: 2 reports, 1 damaged chunk skipped (%zu bytes), no trace events (nothing written)\n",
           r.cap, bad, bytes, bytes);
    assert_false(written(&r));
    run_cleanup(&r);
}

/* A REPORT whose checksum holds but whose payload is no record: a length
 * not 2 + 8 N, more values than a record has, fewer than its type has.
 * Corrupt: said with its offset, the reading ends there (exit 1), the
 * reports before it printed. */
static void test_malformed_report(void **state)
{
    (void)state;
    static const struct {
        size_t values, extra;
        unsigned type;
        const char *says;
    } cases[] = {
#define NOT_A_RECORD " is not a record (a 2-byte type, then up to 9 values of 8 bytes)"
        { 1, 3, NP_REP_BLOCK, "REPORT chunk of 13 bytes" NOT_A_RECORD },
        { 10, 0, NP_REP_SECTION, "REPORT chunk of 82 bytes" NOT_A_RECORD },
        { 3, 0, NP_REP_COST_FN, "REPORT record of type 2 holds 3 values, its type has 7" },
#undef NOT_A_RECORD
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct bytes c = { .n = 0 }, p = { .n = 0 };
        start(&c);
        error_report(&c);
        put_int(&p, cases[i].type, NP_TRACE_REPORT_TYPE);
        for (size_t k = 0; k < cases[i].values; k++)
            put_int(&p, sym("worker"), NP_TRACE_REPORT_VALUE);
        put(&p, "\1\2\3", cases[i].extra);
        size_t bad = chunk(&c, NP_CHUNK_REPORT, &p);
        worker_report(&c);
        struct run r;
        import(&r, "malformed", &c);
        expect(&r, 1, ERROR_LINE,
               "nanoprof import: %s: offset %zu: %s\n"
               "nanoprof import: 1 report, no trace events (nothing written)\n",
               r.cap, bad, cases[i].says);
        run_cleanup(&r);
    }
}

/* Records of types no nanoprof writes: each said with its offset and
 * skipped, counted; exit 0. */
static void test_unknown_type(void **state)
{
    (void)state;
    struct bytes c = { .n = 0 };
    start(&c);
    size_t high = report(&c, NP_REPORT_TYPE_LAST + 1, VALUES(1, 2));
    size_t zero = report(&c, 0, NULL, 0);
    worker_report(&c);
    struct run r;
    import(&r, "unknown", &c);
    expect(&r, 0, WORKER_LINE,
           "nanoprof import: warning: a report record of unknown type %d at offset %zu: skipped\n"
           "nanoprof import: warning: a report record of unknown type 0 at offset %zu: skipped\n"
           "nanoprof import: 1 report, 2 reports of unknown type skipped, no trace events (nothing written)\n",
           NP_REPORT_TYPE_LAST + 1, high, zero);
    run_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reports_and_trace),  cmocka_unit_test(test_reports_only),
        cmocka_unit_test(test_other_chunk_after_end), cmocka_unit_test(test_trace_without_end),
        cmocka_unit_test(test_cut_after_end),      cmocka_unit_test(test_damaged_report),
        cmocka_unit_test(test_malformed_report),   cmocka_unit_test(test_unknown_type),
    };
    return cmocka_run_group_tests(tests, open_elf, close_elf);
}
