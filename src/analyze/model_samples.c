/* model_samples.c - the model's side of the SAMPLE events (model.h,
 * docs/sampling.md).
 *
 * Samples are aggregated as they come, into three things whose size grows
 * with what is distinct, not with the number of samples:
 *   - the sampling parameters and totals (np_model_sampling);
 *   - the sampled PCs, one row per (module, ELF address) (np_sample_pc);
 *   - a tree of sampled stacks per thread: one node per path of functions
 *     from the thread's outermost frame, holding the samples whose stack
 *     ends there (their count, periods and time).
 * Addresses are resolved while their process is read (its address space
 * goes with it), through the model's own function table, so sampled and
 * called functions are the same rows.
 *
 * When the profile is to come from the samples (options.from_samples, or
 * a trace whose selected threads have samples but no calls), finishing
 * turns the stack tree into the model's call tree, functions, arcs and
 * thread totals: each sample is one path root -> leaf; every node on it
 * gets the sample's time, the leaf node and function its self time; a
 * function or arc appears once per sample however often the stack
 * repeats it (recursion counted once), and its calls count the samples it
 * appears in.
 *
 * With a listener (options.listener), each thread's successive samples
 * also give calls: a frame that stays on the stack from one sample to the
 * next (the same path from the root, so the same stack node) is one call,
 * from the start of the first sample's period to the end of the last
 * one's (the sample's time). A gap between samples (the thread did not
 * run: sampling counts CPU time; more than twice a sample's time since the
 * last) or a sample left out by the filters ends every open call. A call
 * never begins before the thread's previous sample, where the calls it
 * follows ended: right after a sample with calls open (no gap) it begins
 * there, whatever its period says; and a sample earlier than its thread's
 * previous one counts as at that one's time (the model's rule for every
 * time of a thread, model.h). So the timeline of a thread never goes back.
 * These calls are the timeline told to the listener when the profile is
 * the samples' (np_model_estimated), and are dropped otherwise. Whether it
 * is is known only once every thread was read, so they are stored until
 * then, in the order they began: one per stretch of samples, far fewer
 * than a trace's calls (a sample per millisecond of CPU time). That order,
 * per thread, is the order the listener is told them in (callers before
 * callees; a call of no duration before a sibling that begins at the same
 * time, which no sort by time and depth can tell apart). */
#define _GNU_SOURCE
#include "model_internal.h"
#include "containers.h"
#include "common/trace_format.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A SAMPLING with hz > 0 of the process being read. */
struct setting {
    uint64_t time_ns, period_ns;
    bool return_addrs;
};

/* A node of a thread's tree of sampled stacks. */
struct snode {
    uint32_t parent;          /* NP_NONE: the thread's root */
    uint32_t function;        /* NP_NONE: the thread's root */
    uint32_t thread;
    uint64_t samples, periods, ns; /* of the samples whose stack ends here */
};

/* A call of the timeline estimated from the samples, open. */
struct open_frame {
    uint32_t node;  /* its stack node */
    uint32_t call;  /* its np_call in calls[], its duration still to be set */
};

/* Per thread of the model. */
struct sthread {
    uint64_t first_ns, last_ns; /* of its samples */
    uint32_t root_plus1;        /* its stack tree's root + 1, 0: no sample yet */
    /* the timeline: the frames of the last sample, outermost first */
    struct open_frame *open;
    size_t depth, cap;
    uint64_t prev_ns;           /* the last sample's time */
};

enum fn_flag { FNF_KNOWN = 1, FNF_INCLUDED = 2, FNF_EXCLUDED = 4 };

