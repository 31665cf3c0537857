/* test_record.c - the recorder through NANOPROF_RECORD, as a program linked
 * with libnanoprof uses it: tests/programs/rec_prog.c is run in each mode
 * and its trace files are decoded and checked exactly (record_decode.h):
 * well-formed chunks, END present or absent, ENTRY and EXIT counts per
 * function address and thread. Runs in the sanitizer builds too. */
#include "record_run.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

static char prog[] = REC_PROG;

#define ARGS(...) ((char *const[]){ prog, __VA_ARGS__, NULL })

/* Every file decodes without error; but, when CUT_OK, a last chunk that
 * the end of the file cut short (the process was killed while the writer
 * wrote it). */
static void check_files_cut(const struct run *r, int nfiles, int cut_ok)
{
    for (int i = 0; i < r->nfiles; i++) {
        size_t off = 0;
        unsigned len = 0;
        const struct dec_file *f = &r->dec[i];
        int cut = (sscanf(f->err, "chunk at %zu cut short or too long (%u)", &off, &len) == 2 &&
                   off + NP_TRACE_CHUNK_HEADER + len > f->bytes) ||
                  sscanf(f->err, "partial chunk header at %zu", &off) == 1;
        if (f->err[0] && !(cut_ok && cut))
            fail_msg("%s: %s", r->files[i], f->err);
        for (int k = 0; k < r->dec[i].nthreads; k++)
            assert_int_equal(r->dec[i].threads[k].orphan_exits, 0);
    }
    assert_int_equal(r->nfiles, nfiles);
}

static void check_files(const struct run *r, int nfiles) { check_files_cut(r, nfiles, 0); }

#define CALLS(f, tid, name, in, out)                                                  \
    do {                                                                              \
        uint64_t a_ = addr_of(&r, "main", name);                                       \
        assert_true(a_ != 0);                                                         \
        assert_int_equal(dec_count(f, tid, a_, 0), in);                               \
        assert_int_equal(dec_count(f, tid, a_, 1), out);                              \
    } while (0)

static void test_threads(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "threads");
    run_prog(&r, ARGS("threads"), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    assert_true(f->has_end);
    assert_int_equal(f->end_lost, 0);
    assert_int_equal(f->pid, f->pid); /* INFO read */
    assert_true(f->modules >= 2);     /* the program and libnanoprof at least */
    int vdso = 0;                     /* and the kernel's vDSO, by its pseudo-path */
    for (int i = 0; i < f->modules && i < DEC_MAX_MODULES; i++)
        vdso += !strcmp(f->mod_path[i], "[vdso]");
    assert_int_equal(vdso, 1);
    assert_int_equal(f->nthreads, 3);
    uint64_t step = addr_of(&r, "main", "step");
    uint32_t t1 = tid_with(f, step, 1000), t2 = tid_with(f, step, 3000), t0 = tid_with(f, step, 0);
    assert_true(t1 && t2 && t0 && t1 != t2);
    assert_int_equal(t0, f->pid); /* the main thread */
    CALLS(f, t1, "step", 1000, 1000);
    CALLS(f, t1, "leaf", 1000, 1000);
    CALLS(f, t1, "worker", 1, 1);
    CALLS(f, t2, "step", 3000, 3000);
    CALLS(f, t2, "leaf", 3000, 3000);
    CALLS(f, t2, "worker", 1, 1);
    CALLS(f, t0, "main", 1, 1);
    CALLS(f, t0, "main_work", 1, 1);
    CALLS(f, t0, "leaf", 10, 10);
    CALLS(f, t0, "worker", 0, 0);
    for (int i = 0; i < f->nthreads; i++) {
        assert_int_equal(f->threads[i].depth, 0);
        assert_int_equal(f->threads[i].lost, 0);
        assert_true(f->threads[i].named);
    }
    run_cleanup(&r);
}

static void exit_case(const char *how, int status)
{
    struct run r;
    run_init(&r, how);
    run_prog(&r, ARGS((char *)how), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == status);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    assert_true(f->has_end);
    CALLS(f, 0, "deep", 10, 0);
    CALLS(f, 0, "die", 1, 0);
    CALLS(f, 0, "main", 1, 0);
    run_cleanup(&r);
}

