/* sample_prog.c - what the sampler's tests sample (tests/test_sample.c):
 * threads that burn their CPU time in known functions, and measure it.
 * Built with frame pointers, three ways: linked with libnanoprof (sampled
 * through NANOPROF_RECORD + NANOPROF_SAMPLE), with no runtime and no
 * instrumentation (`nanoprof record --sample` preloads it), and
 * instrumented (calls recorded too).
 *
 * The functions' loops read no clock, and neither does the code between
 * their calls: a clock read is a system call, a sample taken in one is not
 * the function's (the frame-pointer walk starts at its caller's frame:
 * with the loops reading the clock, a sixth of their samples fell outside
 * them), and on a busy machine a thread is preempted where it returns
 * from one. Read between every two calls, the clock made both the
 * measure and the samples wrong there: each call's measured time took in
 * the preemption's cost, and the samples of thread_a, fewer and of more
 * periods each, gave fa 0.85 of its time with fb where 0.75 was measured.
 * So the amounts of time below are calibrated once (iterations per ms)
 * and each thread's CPU clock is read around its run of calls only; the
 * program prints what it measured, the truth the tests compare the
 * samples with (the amounts below are what it aims at, not what the
 * tests expect):
 *   cpu NAME MS CALLS   MS of CPU time spent in NAME's CALLS calls
 *   wall NAME MS        the wall time its calls took (chain only)
 *   thread NAME MS      a thread's CPU time when it ends (main's always,
 *                       thread_a's and thread_b's in shares)
 *
 *   shares    thread_a: fa 75% and fb 25% of 2400 ms, in chunks of random
 *             length (so no period lines up with the kernel's tick);
 *             thread_b: fc 600 ms; main: fm 200 ms
 *   blocked   thread_b: fc 300 ms; main blocks SIGPROF, then fm 300 ms
 *   fork      main: fm 100 ms, fork; the child: fchild 500 ms, exit(0);
 *             the parent waits, then fm 100 ms
 *   own       main installs its own SIGPROF handler (sigaction) and runs
 *             setitimer(ITIMER_PROF) every 10 ms during fm 1000 ms; prints
 *             "own signals N", "own foreign N" (signals of a timer_create
 *             timer: the sampler's), "own cpu MS" (the process's CPU time
 *             while the timer ran) and "own handler intact 0|1"
 *   api       np_sample_start(500), fphase 400 ms, np_sample_stop(), fafter
 *             300 ms; prints "start R" and "stop R" (the return values)
 *   chain     main -> chain_outer -> chain_middle -> chain_inner -> fdeep
 *             600 ms (for the unwinders: sample_prog_nofp is built
 *             without frame pointers)
 *   calls     main -> fcall, a recursion that does little but calls, for
 *             500 ms (instrumented, most of its time is in the hooks)
 *   tail      thread_tail: ftail_work 100 ms, then its last CPU time in
 *             hooks, where samples are not appended: 200 ms in the enter
 *             hook of a marker (user hooks, np_hooks_set: those periods are
 *             not sampled), and, instrumented, 200 ms in ftail's exit hook
 *             (a sample kept for ftail until the thread's next event, which
 *             never comes); prints "cpu tail_marker MS", "cpu tail_exit MS"
 *             (the hooks' CPU time) and "thread thread_tail MS" (at the
 *             last hook's end); main then 200 ms in a marker's hook, its
 *             last sampled time before the recording ends ("cpu tail_main
 *             MS") */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../sanitizer.h"

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

/* weak: the build without a runtime has no sampling API */
int np_sample_start(unsigned hz) __attribute__((weak));
int np_sample_stop(void) __attribute__((weak));
typedef void (*np_hook_fn)(void *ctx, const void *fn, const void *site, int named);
int np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx) __attribute__((weak));
void np_enter(const char *name) __attribute__((weak));
void np_exit(void) __attribute__((weak));

static __thread volatile unsigned long sink; /* per thread: no race */

