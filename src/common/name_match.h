/* name_match.h - whether a function's name matches a -F or -N pattern:
 * one rule for the recorder (port/posix/record_write.c, inside the program)
 * and the analysis (analyze/model.c, every view), so that a pattern keeps
 * the same functions when recording and when reading.
 *
 * The rule (docs/recording.md, "Patterns"). A pattern is a POSIX extended
 * regular expression (regcomp(3), as uftrace's -F and -N take them) when
 * it has syntax that a glob does not:
 *   - '^' as its first character, or '$' as its last;
 *   - '.' followed by '*', '+' or '?' (".*", ".+", ".?");
 *   - '+' after ']' or ')' ("[a-z]+", "(ab)+");
 *   - '\' followed by a character other than * ? [ ] and '\' itself (a
 *     glob escapes those, with the same meaning).
 * Otherwise it is a glob (fnmatch(3), no flags: '*', '?', '[...]').
 * Either must match the whole name: a regular expression is anchored at
 * both ends ("luaH_.*" matches luaH_get, not xluaH_get), as a glob is.
 *
 * Hosted C (the POSIX port's runtime and the host's analysis); compiling
 * a pattern allocates, matching one may (regexec): neither is for a
 * signal handler or the hot path, where matches are cached by address. */
#ifndef NP_COMMON_NAME_MATCH_H
#define NP_COMMON_NAME_MATCH_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

struct np_name_pattern {
    const char *text;   /* as given (not copied: it outlives the pattern) */
    bool regex;         /* read as a regular expression (the rule above) */
    bool ok;            /* compiled: a pattern that does not compile matches nothing */
    regex_t re;
};

/* Whether TEXT is read as a regular expression (the rule above). */
bool np_name_pattern_is_regex(const char *text);

/* Prepares P for TEXT. Returns 0, or -1 with the reason in ERR ("'x[' is
 * not a valid regular expression: Unmatched [, [^, ..."): P then matches
 * nothing, and still needs np_name_pattern_free. */
int np_name_pattern_init(struct np_name_pattern *p, const char *text, char *err, size_t errsize);

/* Whether NAME as a whole matches P. */
bool np_name_pattern_match(const struct np_name_pattern *p, const char *name);

void np_name_pattern_free(struct np_name_pattern *p);

#endif
