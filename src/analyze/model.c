/* model.c - builds the model from events (rules and layout in model.h).
 *
 * Everything is aggregated online, as calls close: no event is stored, so
 * the memory of a model grows with the number of distinct functions, arcs
 * and tree paths (and calls, only when the timeline is asked for), not
 * with the length of the trace.
 *
 * Per thread, beside the public np_thread, a struct tstate holds the open
 * stack. A frame knows its function, start, the summed time of its kept
 * callees (for self time) and the index of its nearest kept ancestor, the
 * caller its time is charged to. Recursion is counted once with a per-
 * thread map "function -> activations open": a call that opens when none
 * is open is the outermost, and only it adds to total_ns. Switched-out
 * time is a per-thread running sum: a frame records it at entry and takes
 * the difference when it closes (O(1), whatever the depth); each SWITCH
 * is clamped to the time since the thread's previous event, so it falls
 * inside the innermost open call and self times stay exact.
 *
 * Addresses resolve once per process through a map address -> function;
 * functions are interned by (module, symbol address, name), so the same
 * function in a forked child or a second run of a program is one row. */
#define _GNU_SOURCE
#include "model.h"
#include "model_internal.h"
#include "containers.h"
#include "textfmt.h"
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum frame_flag {
    F_KEPT = 1,      /* counted in the model */
    F_OUTERMOST = 2, /* no other activation of its function open below it */
    F_INCLUDED = 4,  /* its function matches an include glob */
    F_EXCLUDED = 8   /* its function matches an exclude glob */
};

enum function_flag { FN_INCLUDED = 1, FN_EXCLUDED = 2 };

struct frame {
    uint64_t start;
    uint64_t child_ns;    /* time of its kept callees */
    uint64_t child_sw;    /* their switched-out time */
    uint64_t sw_at_entry; /* the thread's switched-out sum when it opened */
    uint32_t function;
    uint32_t node;
    int32_t kept_parent;  /* stack index of the nearest kept ancestor, -1: none */
    uint32_t kept_depth;  /* kept ancestors */
    uint8_t flags;
};

struct tstate {
    struct frame *stack;
    size_t depth, cap;
    uint64_t overflow;     /* open calls beyond NP_MODEL_MAX_STACK */
    uint32_t include_open; /* open frames of included functions */
    uint32_t exclude_open; /* open frames of excluded functions */
    uint64_t switched;     /* running sum of switched-out time */
    bool seen;             /* an event came: first_ns is set */
    uint32_t *active;      /* function -> kept activations open */
    size_t active_cap;
};

struct np_model {
    struct np_model_options opt;
    struct np_symbols *syms;
    struct np_addrspace *space; /* of the process being read */
    uint32_t process;           /* being read, NP_NONE between processes */
    uint32_t first_thread;      /* the first thread of that process */
    struct np_hmap addr_fn;     /* address -> function, for that process */
    uint64_t last_addr;         /* one-entry cache in front of addr_fn */
    uint32_t last_fn;
    bool last_addr_valid;
    struct np_hmap threads_by;  /* process << 32 | tid -> thread (NP_NONE: not selected) */
    struct np_hmap fn_by;       /* key hash -> function */
    struct np_hmap node_by;     /* parent << 32 | function -> node */
    struct np_hmap arc_by;      /* caller << 32 | callee -> arc */
    struct np_hmap block_by;    /* hash of (function, address) -> block */
    uint8_t *fn_flags;
    size_t fn_flags_cap;
    struct tstate *ts;
    size_t ts_cap;
    struct np_model_samples *samples; /* model_samples.c's, NULL until a sample comes */

#define ARRAY(type, name) type *name; size_t n_##name, cap_##name
    ARRAY(struct np_process, processes);
    ARRAY(struct np_thread, threads);
    ARRAY(struct np_function, functions);
    ARRAY(struct np_arc, arcs);
    ARRAY(struct np_node, nodes);
    ARRAY(struct np_call, calls);
    ARRAY(struct np_block, blocks);
#undef ARRAY
};

/* Appends a zeroed element to array NAME of M; evaluates to its index, or
 * -1 when out of memory. */
