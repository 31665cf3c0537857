/* model.c - builds the model from events (rules and layout in model.h).
 *
 * Everything is aggregated online, as calls close: no event is stored, so
 * the memory of a model grows with the number of distinct functions, arcs
 * and tree paths, not with the length of the trace. Calls are not stored
 * either: a listener (options.listener) is told of each as it is read.
 * It is told a call's begin at its entry, or with a minimum duration once
 * the call is known to last that long: a thread's frames from the bottom
 * up to tstate.told are decided, and at each entry or exit the next ones
 * are checked against the thread's time (a callee has run no longer than
 * its callers, so the decided frames are always a prefix of the stack).
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum frame_flag {
    F_KEPT = 1,      /* counted in the model */
    F_OUTERMOST = 2, /* no other activation of its function open below it */
    F_INCLUDED = 4,  /* its function matches an include glob */
    F_EXCLUDED = 8,  /* its function matches an exclude glob */
    F_TOLD = 16      /* its begin was told to the listener */
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
    struct np_call_values *vals; /* a listener's: its VALUES, or NULL */
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
    size_t told;           /* frames below it are told or not kept (min_duration_ns) */
};

/* A direct-mapped cache of address -> function: a loop that calls a few
 * functions in turn finds them here without hashing. */
#define ADDR_CACHE 256
struct addr_slot {
    uint64_t addr;
    uint32_t fn; /* NP_NONE: empty */
};

/* What the model keeps beside each node to go from an event to its node
 * and arc without a hash lookup in the common case. A parent calls its
 * children in much the same order each time (a loop, a recursion), so
 * the child found after a child last time is the first guess. */
struct node_ext {
    uint64_t addr;     /* the run-time address that found it last (its thread's process) */
    uint32_t function;
    uint32_t arc;      /* caller (the parent's function) -> function; NP_NONE until its first kept call */
    uint32_t hint;     /* its child found last, or NP_NONE */
    uint32_t after;    /* the sibling found after it last (itself at first) */
    uint32_t guess;    /* its next child, guessed: its hint's after (kept here: one load less) */
    uint32_t children; /* how many */
    /* its calls' share of its function's figures, added up at the end
     * (np_model_finish): one place written per call instead of three */
    uint64_t min_ns, max_ns, self_sw;
    uint64_t outer_ns, outer_sw; /* of its outermost calls */
};
/* Up to this many children, a node's child list is searched in place of
 * node_by (it stays short for most nodes, and hot in the cache). */
#define CHILD_SCAN 8

