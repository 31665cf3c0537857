/* test_sample.c - the sampler (docs/sampling.md) on tests/programs/
 * sample_prog.c, whose threads burn their CPU time in known functions and
 * print how much each took. Traces are read with the real reader
 * (np_trace_read) and the samples' PCs resolved with the symbols module.
 * What the samples must show is derived from what the run measured, with
 * bounds from the statistics of sampling (expect_periods, expect_share):
 * nothing assumes an idle machine. Built three times:
 *   test_sample        sample_prog linked with libnanoprof, sampled through
 *                      NANOPROF_RECORD + NANOPROF_SAMPLE (sanitizer builds too)
 *   test_sample_cli    sample_prog with no runtime and no instrumentation,
 *                      under `nanoprof record --sample` (SAMPLE_CLI; not in
 *                      sanitizer builds: their runtime cannot be preloaded)
 *   test_sample_instr  sample_prog instrumented and linked: its calls are
 *                      recorded beside the samples (SAMPLE_INSTR) */
#include "record_run.h"
#include <math.h>
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
    uint64_t samples, periods, max_w;
    double w2;           /* the sum of its samples' periods squared */
    uint64_t under_root; /* samples whose stack holds the function's caller */
};

struct thr_stat {
    uint32_t tid;
    uint64_t samples, periods, skipped, max_frames;
    uint64_t tails; /* SAMPLEs of no frames: skipped periods alone */
    uint64_t max_w; /* the most periods one sample brought */
    double w2;      /* the sum of its samples' periods squared */
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
                                          { "fcall", "main" },  { "ftail_work", "thread_tail" },
                                          { "ftail", "thread_tail" } };
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
    th->skipped += skipped;
    if (!n) {
        th->tails++;
        return 0;
    }
    th->samples++;
    th->periods += periods;
    th->w2 += (double)periods * (double)periods;
    if (periods > th->max_w)
        th->max_w = periods;
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
    if (periods > f->max_w)
        f->max_w = periods;
    f->w2 += (double)periods * (double)periods;
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

/* ---- what the program measured ------------------------------------------ */

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

/* The value the program printed in its line "KEY NAME VALUE [COUNT]"
 * (sample_prog.c), and COUNT in *COUNT when not NULL; fails when it
 * printed no such line. */
static double measured(const struct run *r, const char *key, const char *name, unsigned long *count)
{
    FILE *f = fopen(r->out, "r");
    char line[256], k[16], n[64];
    double v = 0;
    unsigned long c = 0;
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        double lv;
        unsigned long lc = 0;
        if (sscanf(line, "%15s %63s %lf %lu", k, n, &lv, &lc) >= 3 && !strcmp(k, key) && !strcmp(n, name)) {
            v = lv;
            c = lc;
            found = true;
        }
    }
    if (f)
        fclose(f);
    if (!found)
        fail_msg("sample_prog printed no '%s %s' line", key, name);
    if (count)
        *count = c;
    return v;
}

/* The CPU time (ms) the program measured in NAME's calls. */
static double cpu_in(const struct run *r, const char *name) { return measured(r, "cpu", name, NULL); }

/* ---- what the samples must show ------------------------------------------ */

/* Each bound is K standard deviations of what sampling gives, two-sided
 * (a correct sampler fails one check in some 16,000), plus a bias said
 * where it is added. */
#define K 4.0

/* Periods in one ms of CPU time at P's sampling rate. */
static double periods_per_ms(const struct proc_stat *p) { return 1e6 / (double)p->period_ns[0]; }

/* NAME's periods in TH against the MS of CPU time the program measured in
 * its calls. Each of the thread's samples falls in NAME with the
 * probability p of NAME's share of the thread's sampled CPU time, and
 * brings its periods w (1 + its overrun): the periods in NAME have the
 * mean p W and the variance p (1 - p) W2, W and W2 the sums of w and w^2
 * over the thread's samples. The bias on top: what the measure around
 * NAME's calls holds besides their loops (two clock reads, each call's
 * call of keep: under 0.1%; 1% allowed); at either end of NAME's calls a
 * sample can bring periods of what ran before or after (one sample's at
 * most, each end); and the periods not sampled (skipped) may all be
 * NAME's. Samples not weighted by their overruns would give a quarter
 * (one sample per 4 ms kernel tick) or less. */