#define PUSH(m, name)                                                                    \
    (NP_GROW((m)->name, (m)->cap_##name, (m)->n_##name + 1) < 0 || (m)->n_##name >= NP_NONE \
         ? (int64_t)-1                                                                   \
         : (memset(&(m)->name[(m)->n_##name], 0, sizeof *(m)->name), (int64_t)(m)->n_##name++))

#define ENOMEM_RC NP_TRACE_ENOMEM

/* ---- options ------------------------------------------------------------- */

static int opt_error(char *err, size_t size, const char *fmt, const char *value)
{
    snprintf(err, size, fmt, value);
    return -1;
}

static int add_tids(struct np_model_options *o, const char *list, char *err, size_t size)
{
    const char *p = list;
    do {
        char *end;
        if (*p < '0' || *p > '9')
            return opt_error(err, size, "bad thread list '%s' (want ids separated by commas)", list);
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || v > UINT32_MAX || (*end && *end != ','))
            return opt_error(err, size, "bad thread list '%s' (want ids separated by commas)", list);
        uint32_t *t = realloc(o->tids, (o->ntids + 1) * sizeof *t);
        if (!t)
            return opt_error(err, size, "out of memory%s", "");
        o->tids = t;
        o->tids[o->ntids++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    } while (*p);
    return 0;
}

static int add_glob(char ***list, size_t *n, const char *glob, char *err, size_t size)
{
    char **l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l || !(l[*n] = strdup(glob))) {
        if (l)
            *list = l;
        return opt_error(err, size, "out of memory%s", "");
    }
    *list = l;
    (*n)++;
    return 0;
}

int np_model_option(struct np_model_options *o, enum np_model_opt opt, const char *value, char *err,
                    size_t errsize)
{
    char *end;
    switch (opt) {
    case NP_MODEL_OPT_TID:
        return add_tids(o, value, err, errsize);
    case NP_MODEL_OPT_INCLUDE:
        return add_glob(&o->include, &o->ninclude, value, err, errsize);
    case NP_MODEL_OPT_EXCLUDE:
        return add_glob(&o->exclude, &o->nexclude, value, err, errsize);
    case NP_MODEL_OPT_DEPTH: {
        errno = 0;
        unsigned long v = value[0] >= '0' && value[0] <= '9' ? strtoul(value, &end, 10) : 0;
        if (!v || errno || *end || v > UINT32_MAX)
            return opt_error(err, errsize, "bad depth '%s' (want a positive integer)", value);
        o->max_depth = (unsigned)v;
        return 0;
    }
    case NP_MODEL_OPT_MIN_DURATION:
        if (np_parse_duration(value, &o->min_duration_ns) < 0)
            return opt_error(err, errsize, "bad duration '%s' (e.g. 250ns, 1.5us, 2ms, 1s)", value);
        return 0;
    }
    return opt_error(err, errsize, "unknown option%s", "");
}

void np_model_options_free(struct np_model_options *o)
{
    for (size_t i = 0; i < o->ninclude; i++)
        free(o->include[i]);
    for (size_t i = 0; i < o->nexclude; i++)
        free(o->exclude[i]);
    free(o->include);
    free(o->exclude);
    free(o->tids);
    memset(o, 0, sizeof *o);
}

/* ---- processes, threads, functions -------------------------------------- */

static bool tid_selected(const struct np_model *m, uint32_t tid)
{
    if (!m->opt.ntids)
        return true;
    for (size_t i = 0; i < m->opt.ntids; i++)
        if (m->opt.tids[i] == tid)
            return true;
    return false;
}

static int64_t new_node(struct np_model *m, uint32_t parent, uint32_t function, uint32_t thread, uint32_t depth)
{
    int64_t i = PUSH(m, nodes);
    if (i < 0)
        return -1;
    struct np_node *n = &m->nodes[i];
    n->parent = parent;
    n->function = function;
    n->thread = thread;
    n->depth = depth;
    n->first_child = n->next_sibling = n->last_child = NP_NONE;
    return i;
}

/* A process for events that came without begin() (a source without INFO). */
static int anonymous_process(struct np_model *m)
{
    int64_t p = PUSH(m, processes);
    if (p < 0)
        return ENOMEM_RC;
    m->process = (uint32_t)p;
    m->first_thread = (uint32_t)m->n_threads;
    return 0;
}

/* The thread TID of the current process in *OUT (NP_NONE when not
 * selected), created on first sight. */
static int thread_of(struct np_model *m, uint32_t tid, uint32_t *out)
{
    if (m->process == NP_NONE && anonymous_process(m))
        return ENOMEM_RC;
    uint64_t key = (uint64_t)m->process << 32 | tid;
    uint64_t *v = np_hmap_find(&m->threads_by, key);
    if (v) {
        *out = (uint32_t)*v;
        return 0;
    }
    *out = NP_NONE;
    if (tid_selected(m, tid)) {
        int64_t t = PUSH(m, threads);
        if (t < 0 || NP_GROW(m->ts, m->ts_cap, m->n_threads) < 0)
            return ENOMEM_RC;
        memset(&m->ts[t], 0, sizeof m->ts[t]);
        struct np_thread *th = &m->threads[t];
        th->process = m->process;
        th->pid = m->processes[m->process].pid;
        th->tid = tid;
        int64_t root = new_node(m, NP_NONE, NP_NONE, (uint32_t)t, 0);
        if (root < 0)
            return ENOMEM_RC;
        m->threads[t].root = (uint32_t)root;
        *out = (uint32_t)t;
    }
    return np_hmap_put(&m->threads_by, key, *out) ? ENOMEM_RC : 0;
}

struct fn_key {
    struct np_model *m;
    const char *module, *name;
    uint64_t address;
};

static int same_function(void *ctx, uint64_t index)
{
    const struct fn_key *k = ctx;
    const struct np_function *f = &k->m->functions[index];
    return f->address == k->address && !strcmp(f->module ? f->module : "", k->module ? k->module : "") &&
           (k->name ? !strcmp(f->name, k->name) : f->name[0] == '0' && f->name[1] == 'x');
}

static bool matches(char *const *globs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return true;
    return false;
}

/* The function at run-time address ADDR in *OUT. */
static int function_of(struct np_model *m, uint64_t addr, uint32_t *out)
{
    /* recursion and loops call the same function again and again */
    if (m->last_addr_valid && m->last_addr == addr) {
        *out = m->last_fn;
        return 0;
    }
    uint64_t *v = np_hmap_find(&m->addr_fn, addr);
    if (v) {
        *out = (uint32_t)*v;
        m->last_addr = addr, m->last_fn = *out, m->last_addr_valid = true;
        return 0;
    }
    struct np_symbol sym = { .elf_addr = addr };
    if (m->space)
        np_addrspace_lookup(m->space, addr, &sym);
    struct fn_key key = { m, sym.module, sym.name, sym.elf_addr };
    uint64_t hash = np_hash_bytes(&key.address, sizeof key.address, 0);
    if (sym.module)
        hash = np_hash_bytes(sym.module, strlen(sym.module), hash);
    if (sym.name)
        hash = np_hash_bytes(sym.name, strlen(sym.name), hash);
    uint64_t free_key;
    int64_t f = np_hmap_find_by(&m->fn_by, hash, same_function, &key, &free_key);
    if (f < 0) {
        char hex[2 + 16 + 1];
        snprintf(hex, sizeof hex, "0x%" PRIx64, addr);
        if ((f = PUSH(m, functions)) < 0 || NP_GROW(m->fn_flags, m->fn_flags_cap, m->n_functions) < 0)
            return ENOMEM_RC;
        struct np_function *fn = &m->functions[f];
        fn->name = strdup(sym.name ? sym.name : hex);
        fn->module = np_strdup(sym.module);
        fn->file = np_strdup(sym.file);
        fn->line = sym.line;
        fn->address = sym.elf_addr;
        fn->min_ns = UINT64_MAX;
        if (!fn->name || (sym.module && !fn->module) || (sym.file && !fn->file) ||
            np_hmap_put(&m->fn_by, free_key, (uint64_t)f))
            return ENOMEM_RC;
        m->fn_flags[f] = (matches(m->opt.include, m->opt.ninclude, fn->name) ? FN_INCLUDED : 0) |
                         (matches(m->opt.exclude, m->opt.nexclude, fn->name) ? FN_EXCLUDED : 0);
    }
    *out = (uint32_t)f;
    return np_hmap_put(&m->addr_fn, addr, (uint64_t)f) ? ENOMEM_RC : 0;
}

/* The child of node PARENT for FUNCTION, created on first call. */
static int child_node(struct np_model *m, uint32_t parent, uint32_t function, uint32_t *out)
{
    uint64_t key = (uint64_t)parent << 32 | function;
    uint64_t *v = np_hmap_find(&m->node_by, key);
    if (v) {
        *out = (uint32_t)*v;
        return 0;
    }
    const struct np_node *p = &m->nodes[parent];
    int64_t n = new_node(m, parent, function, p->thread, p->depth + 1);
    if (n < 0 || np_hmap_put(&m->node_by, key, (uint64_t)n))
        return ENOMEM_RC;
    struct np_node *pp = &m->nodes[parent]; /* new_node may have moved it */
    if (pp->last_child == NP_NONE)
        pp->first_child = (uint32_t)n;
    else
        m->nodes[pp->last_child].next_sibling = (uint32_t)n;
    pp->last_child = (uint32_t)n;
    *out = (uint32_t)n;
    return 0;
}

static int add_arc(struct np_model *m, uint32_t caller, uint32_t callee, uint64_t ns, uint64_t sw)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    uint64_t *v = np_hmap_find(&m->arc_by, key);
    int64_t a = v ? (int64_t)*v : PUSH(m, arcs);
    if (a < 0 || (!v && np_hmap_put(&m->arc_by, key, (uint64_t)a)))
        return ENOMEM_RC;
    struct np_arc *arc = &m->arcs[a];
    arc->caller = caller;
    arc->callee = callee;
    arc->calls++;
    arc->total_ns += ns;
    arc->switched_ns += sw;
    return 0;
}

/* ---- calls ------------------------------------------------------------------ */

/* T, made monotonic for thread TI. */
static uint64_t advance(struct np_model *m, uint32_t ti, uint64_t t)
{
    struct np_thread *th = &m->threads[ti];
    if (!m->ts[ti].seen) {
        m->ts[ti].seen = true;
        th->first_ns = th->last_ns = t;
    }
    if (t < th->last_ns)
        t = th->last_ns;
    th->last_ns = t;
    return t;
}

/* A plain array indexed by function: every call looks it up. */
static void add_active(struct tstate *ts, uint32_t fn, int delta, bool *was_open, int *rc)
{
    if (fn >= ts->active_cap) {
        size_t old = ts->active_cap, cap = old ? old : 64;
        while (cap <= fn)
            cap *= 2;
        uint32_t *a = realloc(ts->active, cap * sizeof *a);
        if (!a) {
            *rc = ENOMEM_RC;
            return;
        }
        memset(a + old, 0, (cap - old) * sizeof *a);
        ts->active = a;
        ts->active_cap = cap;
    }
    if (was_open)
        *was_open = ts->active[fn] > 0;
    ts->active[fn] += (uint32_t)delta;
}

/* Records a kept call that lasted DUR (SW of it switched out). */
static int record(struct np_model *m, uint32_t ti, const struct frame *f, uint64_t dur, uint64_t sw)
{
    struct tstate *ts = &m->ts[ti];
    struct np_thread *th = &m->threads[ti];
    struct np_function *fn = &m->functions[f->function];
    uint64_t self = dur - f->child_ns, self_sw = sw - f->child_sw;
    fn->calls++;
    fn->self_ns += self;
    fn->sum_ns += dur;
    fn->self_switched_ns += self_sw;
    if (dur < fn->min_ns)
        fn->min_ns = dur;
    if (dur > fn->max_ns)
        fn->max_ns = dur;
    if (f->flags & F_OUTERMOST) {
        fn->total_ns += dur;
        fn->switched_ns += sw;
    }
    struct np_node *node = &m->nodes[f->node];
    node->calls++;
    node->total_ns += dur;
    node->self_ns += self;
    node->switched_ns += sw;
    th->calls++;
    uint32_t caller = NP_NONE;
    if (f->kept_parent >= 0) {
        struct frame *p = &ts->stack[f->kept_parent];
        p->child_ns += dur;
        p->child_sw += sw;
        caller = p->function;
    } else {
        th->total_ns += dur;
        struct np_node *root = &m->nodes[th->root];
        root->calls++;
        root->total_ns += dur;
        root->switched_ns += sw;
    }
    if (m->opt.timeline) {
        int64_t c = PUSH(m, calls);
        if (c < 0)
            return ENOMEM_RC;
        m->calls[c] = (struct np_call){ ti, f->function, f->node, f->kept_depth, f->start, dur, sw };
    }
    return add_arc(m, caller, f->function, dur, sw);
}

/* Closes thread TI's innermost open call at T. */
static int close_call(struct np_model *m, uint32_t ti, uint64_t t)
{
    struct tstate *ts = &m->ts[ti];
    const struct frame f = ts->stack[--ts->depth];
    if (f.flags & F_INCLUDED)
        ts->include_open--;
    if (f.flags & F_EXCLUDED)
        ts->exclude_open--;
    if (!(f.flags & F_KEPT))
        return 0;
    int rc = 0;
    add_active(ts, f.function, -1, NULL, &rc);
    uint64_t dur = t - f.start, sw = ts->switched - f.sw_at_entry;
    if (sw > dur) /* cannot happen: switches are clamped to the time since the last event */
        sw = dur;
    if (m->opt.exclude_switched)
        dur -= sw;
    if (dur < m->opt.min_duration_ns)
        return rc; /* dropped: its time stays in its caller's self */
    if (f.child_ns > dur || f.child_sw > sw) /* cannot happen either: callees nest */
        return rc;
    return rc ? rc : record(m, ti, &f, dur, sw);
}

static int close_all(struct np_model *m, uint32_t ti, uint64_t t)
{
    struct tstate *ts = &m->ts[ti];
    ts->overflow = 0;
    while (ts->depth) {
        int rc = close_call(m, ti, t);
        if (rc)
            return rc;
    }
    return 0;
}

static int on_enter(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t address)
{
    struct np_model *m = ctx;
    uint32_t ti, fi;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE)
        return rc;
    uint64_t t = advance(m, ti, time_ns);
    struct tstate *ts = &m->ts[ti];
    if (ts->depth >= NP_MODEL_MAX_STACK) {
        ts->overflow++;
        m->threads[ti].dropped++;
        return 0;
    }
    if ((rc = function_of(m, address, &fi)) || NP_GROW(ts->stack, ts->cap, ts->depth + 1) < 0)
        return rc ? rc : ENOMEM_RC;
    struct frame f = { .start = t, .sw_at_entry = ts->switched, .function = fi, .node = NP_NONE,
                       .kept_parent = -1 };
    if (ts->depth) {
        const struct frame *top = &ts->stack[ts->depth - 1];
        f.kept_parent = top->flags & F_KEPT ? (int32_t)(ts->depth - 1) : top->kept_parent;
    }
    if (f.kept_parent >= 0)
        f.kept_depth = ts->stack[f.kept_parent].kept_depth + 1;
    uint8_t flags = m->fn_flags[fi];
    if (flags & FN_INCLUDED)
        f.flags |= F_INCLUDED, ts->include_open++;
    if (flags & FN_EXCLUDED)
        f.flags |= F_EXCLUDED, ts->exclude_open++;
    bool kept = (!m->opt.ninclude || ts->include_open) && !ts->exclude_open &&
                (!m->opt.max_depth || f.kept_depth < m->opt.max_depth);
    if (kept) {
        bool open;
        uint32_t parent = f.kept_parent >= 0 ? ts->stack[f.kept_parent].node : m->threads[ti].root;
        add_active(ts, fi, +1, &open, &rc);
        if (rc || (rc = child_node(m, parent, fi, &f.node)))
            return rc;
        f.flags |= F_KEPT | (open ? 0 : F_OUTERMOST);
    }
    ts->stack[ts->depth++] = f;
    return 0;
}

static int on_return(void *ctx, uint32_t tid, uint64_t time_ns)
{
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE)
        return rc;
    uint64_t t = advance(m, ti, time_ns);
    struct tstate *ts = &m->ts[ti];
    if (ts->overflow) {
        ts->overflow--;
        return 0;
    }
    return ts->depth ? close_call(m, ti, t) : 0; /* nothing open: began before recording */
}

static int on_lost(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE)
        return rc;
    uint64_t t = advance(m, ti, time_ns);
    m->threads[ti].lost += n;
    return close_all(m, ti, t);
}