struct np_model_samples {
    struct np_model_sampling info;
    bool estimated;
    uint32_t process; /* the process SETTINGS are of */
    struct setting *settings;
    size_t n_settings, cap_settings;
    struct np_sample_pc *pcs;
    size_t n_pcs, cap_pcs;
    struct np_hmap pc_by;     /* hash of (module, address) -> pc */
    char **modules;           /* the module paths the pcs point to */
    size_t n_modules, cap_modules;
    struct np_hmap module_by; /* hash of the path -> module */
    uint8_t *fn_flags;        /* function -> enum fn_flag */
    size_t cap_fn_flags;
    struct sthread *threads;
    size_t cap_threads;
    struct snode *nodes;
    size_t n_nodes, cap_nodes;
    struct np_hmap node_by;   /* parent << 32 | function -> node; roots: NP_NONE << 32 | thread */
    struct np_call *calls;    /* the estimated timeline, in the order the calls began;
                                 node: the stack node */
    size_t n_calls, cap_calls;
    uint64_t first_call_ns;   /* the earliest start of its calls, once told; UINT64_MAX before */
};

#define ENOMEM_RC NP_TRACE_ENOMEM

static struct np_model_samples *state_of(struct np_model *m)
{
    struct np_model_samples *s = np_model_samples_get(m);
    if (!s && (s = calloc(1, sizeof *s))) {
        s->process = NP_NONE;
        s->first_call_ns = UINT64_MAX;
        np_model_samples_set(m, s);
    }
    return s;
}

void np_model_samples_free(struct np_model_samples *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_modules; i++)
        free(s->modules[i]);
    free(s->modules);
    free(s->settings);
    free(s->pcs);
    free(s->fn_flags);
    for (size_t i = 0; i < s->cap_threads; i++)
        free(s->threads[i].open);
    free(s->threads);
    free(s->calls);
    free(s->nodes);
    np_hmap_free(&s->pc_by);
    np_hmap_free(&s->module_by);
    np_hmap_free(&s->node_by);
    free(s);
}

/* Settings belong to one process: a new one starts without any. */
static void follow_process(struct np_model *m, struct np_model_samples *s)
{
    uint32_t p = np_model_current_process(m);
    if (p != s->process) {
        s->process = p;
        s->n_settings = 0;
    }
}

int np_model_on_sampling(void *ctx, const struct np_trace_sampling *set)
{
    struct np_model *m = ctx;
    struct np_model_samples *s = state_of(m);
    if (!s)
        return ENOMEM_RC;
    follow_process(m, s);
    if (!set->hz)
        return 0; /* a stop: samples still to come keep their own setting */
    if (!s->info.hz) {
        s->info.hz = set->hz;
        s->info.period_ns = set->period_ns;
        s->info.cpu_time = set->flags & NP_SAMPLING_CPU_TIME;
        s->info.unwinder = set->unwinder;
    }
    if (NP_GROW(s->settings, s->cap_settings, s->n_settings + 1) < 0)
        return ENOMEM_RC;
    s->settings[s->n_settings++] =
        (struct setting){ set->time_ns, set->period_ns, (set->flags & NP_SAMPLING_RETURN_ADDRS) != 0 };
    return 0;
}

/* The setting of a sample at T: the last one at or before T (the first
 * when T precedes them all); NULL when the process has none. */
static const struct setting *setting_at(const struct np_model_samples *s, uint64_t t)
{
    for (size_t i = s->n_settings; i-- > 0;)
        if (s->settings[i].time_ns <= t)
            return &s->settings[i];
    return s->n_settings ? &s->settings[0] : NULL;
}

static uint8_t flags_of(struct np_model *m, struct np_model_samples *s, uint32_t fi, int *rc)
{
    if (fi >= s->cap_fn_flags) {
        size_t old = s->cap_fn_flags;
        if (NP_GROW(s->fn_flags, s->cap_fn_flags, (size_t)fi + 1) < 0) {
            *rc = ENOMEM_RC;
            return 0;
        }
        memset(s->fn_flags + old, 0, s->cap_fn_flags - old);
    }
    if (!(s->fn_flags[fi] & FNF_KNOWN)) {
        unsigned filters = np_model_function_filters(m, fi);
        s->fn_flags[fi] = (uint8_t)(FNF_KNOWN | (filters & 1 ? FNF_INCLUDED : 0) | (filters & 2 ? FNF_EXCLUDED : 0));
    }
    return s->fn_flags[fi];
}

struct module_key {
    const struct np_model_samples *s;
    const char *path;
};

static int same_module(void *ctx, uint64_t index)
{
    const struct module_key *k = ctx;
    return !strcmp(k->s->modules[index], k->path);
}

