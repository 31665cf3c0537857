/* patterns.h - what the -F and -N patterns matched, so that every command
 * says a pattern that matched no function (src/cli/options.h words the
 * line): the functions of a trace (the model counts them as it names
 * them), and, for a pattern that matched none of those, the functions of
 * the ELF files the trace maps (their symbol tables: every function of
 * the program and of the libraries it loaded, whether it ran or not).
 * Names match as common/name_match.h says. */
#ifndef NP_ANALYZE_PATTERNS_H
#define NP_ANALYZE_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/name_match.h"
#include "symbols.h"

struct np_pattern_use {
    const char *text;      /* the pattern */
    bool exclude;          /* -N; else -F */
    uint64_t functions;    /* functions of the trace it matches (the model's: called or
                              sampled in the threads read) */
    uint64_t in_files;     /* functions of the ELF files' symbol tables it matches,
                              counted only where FUNCTIONS is 0 */
};

/* Prepares the NINCLUDE patterns of INCLUDE, then the NEXCLUDE of
 * EXCLUDE, into PATS and USES (as many entries each): a pattern that does
 * not compile matches nothing (np_model_option refuses it first). */
void np_patterns_init(struct np_name_pattern *pats, struct np_pattern_use *uses, char *const *include,
                      size_t ninclude, char *const *exclude, size_t nexclude);
void np_patterns_free(struct np_name_pattern *pats, size_t n);

/* For each of the N patterns PATS[i] whose USES[i].functions is 0, counts
 * into USES[i].in_files the functions of the files SYMS has read; their
 * number in *FILES. */
void np_patterns_in_files(struct np_symbols *syms, const struct np_name_pattern *pats, struct np_pattern_use *uses,
                          size_t n, unsigned *files);

/* The same for the trace at PATH, for the patterns of INCLUDE and
 * EXCLUDE (USES: NINCLUDE + NEXCLUDE entries, filled in), without reading
 * its calls: the files its MODULE chunks map, and the regions its NAME
 * chunks name (NP_ENTER: counted as functions of the program). Returns
 * the read's status. */
int np_patterns_in_trace(const char *path, char *const *include, size_t ninclude, char *const *exclude,
                         size_t nexclude, struct np_pattern_use *uses, unsigned *files);

#endif
