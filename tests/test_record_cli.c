/* test_record_cli.c - `nanoprof record`: usage errors, every option in
 * every form (through the environment PROG gets), a program that cannot
 * run, exit statuses, filters (regular expressions, a pattern that
 * matches no function, nothing recorded because of a filter), processes
 * left running (a daemon, a double fork), and recording a program that
 * links no runtime (tests/programs/rec_prog.c built without libnanoprof:
 * the command preloads libnanoprof.so). Not in sanitizer builds. */
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
                                        "--time-filter", "-b, --buffer", "--drop", "--strict",
                                        "--sample[=HZ]", "--unwind", "--no-wait-daemons", "-h, --help",
                                        "NANOPROF_RECORD", "NANOPROF_FILTER", "NANOPROF_NOTRACE",
                                        "NANOPROF_DEPTH", "NANOPROF_MIN_NS", "NANOPROF_BUFFER",
                                        "NANOPROF_DROP", "NANOPROF_SAMPLE", "NANOPROF_UNWIND", "NANOPROF_LIB" };
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
    /* every error is one line naming the option, status 2 */
    RECORD(&r, "--bogus=3", prog);
    one_line_error(&r, 2, "nanoprof record: unknown option '--bogus=3' (see nanoprof record --help)");
    RECORD(&r, "-b");
    one_line_error(&r, 2, "nanoprof record: option '-b' needs a value (see nanoprof record --help)");
    RECORD(&r, "--unwind");
    one_line_error(&r, 2, "nanoprof record: option '--unwind' needs a value (see nanoprof record --help)");
    RECORD(&r, "--drop=1", prog);
    one_line_error(&r, 2, "nanoprof record: option '--drop' takes no value (see nanoprof record --help)");
    RECORD(&r, "--unwind=lr", prog);
    one_line_error(&r, 2, "nanoprof record: --unwind: 'lr' is not fp or dwarf (see nanoprof record --help)");
    RECORD(&r, "--sample=0", prog);
    one_line_error(&r, 2, "nanoprof record: --sample: '0' is not a rate from 1 to 100000 (Hz)");
    RECORD(&r, "-o", "", prog);
    one_line_error(&r, 2, "nanoprof record: -o: empty path");
    RECORD(&r, "-F", "", prog);
    one_line_error(&r, 2, "nanoprof record: -F: bad pattern ''");
    /* a regular expression that does not compile, before PROG runs */
    RECORD(&r, "-N", "^x[", prog);
    one_line_error(&r, 2, "nanoprof record: -N: '^x[' is not a valid regular expression: ");
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, prog, NULL },
             (const char *const[]){ "NANOPROF_FILTER=f1,^a(", NULL }, 0);
    one_line_error(&r, 2, "nanoprof record: NANOPROF_FILTER=f1,^a( in the environment: -F: '^a(' is not a valid");
    run_cleanup(&r);
}

/* The value PROG's environment gave NAME (`env` printed it), or NULL. */
static const char *env_value(const struct run *r, const char *name, char *buf, size_t size)
{
    FILE *f = fopen(r->out, "r");
    char line[1024];
    const char *found = NULL;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == '=') {
            line[strcspn(line, "\n")] = 0;
            snprintf(buf, size, "%s", line + n + 1);
            found = buf;
        }
    if (f)
        fclose(f);
    return found;
}

/* Every option of record in each of its forms sets what it set before:
 * the variable PROG (here `env`) finds in its environment; an option
 * replaces a value of the environment, which stands without it. */
