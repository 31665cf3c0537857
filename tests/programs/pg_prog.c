/* pg_prog.c - what tests/test_pg_cli.sh records: a program built with -pg
 * or -pg -mfentry (GCC and Clang, -O0 and -O2), one mode per run, its
 * calls counted by the test against `uftrace record` on the same binary
 * and against the counts below.
 *
 *   calls      top x3 (each: mid x2, each: leaf x2), fib(12) (465 calls)
 *   longjmp    guard: setjmp, jumper(6) nests 6 deep and longjmps back
 *              (twice); then after x2
 *   signal     SIGUSR1 raised inside nest(4): its handler calls hleaf x3;
 *              then after x2
 *   sigjmp     the same inside sig_guard, the handler siglongjmps out to
 *              it; then after x2
 *   threads    4 threads, each worker x1 calling wleaf 1000 times
 *   tail       tail_a x3: each tail-calls tail_b, which calls leaf x1 and
 *              tail-calls tail_c (calls leaf x1)
 *   tailret    tv_outer(1), tv_outer(2): each returns what tv_inner, which
 *              it tail-calls, returns (for -R)
 *   deep N     deep(N): a recursion N deep (deeper than the return
 *              stack's first mapping), then leaf x1
 *   args       add(-1, 5), add(2, 40), greet("world", 3, 'x'),
 *              greet(NULL, 0, 'y'), pass(0x1234): for -A and -R
 *   argloop N  mix(i, b, c, p) for i from 0 to N - 1, its arguments
 *              changing by small and large steps, and prints each call as
 *              replay shows it under -A 'mix@arg1,arg2/x,arg3/i32,arg4/p'
 *              -R mix@retval (arg3's upper half is not the int's; arg1 and
 *              the return value, with no format, as uftrace shows them)
 *   argsix N   six(a, b, c, d, e, f) N times, printed as replay shows it
 *              under -A 'six@arg1,arg2,arg3,arg4,arg5,arg6' -R six@retval
 *   backtrace  bt1..bt4 nest, bt4 calls backtrace(3) and prints
 *              "bt: <names>" for the program's functions it found, innermost
 *              first
 *   spin       spin1 calls spin2, which calls spin3, which counts to 10^8
 *              (some 0.2 s of CPU time), then calls tick 2*10^6 times:
 *              for --sample's stacks, in a function and in its hooks
 *   libthreads LIB N A B
 *              loads LIB (pg_lib.c): 4 threads, released at once, each
 *              call lib_work (lib_leaf x2) N times; prints "entry: " and
 *              what the instruction A bytes into leaf and the one B bytes
 *              into lib_work, their calls of the hook as built, do now
 *              ("jump", to the function's thunk; "call") */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

NOINLINE void leaf(void) { sink++; }
NOINLINE void mid(void) { leaf(); leaf(); }
NOINLINE void top(void) { mid(); mid(); }
NOINLINE int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
NOINLINE void after(void) { sink += 2; }

static jmp_buf env;
NOINLINE void jumper(int n)
{
    if (n > 1)
        jumper(n - 1);
    else
        longjmp(env, 1);
    sink++;
}

NOINLINE void guard(void)
{
    volatile int times = 0;
    if (setjmp(env) < 2 && times < 2) {
        times++;
        jumper(6);
    }
}

static sigjmp_buf senv;
static volatile int jump_out;
NOINLINE void hleaf(void) { sink++; }
NOINLINE void handler(int sig)
{
    (void)sig;
    hleaf();
    hleaf();
    hleaf();
    if (jump_out)
        siglongjmp(senv, 1);
}

NOINLINE void nest(int n)
{
    if (n > 1)
        nest(n - 1);
    else
        raise(SIGUSR1);
    sink++;
}

NOINLINE void sig_guard(void)
{
    if (!sigsetjmp(senv, 1))
        nest(4);
}

NOINLINE void wleaf(void) { sink++; }
NOINLINE void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        wleaf();
    return NULL;
}