static void test_exit_deep(void **state) { (void)state; exit_case("exit", 3); }
/* _exit skips destructors: the recorder ends the trace in it */
static void test__exit_deep(void **state) { (void)state; exit_case("_exit", 4); }

static void signal_case(const char *how, int sig, int end)
{
    struct run r;
    run_init(&r, how);
    /* A sanitizer's own SIGSEGV handler would come before the recorder's. */
    run_prog(&r, ARGS("signal", (char *)how),
             (const char *const[]){ "NANOPROF_BUFFER=4k", "ASAN_OPTIONS=handle_segv=0",
                                       "TSAN_OPTIONS=handle_segv=0:atexit_sleep_ms=0",
                                       "NANOPROF_DROP=0", NULL }, 1);
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), sig);
    /* SIGKILL comes while the writer may be writing a chunk */
    check_files_cut(&r, 1, sig == SIGKILL);
    const struct dec_file *f = &r.dec[0];
    assert_int_equal(f->has_end, end);
    assert_true(f->events_chunks >= 1);
    if (end) { /* everything up to the signal */
        CALLS(f, 0, "work", 1, 1);
        CALLS(f, 0, "leaf", 500, 500);
        CALLS(f, 0, "deep", 10, 0);
        CALLS(f, 0, "die", 1, 0);
        CALLS(f, 0, "main", 1, 0);
    } else { /* SIGKILL: what the writer had written, in buffers of 256
              * records (some 127 calls): at least the ten chunks the
              * program waited for (rec_prog.c, die), a few not events */
        uint64_t leaf = addr_of(&r, "main", "leaf");
        uint64_t in = dec_count(f, 0, leaf, 0), out = dec_count(f, 0, leaf, 1);
        assert_true(in >= 100 && in <= 5000);
        assert_true(out == in || out + 1 == in);
    }
    run_cleanup(&r);
}

static void test_sigterm(void **state) { (void)state; signal_case("term", SIGTERM, 1); }
static void test_sigint(void **state) { (void)state; signal_case("int", SIGINT, 1); }
static void test_sigsegv(void **state) { (void)state; signal_case("segv", SIGSEGV, 1); }
static void test_sigabrt(void **state) { (void)state; signal_case("abort", SIGABRT, 1); }
static void test_sigkill(void **state) { (void)state; signal_case("kill", SIGKILL, 0); }
/* the handler runs on the signal stack the recorder gave the thread. Not
 * under ThreadSanitizer: there the overflow can come inside the
 * sanitizer's own atomic operation of a hook, which holds its lock, and
 * the handler's first atomic load waits on that lock for ever (a hang,
 * seen with gdb in __tsan_atomic64_load under on_fatal) */
static void test_stack_overflow(void **state)
{
    (void)state;
    if (UNDER_TSAN)
        skip();
    signal_case("overflow", SIGSEGV, 1);
}

static void test_fork(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "fork");
    run_prog(&r, ARGS("fork"), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 2);
    const struct dec_file *p = &r.dec[0], *c = &r.dec[1];
    if (c->ppid != p->pid) {
        const struct dec_file *t = p;
        p = c;
        c = t;
    }
    assert_int_equal(c->ppid, p->pid);
    assert_true(p->has_end && c->has_end);
    CALLS(p, 0, "f1", 3, 3);
    CALLS(p, 0, "f2", 0, 0);
    CALLS(p, 0, "f3", 7, 7);
    CALLS(p, 0, "main", 1, 1);
    CALLS(c, 0, "f1", 0, 0);
    CALLS(c, 0, "f2", 5, 5);
    CALLS(c, 0, "f3", 0, 0);
    CALLS(c, 0, "main", 0, 0); /* entered before the fork */
    assert_true(c->modules >= 2);
    run_cleanup(&r);
}

static void exec_case(const char *how)
{
    struct run r;
    run_init(&r, how);
    run_prog(&r, ARGS((char *)how), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 2);
    /* <pid>.1.npt sorts before <pid>.npt */
    const struct dec_file *first = &r.dec[1], *second = &r.dec[0];
    assert_true(strstr(r.files[0], ".1.npt") != NULL);
    assert_int_equal(first->pid, second->pid);
    assert_true(first->has_end && second->has_end);
    CALLS(first, 0, "f1", 2, 2);
    CALLS(first, 0, "main", 1, 0);
    uint64_t f4 = addr_of(&r, "execd", "f4"), m2 = addr_of(&r, "execd", "main");
    assert_true(f4 && m2);
    assert_int_equal(dec_count(second, 0, f4, 0), 4);
    assert_int_equal(dec_count(second, 0, f4, 1), 4);
    assert_int_equal(dec_count(second, 0, m2, 0), 1);
    assert_int_equal(dec_count(second, 0, m2, 1), 1);
    run_cleanup(&r);
}

