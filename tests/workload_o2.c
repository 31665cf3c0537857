/* workload_o2.c - calls the optimiser may turn into tail calls or inline
 * (built at -O2): the counts must still be exact. */
#include "workload.h"

int tc_leaf(int x)
{
    return x * 3 + 1;
}

int tc_mid(int x)
{
    return tc_leaf(x + 1);
}

int tc_top(int x)
{
    if (x < 0)
        return tc_top(-x); /* a self tail call */
    return tc_mid(x);
}
