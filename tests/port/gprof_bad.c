/* gprof_bad.c - gprof.h misused on the target, for tests/port/gprof.sh:
 * each call's status is printed after the runtime's own line, and a table
 * of one arc is filled (F2_CALLS calls not counted). Built with -pg; the
 * script compares the output exactly. */
#include <nanoprof/nanoprof.h>
#include <nanoprof/cortex_m.h>

#define F2_CALLS 5

static uint32_t arcs[NP_GPROF_ARCS_SIZE(1) / 4];
static uint16_t hist[4096];

NP_NO_PROFILE static void say(const char *what, int status)
{
    char line[64];
    unsigned n = 0, v = status < 0 ? (unsigned)-status : (unsigned)status;
    while (*what)
        line[n++] = *what++;
    line[n++] = ' ';
    if (status < 0)
        line[n++] = '-';
    line[n++] = (char)('0' + v % 10);
    line[n++] = '\n';
    line[n] = 0;
    (void)np_cm_semihost(0x04, line); /* SYS_WRITE0 */
}

__attribute__((noinline)) void f1(void)
{
    __asm__ __volatile__("");
}

__attribute__((noinline)) void f2(void)
{
    __asm__ __volatile__("");
}

int main(void)
{
    np_gprof_config ok = { .arcs = arcs, .arcs_size = sizeof arcs, .hist = hist, .hist_size = sizeof hist,
                           .hz = 1000 };
    np_gprof_config c;
    say("write before init:", np_gprof_write(NULL));
    say("init NULL:", np_gprof_init(NULL));
    c = ok, c.arcs = NULL;
    say("arcs NULL:", np_gprof_init(&c));
    c = ok, c.hist = NULL;
    say("hist NULL:", np_gprof_init(&c));
    c = ok, c.hist = (uint16_t *)((char *)hist + 1);
    say("hist misaligned:", np_gprof_init(&c));
    c = ok, c.arcs_size = NP_GPROF_ARCS_SIZE(1) - 1;
    say("arcs too small:", np_gprof_init(&c));
    c = ok, c.hist_size = 2;
    say("hist too small:", np_gprof_init(&c));
    c = ok, c.hz = 0;
    say("hz 0:", np_gprof_init(&c));
    c = ok, c.text_start = (void *)0x2000, c.text_end = (void *)0x1000;
    say("text backwards:", np_gprof_init(&c));
    say("init:", np_gprof_init(&ok));
    say("init again:", np_gprof_init(&ok));
    f1();
    for (int i = 0; i < F2_CALLS; i++)
        f2();
    say("write, table full:", np_gprof_write("gmon_full.out"));
    return 0;
}
