/* many_threads.c - T threads at once, each calling one function N times
 * (300 x 100,000 in `make bench`): the recorder's worst case for keeping
 * up (bench/record_loss.sh). Prints "calls C", counted by the program. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread = 100000;
static unsigned long counted;
static pthread_barrier_t start;

__attribute__((noinline)) void leaf(void)
{
    __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < per_thread; i++)
        leaf();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (argc > 2)
        per_thread = atol(argv[2]);
    pthread_t *th = calloc((size_t)(n > 0 ? n : 1), sizeof *th);
    if (n < 1 || !th || pthread_barrier_init(&start, NULL, (unsigned)n))
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, NULL))
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("calls %lu\n", counted);
    free(th);
    return 0;
}