NOINLINE void tail_c(void) { leaf(); }
NOINLINE void tail_b(void)
{
    leaf();
    tail_c();
}
NOINLINE void tail_a(void) { tail_b(); }

NOINLINE long tv_inner(long x)
{
    sink += (int)x;
    return x * 3;
}

NOINLINE long tv_outer(long x) { return tv_inner(x + 1); }

NOINLINE long add(int a, long b) { return a + b; }
NOINLINE const char *greet(const char *who, unsigned times, char c)
{
    sink += (int)times + c;
    return who;
}
NOINLINE void *pass(void *p)
{
    sink++;
    return p;
}

NOINLINE long mix(int a, unsigned long b, long c, void *p)
{
    sink += (int)b + (p != NULL);
    return a + (int)c;
}

NOINLINE long six(long a, long b, long c, long d, long e, long f)
{
    sink += (int)f;
    return a - b + c - d + e;
}

/* V as replay shows an argument with no format, as uftrace does: decimal
 * from -100000 to 100000 (a negative 32-bit int in a 64-bit register
 * too), hex beyond; inlined, so that it makes no call of its own */
static inline __attribute__((always_inline)) const char *shown(long v, char *buf, size_t size)
{
    unsigned long u = (unsigned long)v;
    if ((v > 100000 || v < -100000) && !(u > 0xffff0000ul && u <= 0xfffffffful))
        snprintf(buf, size, "%#lx", u);
    else
        snprintf(buf, size, "%ld", u >> 32 ? v : (long)(int)(unsigned)u);
    return buf;
}

NOINLINE int deep(int n) { return n ? deep(n - 1) + 1 : 0; }

static void *fns[6];
static const char *fn_names[6] = { "bt1", "bt2", "bt3", "bt4", "main", NULL };
NOINLINE void bt4(void)
{
    void *buf[64];
    int n = backtrace(buf, 64);
    printf("bt:");
    for (int i = 0; i < n; i++) {
        /* the program's function the address is in: the nearest start
         * below it, a little way off */
        int best = -1;
        for (int k = 0; fn_names[k]; k++)
            if ((char *)buf[i] >= (char *)fns[k] && (char *)buf[i] - (char *)fns[k] < 4096 &&
                (best < 0 || fns[k] > fns[best]))
                best = k;
        if (best >= 0)
            printf(" %s", fn_names[best]);
        if (best == 4)
            break; /* (the C library's start may lie close after main) */
    }
    printf("\n");
}
NOINLINE void tick(void) { sink++; }
NOINLINE void spin3(void)
{
    for (long i = 0; i < 100000000; i++) /* (no call: the samples' pc is here) */
        sink++;
    for (long i = 0; i < 2000000; i++) /* (calls: most samples in the hooks) */
        tick();
}
NOINLINE void spin2(void) { spin3(); sink++; }
NOINLINE void spin1(void) { spin2(); sink++; }

static long (*lib_work)(long);
static long lib_calls;
static pthread_barrier_t lib_start;

NOINLINE void *lib_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&lib_start);
    for (long i = 0; i < lib_calls; i++)
        lib_work(i);
    return NULL;
}

/* What the instruction at P does: "jump" (e9), "call" (e8; ff 15 through
 * the GOT; 67 e8), or "other" (inlined: no call of its own). */
static inline __attribute__((always_inline)) const char *entry_kind(const unsigned char *p)
{
    return p[0] == 0xe9                                                                    ? "jump"
           : p[0] == 0xe8 || (p[0] == 0xff && p[1] == 0x15) || (p[0] == 0x67 && p[1] == 0xe8) ? "call"
                                                                                            : "other";
}

NOINLINE int lib_threads(const char *lib, long n, long leaf_off, long work_off)
{
    void *h = dlopen(lib, RTLD_NOW);
    if (!h || !(lib_work = (long (*)(long))dlsym(h, "lib_work"))) {
        fprintf(stderr, "pg_prog: %s\n", dlerror());
        return 1;
    }
    lib_calls = n;
    pthread_t t[4];
    pthread_barrier_init(&lib_start, NULL, 4);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, lib_thread, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("entry: %s %s\n", entry_kind((const unsigned char *)leaf + leaf_off),
           entry_kind((const unsigned char *)lib_work + work_off));
    return 0;
}

