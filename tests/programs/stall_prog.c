/* stall_prog.c - a program that holds a lock the recorder's writer needs
 * while it makes calls (tests/test_record_pressure.sh): its own write(),
 * which the runtime's writer thread calls too, takes a mutex that main
 * holds during N calls of leaf. Waiting for the writer would never end;
 * the recorder must notice that the writer makes no progress and go on
 * without losing anything. Prints "calls N". Linked with libnanoprof,
 * recording through NANOPROF_RECORD. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOPROF __attribute__((no_instrument_function))

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int armed;
static volatile unsigned long sink;

/* Stands in front of the C library's for the whole process, the runtime
 * included, as an interposing allocator or I/O layer would. */
NOPROF ssize_t write(int fd, const void *buf, size_t n)
{
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&held);
        pthread_mutex_unlock(&held);
    }
    return syscall(SYS_write, fd, buf, n);
}

__attribute__((noinline)) void leaf(unsigned long i)
{
    sink += i;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    pthread_mutex_lock(&held);
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    for (long i = 0; i < n; i++)
        leaf((unsigned long)i);
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&held);
    printf("calls %ld\n", n);
    return 0;
}