struct np_model {
    struct np_model_options opt;
    struct np_symbols *syms;
    struct np_addrspace *space; /* of the process being read */
    uint32_t process;           /* being read, NP_NONE between processes */
    uint32_t first_thread;      /* the first thread of that process */
    struct np_hmap addr_fn;     /* address -> function, for that process */
    struct addr_slot addr_cache[ADDR_CACHE]; /* direct-mapped, in front of addr_fn */
    struct np_hmap threads_by;  /* process << 32 | tid -> thread (NP_NONE: not selected) */
    uint32_t last_tid;          /* the thread of the previous event, in front of threads_by */
    uint32_t last_thread;
    bool last_tid_valid;
    struct np_hmap fn_by;       /* key hash -> function */
    bool filtered;              /* -F, -N or a depth: not every call is kept */
    bool timed_filter;          /* a minimum duration or switched time taken out */
    const struct np_call_listener *listen; /* options.listener; NULL once it stopped the read */
    bool tell_late;             /* a listener and a minimum duration: begins told once known kept */
    bool quick_leaves;          /* no filter, no listener: leaf_call takes an ENTRY-EXIT pair */
    struct np_hmap node_by;     /* parent << 32 | function -> node */
    struct node_ext *node_ext;  /* beside each node */
    size_t node_ext_cap;
    struct np_hmap arc_by;      /* caller << 32 | callee -> arc */
    struct np_hmap block_by;    /* hash of (function, address) -> block */
    uint8_t *fn_flags;
    size_t fn_flags_cap;
    struct np_name_pattern *patterns; /* the include patterns, then the exclude ones */
    struct np_pattern_use *uses;      /* what each matched */
    size_t npatterns;
    unsigned pattern_files;           /* ELF files searched for the patterns that matched none */
    struct tstate *ts;
    size_t ts_cap;
    struct np_model_samples *samples; /* model_samples.c's, NULL until a sample comes */

#define ARRAY(type, name) type *name; size_t n_##name, cap_##name
    ARRAY(struct np_process, processes);
    ARRAY(struct np_thread, threads);
    ARRAY(struct np_function, functions);
    ARRAY(struct np_arc, arcs);
    ARRAY(struct np_node, nodes);
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

/* The per-event path: inlined into the loop over a run of events, where
 * the calls' own cost (saving registers) was a large part of the time. */
#define HOT static inline __attribute__((always_inline))

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
    case NP_MODEL_OPT_EXCLUDE: {
        struct np_name_pattern p;
        char why[256];
        int bad = np_name_pattern_init(&p, value, why, sizeof why);
        np_name_pattern_free(&p);
        if (bad)
            return opt_error(err, errsize, opt == NP_MODEL_OPT_INCLUDE ? "-F: %s" : "-N: %s", why);
        if (opt == NP_MODEL_OPT_INCLUDE)
            return add_glob(&o->include, &o->ninclude, value, err, errsize);
        return add_glob(&o->exclude, &o->nexclude, value, err, errsize);
    }
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
    if (i < 0 || NP_GROW(m->node_ext, m->node_ext_cap, m->n_nodes) < 0)
        return -1;
    m->node_ext[i] = (struct node_ext){ .addr = 0, .function = function, .arc = NP_NONE, .hint = NP_NONE,
                                        .after = (uint32_t)i, .guess = NP_NONE, .children = 0,
                                        .min_ns = UINT64_MAX };
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

static void remember_thread(struct np_model *m, uint32_t tid, uint32_t thread)
{
    m->last_tid = tid;
    m->last_thread = thread;
    m->last_tid_valid = true;
}

/* The thread TID of the current process in *OUT (NP_NONE when not
 * selected), created on first sight. */
static int find_thread(struct np_model *m, uint32_t tid, uint32_t *out)
{
    if (m->process == NP_NONE && anonymous_process(m))
        return ENOMEM_RC;
    uint64_t key = (uint64_t)m->process << 32 | tid;
    uint64_t *v = np_hmap_find(&m->threads_by, key);
    if (v) {
        *out = (uint32_t)*v;
        remember_thread(m, tid, *out);
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
    if (np_hmap_put(&m->threads_by, key, *out))
        return ENOMEM_RC;
    remember_thread(m, tid, *out);
    return 0;
}

HOT int thread_of(struct np_model *m, uint32_t tid, uint32_t *out)
{
    /* an EVENTS chunk holds one thread's events */
    if (m->last_tid_valid && m->last_tid == tid) {
        *out = m->last_thread;
        return 0;
    }
    return find_thread(m, tid, out);
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
           (k->name ? !strcmp(f->mangled, k->name) : f->mangled[0] == '0' && f->mangled[1] == 'x');
}

bool np_function_matches_pattern(const struct np_function *f, const struct np_name_pattern *p)
{
    return np_name_pattern_match(p, f->symbol) || (f->signature != f->symbol && np_name_pattern_match(p, f->signature)) ||
           (f->mangled != f->symbol && np_name_pattern_match(p, f->mangled)) ||
           (f->name != f->symbol && np_name_pattern_match(p, f->name));
}

bool np_function_matches(const struct np_function *f, const char *pattern)
{
    struct np_name_pattern p;
    char err[8];
    bool yes = np_name_pattern_init(&p, pattern, err, sizeof err) == 0 && np_function_matches_pattern(f, &p);
    np_name_pattern_free(&p);
    return yes;
}

/* Which filters F matches (enum function_flag), counting for each
 * pattern the functions it matches. */
static uint8_t filter_flags(struct np_model *m, const struct np_function *f)
{
    uint8_t flags = 0;
    for (size_t i = 0; i < m->npatterns; i++)
        if (np_function_matches_pattern(f, &m->patterns[i])) {
            m->uses[i].functions++;
            flags |= m->uses[i].exclude ? FN_EXCLUDED : FN_INCLUDED;
        }
    return flags;
}

/* Frees F's names (some of them are one string). */
static void free_names(struct np_function *f)
{
    if (f->signature != f->symbol)
        free(f->signature);
    if (f->mangled != f->symbol)
        free(f->mangled);
    if (f->name != f->symbol && f->name != f->signature)
        free(f->name);
    free(f->symbol);
}

/* F's names for RAW (its symbol, or the address in hex): demangled unless
 * the options say not. 0, or ENOMEM_RC. */
static int set_names(const struct np_model *m, struct np_function *f, const char *raw)
{
    char *full = NULL, *short_name = NULL;
    int d = m->opt.no_demangle ? 0 : np_demangle(raw, &full, &short_name);
    if (d > 0 && !(f->mangled = strdup(raw))) {
        free(full);
        free(short_name);
        return ENOMEM_RC;
    }
    if (d > 0) {
        f->name = f->symbol = short_name;
        f->signature = full;
        return 0;
    }
    f->name = f->symbol = f->signature = f->mangled = d < 0 ? NULL : strdup(raw);
    return f->name ? 0 : ENOMEM_RC;
}

/* The slot of ADDR in addr_cache: functions start at least 16 bytes apart
 * as a rule. */
static inline size_t addr_hash(uint64_t addr)
{
    return (size_t)((addr >> 4) ^ (addr >> 12)) & (ADDR_CACHE - 1);
}

static void forget_process_caches(struct np_model *m)
{
    np_hmap_clear(&m->addr_fn);
    for (size_t i = 0; i < ADDR_CACHE; i++)
        m->addr_cache[i].fn = NP_NONE;
    m->last_tid_valid = false;
}

/* The function SYM names (one row per module, address and name; ADDR
 * names it in hex when SYM has no name) in *OUT, added when new. */
static int intern_function(struct np_model *m, const struct np_symbol *sym, uint64_t addr, uint32_t *out)
{
    struct fn_key key = { m, sym->module, sym->name, sym->elf_addr };
    uint64_t hash = np_hash_bytes(&key.address, sizeof key.address, 0);
    if (sym->module)
        hash = np_hash_bytes(sym->module, strlen(sym->module), hash);
    if (sym->name)
        hash = np_hash_bytes(sym->name, strlen(sym->name), hash);
    uint64_t free_key;
    int64_t f = np_hmap_find_by(&m->fn_by, hash, same_function, &key, &free_key);
    if (f < 0) {
        char hex[2 + 16 + 1];
        snprintf(hex, sizeof hex, "0x%" PRIx64, addr);
        if ((f = PUSH(m, functions)) < 0 || NP_GROW(m->fn_flags, m->fn_flags_cap, m->n_functions) < 0)
            return ENOMEM_RC;
        struct np_function *fn = &m->functions[f];
        fn->module = np_strdup(sym->module);
        fn->file = np_strdup(sym->file);
        fn->line = sym->line;
        fn->address = sym->elf_addr;
        fn->min_ns = UINT64_MAX;
        if (set_names(m, fn, sym->name ? sym->name : hex) || (sym->module && !fn->module) ||
            (sym->file && !fn->file) || np_hmap_put(&m->fn_by, free_key, (uint64_t)f))
            return ENOMEM_RC;
        m->fn_flags[f] = filter_flags(m, fn);
    }
    *out = (uint32_t)f;
    return 0;
}

/* Run-time address ADDR is function F (for the rest of this process). */
static int remember_function(struct np_model *m, uint64_t addr, uint32_t f)
{
    m->addr_cache[addr_hash(addr)] = (struct addr_slot){ addr, f };
    return np_hmap_put(&m->addr_fn, addr, f) ? ENOMEM_RC : 0;
}

/* The function at run-time address ADDR in *OUT. */
static int function_of(struct np_model *m, uint64_t addr, uint32_t *out)
{
    /* recursion and loops call the same few functions again and again */
    struct addr_slot *slot = &m->addr_cache[addr_hash(addr)];
    if (slot->addr == addr && slot->fn != NP_NONE) {
        *out = slot->fn;
        return 0;
    }
    uint64_t *v = np_hmap_find(&m->addr_fn, addr);
    if (v) {
        *out = (uint32_t)*v;
        *slot = (struct addr_slot){ addr, *out };
        return 0;
    }
    struct np_symbol sym = { .elf_addr = addr };
    if (m->space)
        np_addrspace_lookup(m->space, addr, &sym);
    int rc = intern_function(m, &sym, addr, out);
    return rc ? rc : remember_function(m, addr, *out);
}

/* The guess for PARENT's next child: the one found after its last. */
HOT uint32_t next_child_guess(const struct np_model *m, uint32_t parent)
{
    return m->node_ext[parent].guess;
}

/* Remembers that PARENT's child C was found (at ADDR). */
HOT void found_child(struct np_model *m, uint32_t parent, uint32_t c, uint64_t addr)
{
    struct node_ext *px = &m->node_ext[parent];
    if (px->hint != NP_NONE)
        m->node_ext[px->hint].after = c;
    px->hint = c;
    px->guess = m->node_ext[c].after;
    m->node_ext[c].addr = addr;
}

/* The child of node PARENT for FUNCTION (called at ADDR), created on
 * first call. */
static int child_node(struct np_model *m, uint32_t parent, uint32_t function, uint64_t addr, uint32_t *out)
{
    uint32_t g = next_child_guess(m, parent);
    if (g != NP_NONE && m->node_ext[g].function == function) {
        found_child(m, parent, *out = g, addr);
        return 0;
    }
    struct node_ext *px = &m->node_ext[parent];
    uint64_t key = (uint64_t)parent << 32 | function;
    if (px->children <= CHILD_SCAN) {
        for (uint32_t c = m->nodes[parent].first_child; c != NP_NONE; c = m->nodes[c].next_sibling)
            if (m->nodes[c].function == function) {
                found_child(m, parent, *out = c, addr);
                return 0;
            }
    } else {
        uint64_t *v = np_hmap_find(&m->node_by, key);
        if (v) {
            found_child(m, parent, *out = (uint32_t)*v, addr);
            return 0;
        }
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
    m->node_ext[parent].children++;
    found_child(m, parent, *out = (uint32_t)n, addr);
    return 0;
}

/* The arc CALLER -> CALLEE of NODE's calls, found or created, kept beside
 * the node: it is the same for every call through it. */
/* The arc CALLER -> CALLEE in *OUT, added when new. */
static int arc_of(struct np_model *m, uint32_t caller, uint32_t callee, uint32_t *out)
{
    uint64_t key = (uint64_t)caller << 32 | callee;
    uint64_t *v = np_hmap_find(&m->arc_by, key);
    int64_t i = v ? (int64_t)*v : PUSH(m, arcs);
    if (i < 0 || (!v && np_hmap_put(&m->arc_by, key, (uint64_t)i)))
        return ENOMEM_RC;
    m->arcs[i].caller = caller;
    m->arcs[i].callee = callee;
    *out = (uint32_t)i;
    return 0;
}

static int node_arc(struct np_model *m, uint32_t node, uint32_t caller, uint32_t callee, uint32_t *out)
{
    int rc = arc_of(m, caller, callee, out);
    if (!rc)
        m->node_ext[node].arc = *out;
    return rc;
}


/* ---- calls ------------------------------------------------------------------ */

/* The thread whose events are being handled, looked up once per event
 * (the callbacks) or per run of events (on_events). Its pointers stay
 * valid while its events are handled: only a new thread moves them. The
 * open stack's depth and base and the thread's last time are copies,
 * kept in registers over a run (memory would be reloaded after every
 * store the compiler cannot tell apart), and saved by cur_save. */
struct cur {
    uint32_t ti;
    struct tstate *ts;
    struct np_thread *th;
    size_t depth;
    struct frame *stack;
    uint64_t last;
    bool seen;
};

static inline struct cur cur_of(struct np_model *m, uint32_t ti)
{
    struct tstate *ts = &m->ts[ti];
    struct np_thread *th = &m->threads[ti];
    return (struct cur){ ti, ts, th, ts->depth, ts->stack, th->last_ns, ts->seen };
}

static inline void cur_save(const struct cur *c)
{
    c->ts->depth = c->depth;
    c->th->last_ns = c->last;
    c->ts->seen = c->seen;
}

/* T, made monotonic for the thread. */
HOT uint64_t advance(struct cur *c, uint64_t t)
{
    if (!c->seen) {
        c->seen = true;
        c->th->first_ns = c->last = t;
    }
    if (t < c->last)
        t = c->last;
    c->last = t;
    return t;
}

/* Makes ts->active reach function FN; 0 or ENOMEM_RC. */
static int grow_active(struct tstate *ts, uint32_t fn)
{
    size_t old = ts->active_cap, cap = old ? old : 64;
    while (cap <= fn)
        cap *= 2;
    uint32_t *a = realloc(ts->active, cap * sizeof *a);
    if (!a)
        return ENOMEM_RC;
    memset(a + old, 0, (cap - old) * sizeof *a);
    ts->active = a;
    ts->active_cap = cap;
    return 0;
}

/* A plain array indexed by function: every call looks it up. */
HOT void add_active(struct tstate *ts, uint32_t fn, int delta, bool *was_open, int *rc)
{
    if (fn >= ts->active_cap && (*rc = grow_active(ts, fn)))
        return;
    if (was_open)
        *was_open = ts->active[fn] > 0;
    ts->active[fn] += (uint32_t)delta;
}

/* Records a kept call that lasted DUR (SW of it switched out), closed by
 * a RESYNC when RESYNCED. */
HOT int record(struct np_model *m, struct cur *c, const struct frame *f, uint64_t dur, uint64_t sw, bool resynced)
{
    struct np_thread *th = c->th;
    struct np_node *node = &m->nodes[f->node];
    struct node_ext *x = &m->node_ext[f->node];
    uint64_t self = dur - f->child_ns;
    node->calls++;
    node->resynced += resynced;
    node->total_ns += dur;
    node->self_ns += self;
    node->switched_ns += sw;
    x->self_sw += sw - f->child_sw;
    if (dur < x->min_ns)
        x->min_ns = dur;
    if (dur > x->max_ns)
        x->max_ns = dur;
    if (f->flags & F_OUTERMOST) {
        x->outer_ns += dur;
        x->outer_sw += sw;
    }
    uint32_t caller = NP_NONE;
    if (f->kept_parent >= 0) {
        struct frame *p = &c->stack[f->kept_parent];
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
    /* the arc is created at the first call, which orders the arcs */
    uint32_t a;
    return m->node_ext[f->node].arc == NP_NONE ? node_arc(m, f->node, caller, f->function, &a) : 0;
}

/* ---- the listener ---- */

/* Tells the listener call C begins (BEGIN) or ends; a listener that
 * stops the read is told nothing more. */
static int tell(struct np_model *m, const struct np_call *c, bool begin)
{
    const struct np_call_listener *l = m->listen;
    if (!l || !(begin ? l->begin : l->end))
        return 0;
    if ((begin ? l->begin : l->end)(l->ctx, m, c) == 0)
        return 0;
    m->listen = NULL;
    m->tell_late = false;
    return NP_TRACE_ESTOP;
}

static int tell_begin(struct np_model *m, const struct cur *c, struct frame *f)
{
    f->flags |= F_TOLD;
    const struct np_call call = { c->ti, f->function, f->node, f->kept_depth, f->start, 0, 0, false, NULL };
    return tell(m, &call, true);
}

/* With a minimum duration: tells the begin of the open calls that have
 * run that long at T, outermost first (a callee has run less than its
 * callers, so they are the ones above ts->told, up to the first that has
 * not). */
static int tell_kept(struct np_model *m, struct cur *c, uint64_t t)
{
    struct tstate *ts = c->ts;
    for (; ts->told < c->depth; ts->told++) {
        struct frame *f = &c->stack[ts->told];
        if (!(f->flags & F_KEPT) || (f->flags & F_TOLD))
            continue;
        uint64_t ran = t - f->start;
        if (m->opt.exclude_switched) { /* as close_call measures it */
            uint64_t sw = ts->switched - f->sw_at_entry;
            ran = sw < ran ? ran - sw : 0;
        }
        if (ran < m->opt.min_duration_ns)
            return 0;
        int rc = tell_begin(m, c, f);
        if (rc)
            return rc;
    }
    return 0;
}

#define TELL_KEPT(m, c, t) ((m)->tell_late && (c)->ts->told < (c)->depth ? tell_kept(m, c, t) : 0)

/* A call was pushed at T: with a listener, its begin is told now, or
 * with a minimum duration, those of the open calls that have run that
 * long (out of the way of the model's own work). */
static int told_entry(struct np_model *m, struct cur *c, struct frame *f, uint64_t t)
{
    if (m->tell_late)
        return TELL_KEPT(m, c, t); /* the new call has not run: not told yet */
    return f->flags & F_KEPT ? tell_begin(m, c, f) : 0;
}

/* The told call F at stack index c->depth, closed: lasted DUR. */
static int told_exit(struct np_model *m, struct cur *c, const struct frame *f, uint64_t dur, uint64_t sw,
                     bool resynced)
{
    if (c->ts->told > c->depth)
        c->ts->told = c->depth;
    const struct np_call call = { c->ti, f->function, f->node, f->kept_depth, f->start, dur, sw, resynced, f->vals };
    return tell(m, &call, false);
}

/* Closes the thread's innermost open call at T (with a minimum duration,
 * after TELL_KEPT at T: it was told iff it is kept), by a RESYNC when
 * RESYNCED. */
/* Closes frame F, just popped off the thread's stack (its memory stays:
 * nothing pushes meanwhile). */
static inline __attribute__((always_inline)) int close_frame(struct np_model *m, struct cur *c, const struct frame *f,
                                                             uint64_t t, bool resynced)
{
    struct tstate *ts = c->ts;
    if (f->flags & F_INCLUDED)
        ts->include_open--;
    if (f->flags & F_EXCLUDED)
        ts->exclude_open--;
    if (!(f->flags & F_KEPT)) {
        /* decided (ts->told is past it) when below ts->told; a call kept
         * and not told is above it, and one told moves it in told_exit */
        if (ts->told > c->depth)
            ts->told = c->depth;
        return 0;
    }
    int rc = 0;
    add_active(ts, f->function, -1, NULL, &rc);
    uint64_t dur = t - f->start, sw = ts->switched - f->sw_at_entry;
    if (sw > dur) /* cannot happen: switches are clamped to the time since the last event */
        sw = dur;
    if (m->timed_filter) {
        if (m->opt.exclude_switched)
            dur -= sw;
        if (dur < m->opt.min_duration_ns)
            return rc; /* dropped: its time stays in its caller's self */
    }
    if (f->flags & F_TOLD) {
        int trc = told_exit(m, c, f, dur, sw, resynced);
        rc = rc ? rc : trc;
    }
    if (f->child_ns > dur || f->child_sw > sw) /* cannot happen either: callees nest */
        return rc;
    return rc ? rc : record(m, c, f, dur, sw, resynced);
}

HOT int close_call(struct np_model *m, struct cur *c, uint64_t t, bool resynced)
{
    struct frame *f = &c->stack[--c->depth];
    int rc = close_frame(m, c, f, t, resynced);
    if (__builtin_expect(f->vals != NULL, 0)) { /* told with its end */
        free(f->vals);
        f->vals = NULL;
    }
    return rc;
}

static int close_all(struct np_model *m, struct cur *c, uint64_t t)
{
    c->ts->overflow = 0;
    int rc = TELL_KEPT(m, c, t);
    while (!rc && c->depth)
        rc = close_call(m, c, t, false);
    return rc;
}

/* The events of a selected thread, one function each: the per-event
 * callbacks and the runs of on_events share them. */

/* Without filters every call is kept: its kept parent is the frame below
 * it, and its node (*NODE, of function *FI) is guessed from its parent's
 * last children, skipping the address and child lookups. */
HOT int unfiltered_node(struct np_model *m, const struct cur *c, uint64_t address, uint32_t *fi, uint32_t *node)
{
    uint32_t parent = c->depth ? c->stack[c->depth - 1].node : c->th->root;
    uint32_t g = next_child_guess(m, parent);
    if (g != NP_NONE && m->node_ext[g].addr == address) {
        /* found_child, less what a right guess leaves as it was (the
         * hint's after is g, g's address is ADDRESS) */
        struct node_ext *px = &m->node_ext[parent];
        px->hint = *node = g;
        px->guess = m->node_ext[g].after;
        *fi = m->node_ext[g].function;
        return 0;
    }
    int rc = function_of(m, address, fi);
    return rc ? rc : child_node(m, parent, *fi, address, node);
}

HOT int enter_unfiltered(struct np_model *m, struct cur *c, struct frame *f, uint64_t address)
{
    struct tstate *ts = c->ts;
    uint32_t fi, node;
    int rc = unfiltered_node(m, c, address, &fi, &node);
    if (rc)
        return rc;
    bool open;
    add_active(ts, fi, +1, &open, &rc);
    if (rc)
        return rc;
    f->function = fi;
    f->node = node;
    f->kept_parent = (int32_t)c->depth - 1;
    f->kept_depth = (uint32_t)c->depth;
    f->flags = F_KEPT | (open ? 0 : F_OUTERMOST);
    return 0;
}

static int enter_filtered(struct np_model *m, struct cur *c, struct frame *f, uint64_t address)
{
    struct tstate *ts = c->ts;
    uint32_t fi;
    int rc = function_of(m, address, &fi);
    if (rc)
        return rc;
    f->function = fi;
    f->node = NP_NONE;
    f->kept_parent = -1;
    f->kept_depth = 0;
    if (c->depth) {
        const struct frame *top = f - 1;
        f->kept_parent = top->flags & F_KEPT ? (int32_t)(c->depth - 1) : top->kept_parent;
    }
    if (f->kept_parent >= 0)
        f->kept_depth = c->stack[f->kept_parent].kept_depth + 1;
    uint8_t flags = m->fn_flags[fi], fflags = 0;
    if (flags & FN_INCLUDED)
        fflags |= F_INCLUDED, ts->include_open++;
    if (flags & FN_EXCLUDED)
        fflags |= F_EXCLUDED, ts->exclude_open++;
    bool kept = (!m->opt.ninclude || ts->include_open) && !ts->exclude_open &&
                (!m->opt.max_depth || f->kept_depth < m->opt.max_depth);
    if (kept) {
        bool open;
        uint32_t parent = f->kept_parent >= 0 ? c->stack[f->kept_parent].node : c->th->root;
        add_active(ts, fi, +1, &open, &rc);
        if (rc || (rc = child_node(m, parent, fi, address, &f->node)))
            return rc;
        fflags |= F_KEPT | (open ? 0 : F_OUTERMOST);
    }
    f->flags = fflags;
    return 0;
}

HOT int enter_call(struct np_model *m, struct cur *c, uint64_t time_ns, uint64_t address)
{
    uint64_t t = advance(c, time_ns);
    struct tstate *ts = c->ts;
    if (c->depth >= NP_MODEL_MAX_STACK) {
        ts->overflow++;
        c->th->dropped++;
        return 0;
    }
    if (c->depth >= ts->cap) {
        if (NP_GROW(ts->stack, ts->cap, c->depth + 1) < 0)
            return ENOMEM_RC;
        c->stack = ts->stack;
    }
    /* filled in place, field by field: a struct built aside and copied
     * in is written and read back in different widths, which stalls */
    struct frame *f = &c->stack[c->depth];
    f->start = t;
    f->child_ns = f->child_sw = 0;
    f->vals = NULL;
    f->sw_at_entry = ts->switched;
    int rc = m->filtered ? enter_filtered(m, c, f, address) : enter_unfiltered(m, c, f, address);
    if (rc)
        return rc;
    c->depth++;
    return m->listen ? told_entry(m, c, f, t) : 0;
}

HOT int exit_call(struct np_model *m, struct cur *c, uint64_t time_ns)
{
    uint64_t t = advance(c, time_ns);
    struct tstate *ts = c->ts;
    if (ts->overflow) {
        ts->overflow--;
        return 0;
    }
    if (!c->depth) { /* nothing open: began before recording, or before a loss (said already) */
        c->th->unmatched_exits += !c->th->lost && !c->th->closed_at_resync;
        return 0;
    }
    int rc = TELL_KEPT(m, c, t);
    return rc ? rc : close_call(m, c, t, false);
}

/* A call that returns at once, ENTRY then EXIT (a leaf: most calls),
 * without filters or listener: what enter_call then exit_call do,
 * without the frame. The caller checks that enter_call would push it
 * (not too deep, room on the stack). *AT_EXIT: a failure is the EXIT's. */
HOT int leaf_call(struct np_model *m, struct cur *c, uint64_t enter_ns, uint64_t address, uint64_t exit_ns,
                  bool *at_exit)
{
    uint64_t t = advance(c, enter_ns);
    uint32_t fi, node;
    bool open;
    int rc = unfiltered_node(m, c, address, &fi, &node);
    if (!rc)
        add_active(c->ts, fi, 0, &open, &rc); /* opened and closed: only whether another is open counts */
    if (rc)
        return rc;
    *at_exit = true;
    uint64_t dur = advance(c, exit_ns) - t; /* no switch in between: nothing switched out */
    if (m->timed_filter && dur < m->opt.min_duration_ns)
        return 0;
    const struct frame f = { .start = t, .function = fi, .node = node, .kept_parent = (int32_t)c->depth - 1,
                             .kept_depth = (uint32_t)c->depth, .flags = F_KEPT | (open ? 0 : F_OUTERMOST) };
    return record(m, c, &f, dur, 0, false);
}

/* The kept calls open on C's thread. */
static uint64_t kept_open(const struct cur *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->depth; i++)
        n += (c->stack[i].flags & F_KEPT) != 0;
    return n;
}

static int lost_calls(struct np_model *m, struct cur *c, uint64_t time_ns, uint64_t n)
{
    uint64_t t = advance(c, time_ns);
    c->th->lost += n;
    c->th->closed_at_loss += kept_open(c);
    return close_all(m, c, t);
}

/* The N innermost open calls close at TIME_NS, their returns missed:
 * those too deep to be kept first (they are the innermost). */
static int resync_calls(struct np_model *m, struct cur *c, uint64_t time_ns, uint64_t n)
{
    uint64_t t = advance(c, time_ns);
    struct tstate *ts = c->ts;
    uint64_t deep = n < ts->overflow ? n : ts->overflow;
    ts->overflow -= deep;
    n -= deep;
    int rc = n && c->depth ? TELL_KEPT(m, c, t) : 0;
    for (; !rc && n && c->depth; n--) {
        c->th->closed_at_resync += (c->stack[c->depth - 1].flags & F_KEPT) != 0;
        rc = close_call(m, c, t, true);
    }
    return rc;
}

/* From samples, the calls are not read: a LOST is only counted. */
static int on_lost_count(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    (void)time_ns;
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (!rc && ti != NP_NONE)
        m->threads[ti].lost += n;
    return rc;
}

static int switched_out(struct cur *c, uint64_t time_ns, uint64_t duration_ns)
{
    uint64_t before = c->last;
    bool first = !c->seen;
    uint64_t t = advance(c, time_ns);
    uint64_t span = first ? 0 : t - before;
    uint64_t sw = duration_ns < span ? duration_ns : span;
    c->ts->switched += sw;
    c->th->switched_ns += sw;
    return 0;
}

/* The callbacks: the thread first (NP_NONE: not selected, ignored). */
#define WITH_THREAD(call)                                                                \
    struct np_model *m = ctx;                                                            \
    uint32_t ti;                                                                         \
    int rc = thread_of(m, tid, &ti);                                                     \
    if (rc || ti == NP_NONE)                                                             \
        return rc;                                                                       \
    struct cur c = cur_of(m, ti);                                                        \
    rc = (call);                                                                         \
    cur_save(&c);                                                                        \
    return rc

static int on_enter(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t address)
{
    WITH_THREAD(enter_call(m, &c, time_ns, address));
}

static int on_return(void *ctx, uint32_t tid, uint64_t time_ns)
{
    WITH_THREAD(exit_call(m, &c, time_ns));
}

static int on_lost(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    WITH_THREAD(lost_calls(m, &c, time_ns, n));
}

static int on_switch(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t duration_ns)
{
    WITH_THREAD(switched_out(&c, time_ns, duration_ns));
}

static int on_resync(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    WITH_THREAD(resync_calls(m, &c, time_ns, n));
}

/* VALUES of the thread's innermost open call: kept on its frame for the
 * listener (the views that show them), and its arguments told at once. */
static int call_values(struct np_model *m, struct cur *c, bool retval, const struct np_value *v, unsigned n)
{
    if (!m->listen || !c->depth || c->ts->overflow)
        return 0;
    struct frame *f = &c->stack[c->depth - 1];
    if (!(f->flags & F_KEPT))
        return 0;
    if (!f->vals && !(f->vals = calloc(1, sizeof *f->vals)))
        return ENOMEM_RC;
    struct np_call_values *x = f->vals;
    for (unsigned i = 0; i < n && i < NP_VALUES_MAX; i++) {
        struct np_value *to = retval ? &x->ret : &x->args[i];
        char *bytes = x->bytes[retval ? NP_VALUES_MAX : i];
        *to = v[i];
        if (v[i].str) {
            memcpy(bytes, v[i].str, v[i].len);
            to->str = bytes;
        }
        if (retval) {
            x->has_ret = true;
            break;
        }
        x->nargs = i + 1;
    }
    const struct np_call_listener *l = m->listen;
    if (retval || !(f->flags & F_TOLD) || !l->values)
        return 0;
    const struct np_call call = { c->ti, f->function, f->node, f->kept_depth, f->start, 0, 0, false, x };
    if (l->values(l->ctx, m, &call) == 0)
        return 0;
    m->listen = NULL;
    m->tell_late = false;
    return NP_TRACE_ESTOP;
}

static int on_values(void *ctx, uint32_t tid, uint64_t time_ns, bool retval, const struct np_value *v, unsigned n)
{
    (void)time_ns;
    WITH_THREAD(call_values(m, &c, retval, v, n));
}

/* A run of one thread's events: the thread is looked up once. */
static int on_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct np_model *m = ctx;
    uint32_t ti;
    int rc = thread_of(m, tid, &ti);
    if (rc || ti == NP_NONE) {
        *done = 0;
        return rc;
    }
    struct cur c = cur_of(m, ti);
    size_t i = 0;
    for (; i < n; i++) {
        const struct np_event *e = &ev[i];
        if (e->kind == NP_EVENT_ENTER && i + 1 < n && e[1].kind == NP_EVENT_EXIT && m->quick_leaves &&
            c.depth < NP_MODEL_MAX_STACK && c.depth < c.ts->cap) {
            bool at_exit = false;
            rc = leaf_call(m, &c, e->time_ns, e->arg, e[1].time_ns, &at_exit);
            if (rc) {
                i += at_exit;
                break;
            }
            i++;
        } else if (e->kind == NP_EVENT_ENTER) {
            rc = enter_call(m, &c, e->time_ns, e->arg);
        } else if (e->kind == NP_EVENT_EXIT) {
            rc = exit_call(m, &c, e->time_ns);
        } else {
            /* rare: through a copy, so that c stays out of memory */
            cur_save(&c);
            struct cur r = cur_of(m, ti);
            rc = e->kind == NP_EVENT_LOST     ? lost_calls(m, &r, e->time_ns, e->arg)
                 : e->kind == NP_EVENT_RESYNC ? resync_calls(m, &r, e->time_ns, e->arg)
                                              : switched_out(&r, e->time_ns, e->arg);
            cur_save(&r);
            c = cur_of(m, ti);
        }
        if (rc)
            break;
    }
    cur_save(&c);
    *done = i;
    return rc;
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
    pr->time_unit = p->time_unit;
    if ((p->file && !pr->file) || (p->clock && !pr->clock) || !(pr->argv = calloc(p->argc + 1, sizeof *pr->argv)))
        return ENOMEM_RC;
    for (; pr->argc < p->argc; pr->argc++)
        if (!(pr->argv[pr->argc] = strdup(p->argv[pr->argc])))
            return ENOMEM_RC;
    m->process = (uint32_t)i;
    m->first_thread = (uint32_t)m->n_threads;
    forget_process_caches(m);
    np_addrspace_free(m->space);
    m->space = m->syms ? np_addrspace_new(m->syms) : NULL;
    return m->syms && !m->space ? ENOMEM_RC : 0;
}

/* NAME: calls at ADDRESS are of the region NP_ENTER(NAME) marks, one
 * function by that name (no module, address 0) in every process. */
static int on_name(void *ctx, uint64_t address, const char *name)
{
    struct np_model *m = ctx;
    if (m->process == NP_NONE)
        return 0;
    struct np_symbol sym = { .name = name };
    uint32_t f;
    int rc = intern_function(m, &sym, 0, &f);
    return rc ? rc : remember_function(m, address, f); /* a later NAME replaces it */
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
        struct cur c = cur_of(m, (uint32_t)i);
        if (!p->complete) /* cut short: when they ended is unknown */
            m->threads[i].closed_at_cut += kept_open(&c);
        if (!rc)
            rc = close_all(m, &c, m->threads[i].last_ns);
        if (m->threads[i].last_ns > p->end_ns) /* no END, or one that knows no end (a count) */
            p->end_ns = m->threads[i].last_ns;
        free(ts->stack);
        free(ts->active);
        memset(ts, 0, sizeof *ts);
    }
    np_addrspace_free(m->space);
    m->space = NULL;
    forget_process_caches(m);
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
    m->filtered = m->opt.ninclude || m->opt.nexclude || m->opt.max_depth;
    m->timed_filter = m->opt.exclude_switched || m->opt.min_duration_ns;
    m->listen = m->opt.listener;
    m->tell_late = m->listen && m->opt.min_duration_ns;
    m->quick_leaves = !m->filtered && !m->listen;
    m->syms = syms;
    m->process = NP_NONE;
    forget_process_caches(m);
    size_t n = m->opt.ninclude + m->opt.nexclude;
    if (n && (!(m->patterns = calloc(n, sizeof *m->patterns)) || !(m->uses = calloc(n, sizeof *m->uses)))) {
        np_model_free(m);
        return NULL;
    }
    np_patterns_init(m->patterns, m->uses, m->opt.include, m->opt.ninclude, m->opt.exclude, m->opt.nexclude);
    m->npatterns = n;
    return m;
}

struct np_event_sink np_model_sink(struct np_model *m)
{
    return (struct np_event_sink){
        .ctx = m,
        .begin = on_begin,
        .module = on_module,
        .name = on_name,
        .thread = on_thread,
        /* from samples: the calls are not read (their profile is not shown) */
        .enter = m->opt.from_samples ? NULL : on_enter,
        .exit = m->opt.from_samples ? NULL : on_return,
        .lost = m->opt.from_samples ? on_lost_count : on_lost,
        .switch_out = m->opt.from_samples ? NULL : on_switch,
        .resync = m->opt.from_samples ? NULL : on_resync,
        .events = m->opt.from_samples ? NULL : on_events,
        .end = on_end,
        .blocks = on_blocks,
        .sample = np_model_on_sample,
        .sampling = np_model_on_sampling,
        .values = m->opt.from_samples ? NULL : on_values,
    };
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

/* The figures of functions, arcs and threads: the sums of their nodes'. */
static void add_up_nodes(struct np_model *m)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        struct np_function *f = &m->functions[i];
        f->calls = f->total_ns = f->self_ns = f->sum_ns = f->max_ns = f->switched_ns = f->self_switched_ns = 0;
        f->resynced = 0;
        f->min_ns = UINT64_MAX;
    }
    for (size_t i = 0; i < m->n_arcs; i++)
        m->arcs[i].calls = m->arcs[i].total_ns = m->arcs[i].switched_ns = m->arcs[i].outer_ns = 0;
    for (size_t i = 0; i < m->n_threads; i++)
        m->threads[i].calls = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct np_node *n = &m->nodes[i];
        const struct node_ext *x = &m->node_ext[i];
        if (n->function == NP_NONE || !n->calls)
            continue;
        struct np_function *f = &m->functions[n->function];
        f->calls += n->calls;
        f->resynced += n->resynced;
        f->self_ns += n->self_ns;
        f->sum_ns += n->total_ns;
        f->self_switched_ns += x->self_sw;
        f->total_ns += x->outer_ns;
        f->switched_ns += x->outer_sw;
        if (x->min_ns < f->min_ns)
            f->min_ns = x->min_ns;
        if (x->max_ns > f->max_ns)
            f->max_ns = x->max_ns;
        if (x->arc != NP_NONE) { /* none only when memory ran out at its first call */
            struct np_arc *a = &m->arcs[x->arc];
            a->calls += n->calls;
            a->total_ns += n->total_ns;
            a->switched_ns += n->switched_ns;
            a->outer_ns += x->outer_ns;
        }
        m->threads[n->thread].calls += n->calls;
    }
}

