/* patterns.c - what the -F and -N patterns matched in a trace's files
 * (patterns.h). */
#include "patterns.h"
#include "source.h"
#include "symbols.h"
#include <stdbool.h>
#include <stdlib.h>

struct count {
    const struct np_name_pattern *pats;
    struct np_pattern_use *uses;
    size_t n;
};

/* Whether P names the function whose symbol is NAME, as the model
 * matches it: by its symbol and, for a C++ name, its signature and its
 * short name (FULL and SHORT_NAME, NULL when it has none). */
static bool names(const struct np_name_pattern *p, const char *name, const char *full, const char *short_name)
{
    return np_name_pattern_match(p, name) || (full && np_name_pattern_match(p, full)) ||
           (short_name && np_name_pattern_match(p, short_name));
}

static void count_name(void *ctx, const char *name)
{
    struct count *c = ctx;
    char *full = NULL, *short_name = NULL;
    bool demangled = false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->uses[i].functions)
            continue;
        if (!demangled) { /* once a name, and only when a pattern still asks */
            demangled = true;
            if (np_demangle(name, &full, &short_name) <= 0)
                full = short_name = NULL;
        }
        if (names(&c->pats[i], name, full, short_name))
            c->uses[i].in_files++;
    }
    free(full);
    free(short_name);
}

void np_patterns_init(struct np_name_pattern *pats, struct np_pattern_use *uses, char *const *include,
                      size_t ninclude, char *const *exclude, size_t nexclude)
{
    for (size_t i = 0; i < ninclude + nexclude; i++) {
        bool ex = i >= ninclude;
        const char *text = ex ? exclude[i - ninclude] : include[i];
        np_name_pattern_init(&pats[i], text, NULL, 0);
        uses[i] = (struct np_pattern_use){ .text = text, .exclude = ex };
    }
}

void np_patterns_free(struct np_name_pattern *pats, size_t n)
{
    for (size_t i = 0; pats && i < n; i++)
        np_name_pattern_free(&pats[i]);
}

void np_patterns_in_files(struct np_symbols *syms, const struct np_name_pattern *pats, struct np_pattern_use *uses,
                          size_t n, unsigned *files)
{
    struct count c = { pats, uses, n };
    bool wanted = false;
    for (size_t i = 0; i < n; i++)
        wanted |= !uses[i].functions;
    *files = syms && wanted ? np_symbols_each_function(syms, count_name, &c) : 0;
}

/* ---- a trace's MODULE and NAME chunks ------------------------------------ */

struct reading {
    struct count count;
    struct np_symbols *syms;
    struct np_addrspace *space; /* of the process being read: it maps its modules */
};

static int on_begin(void *ctx, const struct np_trace_process *p)
{
    struct reading *r = ctx;
    (void)p;
    np_addrspace_free(r->space);
    r->space = np_addrspace_new(r->syms);
    return r->space ? 0 : NP_TRACE_ENOMEM;
}

static int on_module(void *ctx, const struct np_trace_module *m)
{
    struct reading *r = ctx;
    return r->space && np_addrspace_map(r->space, m) ? NP_TRACE_ENOMEM : 0;
}

static int on_name(void *ctx, uint64_t address, const char *name)
{
    struct reading *r = ctx;
    (void)address;
    count_name(&r->count, name);
    return 0;
}

int np_patterns_in_trace(const char *path, char *const *include, size_t ninclude, char *const *exclude,
                         size_t nexclude, struct np_pattern_use *uses, unsigned *files)
{
    size_t n = ninclude + nexclude;
    struct np_name_pattern *pats = calloc(n ? n : 1, sizeof *pats);
    struct reading r = { { pats, uses, n }, np_symbols_new(NULL, NULL), NULL };
    struct np_trace_summary sum;
    int rc = NP_TRACE_ENOMEM;
    *files = 0;
    if (pats && r.syms) {
        np_patterns_init(pats, uses, include, ninclude, exclude, nexclude);
        struct np_event_sink sink = { .ctx = &r, .begin = on_begin, .module = on_module, .name = on_name };
        rc = np_source_read(path, NULL, &sink, NULL, &sum);
        np_patterns_in_files(r.syms, pats, uses, n, files);
        np_addrspace_free(r.space);
        np_patterns_free(pats, n);
    }
    np_symbols_free(r.syms);
    free(pats);
    return rc;
}
