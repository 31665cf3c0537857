/* parse_size.h - "123", "64k", "1M", "1G" (powers of 1024) to bytes, for the
 * buffer-size option: one parser for the runtime (NANOPROF_BUFFER) and the
 * command line (-b), so both accept and refuse exactly the same values. */
#ifndef NP_PARSE_SIZE_H
#define NP_PARSE_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Bytes S stands for; 0 when it is malformed or overflows. */
static inline uint64_t np_parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end || v > (~0ull >> shift))
        return 0;
    return (uint64_t)v << shift;
}

#endif
