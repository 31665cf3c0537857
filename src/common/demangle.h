/* demangle.h - the short name of a demangled C++ function, one way for
 * the runtime's filters (record_write.c) and the analysis (every view).
 *
 * The demangling itself is the C++ library's __cxa_demangle (libstdc++'s,
 * or libc++abi's), which gives a function's whole signature:
 * "int max<int>(int, int)", "Parser::parse(std::string const&) const".
 * Views show the name without its return type, its parameter list and
 * the qualifiers after it, as `c++filt -p` (binutils) prints it:
 * "max<int>", "Parser::parse"; template arguments stay (they tell
 * instantiations apart). Unlike c++filt -p, ABI tags are left out
 * ("Parser::name[abi:cxx11]" is "Parser::name", as it is written), and a
 * thunk keeps its words ("non-virtual thunk to Derived::f"). A clone's
 * suffix goes with the parameters ("foo(int) [clone .cold]" is "foo"):
 * the analysis tells such functions apart by their signatures.
 *
 * Pure string work, no allocation: the runtime calls it on its writer
 * thread. */
#ifndef NP_COMMON_DEMANGLE_H
#define NP_COMMON_DEMANGLE_H

#include <stddef.h>

/* Writes the short name of FULL (a demangled name) into OUT, SIZE bytes
 * apart from FULL's (strlen(FULL) + 1 always hold it; less cuts it), and
 * returns its length. A name the rules do not know as a function's
 * signature (a variable's, "void (*f())()") is FULL as it is. */
size_t np_demangled_short(const char *full, char *out, size_t size);

/* Whether NAME is a mangled C++ name (Itanium ABI: "_Z..."). */
static inline int np_is_mangled(const char *name)
{
    return name[0] == '_' && name[1] == 'Z';
}

#endif
