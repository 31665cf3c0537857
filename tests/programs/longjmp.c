/* longjmp.c - a longjmp out of nested calls, then more calls: the stack
 * mode trace must hold only the calls active at the dump. Built dynamic
 * and fully static by tests/compilers.sh. */
#include <setjmp.h>
#include <nanoprof/nanoprof.h>

static uint64_t trace[2 * 64];
static jmp_buf env;

void deep(int n)
{
    if (n == 0)
        longjmp(env, 1);
    deep(n - 1);
    __asm__ volatile("" ::: "memory");
}

int guard(void)
{
    if (setjmp(env) == 0) {
        deep(5);
        return 0;
    }
    return 1;
}

int test3(int a)
{
    np_calltrace_dump();
    return a;
}

int test2(int a)
{
    return test3(a) + 1;
}

int test1(int a)
{
    return test2(a) + 1;
}

int main(void)
{
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK);
    int r = guard() + guard();
    return test1(r) == 4 ? 0 : 1;
}
