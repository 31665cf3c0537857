/* pg_shapes.c - functions built with -pg at -O0 for pgexits.c: a frame
 * pointer set up in the prologue (`add r7, sp`), a frame too large for a
 * 16-bit `sub sp`, varargs (their registers pushed before lr). */
#include <stdarg.h>

int shape_leaf(int x) { return x + 1; }
int shape_o0(int a) { return shape_leaf(a); }
int shape_frame(int n)
{
    volatile char big[3000];
    big[n] = (char)n;
    return shape_leaf(big[n]);
}
int shape_varargs(int n, ...)
{
    va_list ap;
    int s = 0;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        s += va_arg(ap, int);
    va_end(ap);
    return shape_leaf(s);
}