static int on_switch(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t duration_ns)
{
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE)
        return rc;
    uint64_t before = m->threads[ti].last_ns;
    bool first = !m->ts[ti].seen;
    uint64_t t = advance(m, ti, time_ns);
    uint64_t span = first ? 0 : t - before;
    uint64_t sw = duration_ns < span ? duration_ns : span;
    m->ts[ti].switched += sw;
    m->threads[ti].switched_ns += sw;
    return 0;
}

/* ---- basic blocks ----------------------------------------------------------- */

struct block_key {
    const struct np_block *blocks;
    uint32_t function;
    uint64_t address;
};

static int same_block(void *ctx, uint64_t index)
{
    const struct block_key *k = ctx;
    return k->blocks[index].function == k->function && k->blocks[index].address == k->address;
}

/* Adds COUNT to the block at run-time address ADDR (created on first sight). */
static int add_block(struct np_model *m, uint64_t addr, uint64_t count)
{
    uint32_t fi;
    int rc = function_of(m, addr, &fi);
    if (rc)
        return rc;
    if ((m->fn_flags[fi] & FN_EXCLUDED) || (m->opt.ninclude && !(m->fn_flags[fi] & FN_INCLUDED)))
        return 0;
    /* the recorded address follows the coverage call: its line is the
     * block's; where the compiler gave that instruction no line (line 0,
     * Clang's edges), the call's own line, one byte before */
    struct np_source_line src = { .elf_addr = addr }, call;
    if (m->space) {
        np_addrspace_line(m->space, addr, &src);
        if (!src.line && addr) {
            np_addrspace_line(m->space, addr - 1, &call);
            src.file = call.file;
            src.line = call.line;
        }
    }
    struct block_key key = { m->blocks, fi, src.elf_addr };
    uint64_t hash = np_hash_bytes(&key.address, sizeof key.address, fi), free_key;
    int64_t b = np_hmap_find_by(&m->block_by, hash, same_block, &key, &free_key);
    if (b < 0) {
        if ((b = PUSH(m, blocks)) < 0 || np_hmap_put(&m->block_by, free_key, (uint64_t)b))
            return ENOMEM_RC;
        struct np_block *bl = &m->blocks[b];
        bl->function = fi;
        bl->address = src.elf_addr;
        bl->line = src.line;
        if (src.file && !(bl->file = strdup(src.file)))
            return ENOMEM_RC;
    }
    uint64_t *c = &m->blocks[b].count;
    *c = *c > UINT64_MAX - count ? UINT64_MAX : *c + count;
    return 0;
}