/* The look-up maps, needed only while events come in. */
static void free_maps(struct np_model *m)
{
    np_hmap_free(&m->addr_fn);
    np_hmap_free(&m->node_by);
    np_hmap_free(&m->arc_by);
    np_hmap_free(&m->fn_by);
    np_hmap_free(&m->threads_by);
    np_hmap_free(&m->block_by);
}

/* By symbol, then signature (overloads together), then index. */
static int by_symbol(const void *a, const void *b, void *ctx)
{
    const struct np_function *f = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(f[x].symbol, f[y].symbol);
    if (!c)
        c = strcmp(f[x].signature, f[y].signature);
    return c ? c : (x > y) - (x < y);
}

/* What tells apart functions of one signature, from the least detail to
 * the most: the module's file name, the source file's last 1, 2 and 3
 * path components, its whole path (the address when there is no source
 * file), the address in the module's file, then in its whole path. */
enum { TAG_MODULE, TAG_FILE_1, TAG_FILE_2, TAG_FILE_3, TAG_FILE, TAG_ADDRESS, TAG_PATH_ADDRESS, TAG_LEVELS };

/* The last N components of PATH. */
static const char *path_tail(const char *path, int n)
{
    const char *p = path + strlen(path);
    while (p > path && !(p[-1] == '/' && --n == 0))
        p--;
    return p;
}

