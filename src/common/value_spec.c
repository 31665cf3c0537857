/* value_spec.c - the -A and -R spec parser (value_spec.h). */
#include "value_spec.h"
#include "trace_format.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int format_of(char c)
{
    switch (c) {
    case 'i':
    case 'd':
        return NP_VAL_INT;
    case 'u':
        return NP_VAL_UINT;
    case 'x':
        return NP_VAL_HEX;
    case 'o':
        return NP_VAL_OCT;
    case 'p':
        return NP_VAL_PTR;
    case 'c':
        return NP_VAL_CHAR;
    case 's':
        return NP_VAL_STR;
    default:
        return -1;
    }
}

/* "argN[/FMT]" or "retval[/FMT]", LEN bytes at P, into IT */
static int item_parse(const char *p, size_t len, int retval, struct np_value_item *it, char *err, size_t errsize)
{
    char word[64];
    if (len >= sizeof word) {
        snprintf(err, errsize, "'%.*s...' is not an argument", 20, p);
        return -1;
    }
    memcpy(word, p, len);
    word[len] = 0;
    char *fmt = strchr(word, '/');
    if (fmt)
        *fmt++ = 0;
    if (retval) {
        if (strcmp(word, "retval") != 0) {
            snprintf(err, errsize, "'%s' is not retval (-R takes FUNC@retval[/FORMAT])", word);
            return -1;
        }
        it->index = 0;
    } else {
        char *end;
        long n = strncmp(word, "arg", 3) == 0 ? strtol(word + 3, &end, 10) : 0;
        if (n < 1 || n > NP_VALUE_ARGS_MAX || *end || word[3] == '+' || word[3] == '-' || word[3] == ' ') {
            snprintf(err, errsize, "'%s' is not an argument: arg1 to arg%d", word, NP_VALUE_ARGS_MAX);
            return -1;
        }
        it->index = (uint8_t)n;
    }
    it->format = NP_VAL_AUTO;
    it->bits = 0;
    if (fmt) {
        int f = *fmt ? format_of(*fmt) : -1;
        if (f < 0) {
            snprintf(err, errsize, "'%s' is not a format: i, d, u, x, o, p, c or s (with a size: i32)", fmt);
            return -1;
        }
        it->format = (uint8_t)f;
        if (fmt[1]) {
            char *end;
            long bits = strtol(fmt + 1, &end, 10);
            int sized = f == NP_VAL_INT || f == NP_VAL_UINT || f == NP_VAL_HEX || f == NP_VAL_OCT;
            if (!sized || *end || (bits != 8 && bits != 16 && bits != 32 && bits != 64)) {
                snprintf(err, errsize, "'%s' is not a format: a size is 8, 16, 32 or 64, after i, d, u, x or o",
                         fmt);
                return -1;
            }
            it->bits = (uint8_t)bits;
        } else if (f == NP_VAL_CHAR) {
            it->bits = 8;
        }
    }
    return 0;
}

int np_value_spec_parse(const char *text, int retval, struct np_value_spec *out, char *err, size_t errsize)
{
    const char *at = strchr(text, '@');
    memset(out, 0, sizeof *out);
    if (!at || at == text) {
        snprintf(err, errsize, "'%s' names no function: %s", text,
                 retval ? "FUNC@retval[/FORMAT]" : "FUNC@arg1[/FORMAT],arg2...");
        return -1;
    }
    if ((size_t)(at - text) >= sizeof out->func) {
        snprintf(err, errsize, "the function pattern of '%.40s...' is over %zu bytes", text, sizeof out->func - 1);
        return -1;
    }
    memcpy(out->func, text, (size_t)(at - text));
    const char *p = at + 1;
    if (!*p) {
        snprintf(err, errsize, "'%s' names no %s", text, retval ? "retval" : "argument");
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (out->n == (retval ? 1u : (unsigned)NP_VALUE_ARGS_MAX)) {
            snprintf(err, errsize, "'%s': %s", text, retval ? "one retval" : "at most 6 arguments");
            return -1;
        }
        if (!len || item_parse(p, len, retval, &out->item[out->n], err, errsize) < 0) {
            if (!len)
                snprintf(err, errsize, "'%s' has an empty item", text);
            return -1;
        }
        out->n++;
        p += len + (comma != NULL);
        if (comma && !*p) {
            snprintf(err, errsize, "'%s' ends with a comma", text);
            return -1;
        }
    }
    return 0;
}

