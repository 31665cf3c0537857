/* test_demangle.c - C++ names as the views show them (common/demangle.h,
 * np_demangle): mangled names of every shape the rules read (methods and
 * their qualifiers, templates and their return types, operators, a
 * conversion, lambdas, anonymous namespaces, ABI tags, clones, thunks,
 * variables) demangled by the C++ library and cut to their short names:
 * those `c++filt -p` (binutils) prints, ABI tags left out, a thunk
 * keeping its words; a name cut by a small buffer; names that are not
 * C++ left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analyze/symbols.h"
#include "common/demangle.h"

struct name_case {
    const char *mangled, *full, *short_name;
};

/* full: as __cxa_demangle prints it; short_name: as c++filt -p does,
 * without ABI tags, a thunk with its words */
static const struct name_case cases[] = {
    { "_ZNK6Parser5parseERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
      "Parser::parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) const",
      "Parser::parse" },
    { "_Z5scalei", "scale(int)", "scale" },
    { "_Z3maxIiET_S0_S0_", "int max<int>(int, int)", "max<int>" },
    { "_ZNK3Foo3barB5cxx11Ev", "Foo::bar[abi:cxx11]() const", "Foo::bar" },
    { "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()" },
    { "_ZThn8_N7Derived1fEv", "non-virtual thunk to Derived::f()", "non-virtual thunk to Derived::f" },
    { "_Z3fooi.cold", "foo(int) [clone .cold]", "foo" },
    { "_ZL4twini.constprop.0", "twin(int) [clone .constprop.0]", "twin" },
    { "_ZN3FoocviEv", "Foo::operator int()", "Foo::operator int" },
    { "_ZlsRSoRK3Foo", "operator<<(std::ostream&, Foo const&)", "operator<<" },
    { "_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()", "(anonymous namespace)::foo" },
    { "_ZNKSt8functionIFviEEclEi", "std::function<void (int)>::operator()(int) const",
      "std::function<void (int)>::operator()" },
    { "_ZnwmRKSt9nothrow_t", "operator new(unsigned long, std::nothrow_t const&)", "operator new" },
    { "_ZNKR3Foo1fEv", "Foo::f() const &", "Foo::f" },
    { "_ZN3FoossERKS_", "Foo::operator<=>(Foo const&)", "Foo::operator<=>" },
    { "_ZN1AIiEltIcEEbv", "bool A<int>::operator< <char>()", "A<int>::operator< <char>" },
    { "_Z1fIiEvDTcl1gfp_EE", "void f<int>(decltype (g({parm#1})))", "f<int>" },
    { "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)",
      "std::vector<int, std::allocator<int> >::push_back" },
    /* not a function's signature: as it is */
    { "_Z4funcIiEPFvvEv", "void (*func<int>())()", "void (*func<int>())()" },
    { "_ZTIDn", "typeinfo for decltype(nullptr)", "typeinfo for decltype(nullptr)" },
    { "_ZTV3Foo", "vtable for Foo", "vtable for Foo" },
};

static void demangled_and_short(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct name_case *c = &cases[i];
        char *full, *short_name;
        assert_int_equal(np_demangle(c->mangled, &full, &short_name), 1);
        assert_string_equal(full, c->full);
        assert_string_equal(short_name, c->short_name);
        char buf[512];
        assert_int_equal(np_demangled_short(c->full, buf, sizeof buf), strlen(c->short_name));
        assert_string_equal(buf, c->short_name);
        free(full);
        free(short_name);
    }
}

static void cut_to_the_buffer(void **state)
{
    (void)state;
    char buf[8];
    assert_int_equal(np_demangled_short("int max<int>(int, int)", buf, sizeof buf), 7);
    assert_string_equal(buf, "max<int");
    assert_int_equal(np_demangled_short("non-virtual thunk to Derived::f()", buf, sizeof buf), 7);
    assert_string_equal(buf, "non-vir");
    assert_int_equal(np_demangled_short("f()", buf, 1), 0);
    assert_string_equal(buf, "");
    assert_int_equal(np_demangled_short("f()", buf, 0), 0);
}

static void not_cxx(void **state)
{
    (void)state;
    char *full = (char *)"x", *short_name = (char *)"x";
    assert_int_equal(np_demangle("main", &full, &short_name), 0);
    assert_null(full);
    assert_null(short_name);
    assert_int_equal(np_demangle("_Zfoo", &full, &short_name), 0); /* not one the demangler knows */
    assert_null(full);
    assert_int_equal(np_demangle("_", &full, &short_name), 0);
    char buf[64];
    assert_int_equal(np_demangled_short("main", buf, sizeof buf), 4);
    assert_string_equal(buf, "main");
    assert_int_equal(np_demangled_short("", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(np_demangled_short("f(", buf, sizeof buf), 2); /* unbalanced: as it is */
    assert_int_equal(np_demangled_short("f())", buf, sizeof buf), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(demangled_and_short),
        cmocka_unit_test(cut_to_the_buffer),
        cmocka_unit_test(not_cxx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