NOINLINE void bt3(void) { bt4(); sink++; }
NOINLINE void bt2(void) { bt3(); sink++; }
NOINLINE void bt1(void) { bt2(); sink++; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calls";
    if (!strcmp(mode, "calls")) {
        for (int i = 0; i < 3; i++)
            top();
        printf("fib %d\n", fib(12));
    } else if (!strcmp(mode, "longjmp")) {
        guard();
        after();
        after();
    } else if (!strcmp(mode, "signal") || !strcmp(mode, "sigjmp")) {
        signal(SIGUSR1, handler);
        jump_out = !strcmp(mode, "sigjmp");
        if (jump_out)
            sig_guard();
        else
            nest(4);
        after();
        after();
    } else if (!strcmp(mode, "threads")) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "tailret")) {
        printf("%ld %ld\n", tv_outer(1), tv_outer(2));
    } else if (!strcmp(mode, "tail")) {
        for (int i = 0; i < 3; i++)
            tail_a();
    } else if (!strcmp(mode, "deep") && argc > 2) {
        printf("deep %d\n", deep(atoi(argv[2])));
        leaf();
    } else if (!strcmp(mode, "args")) {
        printf("%ld %ld\n", add(-1, 5), add(2, 40));
        printf("%s %p\n", greet("world", 3, 'x'), (void *)greet(NULL, 0, 'y'));
        printf("%p\n", pass((void *)0x1234));
    } else if (!strcmp(mode, "argloop") && argc > 2) {
        puts("main {");
        for (long i = 0, n = atol(argv[2]); i < n; i++) {
            unsigned long b = i % 1000 ? 0x7f0000000000ul + (unsigned long)i * 7919 : (unsigned long)i;
            long c = (long)(0x55ul << 32 | (uint32_t)(-3 * i)); /* arg3/i32: -3i */
            uintptr_t p = i % 3 ? 0x1000 + (uintptr_t)i * 8 : 0;
            long r = mix((int)i, b, c, (void *)p);
            char ps[32] = "NULL", as[32], rs[32];
            if (p)
                snprintf(ps, sizeof ps, "%#lx", (unsigned long)p);
            printf("  mix(%s, 0x%lx, %ld, %s) = %s\n", shown(i, as, sizeof as), b, -3 * i, ps,
                   shown(r, rs, sizeof rs));
        }
        puts("} /* main */");
    } else if (!strcmp(mode, "argsix") && argc > 2) {
        puts("main {");
        /* the edges of a value shown with no format */
        static const long edge[8] = { 100000, 100001, -100000, -100001, 0xfffffffful, 0xffff0000ul, 0xffff0001ul, -1 };
        for (long i = 0, n = atol(argv[2]); i < n; i++) {
            long a[6] = { i, -i, i * 1000003, 0x7f0000000000l + i, edge[i % 8], -(i << 20) };
            long r = six(a[0], a[1], a[2], a[3], a[4], a[5]);
            char s[7][32];
            for (int k = 0; k < 6; k++)
                shown(a[k], s[k], sizeof s[k]);
            printf("  six(%s, %s, %s, %s, %s, %s) = %s\n", s[0], s[1], s[2], s[3], s[4], s[5],
                   shown(r, s[6], sizeof s[6]));
        }
        puts("} /* main */");
    } else if (!strcmp(mode, "spin")) {
        spin1();
    } else if (!strcmp(mode, "libthreads") && argc > 5) {
        return lib_threads(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]));
    } else if (!strcmp(mode, "backtrace")) {
        fns[0] = (void *)bt1, fns[1] = (void *)bt2, fns[2] = (void *)bt3, fns[3] = (void *)bt4;
        fns[4] = (void *)main;
        bt1();
    } else {
        fprintf(stderr, "pg_prog: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