/* Our copy of module path PATH (the symbols' copy goes with them). */
static int module_copy(struct np_model_samples *s, const char *path, const char **out)
{
    struct module_key key = { s, path };
    uint64_t free_key;
    int64_t i = np_hmap_find_by(&s->module_by, np_hash_bytes(path, strlen(path), 0), same_module, &key, &free_key);
    if (i < 0) {
        if (NP_GROW(s->modules, s->cap_modules, s->n_modules + 1) < 0 ||
            !(s->modules[s->n_modules] = strdup(path)) || np_hmap_put(&s->module_by, free_key, s->n_modules))
            return ENOMEM_RC;
        i = (int64_t)s->n_modules++;
    }
    *out = s->modules[i];
    return 0;
}

struct pc_key {
    const struct np_model_samples *s;
    const char *module; /* ours: compared by pointer */
    uint64_t address;
};

static int same_pc(void *ctx, uint64_t index)
{
    const struct pc_key *k = ctx;
    const struct np_sample_pc *p = &k->s->pcs[index];
    return p->module == k->module && p->address == k->address;
}

/* Counts a sample of PERIODS periods at run-time PC, in function FI. */
static int add_pc(struct np_model *m, struct np_model_samples *s, uint64_t pc, uint32_t fi, uint64_t periods)
{
    struct pc_key key = { s, NULL, pc };
    struct np_addrspace *space = np_model_addrspace(m);
    const char *module = space ? np_addrspace_module(space, pc, &key.address) : NULL;
    if (module && module_copy(s, module, &key.module))
        return ENOMEM_RC;
    uint64_t hash = np_hash_bytes(&key.address, sizeof key.address, (uint64_t)(uintptr_t)key.module), free_key;
    int64_t i = np_hmap_find_by(&s->pc_by, hash, same_pc, &key, &free_key);
    if (i < 0) {
        if (NP_GROW(s->pcs, s->cap_pcs, s->n_pcs + 1) < 0 || np_hmap_put(&s->pc_by, free_key, s->n_pcs))
            return ENOMEM_RC;
        size_t n;
        const char *name = np_model_functions(m, &n)[fi].name;
        bool unnamed = name[0] == '0' && name[1] == 'x'; /* no symbol: the model names it in hex */
        s->pcs[s->n_pcs] = (struct np_sample_pc){ unnamed ? NP_NONE : fi, key.module, key.address, 0, 0 };
        i = (int64_t)s->n_pcs++;
    }
    s->pcs[i].samples++;
    s->pcs[i].periods += periods;
    return 0;
}

/* The node of the stack tree under PARENT for FUNCTION of thread TI. */
static int stack_node(struct np_model_samples *s, uint32_t parent, uint32_t function, uint32_t ti, uint32_t *out)
{
    uint64_t key = parent == NP_NONE ? (uint64_t)NP_NONE << 32 | ti : (uint64_t)parent << 32 | function;
    uint64_t *v = np_hmap_find(&s->node_by, key);
    if (v) {
        *out = (uint32_t)*v;
        return 0;
    }
    if (s->n_nodes >= NP_NONE || NP_GROW(s->nodes, s->cap_nodes, s->n_nodes + 1) < 0 ||
        np_hmap_put(&s->node_by, key, s->n_nodes))
        return ENOMEM_RC;
    s->nodes[s->n_nodes] = (struct snode){ parent, function, ti, 0, 0, 0 };
    *out = (uint32_t)s->n_nodes++;
    return 0;
}

/* The thread's sample times and the node of its stack tree's root. */
static int thread_root(struct np_model_samples *s, uint32_t ti, uint64_t t, uint32_t *root)
{
    if (ti >= s->cap_threads) {
        size_t old = s->cap_threads;
        if (NP_GROW(s->threads, s->cap_threads, (size_t)ti + 1) < 0)
            return ENOMEM_RC;
        memset(s->threads + old, 0, (s->cap_threads - old) * sizeof *s->threads);
    }
    struct sthread *th = &s->threads[ti];
    if (!th->root_plus1) {
        if (stack_node(s, NP_NONE, NP_NONE, ti, root))
            return ENOMEM_RC;
        th->root_plus1 = *root + 1;
        th->first_ns = th->last_ns = t;
    }
    if (t < th->first_ns)
        th->first_ns = t;
    if (t > th->last_ns)
        th->last_ns = t;
    *root = th->root_plus1 - 1;
    return 0;
}

