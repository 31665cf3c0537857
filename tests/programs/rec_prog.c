/* rec_prog.c - what the recorder's tests record (tests/test_record*.c):
 * one instrumented program, one mode per run, with known call counts. It
 * prints the run-time address of each function it calls as
 *     addr <tag> <name> <hex>
 * so that the tests compare the trace's ENTRY addresses with them. Built
 * twice: linked with libnanoprof (records with NANOPROF_RECORD set), and
 * with no runtime at all (recorded through `nanoprof record`).
 *
 *   threads          two threads: 1000 and 3000 calls of step (each calls
 *                    leaf); main_work calls leaf 10 times; returns from main
 *   exit             deep(10) calls exit(3) at the bottom
 *   _exit            deep(10) calls _exit(4) at the bottom
 *   signal SIG       work(500), then deep(5) dies at the bottom: SIG is
 *                    term, int, segv, abort or kill (kill: work(5000), and
 *                    with NANOPROF_BUFFER set, once the writer has written
 *                    ten chunks since; see die); overflow: deep(5) then a
 *                    recursion until the stack ends
 *   fork             f1 x3; fork: the child f2 x5 then exit(0); the parent
 *                    waits, f3 x7
 *   daemon           f1 x3; fork: the parent f3 x7 and returns without
 *                    waiting; the child waits until its parent has ended,
 *                    then f2 x5 and exit(0); prints "child <pid>"
 *   doublefork       f1 x2; fork: the child f2 x4, forks again and exits;
 *                    the parent waits for it, then f3 x3; the grandchild
 *                    waits until its parent has ended, then f4 x6 and
 *                    exit(0); prints "child <pid>" and "grandchild <pid>"
 *   exec             f1 x2, then exec of itself in mode execd: f4 x4
 *   fexecve          the same through fexecve of /proc/self/exe
 *   execfail         f1 x2, an exec that fails, f3 x3
 *   tree             top: a x3 (each: leaf x2), b x2 (each: leaf x1)
 *   many T N         T threads at once, each many_worker x1 calling many_leaf
 *                    N times; prints "calls <C>", the calls of many_leaf
 *                    counted by the program itself
 *   slow             slowf x2 (20 ms each), fastf x100; prints "fastf over
 *                    5ms N", the calls of fastf that took 5 ms of wall time
 *                    or more by its clock around them (preempted)
 *   fib N            fib(N)
 *   longjmp          guard: setjmp, then jumper(5) nests 5 deep and longjmps
 *                    back; then f3 x2 (built with _FORTIFY_SOURCE, the
 *                    longjmp is __longjmp_chk)
 *   sigjmp           the same with sigsetjmp and siglongjmp
 *   dlopen LIB       f1 x1, then dlopen LIB and call its plugin_work x3
 *                    (each calls the library's own static f1)
 *   named            NP_ENTER("phase one") { f1 x2 } x3, then
 *                    NP_ENTER("phase two") { f2 x1 } x1 (linked builds only)
 *   uthreads         two user-level threads (ucontext, np_thread_switch):
 *                    ua calls f1 once per turn, ub f2 twice, three turns
 *                    each, main f3 between turns (linked builds only);
 *                    with REC_PROG_BURN set, ua's first turn also spins
 *                    150 ms of CPU in spin (for the sampler); with
 *                    REC_PROG_NAMES set, np_thread_name names ua "reader"
 *                    before it first runs, ub "writer-thread-long-name"
 *                    (cut to 15 bytes) in its first turn, and the OS
 *                    thread "boss" once it recorded
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif
#define NOPROF __attribute__((no_instrument_function))

extern char **environ;
/* the runtime's manual markers, when it is linked in */
extern void np_enter(const char *name) __attribute__((weak));
extern void np_exit(void) __attribute__((weak));
extern void *np_thread_init(void *mem, size_t size) __attribute__((weak));
extern void np_thread_switch(void *from, void *to) __attribute__((weak));
extern int np_thread_name(void *t, const char *name) __attribute__((weak));
static int sink;
#define TOUCH() __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED) /* threads too */
static int *volatile nowhere; /* NULL */
static const char *tag = "main";

NOPROF static void show(const char *name, void (*fn)(void))
{
    printf("addr %s %s %p\n", tag, name, (void *)fn);
}
#define SHOW(f) show(#f, (void (*)(void))(f))