static double ms_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void) { return ms_of(CLOCK_THREAD_CPUTIME_ID); }

/* Not inlined: a function that calls it is no leaf, and so gets its frame
 * (GCC sets none up in a leaf that needs no stack, frame pointers or not,
 * and the walk would miss that function's caller). Neither instrumented
 * nor seen by ThreadSanitizer: a few instructions, no hooks, whose time
 * is measured with its caller's. */
__attribute__((no_instrument_function, no_sanitize("thread"))) KEEP void keep(unsigned long v)
{
    sink += v;
}

/* ThreadSanitizer defers a signal that comes while the thread runs code
 * of its own until its next interceptor, and drops one more of the same
 * meanwhile: there, the loops call one every 2^20 iterations (some 0.3 ms;
 * a read of the monotonic clock, no system call), or the samples would
 * wait for the end of the loop and be lost. */
#if UNDER_TSAN
#define LET_SIGNALS_IN(i)                        \
    do {                                         \
        if (((i) & 0xfffff) == 0) {              \
            struct timespec ts_;                 \
            clock_gettime(CLOCK_MONOTONIC, &ts_); \
        }                                        \
    } while (0)
#else
#define LET_SIGNALS_IN(i) (void)(i)
#endif

/* Each runs its own loop N times, reading no clock: the same code at the
 * same alignment in every one, so that an iteration costs the same in each
 * (K, a constant the compiler strength-reduces to an add of it, keeps the
 * bodies apart, so that no two are folded into one). */
#define BURN(name, k)                                                                                        \
    __attribute__((aligned(64))) KEEP void name(unsigned long n)                                             \
    {                                                                                                        \
        unsigned long acc = 0;                                                                               \
        for (unsigned long i = 0; i < n; i++) {                                                              \
            acc += i * (k);                                                                                  \
            __asm__ volatile("" : "+r"(acc)); /* kept, in a register: no memory access */                    \
            LET_SIGNALS_IN(i);                                                                               \
        }                                                                                                    \
        keep(acc);                                                                                           \
        __asm__ volatile(""); /* after the call: no tail call */                                             \
    }                                                                                                        \
    static __attribute__((unused)) struct figure fig_##name = { #name, 0, 0, 0 };

/* What was measured of one function's calls, by the one thread that
 * calls it (main prints it after joining that thread). */
struct figure {
    const char *name;
    double cpu_ms, wall_ms;
    unsigned long calls;
};

BURN(fa, 3)
BURN(fb, 5)
BURN(fc, 7)
BURN(fm, 11)
BURN(fchild, 13)
BURN(fphase, 17)
BURN(fafter, 19)
BURN(fdeep, 23)
BURN(fcalibrate, 29)
BURN(ftail_work, 31)
BURN(ftail_hook, 37)

/* Iterations of the loop per ms of CPU time (calibrate, in main first). */
static double iters_per_ms;

static void calibrate(void)
{
    double t0 = cpu_ms();
    fcalibrate(1ul << 24);
    iters_per_ms = (double)(1ul << 24) / (cpu_ms() - t0);
}

/* Iterations of a call that RUN makes: some 0.3 ms at -O2. */
#define STEP (1ul << 20)

/* FN called STEP iterations at a time for about MS of CPU time, and the
 * CPU time it took measured around the whole run. A macro: the caller's
 * frame is the one above FN's. */
#define RUN(fn, ms)                                                     \
    do {                                                                \
        double t0_ = cpu_ms();                                          \
        for (double n_ = (ms) * iters_per_ms; n_ > 0; n_ -= STEP) {     \
            fn(STEP);                                                   \
            fig_##fn.calls++;                                           \
        }                                                               \
        fig_##fn.cpu_ms += cpu_ms() - t0_;                              \
    } while (0)

static void say(const struct figure *f)
{
    if (f->calls)
        printf("cpu %s %.3f %lu\n", f->name, f->cpu_ms, f->calls);
    if (f->wall_ms > 0)
        printf("wall %s %.3f\n", f->name, f->wall_ms);
}