/* ---- the timeline estimated from the samples --------------------------------- */

/* Ends the open calls of thread TI deeper than KEEP at END. */
static void close_frames(struct np_model_samples *s, uint32_t ti, size_t keep, uint64_t end)
{
    struct sthread *th = &s->threads[ti];
    for (; th->depth > keep; th->depth--) {
        struct np_call *c = &s->calls[th->open[th->depth - 1].call];
        c->duration_ns = end > c->start_ns ? end - c->start_ns : 0;
    }
}

/* A sample of thread TI at T, for LEN ns before it, whose kept path
 * (outermost first) is PATH[0..N); N 0: a sample left out. */
static int timeline_sample(struct np_model_samples *s, uint32_t ti, uint64_t t, uint64_t len, const uint32_t *path,
                           size_t n)
{
    struct sthread *th = &s->threads[ti];
    if (t < th->prev_ns)
        t = th->prev_ns; /* an earlier time counts as the previous one */
    uint64_t from = t > len ? t - len : 0;
    /* a gap: more than twice the CPU time the sample stands for since the
     * last one (wall time runs a little ahead of CPU time anyway); after
     * one, as after a sample left out (N 0), no call stays open */
    bool gap = t - th->prev_ns > 2 * len;
    /* the new calls begin where the last sample's calls end: right there
     * when they are contiguous; after a gap or a sample with none open
     * where this sample's period begins, but not before the last sample */
    uint64_t start = !gap && th->depth ? th->prev_ns : from > th->prev_ns ? from : th->prev_ns;
    size_t same = 0;
    while (!gap && same < th->depth && same < n && th->open[same].node == path[same])
        same++;
    close_frames(s, ti, same, th->prev_ns);
    th->prev_ns = t;
    if (n > same && (NP_GROW(th->open, th->cap, n) < 0 || s->n_calls + (n - same) >= NP_NONE ||
                     NP_GROW(s->calls, s->cap_calls, s->n_calls + (n - same)) < 0))
        return ENOMEM_RC;
    for (size_t i = same; i < n; i++) {
        th->open[th->depth] = (struct open_frame){ path[i], (uint32_t)s->n_calls };
        s->calls[s->n_calls++] = (struct np_call){ ti, s->nodes[path[i]].function, path[i], (uint32_t)th->depth,
                                                   start, 0, 0, false, NULL };
        th->depth++;
    }
    return 0;
}

/* A sample of thread TI at T that the filters leave out: it ends the
 * thread's open calls on the timeline. */
static int left_out(struct np_model *m, struct np_model_samples *s, uint32_t ti, uint64_t t)
{
    if (!np_model_listened(m) || ti >= s->cap_threads || !s->threads[ti].root_plus1)
        return 0;
    return timeline_sample(s, ti, t, 0, NULL, 0);
}