static void test_every_option(void **state)
{
    (void)state;
    static char envp[] = "/usr/bin/env";
    static const struct {
        const char *args[3];
        const char *var, *value;
    } cases[] = {
        { { "-D", "3" }, "NANOPROF_DEPTH", "3" },
        { { "-D4" }, "NANOPROF_DEPTH", "4" },
        { { "--depth", "5" }, "NANOPROF_DEPTH", "5" },
        { { "--depth=6" }, "NANOPROF_DEPTH", "6" },
        { { "--dep=7" }, "NANOPROF_DEPTH", "7" }, /* an unambiguous abbreviation */
        { { "-F", "a*" }, "NANOPROF_FILTER", "a*" },
        { { "-Fa*", "-F", "^b.*$" }, "NANOPROF_FILTER", "a*,^b.*$" },
        { { "--filter", "x,y" }, "NANOPROF_FILTER", "x,y" },
        { { "--filter=z" }, "NANOPROF_FILTER", "z" },
        { { "-N", "n1" }, "NANOPROF_NOTRACE", "n1" },
        { { "-Nn2", "--notrace=n3" }, "NANOPROF_NOTRACE", "n2,n3" },
        { { "--notrace", "n4" }, "NANOPROF_NOTRACE", "n4" },
        { { "--time-filter", "20us" }, "NANOPROF_MIN_NS", "20us" },
        { { "--time-filter=1500" }, "NANOPROF_MIN_NS", "1500" },
        { { "-b", "64k" }, "NANOPROF_BUFFER", "64k" },
        { { "-b2M" }, "NANOPROF_BUFFER", "2M" },
        { { "--buffer", "128k" }, "NANOPROF_BUFFER", "128k" },
        { { "--buffer=1G" }, "NANOPROF_BUFFER", "1G" },
        { { "--drop" }, "NANOPROF_DROP", "1" },
        { { "--sample" }, "NANOPROF_SAMPLE", "997" },
        { { "--sample=500" }, "NANOPROF_SAMPLE", "500" },
        { { "--unwind", "dwarf" }, "NANOPROF_UNWIND", "dwarf" },
        { { "--unwind=fp" }, "NANOPROF_UNWIND", "fp" },
    };
    struct run r;
    run_init(&r, "options");
    char buf[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *args[12] = { cli, "record", "-o", r.dir };
        int n = 4;
        for (int k = 0; k < 3 && cases[i].args[k]; k++)
            args[n++] = (char *)cases[i].args[k];
        args[n++] = "--";
        args[n++] = envp;
        run_prog(&r, args, NULL, 0);
        assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
        const char *v = env_value(&r, cases[i].var, buf, sizeof buf);
        if (!v || strcmp(v, cases[i].value))
            fail_msg("%s %s: %s=%s, want %s", cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "",
                     cases[i].var, v ? v : "(unset)", cases[i].value);
    }
    /* -o, --output and --output=: the directory PROG records into */
    static const char *const outs[][2] = { { "-o", NULL }, { "--output", NULL }, { "--output=", "" }, { "-o", "" } };
    for (size_t i = 0; i < 4; i++) {
        char dir[300], *args[8] = { cli, "record" };
        int n = 2;
        if (outs[i][1]) {
            snprintf(dir, sizeof dir, "%s%s", outs[i][0], r.dir);
            args[n++] = dir;
        } else {
            args[n++] = (char *)outs[i][0];
            args[n++] = r.dir;
        }
        args[n++] = envp;
        run_prog(&r, args, NULL, 0);
        assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
        const char *v = env_value(&r, "NANOPROF_RECORD", buf, sizeof buf);
        assert_non_null(v);
        assert_string_equal(v, r.dir);
    }
    /* the environment's value stands without the option, the option's replaces it */
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, envp, NULL },
             (const char *const[]){ "NANOPROF_DEPTH=9", "NANOPROF_FILTER=e*", NULL }, 0);
    assert_string_equal(env_value(&r, "NANOPROF_DEPTH", buf, sizeof buf), "9");
    assert_string_equal(env_value(&r, "NANOPROF_FILTER", buf, sizeof buf), "e*");
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, "-D", "2", "-F", "o*", envp, NULL },
             (const char *const[]){ "NANOPROF_DEPTH=9", "NANOPROF_FILTER=e*", NULL }, 0);
    assert_string_equal(env_value(&r, "NANOPROF_DEPTH", buf, sizeof buf), "2");
    assert_string_equal(env_value(&r, "NANOPROF_FILTER", buf, sizeof buf), "o*");
    /* options end at PROG: what follows is PROG's */
    static char sh[] = "/bin/sh", dash_c[] = "-c", script[] = "echo \"[$NANOPROF_DEPTH] $*\"", zero[] = "sh";
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, sh, dash_c, script, zero, "-D", "1", NULL }, NULL, 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(count_lines(r.out, buf, sizeof buf), 1);
    assert_string_equal(buf, "[] -D 1\n");
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

/* Line N (from 1) of the text file PATH into BUF, without its newline
 * ("" when there is none). */
