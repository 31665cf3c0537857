/* parse_units.h - sizes ("64k", parse_size.h), durations ("20us") and rates ("997") as
 * the recorder's options give them: one parser each for the runtime (NANOPROF_BUFFER,
 * NANOPROF_MIN_NS) and the command line (-b, --time-filter), so both accept
 * and refuse exactly the same values. Header-only: the runtime includes it
 * without linking host code. */
#ifndef NP_PARSE_UNITS_H
#define NP_PARSE_UNITS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "parse_size.h" /* np_parse_size */

/* "1500", "1500ns", "20us", "3ms", "1s": nanoseconds; -1 when malformed or
 * beyond INT64_MAX. */
static inline int64_t np_parse_ns(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    uint64_t mul = 1;
    if (strcmp(end, "us") == 0)
        mul = 1000;
    else if (strcmp(end, "ms") == 0)
        mul = 1000000;
    else if (strcmp(end, "s") == 0)
        mul = 1000000000;
    else if (*end && strcmp(end, "ns") != 0)
        return -1;
    if (v > (uint64_t)INT64_MAX / mul)
        return -1;
    return (int64_t)(v * mul);
}

/* A sampling rate, "1" to "100000" (Hz); 0 when malformed or out of range. */
static inline unsigned np_parse_hz(const char *s)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || *s == '+' || v < 1 || v > 100000)
        return 0;
    return (unsigned)v;
}

#endif
