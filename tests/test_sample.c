/* test_sample.c - the sampler (docs/sampling.md) on tests/programs/
 * sample_prog.c, whose threads burn known shares of their CPU time in known
 * functions. Traces are read with the real reader (np_trace_read) and the
 * samples' PCs resolved with the symbols module. Built three times:
 *   test_sample        sample_prog linked with libnanoprof, sampled through
 *                      NANOPROF_RECORD + NANOPROF_SAMPLE (sanitizer builds too)
 *   test_sample_cli    sample_prog with no runtime and no instrumentation,
 *                      under `nanoprof record --sample` (SAMPLE_CLI; not in
 *                      sanitizer builds: their runtime cannot be preloaded)
 *   test_sample_instr  sample_prog instrumented and linked: its calls are
 *                      recorded beside the samples (SAMPLE_INSTR) */
#include "record_run.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyze/symbols.h"
#include "analyze/trace_read.h"

static char prog[] = SAMPLE_PROG;
#ifdef SAMPLE_CLI
static char cli[] = NP_CLI;
#endif

/* ---- what a trace holds ------------------------------------------------- */

#define MAX_FNS 16
#define MAX_THREADS 8
#define MAX_PROCS 4

struct fn_stat {
    char name[64];
    uint64_t samples, periods;
    uint64_t under_root; /* samples whose stack holds the function's caller */
};

struct thr_stat {
    uint32_t tid;
    uint64_t samples, periods, skipped, max_frames;
    struct fn_stat fns[MAX_FNS];
    int nfns;
};

struct proc_stat {
    uint32_t pid, ppid;
    bool has_end;
    struct thr_stat threads[MAX_THREADS];
    int nthreads;
    unsigned hz[8];
    uint64_t period_ns[8];
    unsigned unwinder, flags, max_frames;
    int nsampling;
    bool started;
    uint64_t start_ns;
    uint64_t enters[MAX_FNS]; /* ENTRY events per function of fns_entered */
    char entered[MAX_FNS][64];
    int nentered;
};

struct trace_stat {
    struct np_symbols *syms;
    struct np_addrspace *as;
    struct proc_stat procs[MAX_PROCS];
    int nprocs;
    bool order_ok; /* every SAMPLE follows a SAMPLING with hz > 0 from before it */
};

/* The function whose frame must be on the stack of a sample in NAME. */
static const char *root_of(const char *name)
{
    static const char *const map[][2] = { { "fa", "thread_a" }, { "fb", "thread_a" }, { "fc", "thread_b" },
                                          { "fm", "main" },     { "fchild", "main" }, { "fphase", "main" },
                                          { "fafter", "main" }, { "fdeep", "chain_outer" },
                                          { "fcall", "main" } };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i][0], name))
            return map[i][1];
    return NULL;
}

static struct proc_stat *cur_proc(struct trace_stat *t) { return &t->procs[t->nprocs - 1]; }

static const char *name_at(struct trace_stat *t, uint64_t addr)
{
    struct np_symbol s;
    np_addrspace_lookup(t->as, addr, &s);
    return s.name ? s.name : "?";
}

static int on_begin(void *ctx, const struct np_trace_process *p)
{
    struct trace_stat *t = ctx;
    assert_true(t->nprocs < MAX_PROCS);
    struct proc_stat *ps = &t->procs[t->nprocs++];
    memset(ps, 0, sizeof *ps);
    ps->pid = p->pid;
    ps->ppid = p->ppid;
    ps->has_end = p->has_end;
    np_addrspace_free(t->as);
    t->as = np_addrspace_new(t->syms);
    return 0;
}

static int on_module(void *ctx, const struct np_trace_module *m)
{
    struct trace_stat *t = ctx;
    return np_addrspace_map(t->as, m);
}

static int on_enter(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t address)
{
    struct trace_stat *t = ctx;
    struct proc_stat *p = cur_proc(t);
    const char *name = name_at(t, address);
    (void)tid, (void)time_ns;
    int i = 0;
    while (i < p->nentered && strcmp(p->entered[i], name))
        i++;
    if (i == p->nentered && p->nentered < MAX_FNS)
        snprintf(p->entered[p->nentered++], sizeof p->entered[0], "%s", name);
    if (i < MAX_FNS)
        p->enters[i]++;
    return 0;
}

