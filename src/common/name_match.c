/* name_match.c - the one rule by which -F and -N patterns match function
 * names (name_match.h). */
#include "name_match.h"
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

bool np_name_pattern_is_regex(const char *text)
{
    size_t n = strlen(text);
    if (!n)
        return false;
    if (text[0] == '^' || (text[n - 1] == '$' && (n < 2 || text[n - 2] != '\\')))
        return true;
    for (size_t i = 0; i + 1 < n; i++) {
        char c = text[i], next = text[i + 1];
        if (c == '\\') {
            if (!strchr("*?[]\\", next))
                return true;
            i++; /* the escaped character is no syntax */
        } else if (c == '.' && (next == '*' || next == '+' || next == '?')) {
            return true;
        } else if ((c == ']' || c == ')') && next == '+') {
            return true;
        }
    }
    return false;
}

int np_name_pattern_init(struct np_name_pattern *p, const char *text, char *err, size_t errsize)
{
    memset(p, 0, sizeof *p);
    p->text = text;
    p->regex = np_name_pattern_is_regex(text);
    if (!p->regex) {
        p->ok = true;
        return 0;
    }
    int rc = regcomp(&p->re, text, REG_EXTENDED);
    if (rc == 0) {
        p->ok = true;
        return 0;
    }
    if (err && errsize) {
        char why[160];
        regerror(rc, &p->re, why, sizeof why);
        snprintf(err, errsize, "'%s' is not a valid regular expression: %s", text, why);
    }
    return -1;
}

bool np_name_pattern_match(const struct np_name_pattern *p, const char *name)
{
    if (!p->ok)
        return false;
    if (!p->regex)
        return fnmatch(p->text, name, 0) == 0;
    /* anchored: POSIX takes the longest match at the leftmost position,
     * so a match of the whole name, when there is one, is found */
    regmatch_t m;
    return regexec(&p->re, name, 1, &m, 0) == 0 && m.rm_so == 0 && name[m.rm_eo] == '\0';
}

void np_name_pattern_free(struct np_name_pattern *p)
{
    if (p->regex && p->ok)
        regfree(&p->re);
    p->ok = false;
}