static double thread_a_ms, thread_b_ms;

/* Each does something after its call, so that none is a tail call. */
KEEP void chain_inner(double ms)
{
    double w0 = ms_of(CLOCK_MONOTONIC);
    RUN(fdeep, ms);
    fig_fdeep.wall_ms += ms_of(CLOCK_MONOTONIC) - w0;
    sink += 1;
}
KEEP void chain_middle(double ms)
{
    chain_inner(ms);
    sink += 2;
}
KEEP void chain_outer(double ms)
{
    chain_middle(ms);
    sink += 3;
}

KEEP unsigned long fcall(unsigned n)
{
    return n < 2 ? n : fcall(n - 1) + fcall(n - 2);
}

/* fa three times as long as fb, chunk by chunk (chunks of 2 to 10
 * STEPs), for about 2400 ms. Their CPU time is measured around the whole
 * run and split as their iterations: an iteration costs the same in
 * each (BURN). */
KEEP void *thread_a(void *arg)
{
    (void)arg;
    unsigned seed = 12345;
    double ia = 0, ib = 0, t0 = cpu_ms();
    while (ia + ib < 2400 * iters_per_ms) {
        seed = seed * 1103515245u + 12345u;
        unsigned long quarter = STEP / 2 + (unsigned long)(seed >> 16 & 0x7fff) * (2 * STEP) / 0x7fff;
        fa(3 * quarter);
        fb(quarter);
        ia += 3.0 * (double)quarter;
        ib += (double)quarter;
        fig_fa.calls++;
        fig_fb.calls++;
    }
    double ran = cpu_ms() - t0;
    fig_fa.cpu_ms = ran * ia / (ia + ib);
    fig_fb.cpu_ms = ran * ib / (ia + ib);
    thread_a_ms = cpu_ms();
    return NULL;
}

KEEP void *thread_b(void *arg)
{
    RUN(fc, (double)(long)arg);
    thread_b_ms = cpu_ms();
    return NULL;
}

/* tail: the user hooks burn thread_tail's last CPU time (see the top) */
static const char tail_marker[] = "tail_marker", tail_main[] = "tail_main";
static double tail_marker_ms, tail_exit_ms, thread_tail_ms, tail_main_ms, main_tail_ms;

/* A call whose exit hook burns (where it has hooks: instrumented). */
KEEP void ftail(void)
{
    __asm__ volatile("");
}

/* 200 ms in the hook, its CPU time to *MS, the thread's after it to
 * *THREAD_MS */
__attribute__((no_instrument_function)) static void tail_burn(double *ms, double *thread_ms)
{
    double t0 = cpu_ms();
    RUN(ftail_hook, 200);
    *ms += cpu_ms() - t0;
    *thread_ms = cpu_ms();
}

__attribute__((no_instrument_function)) static void tail_enter(void *ctx, const void *fn, const void *site, int named)
{
    (void)ctx, (void)site;
    if (named && fn == tail_marker)
        tail_burn(&tail_marker_ms, &thread_tail_ms);
    else if (named && fn == tail_main)
        tail_burn(&tail_main_ms, &main_tail_ms);
}

__attribute__((no_instrument_function)) static void tail_exit(void *ctx, const void *fn, const void *site, int named)
{
    (void)ctx, (void)site, (void)named;
    if (fn == (const void *)ftail)
        tail_burn(&tail_exit_ms, &thread_tail_ms);
}

/* Not instrumented: after the last hook, no event until the thread ends. */
__attribute__((no_instrument_function)) KEEP void *thread_tail(void *arg)
{
    (void)arg;
    RUN(ftail_work, 100);
    np_enter(tail_marker);
    np_exit();
    ftail();
    return NULL;
}

static volatile sig_atomic_t own_signals, foreign_signals;