static void test_exec(void **state) { (void)state; exec_case("exec"); }
static void test_fexecve(void **state) { (void)state; exec_case("fexecve"); }

/* Threads of a user-level scheduler (np_thread_switch) get streams of
 * their own, with ids above any OS thread's, and the time each spent
 * switched out as SWITCH records. */
static void test_user_threads(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "uthreads");
    run_prog(&r, ARGS("uthreads"), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    assert_true(f->has_end);
    assert_int_equal(f->nthreads, 3);
    uint32_t ua = 0x40000001u, ub = 0x40000002u, os = f->pid;
    CALLS(f, os, "main", 1, 1);
    CALLS(f, os, "f3", 3, 3);
    CALLS(f, os, "f1", 0, 0);
    CALLS(f, ua, "ua", 1, 0); /* it yields for the last time inside */
    CALLS(f, ua, "f1", 3, 3);
    CALLS(f, ub, "ub", 1, 0);
    CALLS(f, ub, "f2", 6, 6);
    for (int i = 0; i < f->nthreads; i++) {
        const struct dec_thread *t = &f->threads[i];
        if (t->tid == ua || t->tid == ub) {
            assert_string_equal(t->name, t->tid == ua ? "uthread 1" : "uthread 2");
            /* switched back in twice; the kernel may add its own
             * (preempting the OS thread while this one ran) */
            assert_true(t->switches >= 2);
            assert_true(t->switched > 0);
        } else {
            assert_true(t->switches >= 3); /* after each of its three turns */
        }
    }
    run_cleanup(&r);
}

/* np_thread_name: a user-level thread named before it runs, one that
 * names itself once recording (cut to 15 bytes), the OS thread named
 * while it records: each stream's THREAD chunk holds the name (the last
 * one read wins), the calls as without names. */
static void test_thread_names(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "thread_names");
    run_prog(&r, ARGS("uthreads"), (const char *[]){ "REC_PROG_NAMES=1", NULL }, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    assert_true(f->has_end);
    assert_int_equal(f->nthreads, 3);
    uint32_t ua = 0x40000001u, ub = 0x40000002u, os = f->pid;
    CALLS(f, ua, "f1", 3, 3);
    CALLS(f, ub, "f2", 6, 6);
    CALLS(f, os, "f3", 3, 3);
    for (int i = 0; i < f->nthreads; i++) {
        const struct dec_thread *t = &f->threads[i];
        assert_string_equal(t->name, t->tid == ua ? "reader" : t->tid == ub ? "writer-thread-l" : "boss");
    }
    run_cleanup(&r);
}

static void test_exec_fails(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "execfail");
    run_prog(&r, ARGS("execfail"), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 2);
    const struct dec_file *first = &r.dec[1], *second = &r.dec[0];
    assert_true(first->has_end && second->has_end);
    CALLS(first, 0, "f1", 2, 2);
    CALLS(first, 0, "f3", 0, 0);
    CALLS(second, 0, "f1", 0, 0);
    CALLS(second, 0, "f3", 3, 3);
    run_cleanup(&r);
}