static const char *line_of(const char *path, int n, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    buf[0] = 0;
    for (int i = 1; f && fgets(buf, (int)size, f); i++)
        if (i == n)
            break;
        else
            buf[0] = 0;
    if (f)
        fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

static void want_line(const char *path, int n, const char *want)
{
    char got[2048];
    if (strcmp(line_of(path, n, got, sizeof got), want))
        fail_msg("line %d of stderr:\n  got  '%s'\n  want '%s'", n, got, want);
}

/* -F and -N patterns: regular expressions where a glob cannot be meant
 * (exact counts), a pattern that matches no function of the program (one
 * line; --strict: status 3), and nothing recorded because of a filter. */
static void test_filters(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "filters");
    char want[2048];
    /* tree: top calls a x3 (each leaf x2) and b x2 (each leaf x1) */
    RECORD(&r, "-o", r.dir, "-F", "^(a|b)$", prog, "tree");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(r.nfiles, 1);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "a"), 1), 3);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "b"), 1), 2);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 1), 8);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "top"), 0), 0);
    assert_int_equal(count_lines(r.err, NULL, 0), 1);
    /* anchored: "lea.*" is leaf, not the other names holding "lea" */
    RECORD(&r, "-o", r.dir, "--filter=lea.*", prog, "tree");
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 1), 8);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "a"), 0), 0);
    /* [ab]+ leaves a and b out, and what they call */
    RECORD(&r, "-o", r.dir, "-N", "[ab]+", prog, "tree");
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "top"), 1), 1);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "a"), 0), 0);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 0), 0);
    assert_int_equal(count_lines(r.err, NULL, 0), 1);

    /* a pattern that matches no function of the program: one line */
    RECORD(&r, "-o", r.dir, "-F", "a", "-N", "nomatch*", "-N", "^zz.*", prog, "tree");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(dec_count(&r.dec[0], 0, addr_of(&r, "main", "leaf"), 1), 6);
    assert_int_equal(count_lines(r.err, NULL, 0), 3);
    for (int i = 0; i < 2; i++) {
        char got[2048];
        line_of(r.err, 2 + i, got, sizeof got);
        snprintf(want, sizeof want, "nanoprof record: -N '%s': matches no function of %s or the libraries it "
                 "loaded (searched: the symbol tables of ", i ? "^zz.*" : "nomatch*", prog);
        if (strncmp(got, want, strlen(want)) || !strstr(got, " ELF files)"))
            fail_msg("got '%s', want '%s...'", got, want);
    }
    /* --strict: status 3 */
    RECORD(&r, "-o", r.dir, "--strict", "-N", "nomatch*", prog, "tree");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
    /* nothing recorded because of the filter: that line names it */
    RECORD(&r, "-o", r.dir, "-F", "nomatch*", prog, "tree");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_int_equal(count_lines(r.err, NULL, 0), 3);
    snprintf(want, sizeof want, "nanoprof record: nothing was recorded from %s: it ran instrumented code, but no "
             "call passed the filter -F 'nomatch*'", prog);
    want_line(r.err, 3, want);
    /* a filter that matches, but whose function never runs */
    RECORD(&r, "-o", r.dir, "-F", "f4", prog, "tree");
    assert_int_equal(count_lines(r.err, NULL, 0), 2);
    snprintf(want, sizeof want, "nanoprof record: nothing was recorded from %s: it ran instrumented code, but no "
             "call passed the filter -F 'f4'", prog);
    want_line(r.err, 2, want);
    run_cleanup(&r);
}

/* The file of process PID among R's, or NULL. */
static const struct dec_file *file_of(const struct run *r, long pid)
{
    for (int i = 0; i < r->nfiles; i++)
        if (r->dec[i].pid == (uint32_t)pid)
            return &r->dec[i];
    return NULL;
}

/* The number rec_prog printed after WHAT ("child 123"), or 0. */
static long printed(const struct run *r, const char *what)
{
    FILE *f = fopen(r->out, "r");
    char line[256];
    long v = 0;
    size_t n = strlen(what);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, what, n) && line[n] == ' ')
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

static void no_cut_short(const struct run *r)
{
    FILE *f = fopen(r->err, "r");
    char line[2048];
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "cut short"))
            fail_msg("%s", line);
    if (f)
        fclose(f);
}