/* ITIMER_PROF's signals come from the kernel (SI_KERNEL); one from a
 * timer_create timer (SI_TIMER) can only be the sampler's */
static void own_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si && si->si_code == SI_TIMER)
        foreign_signals++;
    else
        own_signals++;
}

static int own(void)
{
    struct sigaction sa, back;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return 1;
    struct itimerval it = { { 0, 10000 }, { 0, 10000 } }, off = { { 0, 0 }, { 0, 0 } };
    double p0 = ms_of(CLOCK_PROCESS_CPUTIME_ID);
    setitimer(ITIMER_PROF, &it, NULL);
    RUN(fm, 1000);
    setitimer(ITIMER_PROF, &off, NULL);
    double p1 = ms_of(CLOCK_PROCESS_CPUTIME_ID);
    sigaction(SIGPROF, NULL, &back);
    printf("own signals %d\n", (int)own_signals);
    printf("own foreign %d\n", (int)foreign_signals);
    printf("own cpu %.3f\n", p1 - p0);
    printf("own handler intact %d\n", (back.sa_flags & SA_SIGINFO) && back.sa_sigaction == own_handler);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t a, b;
    calibrate();
    if (!strcmp(mode, "shares")) {
        pthread_create(&a, NULL, thread_a, NULL);
        pthread_create(&b, NULL, thread_b, (void *)600L);
        RUN(fm, 200);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        printf("thread thread_a %.3f\nthread thread_b %.3f\n", thread_a_ms, thread_b_ms);
    } else if (!strcmp(mode, "blocked")) {
        pthread_create(&b, NULL, thread_b, (void *)300L);
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &prof, NULL);
        RUN(fm, 300);
        pthread_join(b, NULL);
    } else if (!strcmp(mode, "fork")) {
        RUN(fm, 100);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            RUN(fchild, 500);
            say(&fig_fchild);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        RUN(fm, 100);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    } else if (!strcmp(mode, "own")) {
        if (own() != 0)
            return 1;
    } else if (!strcmp(mode, "api")) {
        if (!np_sample_start) {
            puts("no api");
            return 1;
        }
        printf("start %d\n", np_sample_start(500));
        RUN(fphase, 400);
        printf("stop %d\n", np_sample_stop());
        RUN(fafter, 300);
    } else if (!strcmp(mode, "chain")) {
        chain_outer(600);
    } else if (!strcmp(mode, "calls")) {
        /* the clock read once every 64 calls (some 60 ms; see above) */
        double t0 = cpu_ms();
        unsigned long calls = 0;
        while (calls % 64 || cpu_ms() - t0 < 500) {
            sink += fcall(20);
            calls++;
        }
        printf("cpu fcall %.3f %lu\n", cpu_ms() - t0, calls);
    } else if (!strcmp(mode, "tail")) {
        if (!np_hooks_set || np_hooks_set(tail_enter, tail_exit, NULL) != 0) {
            puts("no api");
            return 1;
        }
        pthread_create(&a, NULL, thread_tail, NULL);
        pthread_join(a, NULL);
        np_enter(tail_main);
        np_exit();
        np_hooks_set(NULL, NULL, NULL);
        printf("cpu tail_main %.3f\n", tail_main_ms);
        printf("cpu tail_marker %.3f\n", tail_marker_ms);
        printf("cpu tail_exit %.3f\n", tail_exit_ms);
        printf("thread thread_tail %.3f\n", thread_tail_ms);
    } else {
        fprintf(stderr, "usage: sample_prog shares|blocked|fork|own|api|chain|calls|tail\n");
        return 2;
    }
    const struct figure *const figs[] = { &fig_fa,     &fig_fb,     &fig_fc,    &fig_fm,         &fig_fchild,
                                          &fig_fphase, &fig_fafter, &fig_fdeep, &fig_ftail_work };
    for (size_t i = 0; i < sizeof figs / sizeof *figs; i++)
        say(figs[i]);
    printf("thread main %.3f\n", cpu_ms());
    return 0;
}
