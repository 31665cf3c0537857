/* stacks.c - the call tree with deep recursion merged (stacks.h).
 *
 * One pass in reverse node order (a child always comes after its parent)
 * finds, per node, the longest run of calls of its function below it,
 * itself included (run[]). Then a walk of every thread's tree in preorder
 * gives each node its frame, from its parent's: merged into the parent's
 * frame (a run, or below the depth limit), or a child frame of it for its
 * function, found or made. A frame that only ever had one node's calls
 * (most) has children of distinct functions, so its children are made
 * without a look-up; once a second node joins a frame, its children go
 * into a map by (frame, function) and are looked up there. */
#define _GNU_SOURCE
#include "stacks.h"
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"

struct build {
    struct np_stacks *s;
    const struct np_node *nodes;
    uint32_t *frame_of;     /* node -> its frame */
    uint32_t *level;        /* node -> its level in a merged frame (1: the top) */
    uint32_t *run;          /* node -> its function's longest run from it down */
    uint8_t *shared;        /* frame -> more than one node joined it */
    uint32_t *deeper;       /* frame -> its DEEPER child, or NP_NONE */
    size_t shared_cap, deeper_cap;
    struct np_hmap calls, recursions; /* (frame << 32 | function) -> child frame, for shared frames */
};

static int64_t new_frame(struct build *b, uint32_t parent, uint32_t function, uint32_t thread, uint32_t depth,
                         enum np_stack_kind kind)
{
    struct np_stacks *s = b->s;
    if (s->n >= NP_NONE || NP_GROW(s->frames, s->cap, s->n + 1) < 0 ||
        NP_GROW(b->shared, b->shared_cap, s->n + 1) < 0 || NP_GROW(b->deeper, b->deeper_cap, s->n + 1) < 0)
        return -1;
    uint32_t i = (uint32_t)s->n++;
    s->frames[i] = (struct np_stack_frame){ parent, NP_NONE, NP_NONE, NP_NONE, function, thread, depth,
                                            (uint32_t)kind, 0, 0, 0, 0, 0 };
    b->shared[i] = 0;
    b->deeper[i] = NP_NONE;
    if (parent != NP_NONE) {
        struct np_stack_frame *p = &s->frames[parent];
        if (p->last_child == NP_NONE)
            p->first_child = i;
        else
            s->frames[p->last_child].next_sibling = i;
        p->last_child = i;
    }
    return i;
}

static struct np_hmap *map_for(struct build *b, enum np_stack_kind kind)
{
    return kind == NP_STACK_RECURSION ? &b->recursions : &b->calls;
}

/* Frame P has had a second node join it: its children go into the maps. */
static int share(struct build *b, uint32_t p)
{
    if (b->shared[p])
        return 0;
    b->shared[p] = 1;
    for (uint32_t c = b->s->frames[p].first_child; c != NP_NONE; c = b->s->frames[c].next_sibling) {
        const struct np_stack_frame *f = &b->s->frames[c];
        if (f->kind != NP_STACK_DEEPER &&
            np_hmap_put(map_for(b, f->kind), (uint64_t)p << 32 | f->function, c))
            return -1;
    }
    return 0;
}

/* The child of frame P of KIND for FUNCTION, found or made, in *OUT. */
static int child(struct build *b, uint32_t p, uint32_t function, enum np_stack_kind kind, uint32_t *out)
{
    uint64_t key = (uint64_t)p << 32 | function;
    if (b->shared[p]) {
        uint64_t *v = np_hmap_find(map_for(b, kind), key);
        if (v) {
            *out = (uint32_t)*v;
            /* a second node in this frame: its children may meet */
            return kind == NP_STACK_CALL ? share(b, *out) : 0;
        }
    }
    const struct np_stack_frame *pf = &b->s->frames[p];
    int64_t c = new_frame(b, p, function, pf->thread, pf->depth + 1, kind);
    if (c < 0 || (b->shared[p] && np_hmap_put(map_for(b, kind), key, (uint64_t)c)))
        return -1;
    *out = (uint32_t)c;
    /* several nodes make up these from the start */
    return kind == NP_STACK_RECURSION ? share(b, *out) : 0;
}

static void add(struct np_stack_frame *f, const struct np_node *n, bool top)
{
    f->calls += n->calls;
    f->resynced += n->resynced;
    if (top)
        f->total_ns += n->total_ns;
    if (f->kind == NP_STACK_DEEPER) /* the time of everything it merges */
        f->self_ns += top ? n->total_ns : 0;
    else
        f->self_ns += n->self_ns;
}

static void merge(struct build *b, uint32_t frame, uint32_t node, uint32_t level)
{
    struct np_stack_frame *f = &b->s->frames[frame];
    b->frame_of[node] = frame;
    b->level[node] = level;
    if (level > f->merged)
        f->merged = level;
    add(f, &b->nodes[node], level == 1);
}

