/* demangle.c - a demangled function's short name (rules in demangle.h).
 *
 * Read from the end: the clone suffixes, the qualifiers after the
 * parameters, the parameter list (the parentheses that close the name);
 * then from the start, the return type ends at the last space outside
 * brackets before the name, where an operator's name ("operator new",
 * "operator< <char>", "Foo::operator int") is read as a whole. */
#include "demangle.h"
#include <string.h>

/* Words before the function they are of: kept (not variables: "typeinfo
 * for X", "vtable for X", which have no parameter list). */
static const char *const phrases[] = {
    "non-virtual thunk to ", "virtual thunk to ",         "covariant return thunk to ",
    "transaction clone for ", "non-transaction clone for ", "TLS init function for ",
    "TLS wrapper function for ", "hidden alias for ",
};

/* Words of a variable's name ("typeinfo for decltype(nullptr)"): left
 * whole. */
static const char *const variables[] = {
    "typeinfo for ", "typeinfo name for ", "typeinfo fn for ", "vtable for ",    "VTT for ",
    "construction vtable for ", "guard variable for ", "reference temporary #", "java Class for ",
};

/* Qualifiers of a method, after its parameters. */
static const char *const qualifiers[] = { " const", " volatile", " &&", " &", " noexcept", " transaction_safe" };

static int ends_with(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    return n >= t && memcmp(s + n - t, tail, t) == 0;
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether the keyword "operator" starts at S[I] (not "operators", nor
 * "my_operator"). */
static int operator_at(const char *s, size_t i, size_t n)
{
    return n - i >= 8 && memcmp(s + i, "operator", 8) == 0 && (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ') &&
           (n - i == 8 || !is_word_char(s[i + 8]));
}

/* The end of S[0..N) without clone suffixes (" [clone .cold]"). */
static size_t without_clones(const char *s, size_t n)
{
    while (n && s[n - 1] == ']') {
        size_t i = n - 1;
        while (i && s[i] != '[')
            i--;
        if (i < 1 || s[i - 1] != ' ' || n - i < 8 || memcmp(s + i, "[clone ", 7) != 0)
            break;
        n = i - 1;
    }
    return n;
}

/* The index of the '(' opening the parameter list that S[N-1] closes, or
 * 0 when there is none. */
static size_t parameters_at(const char *s, size_t n)
{
    if (!n || s[n - 1] != ')')
        return 0;
    size_t depth = 0, i = n;
    while (i-- > 0) {
        if (s[i] == ')')
            depth++;
        else if (s[i] == '(' && --depth == 0)
            return i;
    }
    return 0;
}

/* Where the name starts in S[0..N) (a return type before it ends with a
 * space outside brackets); *OP tells whether it is an operator's. */
static size_t name_start(const char *s, size_t n, int *op)
{
    size_t start = 0, depth = 0;
    *op = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (depth == 0 && operator_at(s, i, n)) {
            *op = 1;
            break; /* the rest is the operator's name */
        }
        if (c == '(' || c == '<' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth)
            depth--;
        else if (c == ' ' && depth == 0)
            start = i + 1;
    }
    return start;
}

/* Copies S[0..N) to OUT (ROOM bytes at most) without its ABI tags
 * ("[abi:cxx11]"); returns the bytes written. */
static size_t copy_without_tags(char *out, size_t room, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < room; i++) {
        const char *close;
        if (s[i] == '[' && n - i > 5 && memcmp(s + i, "[abi:", 5) == 0 &&
            (close = memchr(s + i, ']', n - i)) != NULL) {
            i = (size_t)(close - s);
            continue;
        }
        out[k++] = s[i];
    }
    return k;
}

size_t np_demangled_short(const char *full, char *out, size_t size)
{
    if (!size)
        return 0;
    size_t n = strlen(full), keep = 0, room = size - 1;
    for (size_t i = 0; i < sizeof phrases / sizeof *phrases; i++)
        if (strncmp(full, phrases[i], strlen(phrases[i])) == 0)
            keep = strlen(phrases[i]);
    int variable = 0;
    for (size_t i = 0; i < sizeof variables / sizeof *variables; i++)
        variable |= strncmp(full, variables[i], strlen(variables[i])) == 0;
    const char *s = full + keep;
    size_t end = without_clones(s, n - keep);
    for (size_t q = 0; q < sizeof qualifiers / sizeof *qualifiers;) {
        if (ends_with(s, end, qualifiers[q])) {
            end -= strlen(qualifiers[q]);
            q = 0; /* "() const &" */
        } else {
            q++;
        }
    }
    size_t open = variable ? 0 : parameters_at(s, end), k = 0;
    int op = 0;
    size_t start = open ? name_start(s, open, &op) : 0;
    /* not a function's signature, or a declarator around the name
     * ("void (*f())()"): left whole */
    if (open && (op || s[open - 1] != ')')) {
        k = keep < room ? keep : room;
        memcpy(out, full, k);
        k += copy_without_tags(out + k, room - k, s + start, open - start);
    }
    if (k <= keep) {
        k = n < room ? n : room;
        memcpy(out, full, k);
    }
    out[k] = 0;
    return k;
}