static struct thr_stat *thread_of(struct proc_stat *p, uint32_t tid)
{
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid)
            return &p->threads[i];
    assert_true(p->nthreads < MAX_THREADS);
    struct thr_stat *th = &p->threads[p->nthreads++];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    return th;
}

static int on_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                     uint64_t periods, uint64_t skipped)
{
    struct trace_stat *t = ctx;
    struct proc_stat *p = cur_proc(t);
    if (!p->started || time_ns < p->start_ns)
        t->order_ok = false;
    struct thr_stat *th = thread_of(p, tid);
    th->samples++;
    th->periods += periods;
    th->skipped += skipped;
    if (n > th->max_frames)
        th->max_frames = n;
    const char *name = name_at(t, frames[0]);
    int i = 0;
    while (i < th->nfns && strcmp(th->fns[i].name, name))
        i++;
    if (i == th->nfns) {
        if (th->nfns == MAX_FNS)
            return 0;
        snprintf(th->fns[th->nfns++].name, sizeof th->fns[0].name, "%s", name);
    }
    struct fn_stat *f = &th->fns[i];
    f->samples++;
    f->periods += periods;
    const char *root = root_of(name);
    for (unsigned k = 1; root && k < n; k++)
        if (!strcmp(name_at(t, frames[k]), root)) {
            f->under_root++;
            break;
        }
    return 0;
}

static int on_sampling(void *ctx, const struct np_trace_sampling *s)
{
    struct proc_stat *p = cur_proc(ctx);
    if (p->nsampling < 8) {
        p->hz[p->nsampling] = s->hz;
        p->period_ns[p->nsampling] = s->period_ns;
        p->nsampling++;
    }
    if (s->hz && !p->started) {
        p->started = true;
        p->start_ns = s->time_ns;
    }
    p->unwinder = s->unwinder;
    p->flags = s->flags;
    p->max_frames = s->max_frames;
    return 0;
}

static void read_trace(const char *dir, struct trace_stat *t)
{
    memset(t, 0, sizeof *t);
    t->order_ok = true;
    t->syms = np_symbols_new(NULL, NULL);
    struct np_event_sink sink = { .ctx = t, .begin = on_begin, .module = on_module, .enter = on_enter,
                                  .sample = on_sample, .sampling = on_sampling };
    struct np_trace_summary sum;
    int st = np_trace_read(dir, &sink, NULL, &sum);
    if (st != NP_TRACE_OK)
        fail_msg("%s: %s", dir, sum.message);
    np_addrspace_free(t->as);
    t->as = NULL;
}

static void free_trace(struct trace_stat *t)
{
    np_symbols_free(t->syms);
}

static const struct fn_stat *fn_in(const struct thr_stat *th, const char *name)
{
    for (int i = 0; i < th->nfns; i++)
        if (!strcmp(th->fns[i].name, name))
            return &th->fns[i];
    return NULL;
}

static uint64_t periods_in(const struct thr_stat *th, const char *name)
{
    const struct fn_stat *f = fn_in(th, name);
    return f ? f->periods : 0;
}

/* The thread of P whose samples fall most in NAME. */
static const struct thr_stat *thread_in(const struct proc_stat *p, const char *name)
{
    const struct thr_stat *best = NULL;
    for (int i = 0; i < p->nthreads; i++)
        if (periods_in(&p->threads[i], name) && (!best || periods_in(&p->threads[i], name) > periods_in(best, name)))
            best = &p->threads[i];
    if (!best)
        fail_msg("no sample in %s", name);
    return best;
}

/* At least MIN_SHARE of the samples in NAME have its caller on the stack. */
static void stacks_reach(const struct thr_stat *th, const char *name, double min_share)
{
    const struct fn_stat *f = fn_in(th, name);
    assert_non_null(f);
    if ((double)f->under_root < min_share * (double)f->samples)
        fail_msg("%s: %llu of %llu samples have %s on the stack", name, (unsigned long long)f->under_root,
                 (unsigned long long)f->samples, root_of(name));
}

#ifndef SAMPLE_INSTR
/* The numbers the program printed after FMT1 and FMT2 ("name %d"), or
 * *A and *B unchanged. */