/* F's name, BASE (its symbol or signature) at LEVEL of detail:
 * "sym [app]", "sym [a.c]", "sym [src/a.c]", "sym [app:0x1139]", "sym
 * [/opt/a/app:0x1139]"; NULL when out of memory. */
static char *qualified(const struct np_function *f, const char *base, int level)
{
    const char *mod = f->module ? f->module : "?";
    char *s;
    int n;
    if (level >= TAG_FILE_1 && level <= TAG_FILE && f->file)
        n = asprintf(&s, "%s [%s]", base, level == TAG_FILE ? f->file : path_tail(f->file, level - TAG_FILE_1 + 1));
    else if (level == TAG_MODULE)
        n = asprintf(&s, "%s [%s]", base, path_tail(mod, 1));
    else
        n = asprintf(&s, "%s [%s:0x%" PRIx64 "]", base, level == TAG_PATH_ADDRESS ? mod : path_tail(mod, 1),
                     f->address);
    return n < 0 ? NULL : s;
}

/* Names the functions of group G (N indices, one signature) apart, after
 * their signatures (SIGNATURE) or their symbols: each at the least detail
 * that no other one of the group shares at that detail. */
static int name_apart(struct np_model *m, const uint32_t *g, size_t n, bool signature)
{
    char **names = calloc(TAG_LEVELS * n, sizeof *names); /* level L of member i: names[L * n + i] */
    int rc = names ? 0 : ENOMEM_RC;
    for (size_t k = 0; k < TAG_LEVELS * n && !rc; k++) {
        const struct np_function *f = &m->functions[g[k % n]];
        if (!(names[k] = qualified(f, signature ? f->signature : f->symbol, (int)(k / n))))
            rc = ENOMEM_RC;
    }
    size_t *level = rc ? NULL : calloc(n, sizeof *level);
    if (!rc && !level)
        rc = ENOMEM_RC;
    for (size_t i = 0; i < n && !rc; i++)
        for (; level[i] < TAG_LEVELS - 1; level[i]++) {
            const char *mine = names[level[i] * n + i];
            size_t j = 0;
            while (j < n && (j == i || strcmp(mine, names[level[i] * n + j])))
                j++;
            if (j == n)
                break;
        }
    for (size_t i = 0; i < n && !rc; i++) {
        m->functions[g[i]].name = names[level[i] * n + i];
        names[level[i] * n + i] = NULL;
    }
    free(level);
    for (size_t k = 0; names && k < TAG_LEVELS * n; k++)
        free(names[k]);
    free(names);
    return rc;
}

