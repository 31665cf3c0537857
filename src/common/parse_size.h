/* parse_size.h - sizes ("64k", "1M") as the runtime's settings and the
 * command line give them (parse_units.h has the rest). Freestanding: the
 * core reads NANOPROF_BLOCKS with it, and a target has no C library. It
 * takes what strtoull(s, &end, 10) takes, so that hosts and targets read
 * a setting alike: leading white space, a sign, decimal digits. */
#ifndef NP_PARSE_SIZE_H
#define NP_PARSE_SIZE_H

#include <stdint.h>

/* Bytes S stands for; 0 when it is malformed or overflows. */
static inline uint64_t np_parse_size(const char *s)
{
    const char *p = s;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        p++;
    int neg = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9' || *s == '-')
        return 0;
    uint64_t v = 0;
    int over = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over)
        return 0;
    if (neg) /* " -5": strtoull's negation */
        v = -v;
    unsigned shift = 0;
    if (*p == 'k' || *p == 'K')
        shift = 10, p++;
    else if (*p == 'm' || *p == 'M')
        shift = 20, p++;
    else if (*p == 'g' || *p == 'G')
        shift = 30, p++;
    if (*p || v > (~0ull >> shift))
        return 0;
    return v << shift;
}

#endif
