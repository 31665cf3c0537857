/* sample_split.c - the workload of the sampling accuracy figure
 * (bench/sample_accuracy.sh): THREADS threads (default 2) each burn CPU_S
 * seconds of their own CPU time in five functions with a known split
 * (40, 25, 20, 10 and 5%), in rounds of random length (0.5 to 3 ms, so
 * that no period lines up with the kernel's tick or the sampler's). The
 * loops read no clock: each function's CPU time is measured around its
 * call, and the totals, the truth the samples are compared with, are
 * printed as "truth NAME NS". No instrumentation, frame pointers on (the
 * functions are leaves: their PC alone names them).
 *
 *   bench_sample_split CPU_S [THREADS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NFN 5
static const double split[NFN] = { 0.40, 0.25, 0.20, 0.10, 0.05 };
static const char *const names[NFN] = { "split_a", "split_b", "split_c", "split_d", "split_e" };

static double cpu_s;
static double iters_per_ms;
static uint64_t truth[NFN];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same loop in each (K keeps them apart), N iterations. */
#define BURN(name, k)                                                   \
    __attribute__((noinline)) static unsigned long name(unsigned long n) \
    {                                                                   \
        unsigned long acc = 0;                                          \
        for (unsigned long i = 0; i < n; i++) {                         \
            acc += i * (k);                                             \
            __asm__ volatile("" : "+r"(acc));                           \
        }                                                               \
        return acc;                                                     \
    }
BURN(split_a, 3)
BURN(split_b, 5)
BURN(split_c, 7)
BURN(split_d, 11)
BURN(split_e, 13)
static unsigned long (*const fns[NFN])(unsigned long) = { split_a, split_b, split_c, split_d, split_e };

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 12345u;
    uint64_t mine[NFN] = { 0 }, start = cpu_ns(), limit = (uint64_t)(cpu_s * 1e9);
    volatile unsigned long sink = 0;
    while (cpu_ns() - start < limit) {
        seed = seed * 1103515245u + 12345u;
        double ms = 0.5 + (double)(seed >> 16 & 0x7fff) / 0x7fff * 2.5;
        for (int k = 0; k < NFN; k++) {
            uint64_t t0 = cpu_ns();
            sink += fns[k]((unsigned long)(ms * split[k] * iters_per_ms));
            mine[k] += cpu_ns() - t0;
        }
    }
    pthread_mutex_lock(&lock);
    for (int k = 0; k < NFN; k++)
        truth[k] += mine[k];
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (cpu_s = atof(argv[1])) <= 0) {
        fputs("usage: bench_sample_split CPU_S [THREADS]\n", stderr);
        return 2;
    }
    int nthreads = argc > 2 ? atoi(argv[2]) : 2;
    if (nthreads < 1 || nthreads > 64)
        nthreads = 2;
    uint64_t t0 = cpu_ns();
    split_a(20000000);
    iters_per_ms = 20000000.0 / ((double)(cpu_ns() - t0) / 1e6);
    pthread_t t[64];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    for (int k = 0; k < NFN; k++)
        printf("truth %s %llu\n", names[k], (unsigned long long)truth[k]);
    return 0;
}
