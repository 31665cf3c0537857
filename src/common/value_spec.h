/* value_spec.h - which arguments and return values to record, in
 * uftrace's spec syntax: `FUNC@arg1,arg2/s,arg3/x32` (-A) and
 * `FUNC@retval/x` (-R). One parser for `nanoprof record`, which checks
 * them before the program runs, and the runtime, which records them
 * (docs/recording.md, "Arguments and return values").
 *
 * FUNC is a pattern as -F takes it (common/name_match.h). An argument is
 * argN, N from 1 to NP_VALUE_ARGS_MAX (the integer argument registers),
 * with a format after '/': i or d (signed, the default), u, x, o, p, c or
 * s, and for i, d, u, x and o a size in bits, 8, 16, 32 or 64 (as `i32`;
 * by default the registers' width). */
#ifndef NP_COMMON_VALUE_SPEC_H
#define NP_COMMON_VALUE_SPEC_H

#include <stddef.h>
#include <stdint.h>
#include "trace_format.h" /* the formats */

#define NP_VALUE_ARGS_MAX 6   /* rdi, rsi, rdx, rcx, r8, r9 (x86-64) */
#define NP_VALUE_SPECS_MAX 64 /* specs in one run */

struct np_value_item {
    uint8_t index;  /* argument number; 0: the return value */
    uint8_t format; /* enum np_value_format (trace_format.h) */
    uint8_t bits;   /* 8, 16, 32 or 64; 0: the registers' width (the default) */
};

struct np_value_spec {
    char func[256];    /* the pattern */
    unsigned n;
    struct np_value_item item[NP_VALUE_ARGS_MAX];
};

/* Parses TEXT, an -A spec (RETVAL 0) or an -R spec (RETVAL 1), into OUT;
 * 0, or -1 with one line in ERR saying what is wrong. */
int np_value_spec_parse(const char *text, int retval, struct np_value_spec *out, char *err, size_t errsize);

/* V, read from a register of WORD bits (64 on x86-64, 32 on ARM), as ITEM
 * keeps it: cut to its bits, sign-extended for signed ones. */
static inline uint64_t np_value_cut(const struct np_value_item *item, uint64_t v, unsigned word)
{
    unsigned bits = item->bits ? item->bits : word;
    if (item->format == NP_VAL_STR || item->format == NP_VAL_PTR)
        bits = word;
    if (bits >= 64)
        return v;
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    v &= mask;
    if (item->format == NP_VAL_INT && (v >> (bits - 1)) & 1)
        v |= ~mask;
    return v;
}

#endif