/* Names apart the functions of group G (N indices, one symbol): by their
 * signatures when these differ (overloads), then by what else tells
 * apart those of one signature (model.h). */
static int name_group(struct np_model *m, const uint32_t *g, size_t n)
{
    struct np_function *f = m->functions;
    bool overloads = strcmp(f[g[0]].signature, f[g[n - 1]].signature) != 0; /* sorted by signature */
    int rc = 0;
    for (size_t i = 0, j; i < n && !rc; i = j) {
        for (j = i + 1; j < n && (!overloads || !strcmp(f[g[i]].signature, f[g[j]].signature)); j++)
            ;
        if (j - i > 1)
            rc = name_apart(m, &g[i], j - i, overloads);
        else
            f[g[i]].name = f[g[i]].signature;
    }
    return rc;
}

/* Gives every function whose symbol another one has too what tells it
 * apart in its name (model.h), over every function met, kept calls or
 * not, so that a name does not change with the filters. */
static int name_ambiguous(struct np_model *m)
{
    size_t n = m->n_functions;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return ENOMEM_RC;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, by_symbol, m->functions);
    int rc = 0;
    for (size_t i = 0, j; i < n && !rc; i = j) {
        for (j = i + 1; j < n && !strcmp(m->functions[order[i]].symbol, m->functions[order[j]].symbol); j++)
            ;
        if (j - i > 1)
            rc = name_group(m, &order[i], j - i);
    }
    free(order);
    return rc;
}

