/* ctargs.c - the call trace's arguments on a Cortex-M target
 * (NP_CALLTRACE_ARGS, run.sh's variant ctargs): the firmware built with
 * -pg beside -finstrument-functions, so that -pg's hook, before the
 * prologue's work, hands r0-r3 to the call trace and
 * -finstrument-functions' tells the entry, as the console SDK's call
 * trace keeps them (test1(0x100) calls test2(0x101), which calls
 * test3(0x103), the other three arguments passed along). Checked: each
 * record's r0-r3 exactly in log and in stack mode, through
 * np_calltrace_read and in the dump's text; a function built without -pg
 * (plain_leaf: -finstrument-functions alone) says it has none; the record
 * size and the sizing functions. */
#include <string.h>
#include "check.h"


static uint32_t buf[8 * 16];
static np_calltrace_entry seen[8];
static int nseen;
static volatile int probing;

static NOPROF void snapshot(void) { nseen = np_calltrace_read(seen, 8); }

__attribute__((noinline)) int test3(int a, int b, int c, int d)
{
    if (probing)
        snapshot();
    return a + b + c + d + 4;
}
__attribute__((noinline)) int test2(int a, int b, int c, int d) { return test3(a + 2, b, c, d) + 1; }
__attribute__((noinline)) int test1(int a, int b, int c, int d) { return test2(a + 1, b, c, d) + 1; }
int plain_leaf(int a, int b, int c, int d); /* plain_leaf.c: -finstrument-functions alone */

static NOPROF int args_are(const np_calltrace_entry *e, const void *fn, uint32_t a0)
{
    return e->fn == fn && e->has_args && e->args[0] == a0 && e->args[1] == 0x80 && e->args[2] == 0x80 &&
           e->args[3] == 0x2000001f;
}

NOPROF int main(void)
{
    tc_check(NP_CALLTRACE_RECORD_SIZE == 32 && np_calltrace_buffer_size(4) == 128 && np_calltrace_lines(159) == 4,
             "a record with r0-r3: 32 bytes, counted by the sizing functions");
    tc_check(np_calltrace_init(buf, 31, NP_CALLTRACE_LOG) == NP_ESMALL, "a buffer under one record refused");

    tc_check(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_LOG) == NP_OK, "log mode init");
    test1(0x100, 0x80, 0x80, 0x2000001f);
    plain_leaf(1, 2, 3, 4);
    snapshot();
    tc_check(nseen == 4, "log mode: 4 records");
    tc_check(seen[0].fn == (const void *)plain_leaf && !seen[0].has_args && seen[0].args[0] == 0,
             "log mode: a function built without -pg has no arguments");
    tc_check(args_are(&seen[1], (const void *)test3, 0x103), "log mode: test3's r0-r3");
    tc_check(args_are(&seen[2], (const void *)test2, 0x101), "log mode: test2's r0-r3");
    tc_check(args_are(&seen[3], (const void *)test1, 0x100), "log mode: test1's r0-r3");
    tc_capture_begin();
    np_calltrace_dump();
    tc_capture_end();
    tc_check(strstr(tc_captured, ", arg1=0x103, arg2=0x80, arg3=0x80, arg4=0x2000001f\n") != NULL &&
                 strstr(tc_captured, ", arg1=0x101, arg2=0x80, arg3=0x80, arg4=0x2000001f\n") != NULL &&
                 strstr(tc_captured, ", arg1=0x100, arg2=0x80, arg3=0x80, arg4=0x2000001f\n") != NULL,
             "log mode: the dump's lines end with r0-r3");
    tc_check(strstr(tc_captured, "arg1=0x1,") == NULL, "log mode: no arguments printed for plain_leaf");
    np_calltrace_shutdown();

    tc_check(np_calltrace_init(buf, sizeof buf, NP_CALLTRACE_STACK) == NP_OK, "stack mode init");
    probing = 1;
    test1(0x200, 0x80, 0x80, 0x2000001f);
    probing = 0;
    tc_check(nseen == 3 && args_are(&seen[0], (const void *)test3, 0x203) &&
                 args_are(&seen[1], (const void *)test2, 0x201) && args_are(&seen[2], (const void *)test1, 0x200),
             "stack mode: the open calls' r0-r3");
    np_calltrace_shutdown();
    return tc_finish();
}