static void expect_periods(const struct proc_stat *p, const struct thr_stat *th, const char *name, double ms)
{
    double want = ms * periods_per_ms(p), got = (double)periods_in(th, name);
    double total = (double)(th->periods + th->skipped);
    double share = want < total ? want / total : 1;
    double tol = K * sqrt(share * (1 - share) * th->w2) + 0.01 * want + 2 * (double)th->max_w + (double)th->skipped;
    print_message("%s: %.0f periods, %.0f +- %.0f from %.1f ms of CPU time measured\n", name, got, want, tol, ms);
    if (fabs(got - want) > tol)
        fail_msg("%s: %.0f periods sampled, %.0f +- %.0f expected from the %.1f ms of CPU time measured", name, got,
                 want, tol, ms);
}

/* All of TH's periods against its CPU time: no more than its CPU clock
 * held when it ended (THREAD_MS: the timer runs on that clock; one more
 * for an expiry under way, one for what the thread ran after it read the
 * clock), and no fewer than WORK_MS, the CPU time measured in its work,
 * less one sample's periods at each end, as in expect_periods. */
static void expect_thread(const struct proc_stat *p, const struct thr_stat *th, const char *what, double thread_ms,
                          double work_ms)
{
    double rate = periods_per_ms(p), got = (double)(th->periods + th->skipped);
    double low = work_ms * rate - 2 * (double)th->max_w, high = thread_ms * rate + 2;
    print_message("%s: %.0f periods, %.0f to %.0f from its CPU time\n", what, got, low, high);
    if (got < low || got > high)
        fail_msg("%s: %.0f periods sampled, expected %.0f to %.0f from the %.1f ms of CPU time it ran (%.1f in its "
                 "work)",
                 what, got, low, high, thread_ms, work_ms);
}

/* A's share of the periods in A and B in TH against the share of the CPU
 * time measured in A, MS_A / (MS_A + MS_B): the binomial spread of the
 * samples in A or B, by their periods (as in expect_periods) and by
 * their number. The bias on top, 0.005: sample_prog splits the time it
 * measured around both as their iterations, which gives each call's own
 * cost (a call, keep's: some ns of a call of 0.17 ms or more) to the
 * function with more iterations (under 0.001), and takes an iteration to
 * cost the same in both (the same code at the same alignment, but for an
 * immediate: the rest). */