static void printed(const struct run *r, const char *fmt1, int *a, const char *fmt2, int *b)
{
    FILE *f = fopen(r->out, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, fmt1, a);
        sscanf(line, fmt2, b);
    }
    if (f)
        fclose(f);
}
#endif

/* ---- running ------------------------------------------------------------ */

static void run_mode(struct run *r, const char *mode, const char *const *env)
{
#ifdef SAMPLE_CLI
    run_prog(r, (char *const[]){ cli, "record", "--sample=997", "-o", r->dir, "--", prog, (char *)mode, NULL },
             env, 0);
#else
    const char *e[8] = { "NANOPROF_SAMPLE=997" };
    int n = 1;
    for (int i = 0; env && env[i] && n < 7; i++)
        e[n++] = env[i];
    e[n] = NULL;
    run_prog(r, (char *const[]){ prog, (char *)mode, NULL }, e, 1);
#endif
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
        char first[1024];
        count_lines(r->err, first, sizeof first);
        fail_msg("sample_prog %s: status %#x: %s", mode, r->status, first);
    }
}

static void sampling_chunk_by(const struct proc_stat *p, unsigned hz, unsigned unwinder)
{
    assert_true(p->nsampling >= 1);
    assert_int_equal(p->hz[0], hz);
    assert_int_equal(p->period_ns[0], (1000000000u + hz / 2) / hz);
    assert_int_equal(p->unwinder, unwinder);
    assert_int_equal(p->flags, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS);
    assert_int_equal(p->max_frames, 128);
}

static void sampling_chunk(const struct proc_stat *p, unsigned hz) { sampling_chunk_by(p, hz, NP_UNWIND_FP); }

static void test_shares(void **state)
{
    (void)state;
    struct run r;
    struct trace_stat t;
    run_init(&r, "shares");
    run_mode(&r, "shares", NULL);
    read_trace(r.dir, &t);
    assert_int_equal(t.nprocs, 1);
    assert_true(t.order_ok);
    const struct proc_stat *p = &t.procs[0];
    assert_true(p->has_end);
    sampling_chunk(p, 997);
#if !defined(SAMPLE_INSTR)
    if (UNDER_TSAN) { /* threads that run no instrumented code are not wrapped: main only */
        assert_int_equal(p->nthreads, 1);
        const struct thr_stat *m = thread_in(p, "fm");
        assert_true(periods_in(m, "fm") > 100 && periods_in(m, "fm") < 300);
        stacks_reach(m, "fm", 0.9);
        free_trace(&t);
        run_cleanup(&r);
        return;
    }
#endif
    /* every thread is sampled: main, thread_a, thread_b */
    assert_int_equal(p->nthreads, 3);
    for (int i = 0; i < p->nthreads; i++)
        assert_true(p->threads[i].samples > 0);
    const struct thr_stat *a = thread_in(p, "fa"), *b = thread_in(p, "fc"), *m = thread_in(p, "fm");
    assert_true(a != b && b != m && a != m);
    assert_int_equal(m->tid, p->pid);
    uint64_t fa = periods_in(a, "fa"), fb = periods_in(a, "fb");
    /* 2400 ms of CPU at 997 Hz: about 2390 periods, some in clock reads
     * (and, under a sanitizer, in its runtime) */
    if (a->periods < 2000)
        fail_msg("thread_a: %llu periods, expected >= 2000", (unsigned long long)a->periods);
    if (fa + fb < 1600)
        fail_msg("thread_a: %llu periods in fa and fb, expected most of 2390", (unsigned long long)(fa + fb));
    double share = (double)fa / (double)(fa + fb);
    if (share < 0.68 || share > 0.82)
        fail_msg("fa has %.3f of thread_a's samples in fa and fb, expected 0.75", share);
    assert_int_equal(periods_in(a, "fc") + periods_in(b, "fa") + periods_in(b, "fb"), 0);
    /* thread_b: 600 ms, main 200 ms: about 600 and 200 periods. The lower
     * bounds leave room for what a loaded machine loses (a third, seen
     * here) and stay above what samples not weighted by their overruns
     * would give (a quarter: one sample per 4 ms kernel tick) */
    uint64_t fc = periods_in(b, "fc"), fm = periods_in(m, "fm");
    print_message("periods: fa %llu, fb %llu, fc %llu, fm %llu; skipped: a %llu, b %llu, main %llu\n",
                  (unsigned long long)fa, (unsigned long long)fb, (unsigned long long)fc, (unsigned long long)fm,
                  (unsigned long long)a->skipped, (unsigned long long)b->skipped, (unsigned long long)m->skipped);
    assert_true(fc > 300 && fc < 800);
    assert_true(fm > 75 && fm < 300);
    /* frame pointers: the callers are on the stacks */
    stacks_reach(a, "fa", 0.9);
    stacks_reach(a, "fb", 0.9);
    stacks_reach(b, "fc", 0.9);
    stacks_reach(m, "fm", 0.9);
#ifdef SAMPLE_INSTR
    /* the calls, recorded alongside: thread_a ran fa and fb once a chunk */
    const struct proc_stat *pp = p;
    uint64_t enters_fa = 0, enters_fc = 0, enters_main = 0;
    for (int i = 0; i < pp->nentered; i++) {
        if (!strcmp(pp->entered[i], "fa"))
            enters_fa = pp->enters[i];
        if (!strcmp(pp->entered[i], "fc"))
            enters_fc = pp->enters[i];
        if (!strcmp(pp->entered[i], "main"))
            enters_main = pp->enters[i];
    }
    assert_true(enters_fa > 400); /* 2400 ms in chunks of 1 to 5 ms */
    assert_int_equal(enters_fc, 1);
    assert_int_equal(enters_main, 1);
#else
    assert_int_equal(p->nentered, 0); /* not instrumented: samples only */
#endif
    free_trace(&t);
    run_cleanup(&r);
}

