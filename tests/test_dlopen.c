/* test_dlopen.c - a program that is not linked with nanoprof dlopen()s
 * libnanoprof.so (docs/instrumenting.md, "Loading the library with
 * dlopen"). The runtime's thread-local state is initial-exec TLS, which a
 * dlopen'ed library gets from the C library's spare static TLS:
 *
 *   test_dlopen          loads it, and the API works from its symbols:
 *                        manual markers measured on two threads (one of
 *                        them ends without np_stats_calc), sections;
 *   test_dlopen full     first loads libraries with initial-exec TLS of
 *                        their own until the spare static TLS is used up:
 *                        then dlopen fails, with the C library's message,
 *                        and the program goes on. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "nanoprof/nanoprof.h"

static void *lib;
#define SYM(type, name) ((type)dlsym_or_fail(#name))

static void *dlsym_or_fail(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p)
        fail_msg("%s: %s", name, dlerror());
    return p;
}

static uint64_t stats[4096];
static const char region[] = "dlopen region";

static void *marked(void *arg)
{
    static __thread uint64_t buf[1024];
    int n = *(int *)arg;
    SYM(int (*)(void *, size_t), np_cost_init)(buf, sizeof buf);
    for (int i = 0; i < n; i++) {
        SYM(void (*)(const char *), np_enter)(region);
        SYM(void (*)(void), np_exit)();
    }
    return NULL; /* no np_stats_calc: the thread's end merges */
}

static void api_works_when_dlopened(void **state)
{
    (void)state;
    lib = dlopen(NP_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail_msg("dlopen: %s", dlerror());
    print_message("loaded nanoprof %s\n", SYM(const char *(*)(void), np_version)());
    assert_int_equal(SYM(int (*)(void *, size_t), np_stats_init)(stats, sizeof stats), NP_OK);
    int n = 1000;
    marked(&n);
    assert_int_equal(SYM(int (*)(void *), np_stats_calc)(stats), NP_OK);
    pthread_t th;
    int m = 500;
    assert_int_equal(pthread_create(&th, NULL, marked, &m), 0);
    pthread_join(th, NULL);
    np_func_stats s;
    assert_int_equal(SYM(int (*)(void *, const void *, np_func_stats *), np_stats_find)(stats, region, &s), NP_OK);
    assert_int_equal(s.named, 1);
    assert_int_equal(s.calls, 1500);
    assert_int_equal(SYM(uint64_t (*)(void *), np_stats_lost)(stats), 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(SYM(int (*)(unsigned), np_section_begin)(1), NP_OK);
        assert_int_equal(SYM(int (*)(unsigned), np_section_end)(1), NP_OK);
    }
    np_section_stats sec;
    assert_int_equal(SYM(int (*)(unsigned, np_section_stats *), np_sections_get)(1, &sec), NP_OK);
    assert_int_equal(sec.count, 10);
}

/* A copy of the file FROM as TO (a library loads once per file). */
static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out)
        fail_msg("cannot copy %s to %s", from, to);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void fails_cleanly_without_static_tls(void **state)
{
    (void)state;
    static const char *const fillers[] = { FILLERS };
    int loaded = 0;
    for (size_t i = 0; i < sizeof fillers / sizeof fillers[0]; i++) {
        /* each size as often as it fits: what is left is less than the
         * smallest, far less than the runtime needs */
        char path[4096];
        for (int copy = 0; copy < 64; copy++) {
            snprintf(path, sizeof path, "%s/tls_filler_%zu_%d.so", TMP_DIR, i, copy);
            copy_file(fillers[i], path);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            remove(path);
            if (!h)
                break;
            loaded++;
        }
    }
    print_message("%d libraries with initial-exec TLS loaded first\n", loaded);
    assert_true(loaded > 0);
    lib = dlopen(NP_LIB, RTLD_NOW | RTLD_LOCAL);
    assert_null(lib);
    const char *err = dlerror();
    print_message("dlopen: %s\n", err);
    assert_non_null(strstr(err, "static TLS"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest works[] = {
        cmocka_unit_test(api_works_when_dlopened),
    };
    const struct CMUnitTest full[] = {
        cmocka_unit_test(fails_cleanly_without_static_tls),
    };
    if (argc > 1 && strcmp(argv[1], "full") == 0)
        return cmocka_run_group_tests_name("dlopen_full", full, NULL, NULL);
    return cmocka_run_group_tests_name("dlopen", works, NULL, NULL);
}
