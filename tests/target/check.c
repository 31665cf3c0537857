/* check.c - the target firmwares' shared checks and output (check.h). */
#include "check.h"

extern void np_port_write_default(const char *bytes, size_t len);

int tc_failures;
char tc_captured[1024];
size_t tc_ncaptured;

void tc_put(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    np_port_write_default(s, n);
}

void tc_put_u64(uint64_t v)
{
    char b[24];
    int i = sizeof b - 1;
    b[i] = 0;
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    tc_put(b + i);
}

int tc_check(int ok, const char *what)
{
    tc_put(ok ? "ok " : "FAIL ");
    tc_put(what);
    tc_put("\n");
    tc_failures += !ok;
    return ok;
}

int tc_check_range(uint64_t got, uint64_t lo, uint64_t hi, const char *what)
{
    int ok = got >= lo && got <= hi;
    tc_put(ok ? "ok " : "FAIL ");
    tc_put(what);
    tc_put(" (got ");
    tc_put_u64(got);
    tc_put(", want ");
    tc_put_u64(lo);
    if (hi != lo) {
        tc_put(" .. ");
        tc_put_u64(hi);
    }
    tc_put(")\n");
    tc_failures += !ok;
    return ok;
}

static void capture(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len && tc_ncaptured < sizeof tc_captured - 1; i++)
        tc_captured[tc_ncaptured++] = bytes[i];
    tc_captured[tc_ncaptured] = 0;
}

void tc_capture_begin(void)
{
    tc_ncaptured = 0;
    tc_captured[0] = 0;
    np_output_set(capture, NULL);
}

void tc_capture_end(void)
{
    np_output_set(NULL, NULL);
}

int tc_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

int tc_starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return 0;
    return 1;
}

int tc_finish(void)
{
    tc_put(tc_failures ? "FAILED\n" : "PASSED\n");
    return tc_failures;
}

void tc_exit(int status)
{
    uint32_t block[2] = { 0x20026, (uint32_t)status }; /* ADP_Stopped_ApplicationExit */
    register uint32_t r0 __asm__("r0") = 0x20;             /* SYS_EXIT_EXTENDED */
    register uint32_t *r1 __asm__("r1") = block;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    for (;;)
        ;
}