#if !defined(SAMPLE_CLI) && !defined(SAMPLE_INSTR)
/* NANOPROF_UNWIND=dwarf (libunwind, in the shared runtime): the whole chain
 * above fdeep (main, chain_outer, chain_middle, chain_inner), in every
 * build, sanitizers included; a bad value is one line, and no sampling.
 * test_samples_unwind.sh runs it on code without frame pointers. */
static void test_dwarf(void **state)
{
    (void)state;
    struct run r;
    struct trace_stat t;
    run_init(&r, "dwarf");
    run_mode(&r, "chain", (const char *const[]){ "NANOPROF_UNWIND=dwarf", NULL });
    read_trace(r.dir, &t);
    assert_int_equal(t.nprocs, 1);
    const struct proc_stat *p = &t.procs[0];
    sampling_chunk_by(p, 997, NP_UNWIND_DWARF);
    const struct thr_stat *m = thread_in(p, "fdeep");
    assert_true(periods_in(m, "fdeep") > 300); /* 600 ms */
    stacks_reach(m, "fdeep", 0.9);
    free_trace(&t);

    run_mode(&r, "chain", (const char *const[]){ "NANOPROF_UNWIND=frames", NULL });
    char first[1024];
    assert_int_equal(count_lines(r.err, first, sizeof first), 1);
    assert_non_null(strstr(first, "nanoprof: recording: NANOPROF_UNWIND: not fp or dwarf"));
    run_cleanup(&r);
}
#endif

#ifdef SAMPLE_INSTR
/* A program that does little but calls spends most of its time in the
 * hooks, and most samples land there. Each counts for the instrumented
 * function its hook is for, with that function's callers; none for the
 * runtime, whose own functions never appear. Samples taken in a hook
 * before it knows its function are left out, and counted as skipped. */
