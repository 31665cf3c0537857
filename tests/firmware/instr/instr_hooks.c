/* instr_hooks.c - -finstrument-functions hooks that count calls per
 * function address in a small table (built without instrumentation:
 * they must not count themselves). */
#include <stdio.h>
#include "instr_hooks.h"

#define NO_HOOKS __attribute__((no_instrument_function))
#define SLOTS 64

static struct {
    unsigned addr, calls;
} table[SLOTS];
static unsigned used, lost;

NO_HOOKS void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    unsigned a = (unsigned)fn & ~1u;
    for (unsigned i = 0; i < used; i++)
        if (table[i].addr == a) {
            table[i].calls++;
            return;
        }
    if (used == SLOTS) {
        lost++;
        return;
    }
    table[used].addr = a;
    table[used++].calls = 1;
}

NO_HOOKS void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
}

NO_HOOKS void np_instr_report(unsigned sum)
{
    /* insertion sort by address: a few dozen entries */
    for (unsigned i = 1; i < used; i++)
        for (unsigned j = i; j && table[j - 1].addr > table[j].addr; j--) {
            unsigned a = table[j].addr, c = table[j].calls;
            table[j] = table[j - 1];
            table[j - 1].addr = a, table[j - 1].calls = c;
        }
    for (unsigned i = 0; i < used; i++)
        printf("0x%08x %u\n", table[i].addr, table[i].calls);
    if (lost)
        printf("lost %u\n", lost);
    printf("sum %u\n", sum);
}
