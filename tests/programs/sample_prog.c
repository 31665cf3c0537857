/* sample_prog.c - what the sampler's tests sample (tests/test_sample.c):
 * threads that burn known amounts of their own CPU time in known
 * functions. Built with frame pointers, three ways: linked with
 * libnanoprof (sampled through NANOPROF_RECORD + NANOPROF_SAMPLE), with no
 * runtime and no instrumentation (`nanoprof record --sample` preloads it),
 * and instrumented (calls recorded too).
 *
 *   shares    thread_a: fa 75% and fb 25% of 2400 ms, in chunks of random
 *             length (so no period lines up with the kernel's tick);
 *             thread_b: fc 600 ms; main: fm 200 ms
 *   blocked   thread_b: fc 300 ms; main blocks SIGPROF, then fm 300 ms
 *   fork      main: fm 100 ms, fork; the child: fchild 500 ms, exit(0);
 *             the parent waits, then fm 100 ms
 *   own       main installs its own SIGPROF handler (sigaction) and runs
 *             setitimer(ITIMER_PROF) every 10 ms during fm 1000 ms; prints
 *             "own signals N" and "own handler intact 0|1"
 *   api       np_sample_start(500), fphase 400 ms, np_sample_stop(), fafter
 *             300 ms; prints "start R" and "stop R" (the return values)
 *   chain     main -> chain_outer -> chain_middle -> chain_inner -> fdeep
 *             600 ms (for the unwinders: sample_prog_nofp is built
 *             without frame pointers)
 *   calls     main -> fcall, a recursion that does little but calls, for
 *             500 ms (instrumented, most of its time is in the hooks) */
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

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

/* weak: the build without a runtime has no sampling API */
int np_sample_start(unsigned hz) __attribute__((weak));
int np_sample_stop(void) __attribute__((weak));

static __thread volatile unsigned long sink; /* per thread: no race */

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Each burns MS of the thread's CPU time in its own loop (K keeps the
 * bodies apart, so no two are folded into one). */
#define BURN(name, k)                                                                                        \
    KEEP void name(double ms)                                                                               \
    {                                                                                                        \
        double end = cpu_ms() + ms;                                                                          \
        unsigned long acc = 0;                                                                               \
        while (cpu_ms() < end)                                                                               \
            for (unsigned long i = 0; i < 20000; i++) {                                                       \
                acc += i * (k);                                                                              \
                __asm__ volatile("" : "+r"(acc)); /* kept, in a register: no memory access */                \
            }                                                                                                \
        sink += acc;                                                                                         \
    }
BURN(fa, 3)
BURN(fb, 5)
BURN(fc, 7)
BURN(fm, 11)
BURN(fchild, 13)
BURN(fphase, 17)
BURN(fafter, 19)
BURN(fdeep, 23)

/* Each does something after its call, so that none is a tail call. */
KEEP void chain_inner(double ms)
{
    fdeep(ms);
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

KEEP void *thread_a(void *arg)
{
    (void)arg;
    unsigned seed = 12345;
    double done = 0;
    while (done < 2400) {
        seed = seed * 1103515245u + 12345u;
        double chunk = 1.0 + (double)(seed >> 16 & 0x7fff) / 0x7fff * 4.0; /* 1 to 5 ms */
        fa(chunk * 0.75);
        fb(chunk * 0.25);
        done += chunk;
    }
    return NULL;
}

KEEP void *thread_b(void *arg)
{
    fc((double)(long)arg);
    return NULL;
}

static volatile sig_atomic_t own_signals;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
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
    setitimer(ITIMER_PROF, &it, NULL);
    fm(1000);
    setitimer(ITIMER_PROF, &off, NULL);
    sigaction(SIGPROF, NULL, &back);
    printf("own signals %d\n", (int)own_signals);
    printf("own handler intact %d\n", (back.sa_flags & SA_SIGINFO) && back.sa_sigaction == own_handler);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t a, b;
    if (!strcmp(mode, "shares")) {
        pthread_create(&a, NULL, thread_a, NULL);
        pthread_create(&b, NULL, thread_b, (void *)600L);
        fm(200);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    } else if (!strcmp(mode, "blocked")) {
        pthread_create(&b, NULL, thread_b, (void *)300L);
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &prof, NULL);
        fm(300);
        pthread_join(b, NULL);
    } else if (!strcmp(mode, "fork")) {
        fm(100);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            fchild(500);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        fm(100);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    } else if (!strcmp(mode, "own")) {
        return own();
    } else if (!strcmp(mode, "api")) {
        if (!np_sample_start) {
            puts("no api");
            return 1;
        }
        printf("start %d\n", np_sample_start(500));
        fphase(400);
        printf("stop %d\n", np_sample_stop());
        fafter(300);
    } else if (!strcmp(mode, "chain")) {
        chain_outer(600);
    } else if (!strcmp(mode, "calls")) {
        double t0 = cpu_ms();
        while (cpu_ms() - t0 < 500)
            sink += fcall(20);
    } else {
        fprintf(stderr, "usage: sample_prog shares|blocked|fork|own|api|chain|calls\n");
        return 2;
    }
    return 0;
}