int np_model_on_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                       uint64_t periods, uint64_t skipped)
{
    struct np_model *m = ctx;
    struct np_model_samples *s = state_of(m);
    uint32_t ti;
    int rc = s ? np_model_thread_at(m, tid, &ti) : ENOMEM_RC;
    if (rc || ti == NP_NONE)
        return rc;
    follow_process(m, s);
    s->info.skipped += skipped;
    if (!n)
        return 0; /* the skipped periods alone */
    const struct setting *set = setting_at(s, time_ns);
    bool return_addrs = set ? set->return_addrs : true;
    if (n > NP_SAMPLE_MAX_FRAMES)
        n = NP_SAMPLE_MAX_FRAMES;
    /* the functions of the stack, outermost first; a return address's
     * call is the instruction before it */
    uint32_t fns[NP_SAMPLE_MAX_FRAMES];
    bool included = !np_model_opts(m)->ninclude;
    unsigned first = 0; /* the outermost frame kept: the outermost included one */
    for (unsigned i = 0; i < n; i++) {
        uint64_t addr = frames[i] - (i && return_addrs && frames[i]);
        unsigned at = n - 1 - i;
        if ((rc = np_model_function_at(m, addr, &fns[at])))
            return rc;
        uint8_t f = flags_of(m, s, fns[at], &rc);
        if (rc)
            return rc;
        if (f & FNF_EXCLUDED)
            return left_out(m, s, ti, time_ns); /* inside an excluded function */
        if (f & FNF_INCLUDED)
            included = true, first = at;
    }
    if (!included)
        return left_out(m, s, ti, time_ns);
    uint64_t period_ns = set ? set->period_ns : 0;
    uint64_t ns = period_ns && periods > UINT64_MAX / period_ns ? UINT64_MAX : periods * period_ns;
    s->info.samples++;
    s->info.periods += periods;
    if ((rc = add_pc(m, s, frames[0], fns[n - 1], periods)))
        return rc;
    unsigned end = n, max_depth = np_model_opts(m)->max_depth;
    if (max_depth && end - first > max_depth)
        end = first + max_depth; /* deeper frames' time stays in the deepest kept */
    uint32_t node, path[NP_SAMPLE_MAX_FRAMES];
    if ((rc = thread_root(s, ti, time_ns, &node)))
        return rc;
    for (unsigned i = first; i < end; i++)
        if ((rc = stack_node(s, node, fns[i], ti, &node)))
            return rc;
        else
            path[i - first] = node;
    if (np_model_listened(m) && (rc = timeline_sample(s, ti, time_ns, ns, path, end - first)))
        return rc;
    struct snode *leaf = &s->nodes[node];
    leaf->samples++;
    leaf->periods += periods;
    leaf->ns += ns;
    return 0;
}

/* ---- the profile from the samples ------------------------------------------ */

/* The calls grouped by thread, each thread's in the order they began
 * (a counting sort: stable, where no comparison of times could be). */
static int calls_by_thread(struct np_model_samples *s)
{
    size_t *at = calloc(s->cap_threads + 1, sizeof *at);
    struct np_call *by = malloc((s->n_calls ? s->n_calls : 1) * sizeof *by);
    if (!at || !by) {
        free(at);
        free(by);
        return ENOMEM_RC;
    }
    for (size_t i = 0; i < s->n_calls; i++)
        at[s->calls[i].thread + 1]++;
    for (size_t t = 0; t < s->cap_threads; t++)
        at[t + 1] += at[t];
    for (size_t i = 0; i < s->n_calls; i++)
        by[at[s->calls[i].thread]++] = s->calls[i];
    free(at);
    free(s->calls);
    s->calls = by;
    s->cap_calls = s->n_calls ? s->n_calls : 1;
    return 0;
}

/* Tells the listener the estimated calls, thread after thread, each
 * call's begin after its callers' and its end before theirs: a call ends
 * when the next one of its thread is no deeper (the calls of a thread
 * nest, their depth being their place on the sampled stack). */
static int tell_timeline(struct np_model *m, struct np_model_samples *s)
{
    if (calls_by_thread(s))
        return ENOMEM_RC;
    for (size_t i = 0; i < s->n_calls; i++)
        if (s->calls[i].start_ns < s->first_call_ns)
            s->first_call_ns = s->calls[i].start_ns;
    size_t depth = 0, cap = 0;
    const struct np_call **open = NULL;
    int rc = 0;
    for (size_t i = 0; !rc && i <= s->n_calls; i++) {
        const struct np_call *c = i < s->n_calls ? &s->calls[i] : NULL;
        while (!rc && depth && (!c || open[depth - 1]->thread != c->thread || open[depth - 1]->depth >= c->depth))
            rc = np_model_tell(m, open[--depth], false);
        if (rc || !c)
            break;
        if (NP_GROW(open, cap, depth + 1) < 0) {
            rc = ENOMEM_RC;
            break;
        }
        open[depth++] = c;
        struct np_call begin = *c;
        begin.duration_ns = 0;
        rc = np_model_tell(m, &begin, true);
    }
    free(open);
    return rc;
}

