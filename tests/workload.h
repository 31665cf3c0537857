/* workload.h - instrumented functions with known call patterns, for the
 * tests (workload.c is built with -finstrument-functions; the test drivers
 * are not, so only these functions appear in traces). */
#ifndef NP_TEST_WORKLOAD_H
#define NP_TEST_WORKLOAD_H

#include <setjmp.h>
#include <stdint.h>

/* Called at the deepest point of test1/recurse, if set. */
extern void (*wl_probe)(void);

int test1(int a);        /* test1 -> test2 (static) -> test3 -> probe */
int test3(int a);
unsigned fib(unsigned n); /* fib(n) makes fib_calls(n) calls */
unsigned long fib_calls(unsigned n);
int square(int x);
int twice(int x);
int apply(int (*f)(int), int x); /* apply -> f */
int recurse(int n);      /* n+1 nested calls, probe at the bottom */
/* setjmp in jump_guard, longjmp from DEPTH calls of jump_deep below it */
int jump_guard(int depth);
/* setjmp, longjmp from below, then calls test1 in the same frame */
int jump_then_call(int depth);
void jump_deep(int n, jmp_buf *env);
void spin_thread_cpu_ns(uint64_t ns);   /* burns this thread's CPU time */
void spin_wall_ns(uint64_t ns);         /* burns wall time */
void sleep_ns(uint64_t ns);
void spin_a(uint64_t ns);
void spin_b(uint64_t ns);
void handler_work(void);                /* what the signal handler runs */

/* workload_o2.c: built at -O2 with tail calls allowed */
int tc_top(int x);
int tc_mid(int x);
int tc_leaf(int x);

#endif