KEEP void leaf(void) { TOUCH(); }
KEEP void step(void) { leaf(); }
KEEP void f1(void) { TOUCH(); }
KEEP void f2(void) { TOUCH(); }
KEEP void f3(void) { TOUCH(); }
KEEP void f4(void) { TOUCH(); }
KEEP void a(void) { leaf(); leaf(); }
KEEP void b(void) { leaf(); }
KEEP void top(void)
{
    for (int i = 0; i < 3; i++)
        a();
    for (int i = 0; i < 2; i++)
        b();
}

static unsigned long many_calls;
static long many_n;
static pthread_barrier_t many_start;

KEEP void many_leaf(void)
{
    __atomic_add_fetch(&many_calls, 1, __ATOMIC_RELAXED);
}

KEEP void *many_worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&many_start); /* all at once: the writer falls behind */
    for (long i = 0; i < many_n; i++)
        many_leaf();
    return NULL;
}

KEEP void *worker(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n; i++)
        step();
    return NULL;
}

KEEP void main_work(void)
{
    for (int i = 0; i < 10; i++)
        leaf();
}

static const char *how;

/* The write() calls this process has made so far (/proc/self/io), or -1. */
NOPROF static long writes(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long n = -1;
    while (f && fgets(line, sizeof line, f))
        sscanf(line, "syscw: %ld", &n);
    if (f)
        fclose(f);
    return n;
}

static long writes_before_work; /* writes() when work began */

/* Deep enough to end any stack; the array keeps frames large. */
static volatile int no_bottom = 1 << 30;
KEEP __attribute__((no_sanitize("address"))) int bottomless(int n)
{
    volatile char pad[256];
    pad[n & 255] = (char)n;
    return n < no_bottom ? bottomless(n + 1) + pad[(n + 1) & 255] : 0;
}

/* UBSan would stop the program at the null store: the fault is the test */
KEEP __attribute__((no_sanitize("undefined"))) void die(void)
{
    if (strcmp(how, "term") == 0)
        raise(SIGTERM);
    else if (strcmp(how, "int") == 0)
        raise(SIGINT);
    else if (strcmp(how, "abort") == 0)
        abort();
    else if (strcmp(how, "kill") == 0) {
        /* With buffers small enough to fill (NANOPROF_BUFFER=4k: some
         * 40 of them), the writer has chunks of events to write: ten of
         * its chunks are on disk before the kill, however late it runs
         * (it is the only thread that writes once work began, one write()
         * a chunk; a THREAD and a MODULE chunk or two come first). Without,
         * the events are still in the thread's buffer: nothing to wait
         * for. A minute at most, then the kill all the same. */
        struct timespec ms = { 0, 1000000 };
        for (int i = 0; getenv("NANOPROF_BUFFER") && i < 60000 && writes() < writes_before_work + 10; i++)
            nanosleep(&ms, NULL);
        raise(SIGKILL);
    } else if (strcmp(how, "exit") == 0)
        exit(3);
    else if (strcmp(how, "_exit") == 0)
        _exit(4);
    else if (strcmp(how, "overflow") == 0)
        sink += bottomless(0);
    else
        *nowhere = 1; /* SIGSEGV */
}

KEEP void deep(int n)
{
    if (n == 1)
        die();
    else
        deep(n - 1);
    TOUCH();
}