static int on_blocks(void *ctx, const struct np_trace_block *blocks, size_t n, uint64_t lost)
{
    struct np_model *m = ctx;
    if (m->process == NP_NONE && anonymous_process(m))
        return ENOMEM_RC;
    m->processes[m->process].blocks_lost += lost;
    for (size_t i = 0; i < n; i++) {
        int rc = add_block(m, blocks[i].address, blocks[i].count);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- processes ------------------------------------------------------------- */

static int on_end(void *ctx);

static int on_begin(void *ctx, const struct np_trace_process *p)
{
    struct np_model *m = ctx;
    int rc = on_end(m); /* a source that did not end the previous one */
    int64_t i = PUSH(m, processes);
    if (rc || i < 0)
        return ENOMEM_RC;
    struct np_process *pr = &m->processes[i];
    pr->file = np_strdup(p->file);
    pr->pid = p->pid;
    pr->ppid = p->ppid;
    pr->clock = np_strdup(p->clock);
    pr->ns_per_tick = p->ns_per_tick;
    pr->start_ns = p->start_ns;
    pr->end_ns = p->has_end ? p->end_ns : p->start_ns;
    pr->complete = p->has_end;
    pr->events_lost = p->events_lost;
    if ((p->file && !pr->file) || (p->clock && !pr->clock) || !(pr->argv = calloc(p->argc + 1, sizeof *pr->argv)))
        return ENOMEM_RC;
    for (; pr->argc < p->argc; pr->argc++)
        if (!(pr->argv[pr->argc] = strdup(p->argv[pr->argc])))
            return ENOMEM_RC;
    m->process = (uint32_t)i;
    m->first_thread = (uint32_t)m->n_threads;
    np_hmap_clear(&m->addr_fn);
    m->last_addr_valid = false;
    np_addrspace_free(m->space);
    m->space = m->syms ? np_addrspace_new(m->syms) : NULL;
    return m->syms && !m->space ? ENOMEM_RC : 0;
}

static int on_module(void *ctx, const struct np_trace_module *mod)
{
    struct np_model *m = ctx;
    return m->space && np_addrspace_map(m->space, mod) ? ENOMEM_RC : 0;
}

static int on_thread(void *ctx, uint32_t tid, const char *name)
{
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE)
        return rc;
    free(m->threads[ti].name);
    return (m->threads[ti].name = strdup(name)) ? 0 : ENOMEM_RC;
}

/* Closes what the current process left open. */
static int on_end(void *ctx)
{
    struct np_model *m = ctx;
    int rc = 0;
    if (m->process == NP_NONE)
        return 0;
    struct np_process *p = &m->processes[m->process];
    for (size_t i = m->first_thread; i < m->n_threads; i++) {
        struct tstate *ts = &m->ts[i];
        if (!rc)
            rc = close_all(m, (uint32_t)i, m->threads[i].last_ns);
        if (!p->complete && m->threads[i].last_ns > p->end_ns)
            p->end_ns = m->threads[i].last_ns;
        free(ts->stack);
        free(ts->active);
        memset(ts, 0, sizeof *ts);
    }
    np_addrspace_free(m->space);
    m->space = NULL;
    np_hmap_clear(&m->addr_fn);
    m->last_addr_valid = false;
    m->process = NP_NONE;
    return rc;
}

/* ---- the model ------------------------------------------------------------------ */

struct np_model *np_model_new(const struct np_model_options *opt, struct np_symbols *syms)
{
    struct np_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (opt)
        m->opt = *opt;
    m->syms = syms;
    m->process = NP_NONE;
    return m;
}

struct np_event_sink np_model_sink(struct np_model *m)
{
    return (struct np_event_sink){
        .ctx = m,
        .begin = on_begin,
        .module = on_module,
        .thread = on_thread,
        /* from samples: the calls are not read (their profile is not shown) */
        .enter = m->opt.from_samples ? NULL : on_enter,
        .exit = m->opt.from_samples ? NULL : on_return,
        .lost = m->opt.from_samples ? NULL : on_lost,
        .switch_out = m->opt.from_samples ? NULL : on_switch,
        .end = on_end,
        .blocks = on_blocks,
        .sample = np_model_on_sample,
        .sampling = np_model_on_sampling,
    };
}

static int call_cmp(const void *a, const void *b)
{
    const struct np_call *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Unlinks the tree nodes whose calls were all dropped (min_duration_ns). */
static void unlink_empty_nodes(struct np_model *m)
{
    for (size_t i = 0; i < m->n_nodes; i++) {
        struct np_node *p = &m->nodes[i];
        uint32_t *link = &p->first_child;
        p->last_child = NP_NONE;
        while (*link != NP_NONE) {
            struct np_node *c = &m->nodes[*link];
            if (!c->calls) {
                *link = c->next_sibling;
                continue;
            }
            p->last_child = *link;
            link = &c->next_sibling;
        }
    }
}

int np_model_finish(struct np_model *m)
{
    int rc = on_end(m);
    if (!rc)
        rc = np_model_samples_finish(m);
    for (size_t i = 0; i < m->n_functions; i++)
        if (!m->functions[i].calls)
            m->functions[i].min_ns = 0;
    unlink_empty_nodes(m);
    if (m->n_calls)
        qsort(m->calls, m->n_calls, sizeof *m->calls, call_cmp);
    np_hmap_free(&m->addr_fn);
    np_hmap_free(&m->node_by);
    np_hmap_free(&m->arc_by);
    np_hmap_free(&m->fn_by);
    np_hmap_free(&m->threads_by);
    np_hmap_free(&m->block_by);
    return rc;
}

void np_model_free(struct np_model *m)
{
    if (!m)
        return;
    on_end(m);
    np_model_samples_free(m->samples);
    for (size_t i = 0; i < m->n_processes; i++) {
        struct np_process *p = &m->processes[i];
        for (unsigned a = 0; p->argv && a < p->argc; a++)
            free(p->argv[a]);
        free(p->argv);
        free(p->file);
        free(p->clock);
    }
    for (size_t i = 0; i < m->n_threads; i++)
        free(m->threads[i].name);
    for (size_t i = 0; i < m->n_functions; i++) {
        free(m->functions[i].name);
        free(m->functions[i].module);
        free(m->functions[i].file);
    }
    np_hmap_free(&m->addr_fn);
    np_hmap_free(&m->node_by);
    np_hmap_free(&m->arc_by);
    np_hmap_free(&m->fn_by);
    np_hmap_free(&m->threads_by);
    np_hmap_free(&m->block_by);
    for (size_t i = 0; i < m->n_blocks; i++)
        free(m->blocks[i].file);
    free(m->blocks);
    free(m->fn_flags);
    free(m->ts);
    free(m->processes);
    free(m->threads);
    free(m->functions);
    free(m->arcs);
    free(m->nodes);
    free(m->calls);
    free(m);
}

#define ACCESSOR(type, name)                                                    \
    const struct type *np_model_##name(const struct np_model *m, size_t *n)     \
    {                                                                           \
        *n = m->n_##name;                                                       \
        return m->name;                                                         \
    }
ACCESSOR(np_process, processes)
ACCESSOR(np_thread, threads)
ACCESSOR(np_function, functions)
ACCESSOR(np_arc, arcs)
ACCESSOR(np_node, nodes)
ACCESSOR(np_call, calls)
ACCESSOR(np_block, blocks)
#undef ACCESSOR

/* ---- for model_samples.c (model_internal.h) ---------------------------------- */

struct np_model_samples *np_model_samples_get(const struct np_model *m) { return m->samples; }
void np_model_samples_set(struct np_model *m, struct np_model_samples *s) { m->samples = s; }
const struct np_model_options *np_model_opts(const struct np_model *m) { return &m->opt; }
uint32_t np_model_current_process(const struct np_model *m) { return m->process; }
struct np_addrspace *np_model_addrspace(struct np_model *m) { return m->space; }
int np_model_thread_at(struct np_model *m, uint32_t tid, uint32_t *out) { return thread_of(m, tid, out); }
int np_model_function_at(struct np_model *m, uint64_t addr, uint32_t *out) { return function_of(m, addr, out); }

int np_model_child_at(struct np_model *m, uint32_t parent, uint32_t function, uint32_t *out)
{
    return child_node(m, parent, function, out);
}

int np_model_add_arc(struct np_model *m, uint32_t caller, uint32_t callee, uint64_t calls, uint64_t ns)
{
    int rc = add_arc(m, caller, callee, ns, 0); /* one call */
    if (!rc)
        m->arcs[*np_hmap_find(&m->arc_by, (uint64_t)caller << 32 | callee)].calls += calls - 1;
    return rc;
}

/* ---- loading a trace --------------------------------------------------------- */

static void symbols_warning(void *ctx, const char *line)
{
    const struct np_trace_hooks *h = ctx;
    if (h && h->diag)
        h->diag(h->ctx, NP_DIAG_WARNING, line);
}

int np_model_load(const char *path, const struct np_model_options *opt, const struct np_trace_hooks *hooks,
                  struct np_model **out, struct np_trace_summary *summary)
{
    struct np_trace_summary local;
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    struct np_symbols *syms = np_symbols_new(symbols_warning, (void *)hooks);
    struct np_model *m = syms ? np_model_new(opt, syms) : NULL;
    *out = NULL;
    if (!m) {
        np_symbols_free(syms);
        summary->status = NP_TRACE_ENOMEM;
        snprintf(summary->message, sizeof summary->message, "%s: out of memory", path);
        return summary->status;
    }
    struct np_event_sink sink = np_model_sink(m);
    np_trace_read(path, &sink, hooks, summary);
    if (np_model_finish(m) && summary->status < NP_TRACE_ENOMEM) {
        summary->status = NP_TRACE_ENOMEM;
        snprintf(summary->message, sizeof summary->message, "%s: out of memory", path);
    }
    /* names and lines were copied: the ELF files can go */
    np_symbols_free(syms);
    m->syms = NULL;
    *out = m;
    return summary->status;
}
