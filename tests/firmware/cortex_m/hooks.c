/* hooks.c - counting -finstrument-functions hooks for the Cortex-M test
 * firmware (tests/test_qemu_log.sh): each instrumented function's calls
 * counted by its entry hook and printed after main as "hook ADDRESS
 * CALLS", so that the calls the QEMU log gives of the same binary are
 * checked against the calls the functions themselves saw. Linked with
 * -Wl,--wrap=main. */
#include "cm.h"

#define NO_HOOK __attribute__((no_instrument_function))
#define MAX_FUNCS 64

static void *funcs[MAX_FUNCS];
static uint32_t calls[MAX_FUNCS];
static unsigned nfuncs, dropped;

NO_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    for (unsigned i = 0; i < nfuncs; i++)
        if (funcs[i] == fn) {
            calls[i]++;
            return;
        }
    if (nfuncs == MAX_FUNCS) {
        dropped++;
        return;
    }
    funcs[nfuncs] = fn;
    calls[nfuncs++] = 1;
}

NO_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn, (void)site;
}

NO_HOOK static void put_hex(uint32_t v)
{
    char buf[12], *p = buf + sizeof buf;
    *--p = 0;
    do
        *--p = "0123456789abcdef"[v & 15];
    while ((v >>= 4) != 0);
    *--p = 'x';
    *--p = '0';
    put_str(p);
}

int __real_main(void);

NO_HOOK int __wrap_main(void)
{
    int rc = __real_main();
    for (unsigned i = 0; i < nfuncs; i++) {
        put_str("hook ");
        put_hex((uint32_t)funcs[i] & ~1u);
        put_uint(" ", calls[i]);
    }
    put_uint("hooks dropped ", dropped);
    return rc;
}