int np_model_finish(struct np_model *m)
{
    int rc = on_end(m);
    add_up_nodes(m);
    if (!rc)
        rc = np_model_samples_finish(m);
    if (!rc)
        rc = name_ambiguous(m);
    /* a pattern that matched no function of the trace: does it match any
     * function of the trace's files? */
    np_patterns_in_files(m->syms, m->patterns, m->uses, m->npatterns, &m->pattern_files);
    for (size_t i = 0; i < m->n_functions; i++)
        if (!m->functions[i].calls)
            m->functions[i].min_ns = 0;
    unlink_empty_nodes(m);
    free_maps(m);
    return rc;
}

void np_model_free(struct np_model *m)
{
    if (!m)
        return;
    m->listen = NULL; /* its calls still open are not told: the listener may be gone */
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
        free_names(&m->functions[i]);
        free(m->functions[i].module);
        free(m->functions[i].file);
    }
    free_maps(m);
    for (size_t i = 0; i < m->n_blocks; i++)
        free(m->blocks[i].file);
    free(m->blocks);
    free(m->fn_flags);
    np_patterns_free(m->patterns, m->npatterns);
    free(m->patterns);
    free(m->uses);
    free(m->node_ext);
    free(m->ts);
    free(m->processes);
    free(m->threads);
    free(m->functions);
    free(m->arcs);
    free(m->nodes);
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
ACCESSOR(np_block, blocks)
#undef ACCESSOR