/* Adds each sample ending at stack node K to the functions and arcs on
 * its path, each once. STAMP: function -> last K + 1 that counted it. */
static int add_path(struct np_model *m, struct np_model_samples *s, uint32_t k, uint32_t *stamp)
{
    const struct snode *leaf = &s->nodes[k];
    struct { uint32_t caller, callee; bool outer; } arcs[NP_SAMPLE_MAX_FRAMES];
    unsigned narcs = 0;
    size_t nf;
    struct np_function *fns = (struct np_function *)np_model_functions(m, &nf);
    fns[leaf->function].self_ns += leaf->ns;
    for (uint32_t i = k; s->nodes[i].function != NP_NONE; i = s->nodes[i].parent) {
        const struct snode *n = &s->nodes[i];
        struct np_function *f = &fns[n->function];
        if (stamp[n->function] != k + 1) {
            stamp[n->function] = k + 1;
            f->calls += leaf->samples;
            f->total_ns += leaf->ns;
        }
        uint32_t caller = s->nodes[n->parent].function;
        unsigned a = 0;
        while (a < narcs && !(arcs[a].caller == caller && arcs[a].callee == n->function))
            a++;
        if (a == narcs && narcs < NP_SAMPLE_MAX_FRAMES)
            arcs[narcs].caller = caller, arcs[narcs].callee = n->function, arcs[narcs++].outer = false;
        /* going outwards: the arc into the function's outermost frame is
         * the last one met, the one its time counts once for */
        for (unsigned b = 0; b < narcs; b++)
            if (arcs[b].callee == n->function)
                arcs[b].outer = b == a;
    }
    for (unsigned a = 0; a < narcs; a++) {
        int rc = np_model_add_arc(m, arcs[a].caller, arcs[a].callee, leaf->samples, leaf->ns,
                                  arcs[a].outer ? leaf->ns : 0);
        if (rc)
            return rc;
    }
    return 0;
}

/* The stack trees become the call trees: node K (parents come before
 * children) is the model's node TO[K]; each gets the samples of its
 * subtree. */
static int build_tree(struct np_model *m, struct np_model_samples *s, uint32_t *to, uint64_t *sub_samples,
                      uint64_t *sub_ns)
{
    size_t n;
    struct np_thread *threads = (struct np_thread *)np_model_threads(m, &n);
    for (size_t k = 0; k < s->n_nodes; k++) {
        const struct snode *sn = &s->nodes[k];
        if (sn->parent == NP_NONE)
            to[k] = threads[sn->thread].root;
        else if (np_model_child_at(m, to[sn->parent], sn->function, &to[k]))
            return ENOMEM_RC;
        sub_samples[k] = sn->samples;
        sub_ns[k] = sn->ns;
    }
    for (size_t k = s->n_nodes; k-- > 0;)
        if (s->nodes[k].parent != NP_NONE) {
            sub_samples[s->nodes[k].parent] += sub_samples[k];
            sub_ns[s->nodes[k].parent] += sub_ns[k];
        }
    struct np_node *nodes = (struct np_node *)np_model_nodes(m, &n);
    for (size_t k = 0; k < s->n_nodes; k++) {
        struct np_node *mn = &nodes[to[k]];
        mn->calls += sub_samples[k];
        mn->total_ns += sub_ns[k];
        if (s->nodes[k].parent == NP_NONE) {
            threads[s->nodes[k].thread].calls += sub_samples[k];
            threads[s->nodes[k].thread].total_ns += sub_ns[k];
        } else {
            mn->self_ns += s->nodes[k].ns;
        }
    }
    return 0;
}

