/* report_text.h - a report's record (report_format.h) as the lines the
 * host runtime prints: one formatter for the runtime's own dumps on a
 * host, for a target that opted into text (-lnanoprof-text), and for
 * `nanoprof import`, which names what a target's records hold from the
 * firmware's ELF. Freestanding: no C library, no allocation. */
#ifndef NP_REPORT_TEXT_H
#define NP_REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* What the formatter asks of whoever knows the program. */
struct np_report_names {
    void *ctx;
    /* The name of the function containing ADDR into BUF (LEN bytes, NUL
     * ended), and *OFFSET ADDR's distance from its start: 1, or 0 when
     * there is none (the formatter prints the address). */
    int (*function)(void *ctx, uint64_t addr, char *buf, size_t len, uint64_t *offset);
    /* The string a value holds: MSG, a runtime message (report_format.h's
     * MSG), else the program's string at ADDR. NULL when it cannot be
     * read. BUF (LEN bytes) is the caller's, for a copy. */
    const char *(*string)(void *ctx, uint64_t addr, int msg, char *buf, size_t len);
};

/* Takes each line, LEN bytes with its '\n'. */
typedef void (*np_report_emit_fn)(void *ctx, const char *line, size_t len);

/* Formats the record TYPE with its N values V into lines given to EMIT:
 * 0, or -1 (nothing given) when TYPE is unknown or N too small for it. */
int np_report_text(unsigned type, const uint64_t *v, unsigned n, const struct np_report_names *names,
                   np_report_emit_fn emit, void *ctx);

#endif
