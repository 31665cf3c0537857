/* app_libc.c - ordinary firmware on a board (tests/port/user_way_in.sh):
 * built against the installed runtime and board files only, with the
 * user's line of docs/porting.md, it uses the C library as firmware does
 * (printf through newlib-nano, malloc and free on the heap of the board's
 * link.ld, main with argc and argv) beside the runtime's call trace,
 * whose dump comes out between its printf lines, in order. Its output is
 * compared exactly by the script; main returns 0 when every check passed,
 * else the number of the first that failed (QEMU's exit status).
 *
 * APP_FLOAT: built with -u _printf_float, newlib-nano's printf prints
 * floats; without it, a %f prints nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanoprof/nanoprof.h"

#include "known_calls.h" /* leaf, mid, top */

/* the heap as the board's link.ld sets it */
extern char end[], __heap_start__[], __HeapLimit[];

static unsigned long long trace[2 * 16];

NP_NO_PROFILE static int heap(void)
{
    /* blocks come from the heap, hold what is written, and are given back */
    char *a = malloc(100), *b = malloc(3000);
    if (!a || !b || a < __heap_start__ || b + 3000 > __HeapLimit)
        return 10;
    memset(a, 'a', 100);
    memset(b, 'b', 3000);
    if (a[99] != 'a' || b[0] != 'b' || b[2999] != 'b')
        return 11;
    uintptr_t b_at = (uintptr_t)b;
    free(b);
    char *c = malloc(2000); /* inside b's block, given back */
    if (!c || (uintptr_t)c < b_at || (uintptr_t)c + 2000 > b_at + 3000)
        return 12;
    free(c);
    free(a);
    /* more than the heap holds is refused: NULL, and nothing broken */
    size_t room = (size_t)(__HeapLimit - __heap_start__);
    if (malloc(room + 1) != NULL)
        return 13;
    /* the heap runs out at __HeapLimit, never into the main stack, and
     * all of it is used: less than a block (and its header) is left */
    char *last = NULL;
    for (char *p; (p = malloc(512)) != NULL; last = p)
        ;
    if (!last || last + 512 > __HeapLimit || __HeapLimit - (last + 512) >= 512 + 16)
        return 14;
    printf("heap: full at __HeapLimit\n");
    return 0;
}

NP_NO_PROFILE int main(int argc, char **argv)
{
    printf("argc %d\n", argc);
    for (int i = 0; i < argc; i++)
        printf("argv[%d] \"%s\"\n", i, argv[i]);
    if (argv[argc] != NULL)
        return 1;
    if (&end[0] != &__heap_start__[0])
        return 2;
    printf("%d %u %x %s %c %5d|%-3d|\n", -42, 42u, 0xbeefu, "str", 'c', 7, 8);
    printf("float [%.3f]\n", 2.625);
    if (np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_LOG) != NP_OK)
        return 3;
    top();
    np_calltrace_disable();
    printf("the call trace:\n");
    np_calltrace_dump();
    printf("after it\n");
    int st = heap();
    if (st)
        return st;
    printf("no newline at the end: exit flushes it");
    return 0;
}