uint64_t np_model_first_ns(const struct np_model *m)
{
    uint64_t first = np_model_samples_first_ns(m);
    for (size_t i = 0; i < m->n_processes; i++)
        if (m->processes[i].start_ns < first)
            first = m->processes[i].start_ns;
    for (size_t i = 0; i < m->n_threads; i++) /* a thread with neither time had no event */
        if ((m->threads[i].first_ns || m->threads[i].last_ns) && m->threads[i].first_ns < first)
            first = m->threads[i].first_ns;
    return first == UINT64_MAX ? 0 : first;
}

const struct np_pattern_use *np_model_patterns(const struct np_model *m, size_t *n, unsigned *files)
{
    *n = m->npatterns;
    if (files)
        *files = m->pattern_files;
    return m->uses;
}

enum np_time_unit np_model_time_unit(const struct np_model *m)
{
    return m->n_processes ? m->processes[0].time_unit : NP_UNIT_NS;
}

/* ---- for model_samples.c (model_internal.h) ---------------------------------- */

struct np_model_samples *np_model_samples_get(const struct np_model *m) { return m->samples; }
void np_model_samples_set(struct np_model *m, struct np_model_samples *s) { m->samples = s; }
const struct np_model_options *np_model_opts(const struct np_model *m) { return &m->opt; }
unsigned np_model_function_filters(const struct np_model *m, uint32_t f) { return m->fn_flags[f]; }
uint32_t np_model_current_process(const struct np_model *m) { return m->process; }
struct np_addrspace *np_model_addrspace(struct np_model *m) { return m->space; }
int np_model_thread_at(struct np_model *m, uint32_t tid, uint32_t *out) { return thread_of(m, tid, out); }
int np_model_function_at(struct np_model *m, uint64_t addr, uint32_t *out) { return function_of(m, addr, out); }