static void test_in_hooks(void **state)
{
    (void)state;
    struct run r;
    struct trace_stat t;
    run_init(&r, "in_hooks");
    /* the hooks run on every call; the writer keeps main's alone, which
     * keeps the trace small (this test reads every call by name) */
    run_mode(&r, "calls", (const char *const[]){ "NANOPROF_DEPTH=1", NULL });
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    read_trace(r.dir, &t);
    const struct thr_stat *m = thread_in(&t.procs[0], "fcall");
    uint64_t in_fcall = periods_in(m, "fcall");
    printf("calls: %llu periods sampled, %llu in fcall, %llu skipped\n", (unsigned long long)m->periods,
           (unsigned long long)in_fcall, (unsigned long long)m->skipped);
    uint64_t in_sanitizer = 0; /* a sanitizer's runtime, which fcall calls in those builds */
    for (int i = 0; i < m->nfns; i++) {
        const char *n = m->fns[i].name;
        /* its C functions, and its C++ ones by their mangled names
         * (_ZN6__tsan..., _ZN11__sanitizer...) */
        if (strstr(n, "__tsan") || strstr(n, "__asan") || strstr(n, "__ubsan") || strstr(n, "__sanitizer") ||
            strstr(n, "__interceptor"))
            in_sanitizer += m->fns[i].periods;
        if (!strncmp(n, "__cyg_profile_func_", 19) || !strncmp(n, "np_", 3) || !strcmp(n, "rec_only") ||
            !strcmp(n, "enter_full") || !strcmp(n, "exit_full") || !strcmp(n, "enter_slow") ||
            !strcmp(n, "exit_slow"))
            fail_msg("%llu periods in the runtime's %s", (unsigned long long)m->fns[i].periods, n);
    }
    /* 500 ms at 997 Hz: about 500 periods, nearly all in fcall (and in
     * what a sanitizer adds to it) */
    if (in_fcall < 200 || (double)(in_fcall + in_sanitizer) < 0.9 * (double)m->periods)
        fail_msg("%llu of %llu periods in fcall, %llu in the sanitizer", (unsigned long long)in_fcall,
                 (unsigned long long)m->periods, (unsigned long long)in_sanitizer);
    /* whole stacks, most of them: a sample taken in the recorder's slow
     * path (record.c, built without -ffixed-rbp) has the function and its
     * caller only (sample.c, hook_stack; 6 of 111 seen), and so do most
     * under ThreadSanitizer, whose runtime the hooks call */
    if (!UNDER_TSAN)
        stacks_reach(m, "fcall", 0.85);
    free_trace(&t);
    run_cleanup(&r);
}
#endif

#ifndef SAMPLE_INSTR
/* A thread that blocks SIGPROF is not sampled; nothing else changes. Not
 * under ThreadSanitizer, where the other thread is not sampled (above). */
static void test_blocked(void **state)
{
    (void)state;
    if (UNDER_TSAN)
        skip();
    struct run r;
    struct trace_stat t;
    run_init(&r, "blocked");
    run_mode(&r, "blocked", NULL);
    read_trace(r.dir, &t);
    assert_int_equal(t.nprocs, 1);
    const struct proc_stat *p = &t.procs[0];
    assert_true(p->has_end);
    const struct thr_stat *b = thread_in(p, "fc");
    assert_true(periods_in(b, "fc") > 150);
    for (int i = 0; i < p->nthreads; i++)
        assert_int_equal(periods_in(&p->threads[i], "fm"), 0);
    free_trace(&t);
    run_cleanup(&r);
}

/* The forked child's thread gets a timer of its own: its file has samples. */
static void test_fork(void **state)
{
    (void)state;
    struct run r;
    struct trace_stat t;
    run_init(&r, "fork");
    run_mode(&r, "fork", NULL);
    read_trace(r.dir, &t);
    assert_int_equal(t.nprocs, 2);
    const struct proc_stat *parent = &t.procs[0], *child = &t.procs[1];
    if (child->ppid != parent->pid) {
        parent = &t.procs[1];
        child = &t.procs[0];
    }
    assert_int_equal(child->ppid, parent->pid);
    assert_true(parent->has_end && child->has_end);
    sampling_chunk(child, 997);
    assert_int_equal(child->nthreads, 1);
    /* ThreadSanitizer ignores most of what a child of a threaded process
     * does (its interceptors, hence its deferred signals): few samples,
     * often none */
    if (!UNDER_TSAN)
        assert_true(periods_in(&child->threads[0], "fchild") > 150);
    assert_int_equal(periods_in(&child->threads[0], "fm"), 0);
    assert_true(periods_in(thread_in(parent, "fm"), "fm") > 100);
    for (int i = 0; i < parent->nthreads; i++)
        assert_int_equal(periods_in(&parent->threads[i], "fchild"), 0);
    free_trace(&t);
    run_cleanup(&r);
}

/* A program with its own SIGPROF handler and ITIMER_PROF keeps both: it
 * gets its own signals only (100 in 1 s of CPU), the sampler its own. Not under
 * ThreadSanitizer, whose sigaction interceptor comes before the runtime's
 * (docs/sampling.md). */