/* The number on the first line of R's stdout, or 0. */
static long printed_line_number(const struct run *r)
{
    char line[64];
    return count_lines(r->out, line, sizeof line) ? atol(line) : 0;
}

/* A daemon: its parent ends, it goes on for a while and makes calls.
 * record waits for it (or, with --no-wait-daemons, says it left it
 * running), never calls its file cut short, and the trace keeps its real
 * parent. */
static void test_daemon(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "daemon");
    RECORD(&r, "-o", r.dir, prog, "daemon");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    long child = printed(&r, "child");
    assert_true(child > 0);
    assert_int_equal(r.nfiles, 2);
    const struct dec_file *c = file_of(&r, child), *p = &r.dec[c == &r.dec[0] ? 1 : 0];
    assert_non_null(c);
    assert_true(!p->err[0] && !c->err[0] && p->has_end && c->has_end);
    uint64_t f1 = addr_of(&r, "main", "f1"), f2 = addr_of(&r, "main", "f2"), f3 = addr_of(&r, "main", "f3");
    assert_int_equal(dec_count(p, 0, f1, 1), 3);
    assert_int_equal(dec_count(p, 0, f3, 1), 7);
    assert_int_equal(dec_count(p, 0, f2, 0), 0);
    assert_int_equal(dec_count(c, 0, f2, 1), 5);
    assert_int_equal(dec_count(c, 0, f1, 0) + dec_count(c, 0, f3, 0), 0);
    assert_int_equal(c->ppid, p->pid); /* its parent, not its reaper */
    char want[2048];
    assert_int_equal(count_lines(r.err, NULL, 0), 2);
    snprintf(want, sizeof want, "nanoprof record: %s ended; waiting for the 1 process it left running (pid %ld; "
             "^C or --no-wait-daemons not to wait)", prog, child);
    want_line(r.err, 1, want);
    snprintf(want, sizeof want, "nanoprof record: %s exited with status 0; trace in %s: 2 files, %lld bytes", prog,
             r.dir, dir_bytes(&r));
    want_line(r.err, 2, want);
    no_cut_short(&r);

    /* not waited for: said, and its file is not cut short but still being
     * written; on a busy machine the daemon may not have opened it yet when
     * record ends: then the trace has one file, and none is said written */
    RECORD(&r, "-o", r.dir, "--no-wait-daemons", "--strict", prog, "daemon");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    child = printed(&r, "child");
    assert_int_equal(count_lines(r.err, NULL, 0), 1);
    char got[2048];
    line_of(r.err, 1, got, sizeof got);
    int opened = strstr(got, ": 2 files, ") != NULL;
    snprintf(want, sizeof want, "; left running: pid %ld%s", child, opened ? " (1 file still being written)" : "");
    if (!strstr(got, want) || (!opened && !strstr(got, ": 1 file, ")) || (!opened && strstr(got, "being written")))
        fail_msg("'%s' lacks '%s'", got, want);
    no_cut_short(&r);
    /* it ends by itself, with every call */
    char path[600];
    int done = 0;
    for (int i = 0; i < 1000 && !done; i++) {
        struct dec_file d;
        snprintf(path, sizeof path, "%s/%ld.npt", r.dir, child);
        done = dec_file(path, &d) == 0 && d.has_end && dec_count(&d, 0, addr_of(&r, "main", "f2"), 1) == 5;
        if (!done)
            usleep(10000);
    }
    assert_true(done);
    run_cleanup(&r);
}

/* A double fork: the middle process ends at once, the grandchild goes on
 * and makes calls. Every process's calls, each file whole, the real
 * parents. */
