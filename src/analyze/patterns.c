/* patterns.c - what the -F and -N patterns matched in a trace's files
 * (patterns.h). */
#include "patterns.h"
#include "source.h"
#include <stdlib.h>

struct count {
    const struct np_name_pattern *pats;
    struct np_pattern_use *uses;
    size_t n;
};

static void count_name(void *ctx, const char *name)
{
    struct count *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (!c->uses[i].functions && np_name_pattern_match(&c->pats[i], name))
            c->uses[i].in_files++;
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

int np_patterns_in_trace(const char *path, const struct np_name_pattern *pats, struct np_pattern_use *uses,
                         size_t n, unsigned *files)
{
    struct reading r = { { pats, uses, n }, np_symbols_new(NULL, NULL), NULL };
    struct np_trace_summary sum;
    *files = 0;
    if (!r.syms)
        return NP_TRACE_ENOMEM;
    struct np_event_sink sink = { .ctx = &r, .begin = on_begin, .module = on_module, .name = on_name };
    int rc = np_source_read(path, NULL, &sink, NULL, &sum);
    np_patterns_in_files(r.syms, pats, uses, n, files);
    np_addrspace_free(r.space);
    np_symbols_free(r.syms);
    return rc;
}