int np_model_child_at(struct np_model *m, uint32_t parent, uint32_t function, uint32_t *out)
{
    return child_node(m, parent, function, 0, out);
}

int np_model_tell(struct np_model *m, const struct np_call *c, bool begin)
{
    return tell(m, c, begin);
}

bool np_model_listened(const struct np_model *m) { return m->opt.listener != NULL; }

int np_model_add_arc(struct np_model *m, uint32_t caller, uint32_t callee, uint64_t calls, uint64_t ns,
                     uint64_t outer_ns)
{
    uint32_t i;
    int rc = arc_of(m, caller, callee, &i);
    if (!rc) {
        m->arcs[i].calls += calls;
        m->arcs[i].total_ns += ns;
        m->arcs[i].outer_ns += outer_ns;
    }
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
    np_source_read(path, opt ? &opt->source : NULL, &sink, hooks, summary);
    int rc = np_model_finish(m);
    if (rc && summary->status < rc) {
        summary->status = rc;
        snprintf(summary->message, sizeof summary->message, "%s: %s%s", path,
                 rc == NP_TRACE_ENOMEM ? "" : "reading stopped: ", np_trace_strerror(rc));
    }
    /* names and lines were copied: the ELF files can go */
    np_symbols_free(syms);
    m->syms = NULL;
    *out = m;
    return summary->status;
}