static void expect_share(const struct thr_stat *th, const char *a, const char *b, double ms_a, double ms_b)
{
    const struct fn_stat *fa = fn_in(th, a), *fb = fn_in(th, b);
    if (!fa || !fb)
        fail_msg("no sample in %s", fa ? b : a);
    double want = ms_a / (ms_a + ms_b);
    double w = (double)(fa->periods + fb->periods), n = (double)(fa->samples + fb->samples);
    double share = (double)fa->periods / w, tol = K * sqrt(want * (1 - want) * (fa->w2 + fb->w2)) / w + 0.005;
    double nshare = (double)fa->samples / n, ntol = K * sqrt(want * (1 - want) / n) + 0.005;
    print_message("%s: %.3f of the periods in %s and %s, %.3f of their %.0f samples; %.3f +- %.3f (+- %.3f) "
                  "measured\n",
                  a, share, a, b, nshare, n, want, tol, ntol);
    if (fabs(share - want) > tol)
        fail_msg("%s has %.3f of the periods in %s and %s, expected %.3f +- %.3f from the CPU time measured", a, share,
                 a, b, want, tol);
    if (fabs(nshare - want) > ntol)
        fail_msg("%s has %.3f of the %.0f samples in %s and %s, expected %.3f +- %.3f from the CPU time measured", a,
                 nshare, n, a, b, want, ntol);
}

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
        expect_periods(p, m, "fm", cpu_in(&r, "fm"));
        expect_thread(p, m, "main", measured(&r, "thread", "main", NULL), cpu_in(&r, "fm"));
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
    /* each thread's samples only: none in another thread's functions */
    assert_int_equal(periods_in(a, "fc") + periods_in(a, "fm") + periods_in(b, "fa") + periods_in(b, "fb") +
                         periods_in(b, "fm") + periods_in(m, "fa") + periods_in(m, "fb") + periods_in(m, "fc"),
                     0);
    double ms_fa = cpu_in(&r, "fa"), ms_fb = cpu_in(&r, "fb"), ms_fc = cpu_in(&r, "fc"), ms_fm = cpu_in(&r, "fm");
    print_message("skipped: a %llu, b %llu, main %llu; most periods in a sample: a %llu, b %llu, main %llu\n",
                  (unsigned long long)a->skipped, (unsigned long long)b->skipped, (unsigned long long)m->skipped,
                  (unsigned long long)a->max_w, (unsigned long long)b->max_w, (unsigned long long)m->max_w);
    /* every period of each thread's CPU time (periods weighted by their
     * overruns), each function its own, fa and fb their shares */
    expect_thread(p, a, "thread_a", measured(&r, "thread", "thread_a", NULL), ms_fa + ms_fb);
    expect_thread(p, b, "thread_b", measured(&r, "thread", "thread_b", NULL), ms_fc);
    expect_thread(p, m, "main", measured(&r, "thread", "main", NULL), ms_fm);
    expect_periods(p, a, "fa", ms_fa);
    expect_periods(p, a, "fb", ms_fb);
    expect_periods(p, b, "fc", ms_fc);
    expect_periods(p, m, "fm", ms_fm);
    expect_share(a, "fa", "fb", ms_fa, ms_fb);
    /* frame pointers: the callers are on the stacks */
    stacks_reach(a, "fa", 0.9);
    stacks_reach(a, "fb", 0.9);
    stacks_reach(b, "fc", 0.9);
    stacks_reach(m, "fm", 0.9);
#ifdef SAMPLE_INSTR
    /* the calls, recorded alongside: every call the program made */
    const char *const called[] = { "fa", "fb", "fc", "fm", "main" };
    for (size_t k = 0; k < sizeof called / sizeof *called; k++) {
        unsigned long want = 1;
        if (strcmp(called[k], "main"))
            measured(&r, "cpu", called[k], &want);
        uint64_t got = 0;
        for (int i = 0; i < p->nentered; i++)
            if (!strcmp(p->entered[i], called[k]))
                got = p->enters[i];
        if (got != want)
            fail_msg("%s: %llu calls recorded, the program made %lu", called[k], (unsigned long long)got, want);
    }
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
    expect_periods(p, m, "fdeep", cpu_in(&r, "fdeep"));
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
    /* every period of the CPU time the loop measured (as expect_thread:
     * less one sample's periods each end), nearly all in fcall (and in
     * what a sanitizer adds to it) */
    expect_thread(&t.procs[0], m, "main", measured(&r, "thread", "main", NULL), cpu_in(&r, "fcall"));
    if ((double)(in_fcall + in_sanitizer) < 0.9 * (double)m->periods)
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

#ifndef SAMPLE_CLI
/* A thread whose last CPU time goes in hooks, where samples are not
 * appended (sample.c), owes the trace those periods when it ends (or the
 * recording does): they come as a SAMPLE of no frames (the periods not
 * sampled: a marker's hook) and, where the last hook was a function's,
 * the sample kept for it. Each hook's periods against the CPU time it
 * measured, give or take what one sample brings at either end
 * (expect_periods), from ftail_work, the thread's work before them. Not
 * under ThreadSanitizer, where a thread is sampled from its first hook on
 * (test_shares). */