/* The frame of node N, whose parent has its frame. */
static int place(struct build *b, uint32_t n)
{
    const struct np_node *nd = &b->nodes[n];
    uint32_t pn = nd->parent, p = b->frame_of[pn];
    const struct np_stack_frame *pf = &b->s->frames[p];
    uint32_t c;
    /* merging into the parent's frame first: it adds no level */
    if (pf->kind == NP_STACK_DEEPER || (pf->kind == NP_STACK_RECURSION && pf->function == nd->function)) {
        merge(b, p, n, b->level[pn] + 1);
        return 0;
    }
    if (pf->depth >= NP_STACK_DEPTH) {
        if (b->deeper[p] == NP_NONE) {
            int64_t d = new_frame(b, p, NP_NONE, pf->thread, pf->depth + 1, NP_STACK_DEEPER);
            if (d < 0)
                return -1;
            b->deeper[p] = (uint32_t)d;
            b->s->deeper++;
        }
        merge(b, b->deeper[p], n, 1);
        return 0;
    }
    if (b->nodes[pn].function == nd->function && b->run[n] > NP_STACK_RUN) {
        size_t before = b->s->n;
        if (child(b, p, nd->function, NP_STACK_RECURSION, &c))
            return -1;
        if (b->s->n > before) {
            if (b->s->example == NP_NONE)
                b->s->example = c;
            b->s->recursions++;
        }
        merge(b, c, n, 1);
        return 0;
    }
    if (child(b, p, nd->function, NP_STACK_CALL, &c))
        return -1;
    b->frame_of[n] = c;
    add(&b->s->frames[c], nd, true);
    return 0;
}

/* The node after N in preorder within TOP's subtree (below N only when
 * DESCEND), or NP_NONE. */
static uint32_t next_node(const struct np_node *nodes, uint32_t n, uint32_t top, bool descend)
{
    if (descend && nodes[n].first_child != NP_NONE)
        return nodes[n].first_child;
    for (; n != top; n = nodes[n].parent)
        if (nodes[n].next_sibling != NP_NONE)
            return nodes[n].next_sibling;
    return NP_NONE;
}

int np_stacks_build(struct np_stacks *s, const struct np_model *m)
{
    size_t nn, nt;
    const struct np_node *nodes = np_model_nodes(m, &nn);
    const struct np_thread *threads = np_model_threads(m, &nt);
    memset(s, 0, sizeof *s);
    s->example = NP_NONE;
    struct build b = { .s = s, .nodes = nodes };
    np_hmap_init(&b.calls);
    np_hmap_init(&b.recursions);
    b.frame_of = malloc((nn ? nn : 1) * sizeof *b.frame_of);
    b.level = malloc((nn ? nn : 1) * sizeof *b.level);
    b.run = malloc((nn ? nn : 1) * sizeof *b.run);
    s->roots = malloc((nt ? nt : 1) * sizeof *s->roots);
    int rc = b.frame_of && b.level && b.run && s->roots ? 0 : -1;
    for (size_t i = 0; i < nn && !rc; i++)
        b.run[i] = 1;
    for (size_t i = nn; i-- > 0 && !rc;) {
        const struct np_node *n = &nodes[i];
        if (n->calls && n->function != NP_NONE && n->parent != NP_NONE && nodes[n->parent].function == n->function &&
            b.run[n->parent] < b.run[i] + 1)
            b.run[n->parent] = b.run[i] + 1;
    }
    for (size_t t = 0; t < nt && !rc; t++) {
        uint32_t root = threads[t].root;
        int64_t r = new_frame(&b, NP_NONE, NP_NONE, (uint32_t)t, 0, NP_STACK_THREAD);
        if (r < 0) {
            rc = -1;
            break;
        }
        s->roots[t] = (uint32_t)r;
        if (root == NP_NONE)
            continue;
        s->frames[r].calls = nodes[root].calls;
        s->frames[r].total_ns = nodes[root].total_ns;
        b.frame_of[root] = (uint32_t)r;
        /* a node without calls (all dropped) is left out with what is below it */
        for (uint32_t i = next_node(nodes, root, root, true); i != NP_NONE && !rc;
             i = next_node(nodes, i, root, nodes[i].calls != 0))
            rc = nodes[i].calls ? place(&b, i) : 0;
    }
    free(b.frame_of);
    free(b.level);
    free(b.run);
    free(b.shared);
    free(b.deeper);
    np_hmap_free(&b.calls);
    np_hmap_free(&b.recursions);
    if (rc)
        np_stacks_free(s);
    return rc;
}

void np_stacks_free(struct np_stacks *s)
{
    free(s->frames);
    free(s->roots);
    memset(s, 0, sizeof *s);
    s->example = NP_NONE;
}

const char *np_stack_name(const struct np_stacks *s, const struct np_model *m, uint32_t f, char *buf, size_t size)
{
    const struct np_stack_frame *fr = &s->frames[f];
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    const char *mark = fr->resynced ? " (?)" : "";
    switch (fr->kind) {
    case NP_STACK_CALL:
        if (!*mark)
            return fns[fr->function].name;
        snprintf(buf, size, "%s%s", fns[fr->function].name, mark);
        return buf;
    case NP_STACK_RECURSION:
        snprintf(buf, size, "%s [recursion x%" PRIu64 "]%s", fns[fr->function].name, fr->merged, mark);
        return buf;
    case NP_STACK_DEEPER:
        snprintf(buf, size, "[%" PRIu64 " levels merged]%s", fr->merged, mark);
        return buf;
    }
    return "";
}

const char *np_stacks_note(const struct np_stacks *s, const struct np_model *m, char *buf, size_t size)
{
    if (!s->recursions && !s->deeper)
        return NULL;
    char name[NP_STACK_NAME_MAX];
    int n = 0;
    if (s->recursions)
        n = snprintf(buf, size, "a run of over %d calls of a function by itself is one frame (%zu run%s%s %.200s)",
                     NP_STACK_RUN, s->recursions, s->recursions == 1 ? "" : "s", s->recursions == 1 ? ":" : ", e.g.",
                     np_stack_name(s, m, s->example, name, sizeof name));
    if (s->deeper && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "%sstacks over %d levels deep end in one frame holding the rest (%zu such "
                 "frame%s)", n ? "; " : "", NP_STACK_DEPTH, s->deeper, s->deeper == 1 ? "" : "s");
    return buf;
}