static void tree(const char *const env[], const uint64_t expect[5][2])
{
    static const char *const names[5] = { "main", "top", "a", "b", "leaf" };
    struct run r;
    run_init(&r, "tree");
    run_prog(&r, ARGS("tree"), env, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    for (int i = 0; i < 5; i++) {
        uint64_t a = addr_of(&r, "main", names[i]);
        if (dec_count(&r.dec[0], 0, a, 0) != expect[i][0] || dec_count(&r.dec[0], 0, a, 1) != expect[i][1])
            fail_msg("%s: %s: %llu entries, %llu exits; expected %llu, %llu", env[0], names[i],
                     (unsigned long long)dec_count(&r.dec[0], 0, a, 0),
                     (unsigned long long)dec_count(&r.dec[0], 0, a, 1), (unsigned long long)expect[i][0],
                     (unsigned long long)expect[i][1]);
    }
    run_cleanup(&r);
}

static void test_filters(void **state)
{
    (void)state;
    /* main, top, a, b, leaf */
    tree((const char *const[]){ "NANOPROF_FILTER=a", NULL },
         (const uint64_t[5][2]){ { 0, 0 }, { 0, 0 }, { 3, 3 }, { 0, 0 }, { 6, 6 } });
    tree((const char *const[]){ "NANOPROF_FILTER=b,nothing", NULL },
         (const uint64_t[5][2]){ { 0, 0 }, { 0, 0 }, { 0, 0 }, { 2, 2 }, { 2, 2 } });
    tree((const char *const[]){ "NANOPROF_NOTRACE=a", NULL },
         (const uint64_t[5][2]){ { 1, 1 }, { 1, 1 }, { 0, 0 }, { 2, 2 }, { 2, 2 } });
    tree((const char *const[]){ "NANOPROF_NOTRACE=t?p", NULL },
         (const uint64_t[5][2]){ { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } });
    tree((const char *const[]){ "NANOPROF_DEPTH=2", NULL },
         (const uint64_t[5][2]){ { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 } });
    tree((const char *const[]){ "NANOPROF_FILTER=top", "NANOPROF_DEPTH=2", NULL },
         (const uint64_t[5][2]){ { 0, 0 }, { 1, 1 }, { 3, 3 }, { 2, 2 }, { 0, 0 } });
    tree((const char *const[]){ "NANOPROF_FILTER=top", "NANOPROF_NOTRACE=b", NULL },
         (const uint64_t[5][2]){ { 0, 0 }, { 1, 1 }, { 3, 3 }, { 0, 0 }, { 6, 6 } });
}

static void test_time_filter(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "slow");
    run_prog(&r, ARGS("slow"), (const char *const[]){ "NANOPROF_MIN_NS=5ms", NULL }, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    CALLS(f, 0, "slowf", 2, 2);
    CALLS(f, 0, "main", 1, 1);
    /* none of fastf's calls, but those the program saw take 5 ms or more
     * (preempted: the filter counts wall time); a call is whole or out */
    FILE *out = fopen(r.out, "r");
    char line[256];
    int over = -1;
    while (out && fgets(line, sizeof line, out))
        sscanf(line, "fastf over 5ms %d", &over);
    if (out)
        fclose(out);
    assert_true(over >= 0);
    uint64_t fastf = addr_of(&r, "main", "fastf");
    assert_true(dec_count(f, 0, fastf, 0) <= (uint64_t)over);
    assert_int_equal(dec_count(f, 0, fastf, 1), dec_count(f, 0, fastf, 0));
    if (strcmp(f->clock, "monotonic") != 0) /* the counter: sleeps show */
        assert_true(f->threads[0].switches >= 2);
    run_cleanup(&r);
}

/* The target: at most 4 bytes per call (entry and exit) on the
 * call-heavy workload, the whole trace directory counted. */
static void test_bytes_per_call(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "fib");
    run_prog(&r, ARGS("fib", "25"), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    const uint64_t calls = 242785; /* 2 * F(26) - 1 */
    CALLS(f, 0, "fib", calls, calls);
    double per = (double)dir_bytes(&r) / (double)calls;
    printf("fib(25): %llu calls, %lld bytes of trace, %.2f bytes per call\n", (unsigned long long)calls,
           dir_bytes(&r), per);
    assert_true(per <= 4.0);
    run_cleanup(&r);
}

/* A longjmp out of 5 nested calls: their exits, which never ran, are
 * recorded at the longjmp, and the calls after it nest right. */
static void jump_case(const char *mode)
{
    struct run r;
    run_init(&r, mode);
    run_prog(&r, ARGS((char *)mode), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    CALLS(f, 0, "jumper", 5, 5);
    CALLS(f, 0, strcmp(mode, "sigjmp") == 0 ? "guard_sig" : "guard", 1, 1);
    CALLS(f, 0, "f3", 2, 2);
    CALLS(f, 0, "main", 1, 1);
    assert_int_equal(f->threads[0].depth, 0);
    run_cleanup(&r);
}

static void test_longjmp(void **state) { (void)state; jump_case("longjmp"); }
/* sigsetjmp is the C library's __sigsetjmp, which the shared runtime
 * stands in front of (x86-64) */
static void test_sigjmp(void **state)
{
    (void)state;
#if defined(__x86_64__)
    jump_case("sigjmp");
#else
    skip();
#endif
}

/* A library loaded after the start: its MODULE chunk comes before the
 * events that call into it (record_decode.h checks every ENTRY). */
static void test_dlopen(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "dlopen");
    run_prog(&r, ARGS("dlopen", REC_PLUGIN), NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    check_files(&r, 1);
    const struct dec_file *f = &r.dec[0];
    CALLS(f, 0, "plugin_work", 3, 3);
    CALLS(f, 0, "f1", 1, 1);
    int found = 0;
    for (int i = 0; i < f->modules && i < DEC_MAX_MODULES; i++)
        found |= strstr(f->mod_path[i], "rec_plugin") != NULL;
    assert_true(found);
    run_cleanup(&r);
}

/* Buffers of 256 records and one allowed in the queue: the thread outruns
 * the writer. By default it waits, and every call is recorded. With
 * NANOPROF_DROP=1 it drops events instead; whatever was dropped is counted,
 * in LOST records and in END; the calls whose exits were dropped are closed
 * at the LOST record, so the trace still nests: every recorded call
 * returns. Both writer paths: no filter, and a filter (a depth limit that
 * keeps all). */
static void test_lost(void **state)
{
    (void)state;
    for (int mode = 0; mode < 4; mode++) {
        int filtered = mode & 1, drop = mode >> 1;
        struct run r;
        run_init(&r, "lost");
        run_prog(&r, ARGS("fib", "22"),
                 (const char *const[]){ "NANOPROF_BUFFER=4k", "NANOPROF_QUEUE=1",
                                        filtered ? "NANOPROF_DEPTH=1000" : "NANOPROF_DEPTH=",
                                        drop ? "NANOPROF_DROP=1" : "NANOPROF_DROP=0", NULL },
                 1);
        assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
        check_files(&r, 1);
        const struct dec_file *f = &r.dec[0];
        uint64_t fib = addr_of(&r, "main", "fib"), calls = 57313; /* 2 * F(23) - 1 */
        uint64_t in = dec_count(f, 0, fib, 0), out = dec_count(f, 0, fib, 1), lost = 0;
        for (int i = 0; i < f->nthreads; i++) {
            lost += f->threads[i].lost;
            assert_int_equal(f->threads[i].depth, 0);
        }
        printf("fib(22), one queued 4k buffer%s%s: %llu of %llu calls recorded, %llu events lost\n",
               filtered ? ", filtered" : "", drop ? ", dropping" : "", (unsigned long long)in,
               (unsigned long long)calls, (unsigned long long)lost);
        if (!drop)
            assert_int_equal(lost, 0);
        assert_int_equal(f->end_lost, lost);
        assert_true(in <= calls && out == in && in + lost >= calls);
        if (!lost)
            assert_true(in == calls);
        run_cleanup(&r);
    }
}

static void test_bad_env(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "badenv");
    run_prog(&r, ARGS("tree"), (const char *const[]){ "NANOPROF_BUFFER=12q", NULL }, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0); /* runs, not recorded */
    assert_int_equal(r.nfiles, 0);
    char first[512];
    assert_int_equal(count_lines(r.err, first, sizeof first), 1);
    assert_true(strstr(first, "NANOPROF_BUFFER") != NULL);
    run_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),     cmocka_unit_test(test_exit_deep),
        cmocka_unit_test(test_sigterm),     cmocka_unit_test(test_sigint),
        cmocka_unit_test(test_sigsegv),     cmocka_unit_test(test_sigabrt),
        cmocka_unit_test(test_sigkill),     cmocka_unit_test(test_stack_overflow),
        cmocka_unit_test(test__exit_deep),  cmocka_unit_test(test_fexecve),
        cmocka_unit_test(test_user_threads),
        cmocka_unit_test(test_thread_names),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_exec),        cmocka_unit_test(test_exec_fails),
        cmocka_unit_test(test_filters),     cmocka_unit_test(test_time_filter),
        cmocka_unit_test(test_bytes_per_call), cmocka_unit_test(test_longjmp),
        cmocka_unit_test(test_sigjmp),
        cmocka_unit_test(test_dlopen),      cmocka_unit_test(test_lost),
        cmocka_unit_test(test_bad_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
