/* patch_prog.c - a program built with patchable entries
 * (-fpatchable-function-entry=5, or -pg -mfentry -mnop-mcount
 * -mrecord-mcount), for tests/test_patch_cli.sh:
 *
 *   patch_prog calls N        N rounds of work() (leaf_a, leaf_b) and fib(10)
 *   patch_prog signal K SIG   (SIG USR2 or RTMIN+N) K calls of leaf_a with tracing off, then
 *                             raise(SIG) and K more, three times over:
 *                             record's --trace-signal switches on, off, on
 *                             (it waits for each switch to show in leaf_a's
 *                             first byte)
 *   patch_api windows W K     (built with -DNP_WITH_API, linked with
 *                             libnanoprof) W threads make K calls of leaf_a
 *                             in each of five windows, tracing switched by
 *                             np_trace_on("leaf_*") / np_trace_off between
 *                             them (on in the second and fourth), while a
 *                             thread calls leaf_h without pause through the
 *                             switches; leaf_a's bytes checked after each
 *   patch_api dlclose LIB     LIB's plug_work switched on, LIB unloaded,
 *                             everything switched off (nothing to do), the
 *                             same again after loading LIB again
 *   patch_api flips N         N switches on and off of leaf_h while two
 *                             threads call it without pause; its bytes
 *                             checked at the end
 *
 * Each mode prints what the test checks the trace against. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef NP_WITH_API
#include "nanoprof/patch.h"
#endif

#define KEEP() __asm__ volatile("" ::: "memory")

volatile long sink;

__attribute__((noinline)) void leaf_a(long i) { sink += i; KEEP(); }
__attribute__((noinline)) void leaf_b(long i) { sink ^= i; KEEP(); }
__attribute__((noinline)) void leaf_h(long i) { sink -= i; KEEP(); }
__attribute__((noinline)) void work(long i)
{
    leaf_a(i);
    leaf_b(i);
    KEEP();
}
__attribute__((noinline)) long fib(long n)
{
    KEEP();
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned char first_byte(void) { return *(volatile unsigned char *)(void *)leaf_a; }

/* What a switched-on entry starts with: a jump to the function's thunk, or
 * with NANOPROF_PG_THUNKS=0 a call of the hook's jump. */
static unsigned char on_byte(void)
{
    const char *e = getenv("NANOPROF_PG_THUNKS");
    return e && !strcmp(e, "0") ? 0xe8 : 0xe9;
}

/* Waits until leaf_a's first byte is (ON) or is not (!ON) a switched-on one's. */
static int wait_switch(int on)
{
    for (int i = 0; i < 100000; i++) {
        if ((first_byte() == on_byte()) == on)
            return 0;
        struct timespec nap = { 0, 100000 };
        nanosleep(&nap, NULL);
    }
    fprintf(stderr, "patch_prog: tracing did not switch %s\n", on ? "on" : "off");
    return 1;
}

#ifdef NP_WITH_API
static pthread_barrier_t bar;
static long per_window;
static volatile int stop;
static long hammered;

static void *worker(void *arg)
{
    (void)arg;
    for (int w = 0; w < 5; w++) {
        pthread_barrier_wait(&bar); /* the window opens */
        for (long i = 0; i < per_window; i++)
            leaf_a(i);
        pthread_barrier_wait(&bar); /* and closes */
    }
    return NULL;
}

static void *hammer(void *arg)
{
    (void)arg;
    long n = 0;
    while (!stop)
        leaf_h(n++);
    hammered = n;
    return NULL;
}

static int windows(int nthreads, long k)
{
    unsigned char orig[5];
    memcpy(orig, (const void *)leaf_a, sizeof orig);
    per_window = k;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
    pthread_t t[64], h;
    pthread_create(&h, NULL, hammer, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    int bad = 0;
    for (int w = 0; w < 5; w++) {
        if (w == 1 || w == 3) {
            int n = np_trace_on("leaf_*");
            printf("on: %d\n", n);
            if (n < 0)
                fprintf(stderr, "np_trace_on: %s\n", np_trace_error()), bad = 1;
            bad |= first_byte() != on_byte();
        } else if (w) {
            int n = np_trace_off(NULL);
            printf("off: %d\n", n);
            bad |= memcmp(orig, (const void *)leaf_a, sizeof orig) != 0;
        }
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
    }
    stop = 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    pthread_join(h, NULL);
    printf("traced leaf_a: %ld\nbytes restored: %s\nleaf_h calls: %ld\n", 2 * k * nthreads,
           memcmp(orig, (const void *)leaf_a, sizeof orig) ? "no" : "yes", hammered);
    return bad;
}

/* A library's function switched on, the library unloaded (nothing to
 * switch off: its place may hold another's code), loaded again and
 * switched again. */
static int unloaded(const char *lib)
{
    int bad = 0;
    for (int round = 1; round <= 2; round++) {
        void *h = dlopen(lib, RTLD_NOW);
        long (*plug)(long) = h ? (long (*)(long))dlsym(h, "plug_work") : NULL;
        if (!plug) {
            fprintf(stderr, "patch_prog: %s\n", dlerror());
            return 1;
        }
        int on = np_trace_on("plug_*");
        plug(round);
        dlclose(h);
        int off = np_trace_off(NULL);
        printf("round %d: on %d, off after dlclose %d\n", round, on, off);
        bad |= on != 1 || off != 0;
    }
    return bad;
}

/* N switches on and off of leaf_h while two threads call it without pause */
static int flips(long n)
{
    unsigned char orig[5];
    memcpy(orig, (const void *)leaf_h, sizeof orig);
    pthread_t h[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&h[i], NULL, hammer, NULL);
    int bad = 0;
    for (long i = 0; i < n && !bad; i++)
        if (np_trace_on("leaf_h") != 1 || np_trace_off("leaf_h") != 1) {
            fprintf(stderr, "switch %ld: %s\n", i, np_trace_error());
            bad = 1;
        }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(h[i], NULL);
    bad |= memcmp(orig, (const void *)leaf_h, sizeof orig) != 0;
    printf("%ld switches: %s\n", n, bad ? "failed" : "done");
    return bad;
}
#endif

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calls";
    long n = argc > 2 ? atol(argv[2]) : 10;
    if (!strcmp(mode, "calls")) {
        for (long i = 0; i < n; i++)
            work(i);
        printf("fib(10) = %ld\n", fib(10));
        return 0;
    }
    if (!strcmp(mode, "signal") && argc > 3) {
        int sig = !strcmp(argv[3], "USR2") ? SIGUSR2 : !strncmp(argv[3], "RTMIN+", 6) ? SIGRTMIN + atoi(argv[3] + 6) : 0;
        if (!sig)
            return 2;
        for (int w = 0; w < 4; w++) {
            for (long i = 0; i < n; i++)
                leaf_a(i);
            if (w < 3 && (raise(sig) != 0 || wait_switch(w != 1)))
                return 1;
        }
        printf("traced leaf_a: %ld\n", 2 * n);
        return 0;
    }
#ifdef NP_WITH_API
    if (!strcmp(mode, "windows") && argc > 3)
        return windows(atoi(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "flips"))
        return flips(n);
    if (!strcmp(mode, "dlclose") && argc > 2)
        return unloaded(argv[2]);
#endif
    fprintf(stderr, "usage: patch_prog calls N | signal K SIG | windows W K | flips N | dlclose LIB\n");
    return 2;
}