static int build_profile(struct np_model *m, struct np_model_samples *s)
{
    size_t nf;
    np_model_functions(m, &nf);
    uint32_t *stamp = calloc(nf ? nf : 1, sizeof *stamp);
    uint32_t *to = malloc((s->n_nodes ? s->n_nodes : 1) * sizeof *to);
    uint64_t *sub = malloc((s->n_nodes ? s->n_nodes : 1) * 2 * sizeof *sub);
    int rc = stamp && to && sub ? build_tree(m, s, to, sub, sub + s->n_nodes) : ENOMEM_RC;
    for (uint32_t k = 0; !rc && k < s->n_nodes; k++)
        if (s->nodes[k].samples && s->nodes[k].function != NP_NONE)
            rc = add_path(m, s, k, stamp);
    /* the timeline: the calls still open end with their thread's last
     * sample; each goes to the model's node of its stack node */
    for (size_t ti = 0; !rc && ti < s->cap_threads; ti++)
        close_frames(s, (uint32_t)ti, 0, s->threads[ti].prev_ns);
    if (!rc) {
        for (size_t i = 0; i < s->n_calls; i++)
            s->calls[i].node = to[s->calls[i].node];
        rc = tell_timeline(m, s);
    }
    /* one sample has no duration: no min, max or sum per call */
    struct np_function *fns = (struct np_function *)np_model_functions(m, &nf);
    for (size_t i = 0; i < nf; i++)
        fns[i].min_ns = fns[i].max_ns = fns[i].sum_ns = 0;
    free(stamp);
    free(to);
    free(sub);
    return rc;
}

int np_model_samples_finish(struct np_model *m)
{
    struct np_model_samples *s = np_model_samples_get(m);
    bool from_samples = np_model_opts(m)->from_samples;
    if (!s && !from_samples)
        return 0;
    if (!s && !(s = state_of(m)))
        return ENOMEM_RC;
    size_t nt, np;
    struct np_thread *threads = (struct np_thread *)np_model_threads(m, &nt);
    struct np_process *procs = (struct np_process *)np_model_processes(m, &np);
    bool calls_seen = false; /* a call event (ENTRY, EXIT, LOST, SWITCH) of a selected thread */
    for (size_t i = 0; i < nt; i++)
        calls_seen |= threads[i].first_ns || threads[i].last_ns;
    /* threads seen only through their samples span their samples */
    for (size_t i = 0; i < nt && i < s->cap_threads; i++) {
        const struct sthread *st = &s->threads[i];
        struct np_thread *th = &threads[i];
        if (!st->root_plus1 || th->first_ns || th->last_ns)
            continue;
        th->first_ns = st->first_ns;
        th->last_ns = st->last_ns;
        struct np_process *p = &procs[th->process];
        if (!p->complete && p->end_ns < th->last_ns)
            p->end_ns = th->last_ns;
    }
    s->estimated = from_samples || (s->info.samples && !calls_seen);
    return s->estimated ? build_profile(m, s) : 0;
}

/* ---- accessors ------------------------------------------------------------------ */

const struct np_sample_pc *np_model_sample_pcs(const struct np_model *m, size_t *n)
{
    const struct np_model_samples *s = np_model_samples_get(m);
    *n = s ? s->n_pcs : 0;
    return s ? s->pcs : NULL;
}

const struct np_model_sampling *np_model_sampling(const struct np_model *m)
{
    static const struct np_model_sampling none;
    const struct np_model_samples *s = np_model_samples_get(m);
    return s ? &s->info : &none;
}

uint64_t np_model_samples_first_ns(const struct np_model *m)
{
    const struct np_model_samples *s = np_model_samples_get(m);
    return s ? s->first_call_ns : UINT64_MAX;
}

bool np_model_estimated(const struct np_model *m)
{
    const struct np_model_samples *s = np_model_samples_get(m);
    return s && s->estimated;
}

const char *np_model_estimate_label(const struct np_model *m, char *buf, size_t size)
{
    const struct np_model_sampling *s = np_model_sampling(m);
    int n = snprintf(buf, size, "times estimated from %" PRIu64 " sample%s at %" PRIu32 " Hz (%s time)", s->samples,
                     s->samples == 1 ? "" : "s", s->hz, s->cpu_time ? "CPU" : "wall");
    /* periods the sampler could not take are left out of the estimate: said */
    if (s->skipped && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "; %" PRIu64 " period%s not sampled (in a hook before it knew its "
                 "function, or no buffer)", s->skipped, s->skipped == 1 ? "" : "s");
    return buf;
}