KEEP void work(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

KEEP void slowf(void)
{
    struct timespec ts = { 0, 20000000 };
    nanosleep(&ts, NULL);
}

KEEP void fastf(void) { TOUCH(); }

KEEP unsigned fib(unsigned n)
{
    if (n < 2)
        return n;
    unsigned r = fib(n - 1);
    r += fib(n - 2);
    __asm__ __volatile__("" : "+r"(r));
    return r;
}

/* user-level threads: each turn runs until it yields back to main */
static ucontext_t uc_main, uc_thread[2];
static void *np_main /* NULL: the OS thread's own state */, *np_uthread[2];

NOPROF static void yield_to_main(int i)
{
    np_thread_switch(np_uthread[i], np_main);
    swapcontext(&uc_thread[i], &uc_main);
}

KEEP void spin(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
}

KEEP void ua(void)
{
    for (int turn = 0; turn < 3; turn++) {
        if (turn == 0 && getenv("REC_PROG_BURN"))
            spin(150);
        f1();
        yield_to_main(0);
    }
}

KEEP void ub(void)
{
    if (getenv("REC_PROG_NAMES"))
        np_thread_name(NULL, "writer-thread-long-name");
    for (int turn = 0; turn < 3; turn++) {
        f2();
        f2();
        yield_to_main(1);
    }
}

NOPROF static int uthreads(void)
{
    static _Alignas(16) char mem[2][512], stack[2][65536];
    if (!np_thread_init)
        return 2;
    SHOW(ua), SHOW(ub), SHOW(f1), SHOW(f2), SHOW(f3);
    fflush(stdout);
    for (int i = 0; i < 2; i++) {
        np_uthread[i] = np_thread_init(mem[i], sizeof mem[i]);
        getcontext(&uc_thread[i]);
        uc_thread[i].uc_stack.ss_sp = stack[i];
        uc_thread[i].uc_stack.ss_size = sizeof stack[i];
        uc_thread[i].uc_link = &uc_main;
        makecontext(&uc_thread[i], i ? ub : ua, 0);
    }
    if (getenv("REC_PROG_NAMES")) {
        np_thread_name(np_uthread[0], "reader");
        np_thread_name(NULL, "boss");
    }
    for (int turn = 0; turn < 3; turn++) {
        for (int i = 0; i < 2; i++) {
            np_thread_switch(np_main, np_uthread[i]);
            swapcontext(&uc_main, &uc_thread[i]);
        }
        f3();
    }
    return 0;
}

/* Until the parent PARENT has ended (10 s at most), and 200 ms more: an
 * orphan that goes on for a while. */
NOPROF static void outlive(pid_t parent)
{
    struct timespec ms = { 0, 1000000 }, more = { 0, 200000000 };
    for (int i = 0; i < 10000 && getppid() == parent; i++)
        nanosleep(&ms, NULL);
    nanosleep(&more, NULL);
}

static jmp_buf jump_env;

static sigjmp_buf sig_env;
static volatile int armed = 1, use_sig;

KEEP void jumper(int n)
{
    if (n <= 1) {
        if (armed && use_sig)
            siglongjmp(sig_env, 1);
        if (armed)
            longjmp(jump_env, 1);
    } else {
        jumper(n - 1);
    }
    TOUCH();
}

KEEP int guard(void)
{
    if (setjmp(jump_env) == 0) {
        jumper(5);
        return 0;
    }
    return 1;
}

KEEP int guard_sig(void)
{
    use_sig = 1;
    if (sigsetjmp(sig_env, 1) == 0) {
        jumper(5);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "threads";
    if (strcmp(mode, "execd") == 0)
        tag = "execd";
    SHOW(main);
    if (strcmp(mode, "threads") == 0) {
        SHOW(worker), SHOW(step), SHOW(leaf), SHOW(main_work);
        fflush(stdout);
        pthread_t t1, t2;
        pthread_create(&t1, NULL, worker, (void *)1000L);
        pthread_create(&t2, NULL, worker, (void *)3000L);
        main_work();
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        return 0;
    }
    if (strcmp(mode, "many") == 0 && argc > 3) {
        int nt = atoi(argv[2]);
        many_n = atol(argv[3]);
        pthread_t *th = calloc((size_t)nt, sizeof *th);
        if (!th || nt < 1 || pthread_barrier_init(&many_start, NULL, (unsigned)nt))
            return 1;
        for (int i = 0; i < nt; i++)
            if (pthread_create(&th[i], NULL, many_worker, NULL))
                return 1;
        for (int i = 0; i < nt; i++)
            pthread_join(th[i], NULL);
        printf("calls %lu\n", many_calls);
        free(th);
        return 0;
    }
    if (strcmp(mode, "exit") == 0 || strcmp(mode, "_exit") == 0 || strcmp(mode, "signal") == 0) {
        how = strcmp(mode, "signal") != 0 ? mode : argc > 2 ? argv[2] : "segv";
        SHOW(deep), SHOW(die), SHOW(work), SHOW(leaf);
        fflush(stdout);
        writes_before_work = writes();
        if (strcmp(mode, "signal") == 0)
            work(strcmp(how, "kill") == 0 ? 5000 : 500);
        deep(10);
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        SHOW(f1), SHOW(f2), SHOW(f3);
        fflush(stdout);
        for (int i = 0; i < 3; i++)
            f1();
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 5; i++)
                f2();
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        for (int i = 0; i < 7; i++)
            f3();
        printf("child %d status %d\n", (int)pid, st);
        return 0;
    }
    if (strcmp(mode, "daemon") == 0) {
        SHOW(f1), SHOW(f2), SHOW(f3);
        for (int i = 0; i < 3; i++)
            f1();
        fflush(stdout);
        pid_t parent = getpid(), pid = fork();
        if (pid == 0) {
            outlive(parent);
            for (int i = 0; i < 5; i++)
                f2();
            exit(0);
        }
        for (int i = 0; i < 7; i++)
            f3();
        printf("child %d\n", (int)pid);
        return 0;
    }
    if (strcmp(mode, "doublefork") == 0) {
        SHOW(f1), SHOW(f2), SHOW(f3), SHOW(f4);
        for (int i = 0; i < 2; i++)
            f1();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 4; i++)
                f2();
            pid_t child = getpid(), grandchild = fork();
            if (grandchild == 0) {
                outlive(child);
                for (int i = 0; i < 6; i++)
                    f4();
                exit(0);
            }
            printf("grandchild %d\n", (int)grandchild);
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        for (int i = 0; i < 3; i++)
            f3();
        printf("child %d\n", (int)pid);
        return 0;
    }
    if (strcmp(mode, "exec") == 0) {
        SHOW(f1);
        fflush(stdout);
        for (int i = 0; i < 2; i++)
            f1();
        execl("/proc/self/exe", argv[0], "execd", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "uthreads") == 0)
        return uthreads();
    if (strcmp(mode, "named") == 0) {
        if (!np_enter)
            return 2;
        for (int i = 0; i < 3; i++) {
            np_enter("phase one");
            f1();
            f1();
            np_exit();
        }
        np_enter("phase two");
        f2();
        np_exit();
        return 0;
    }
    if (strcmp(mode, "fexecve") == 0) {
        SHOW(f1);
        fflush(stdout);
        for (int i = 0; i < 2; i++)
            f1();
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        char *args[] = { argv[0], "execd", NULL };
        fexecve(fd, args, environ);
        return 1;
    }
    if (strcmp(mode, "execd") == 0) {
        SHOW(f4);
        for (int i = 0; i < 4; i++)
            f4();
        return 0;
    }
    if (strcmp(mode, "execfail") == 0) {
        SHOW(f1), SHOW(f3);
        fflush(stdout);
        for (int i = 0; i < 2; i++)
            f1();
        char *args[] = { "nothing", NULL };
        execv("/nonexistent/nothing", args);
        for (int i = 0; i < 3; i++)
            f3();
        return 0;
    }
    if (strcmp(mode, "tree") == 0) {
        SHOW(top), SHOW(a), SHOW(b), SHOW(leaf);
        top();
        return 0;
    }
    if (strcmp(mode, "slow") == 0) {
        SHOW(slowf), SHOW(fastf);
        for (int i = 0; i < 2; i++)
            slowf();
        int over = 0;
        for (int i = 0; i < 100; i++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            fastf();
            clock_gettime(CLOCK_MONOTONIC, &t1);
            over += (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) >= 5000000L;
        }
        printf("fastf over 5ms %d\n", over);
        return 0;
    }
    if (strcmp(mode, "fib") == 0) {
        SHOW(fib);
        unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 25;
        printf("fib %u = %u\n", n, fib(n));
        return 0;
    }
    if (strcmp(mode, "longjmp") == 0 || strcmp(mode, "sigjmp") == 0) {
        SHOW(guard), SHOW(guard_sig), SHOW(jumper), SHOW(f3);
        int r = strcmp(mode, "sigjmp") == 0 ? guard_sig() : guard();
        for (int i = 0; i < 2; i++)
            f3();
        return r == 1 ? 0 : 1;
    }
    if (strcmp(mode, "dlopen") == 0 && argc > 2) {
        SHOW(f1);
        f1();
        void *h = dlopen(argv[2], RTLD_NOW);
        void (*fn)(void) = h ? (void (*)(void))dlsym(h, "plugin_work") : NULL;
        if (!fn)
            return 1;
        show("plugin_work", fn);
        for (int i = 0; i < 3; i++)
            fn();
        return 0;
    }
    fprintf(stderr, "rec_prog: unknown mode %s\n", mode);
    return 2;
}
