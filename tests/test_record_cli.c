/* test_record_cli.c - `nanoprof record`: usage errors, a program that
 * cannot run, exit statuses, and recording a program that links no runtime
 * (tests/programs/rec_prog.c built without libnanoprof: the command
 * preloads libnanoprof.so). Not in sanitizer builds. */
#include "record_run.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>

static char cli[] = NP_CLI, prog[] = REC_PROG, fortify[] = REC_PROG_FORTIFY;

/* nanoprof record <args...>, run from r's directory (trace: -o r->dir). */
#define RECORD(r, ...) run_prog(r, (char *const[]){ cli, "record", __VA_ARGS__, NULL }, NULL, 0)

static void one_line_error(struct run *r, int status, const char *what)
{
    char first[1024];
    assert_true(WIFEXITED(r->status));
    assert_int_equal(WEXITSTATUS(r->status), status);
    assert_int_equal(count_lines(r->err, first, sizeof first), 1);
    if (!strstr(first, what))
        fail_msg("stderr '%s' lacks '%s'", first, what);
    assert_int_equal(count_lines(r->out, NULL, 0), 0);
}

static void test_help(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "help");
    RECORD(&r, "--help");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    FILE *f = fopen(r.out, "r");
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    static const char *const opts[] = { "-o, --output", "-F, --filter", "-N, --notrace", "-D, --depth",
                                        "--time-filter", "-b, --buffer", "NANOPROF_RECORD",
                                        "NANOPROF_FILTER", "NANOPROF_NOTRACE", "NANOPROF_DEPTH",
                                        "NANOPROF_MIN_NS", "NANOPROF_BUFFER", "NANOPROF_LIB" };
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (!strstr(text, opts[i]))
            fail_msg("--help does not mention %s", opts[i]);
    run_cleanup(&r);
}

static void test_usage_errors(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "usage");
    RECORD(&r, "-X", prog);
    one_line_error(&r, 2, "unknown option '-X'");
    RECORD(&r, "-o", r.dir);
    one_line_error(&r, 2, "no program to run");
    RECORD(&r, "-D", "0", prog);
    one_line_error(&r, 2, "-D: '0'");
    RECORD(&r, "--depth=x", prog);
    one_line_error(&r, 2, "-D: 'x'");
    RECORD(&r, "-b", "1k", prog);
    one_line_error(&r, 2, "-b: '1k'");
    RECORD(&r, "--time-filter", "5 min", prog);
    one_line_error(&r, 2, "--time-filter: '5 min'");
    RECORD(&r, "-o");
    one_line_error(&r, 2, "needs a value");
    run_cleanup(&r);
}

static void test_cannot_run(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "norun");
    RECORD(&r, "-o", r.dir, "/nonexistent/program");
    one_line_error(&r, 127, "cannot run '/nonexistent/program'");
    run_cleanup(&r);
}

static void test_record_threads(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "cli_threads");
    RECORD(&r, "-o", r.dir, "--", prog, "threads");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(r.nfiles, 1);
    const struct dec_file *f = &r.dec[0];
    if (f->err[0])
        fail_msg("%s", f->err);
    assert_true(f->has_end);
    assert_int_equal(f->nthreads, 3);
    uint64_t step = addr_of(&r, "main", "step"), leaf = addr_of(&r, "main", "leaf");
    uint32_t t1 = tid_with(f, step, 1000), t2 = tid_with(f, step, 3000);
    assert_true(t1 && t2);
    assert_int_equal(dec_count(f, t1, step, 1), 1000);
    assert_int_equal(dec_count(f, t2, leaf, 1), 3000);
    assert_int_equal(dec_count(f, 0, leaf, 0), 4010);
    assert_int_equal(dec_count(f, 0, leaf, 1), 4010);
    char first[1024];
    assert_int_equal(count_lines(r.err, first, sizeof first), 1);
    assert_true(strstr(first, "exited with status 0") && strstr(first, r.dir));
    /* a second run keeps the first as .old */
    RECORD(&r, "-o", r.dir, "-F", "a", "-b", "64k", prog, "tree");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(r.nfiles, 1);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "a"), 1), 3);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 1), 6);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "top"), 0), 0);
    char old[300];
    snprintf(old, sizeof old, "%s.old", r.dir);
    char names[8][256];
    assert_int_equal(dec_list(old, names, 8), 1);
    run_cleanup(&r);
}