static void test_own_handler(void **state)
{
    (void)state;
    if (UNDER_TSAN)
        skip();
    struct run r;
    struct trace_stat t;
    run_init(&r, "own");
    run_mode(&r, "own", NULL);
    int own = -1, intact = -1;
    printed(&r, "own signals %d", &own, "own handler intact %d", &intact);
    assert_int_equal(intact, 1);
    /* about 100 on a quiet machine; fewer on a loaded one (so without
     * nanoprof too). Over 150 would be the sampler's 250 a second leaking
     * to it. */
    if (own < 10 || own > 150)
        fail_msg("the program's handler got %d signals, expected 10 to 150 (about 100)", own);
    read_trace(r.dir, &t);
    const struct thr_stat *m = thread_in(&t.procs[0], "fm");
    assert_true(periods_in(m, "fm") > 700);
    free_trace(&t);
    run_cleanup(&r);
}
#endif

#if !defined(SAMPLE_CLI) && !defined(SAMPLE_INSTR)
/* np_sample_start/stop sample a phase; without recording they refuse. */
static void test_api(void **state)
{
    (void)state;
    struct run r;
    struct trace_stat t;
    run_init(&r, "api");
    run_prog(&r, (char *const[]){ prog, "api", NULL }, NULL, 1);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    int start = 1, stop = 1;
    printed(&r, "start %d", &start, "stop %d", &stop);
    assert_int_equal(start, 0);
    assert_int_equal(stop, 0);
    read_trace(r.dir, &t);
    assert_true(t.order_ok);
    const struct proc_stat *p = &t.procs[0];
    assert_int_equal(p->nsampling, 2);
    assert_int_equal(p->hz[0], 500);
    assert_int_equal(p->period_ns[0], 2000000);
    assert_int_equal(p->hz[1], 0);
    const struct thr_stat *m = thread_in(p, "fphase");
    assert_true(periods_in(m, "fphase") > 100 && periods_in(m, "fphase") < 300);
    assert_int_equal(periods_in(m, "fafter"), 0);
    free_trace(&t);

    /* not recording */
    run_init(&r, "api_off");
    run_prog(&r, (char *const[]){ prog, "api", NULL }, NULL, 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    start = stop = 1;
    printed(&r, "start %d", &start, "stop %d", &stop);
    assert_int_equal(start, -4); /* NP_ENOTINIT */
    assert_int_equal(stop, -4);
    char first[1024];
    assert_int_equal(count_lines(r.err, first, sizeof first), 2);
    assert_non_null(strstr(first, "np_sample_start: not recording"));
    run_cleanup(&r);
}
#endif

#ifdef SAMPLE_CLI
static void test_cli_usage(void **state)
{
    (void)state;
    struct run r;
    run_init(&r, "sample_usage");
    run_prog(&r, (char *const[]){ cli, "record", "--sample=0", prog, "shares", NULL }, NULL, 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    char first[1024];
    assert_int_equal(count_lines(r.err, first, sizeof first), 1);
    assert_non_null(strstr(first, "nanoprof record: --sample: '0' is not a rate"));
    run_prog(&r, (char *const[]){ cli, "record", "--sample=12x", prog, "shares", NULL }, NULL, 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    run_prog(&r, (char *const[]){ cli, "record", "--help", NULL }, NULL, 0);
    FILE *f = fopen(r.out, "r");
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "--sample[=HZ]"));
    assert_non_null(strstr(text, "NANOPROF_SAMPLE"));
    /* a bad NANOPROF_SAMPLE in the environment: refused before the
     * program runs, in one line */
    run_prog(&r, (char *const[]){ cli, "record", "-o", r.dir, prog, "blocked", NULL },
             (const char *const[]){ "NANOPROF_SAMPLE=fast", NULL }, 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    assert_int_equal(count_lines(r.err, first, sizeof first), 1);
    assert_non_null(strstr(first, "nanoprof record: NANOPROF_SAMPLE=fast in the environment is not a rate"));
    run_cleanup(&r);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shares),
#ifdef SAMPLE_INSTR
        cmocka_unit_test(test_in_hooks),
#endif
#ifndef SAMPLE_INSTR
        cmocka_unit_test(test_blocked),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_own_handler),
#endif
#if !defined(SAMPLE_CLI) && !defined(SAMPLE_INSTR)
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_dwarf),
#endif
#ifdef SAMPLE_CLI
        cmocka_unit_test(test_cli_usage),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