static void test_tail(void **state)
{
    (void)state;
    if (UNDER_TSAN)
        skip();
    struct run r;
    struct trace_stat t;
    run_init(&r, "tail");
    run_mode(&r, "tail", NULL);
    read_trace(r.dir, &t);
    const struct proc_stat *p = &t.procs[0];
    const struct thr_stat *th = thread_in(p, "ftail_work");
    double rate = periods_per_ms(p), work = cpu_in(&r, "ftail_work"), marker = cpu_in(&r, "tail_marker"),
           hook = cpu_in(&r, "tail_exit"), end = 2.0 * (double)fn_in(th, "ftail_work")->max_w;
    double skipped = (double)th->skipped, in_ftail = (double)periods_in(th, "ftail");
    print_message("thread_tail: %.0f periods not sampled (%llu SAMPLE of no frames), %.0f in ftail; marker %.1f ms, "
                  "ftail's exit hook %.1f ms, +- %.0f\n",
                  skipped, (unsigned long long)th->tails, in_ftail, marker, hook, end);
    assert_true(marker > 100);
    if (fabs(skipped - marker * rate) > end)
        fail_msg("thread_tail: %.0f periods not sampled, %.0f +- %.0f expected from its marker's %.1f ms", skipped,
                 marker * rate, end, marker);
#ifdef SAMPLE_INSTR
    assert_true(hook > 100);
    if (fabs(in_ftail - hook * rate) > end)
        fail_msg("ftail: %.0f periods, %.0f +- %.0f expected from its exit hook's %.1f ms", in_ftail, hook * rate,
                 end, hook);
    stacks_reach(th, "ftail", 1.0);
#else
    assert_true(hook == 0 && in_ftail == 0); /* (no hooks: not instrumented) */
    assert_int_equal(th->tails, 1);
#endif
    /* and nothing else is missing */
    double got = (double)(th->periods + th->skipped), low = (work + marker + hook) * rate - 2 * end,
           high = measured(&r, "thread", "thread_tail", NULL) * rate + 2;
    if (got < low || got > high)
        fail_msg("thread_tail: %.0f periods, expected %.0f to %.0f", got, low, high);
    /* main's last periods, in a marker's hook too, come when the
     * recording ends (at exit), not the thread */
    const struct thr_stat *m = NULL;
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == p->pid)
            m = &p->threads[i];
    assert_non_null(m);
    double main_ms = cpu_in(&r, "tail_main");
    print_message("main: %llu periods not sampled; its marker %.1f ms\n", (unsigned long long)m->skipped, main_ms);
    assert_true(main_ms > 100);
    if (fabs((double)m->skipped - main_ms * rate) > end)
        fail_msg("main: %llu periods not sampled, %.0f +- %.0f expected from its marker's %.1f ms",
                 (unsigned long long)m->skipped, main_ms * rate, end, main_ms);
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
    expect_periods(p, b, "fc", cpu_in(&r, "fc"));
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
        expect_periods(child, &child->threads[0], "fchild", cpu_in(&r, "fchild"));
    assert_int_equal(periods_in(&child->threads[0], "fm"), 0);
    expect_periods(parent, thread_in(parent, "fm"), "fm", cpu_in(&r, "fm"));
    for (int i = 0; i < parent->nthreads; i++)
        assert_int_equal(periods_in(&parent->threads[i], "fchild"), 0);
    free_trace(&t);
    run_cleanup(&r);
}

/* A program with its own SIGPROF handler and ITIMER_PROF keeps both: it
 * gets its own signals only (about 100 in 1 s of CPU), the sampler its
 * own. Not under ThreadSanitizer, whose sigaction interceptor comes before
 * the runtime's (docs/sampling.md). */
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
    /* none of the sampler's signals (SI_TIMER) reach the program's handler */
    assert_int_equal(measured(&r, "own", "foreign", NULL), 0);
    /* and its own reach it. How many is the kernel's: ITIMER_PROF runs on
     * the process's CPU time as charged at its ticks, and a signal due
     * while the last is pending is dropped (no overrun count): about 100
     * in 1 s of CPU on a quiet machine, from 46 to 125 seen on busy ones.
     * No count follows from what the run measured; the exact checks are
     * these two. */
    if (own < 1)
        fail_msg("the program's handler got none of its own signals in %.1f ms of CPU",
                 measured(&r, "own", "cpu", NULL));
    read_trace(r.dir, &t);
    const struct thr_stat *m = thread_in(&t.procs[0], "fm");
    expect_periods(&t.procs[0], m, "fm", cpu_in(&r, "fm"));
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
    expect_periods(p, m, "fphase", cpu_in(&r, "fphase"));
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
#ifndef SAMPLE_CLI
        cmocka_unit_test(test_tail),
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