static void test_statuses(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "cli_status");
    RECORD(&r, "-o", r.dir, prog, "exit");
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 3);
    assert_true(r.nfiles == 1 && r.dec[0].has_end && !r.dec[0].err[0]);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "deep"), 0), 10);

    RECORD(&r, "-o", r.dir, prog, "signal", "term");
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 128 + SIGTERM);
    assert_true(r.nfiles == 1 && r.dec[0].has_end && !r.dec[0].err[0]);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 1), 500);
    char first[1024];
    count_lines(r.err, first, sizeof first);
    assert_true(strstr(first, "killed by signal 15") != NULL);

    RECORD(&r, "-o", r.dir, prog, "fork");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(r.nfiles, 2);
    assert_true(!r.dec[0].err[0] && !r.dec[1].err[0] && r.dec[0].has_end && r.dec[1].has_end);

    RECORD(&r, "-o", r.dir, prog, "exec");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(r.nfiles, 2);
    assert_true(!r.dec[0].err[0] && !r.dec[1].err[0] && r.dec[0].has_end && r.dec[1].has_end);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "execd", "f4"), 1), 4);
    run_cleanup(&r);
}

/* Whether the file at PATH holds the string S (a dynamic symbol's name). */
static bool file_has(const char *path, const char *s)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = strlen(s), at = 0;
    int c;
    while (at < n && (c = getc(f)) != EOF)
        at = c == s[at] ? at + 1 : (c == s[0]);
    fclose(f);
    return at == n;
}

/* A program built as distributions build them (optimised, _FORTIFY_SOURCE:
 * its longjmp is __longjmp_chk), and sigsetjmp/siglongjmp: each jump
 * closes the calls it leaves, under the preloaded runtime. */
static void test_jumps(void **state)
{
    (void)state;
    assert_true(file_has(fortify, "__longjmp_chk"));
    struct run r;
    run_init(&r, "cli_jumps");
    char *const progs[] = { fortify, prog };
    const char *const modes[] = { "longjmp", "sigjmp" };
    for (int i = 0; i < 2; i++) {
        RECORD(&r, "-o", r.dir, progs[i], (char *)modes[i]);
        assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
        assert_int_equal(r.nfiles, 1);
        const struct dec_file *f = &r.dec[0];
        if (f->err[0])
            fail_msg("%s", f->err);
        uint64_t jumper = addr_of(&r, "main", "jumper"), f3 = addr_of(&r, "main", "f3");
        uint64_t guard = addr_of(&r, "main", i ? "guard_sig" : "guard");
        assert_true(jumper && f3 && guard);
        /* five calls of jumper entered, and closed by the jump */
        assert_int_equal(dec_count(f, 0, jumper, 0), 5);
        assert_int_equal(dec_count(f, 0, jumper, 1), 5);
        assert_int_equal(dec_count(f, 0, guard, 1), 1);
        assert_int_equal(dec_count(f, 0, f3, 1), 2);
        assert_int_equal(f->threads[0].depth, 0);
        assert_int_equal(f->threads[0].orphan_exits, 0);
    }
    run_cleanup(&r);
}

static void test_missing_lib(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "nolib");
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, prog, NULL },
             (const char *const[]){ "NANOPROF_LIB=/nonexistent/libnanoprof.so", NULL }, 0);
    one_line_error(&r, 1, "NANOPROF_LIB");
    run_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),           cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_cannot_run),     cmocka_unit_test(test_record_threads),
        cmocka_unit_test(test_statuses),       cmocka_unit_test(test_missing_lib),
        cmocka_unit_test(test_jumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