static void test_double_fork(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "doublefork");
    RECORD(&r, "-o", r.dir, prog, "doublefork");
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    long child = printed(&r, "child"), grandchild = printed(&r, "grandchild");
    assert_int_equal(r.nfiles, 3);
    const struct dec_file *c = file_of(&r, child), *g = file_of(&r, grandchild), *p = NULL;
    assert_true(c && g);
    for (int i = 0; i < 3; i++)
        if (&r.dec[i] != c && &r.dec[i] != g)
            p = &r.dec[i];
    for (int i = 0; i < 3; i++)
        assert_true(!r.dec[i].err[0] && r.dec[i].has_end);
    uint64_t f1 = addr_of(&r, "main", "f1"), f2 = addr_of(&r, "main", "f2"), f3 = addr_of(&r, "main", "f3"),
             f4 = addr_of(&r, "main", "f4");
    assert_int_equal(dec_count(p, 0, f1, 1), 2);
    assert_int_equal(dec_count(p, 0, f3, 1), 3);
    assert_int_equal(dec_count(p, 0, f2, 0) + dec_count(p, 0, f4, 0), 0);
    assert_int_equal(dec_count(c, 0, f2, 1), 4);
    assert_int_equal(dec_count(c, 0, f1, 0) + dec_count(c, 0, f3, 0) + dec_count(c, 0, f4, 0), 0);
    assert_int_equal(dec_count(g, 0, f4, 1), 6);
    assert_int_equal(dec_count(g, 0, f1, 0) + dec_count(g, 0, f2, 0) + dec_count(g, 0, f3, 0), 0);
    assert_int_equal(c->ppid, p->pid);
    assert_int_equal(g->ppid, c->pid);
    char want[2048];
    assert_int_equal(count_lines(r.err, NULL, 0), 2);
    snprintf(want, sizeof want, "nanoprof record: %s ended; waiting for the 1 process it left running (pid %ld; "
             "^C or --no-wait-daemons not to wait)", prog, grandchild);
    want_line(r.err, 1, want);
    no_cut_short(&r);
    run_cleanup(&r);
}

/* Starts `nanoprof record -o DIR /bin/sh -c SCRIPT` with stdout and
 * stderr to R's files; its pid. */
static pid_t start_record(struct run *r, const char *script)
{
    fflush(NULL);
    fclose(fopen(r->out, "w")); /* emptied before it starts: what is read next is its */
    fclose(fopen(r->err, "w"));
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fe, 2);
        execl(cli, cli, "record", "-o", r->dir, "/bin/sh", "-c", script, (char *)NULL);
        _exit(126);
    }
    return pid;
}

/* Waits up to 10 s for PATH to hold NEEDLE. */
static void wait_for_text(const char *path, const char *needle)
{
    char text[4096];
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f)
            fclose(f);
        text[n] = 0;
        if (strstr(text, needle))
            return;
        usleep(10000);
    }
    fail_msg("%s never held '%s'", path, needle);
}

/* Waits up to 20 s for PID to end; its status. */
static int wait_ended(pid_t pid)
{
    int status;
    for (int i = 0; i < 2000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("record did not end");
    return -1;
}

/* Signals while record follows what PROG left running: SIGTERM, passed
 * on to PROG, goes on to the processes it left; ^C stops the waiting,
 * and the closing line names what was left running. */
static void test_follow_signals(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "follow_signals");
    pid_t rec = start_record(&r, "sleep 300 & echo $!; exec sleep 300");
    wait_for_text(r.out, "\n");
    long left = printed_line_number(&r);
    assert_true(left > 0);
    kill(rec, SIGTERM);
    int status = wait_ended(rec);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 128 + SIGTERM) {
        char err[2048];
        line_of(r.err, 1, err, sizeof err);
        fail_msg("record ended with status %#x, not exit %d; its first line: %s", status, 128 + SIGTERM, err);
    }
    assert_int_equal(kill((pid_t)left, 0), -1); /* ended, and reaped */

    rec = start_record(&r, "sleep 300 & echo $!");
    wait_for_text(r.err, "waiting for the 1 process it left running");
    left = printed_line_number(&r);
    kill(rec, SIGINT);
    status = wait_ended(rec);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char want[300], got[2048];
    snprintf(want, sizeof want, "; left running: pid %ld", left); /* it writes no trace */
    line_of(r.err, 2, got, sizeof got);
    if (strlen(got) < strlen(want) || strcmp(got + strlen(got) - strlen(want), want))
        fail_msg("'%s' does not end with '%s'", got, want);
    assert_int_equal(kill((pid_t)left, 0), 0); /* still running */
    kill((pid_t)left, SIGKILL);
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
        cmocka_unit_test(test_jumps),          cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_filters),        cmocka_unit_test(test_daemon),
        cmocka_unit_test(test_double_fork),    cmocka_unit_test(test_follow_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
