/* test_name_match.c - the one rule by which -F and -N patterns match a
 * function's name (src/common/name_match.h): which patterns are regular
 * expressions, that both kinds match the whole name, and that a regular
 * expression that does not compile is refused and then matches nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>
#include "common/name_match.h"

static void test_which(void **state)
{
    (void)state;
    static const char *const regexes[] = { "luaH_.*", "^lua", "get$", "x.+y", "a.?b", "[a-z]+_get",
                                           "(ab)+", "\\.cold", "f\\d", "^(a|b)$", "a\\$" };
    static const char *const globs[] = { "luaH_*", "f?o", "[ab]*", "foo.isra.0", "a|b", "operator()",
                                         "operator+", "operator[]", "\\*star", "x\\?", "", "a$b",
                                         "std::map<int, int>::find", "{lambda()#1}", "[!a]x" };
    for (size_t i = 0; i < sizeof regexes / sizeof *regexes; i++)
        if (!np_name_pattern_is_regex(regexes[i]))
            fail_msg("'%s' is read as a glob", regexes[i]);
    for (size_t i = 0; i < sizeof globs / sizeof *globs; i++)
        if (np_name_pattern_is_regex(globs[i]))
            fail_msg("'%s' is read as a regular expression", globs[i]);
}

/* Whether NAME matches TEXT. */
static bool match(const char *text, const char *name)
{
    struct np_name_pattern p;
    char err[256];
    if (np_name_pattern_init(&p, text, err, sizeof err))
        fail_msg("'%s': %s", text, err);
    bool m = np_name_pattern_match(&p, name);
    np_name_pattern_free(&p);
    return m;
}

static void test_whole_name(void **state)
{
    (void)state;
    /* a regular expression is anchored at both ends, as a glob is */
    assert_true(match("luaH_.*", "luaH_get"));
    assert_false(match("luaH_.*", "xluaH_get"));
    assert_true(match(".*luaH_.*", "xluaH_get"));
    assert_false(match("lua.?", "luaH_get"));
    assert_true(match("^(get|set)_[a-z]+$", "set_value"));
    assert_false(match("^(get|set)_[a-z]+$", "set_value2"));
    assert_false(match("^(get|set)_[a-z]+$", "reset_value"));
    assert_true(match("[a-z]+_get", "table_get"));
    assert_false(match("[a-z]+_get", "table_get_x"));
    /* alternatives: the longest at the start decides */
    assert_true(match("^(a|ab)$", "ab"));
    assert_true(match("f\\.cold.*", "f.cold"));
    assert_false(match("f\\.cold.*", "fxcold"));
    /* globs, as fnmatch(3) */
    assert_true(match("luaH_*", "luaH_get"));
    assert_false(match("luaH_*", "xluaH_get"));
    assert_true(match("foo.isra.0", "foo.isra.0"));
    assert_false(match("foo.isra.0", "fooxisrax0"));
    assert_true(match("[ab]?", "bz"));
    assert_true(match("\\*star", "*star"));
    assert_true(match("operator()", "operator()"));
    assert_true(match("a|b", "a|b"));
    assert_false(match("a|b", "a"));
}

static void test_refused(void **state)
{
    (void)state;
    struct np_name_pattern p;
    char err[256] = "";
    assert_int_equal(np_name_pattern_init(&p, "^x[", err, sizeof err), -1);
    if (!strstr(err, "'^x[' is not a valid regular expression: "))
        fail_msg("%s", err);
    assert_false(np_name_pattern_match(&p, "^x["));
    assert_false(np_name_pattern_match(&p, "x"));
    np_name_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which),
        cmocka_unit_test(test_whole_name),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
