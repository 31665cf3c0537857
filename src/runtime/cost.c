/* cost.c - the function cost API: set-up and state of the per-thread
 * measurement buffer. The work on each call is in cost_hot.h; merging the
 * sums into the shared statistics table is in stats.c.
 *
 * The buffer holds, in this order: a magic word (so that the end of the
 * thread can tell the buffer is still there), the table of per-function
 * sums (a power of two of 64-byte slots, on a cache-line boundary, taking
 * at most three quarters of the buffer, and filled to at most three
 * quarters of its slots), the slots in order of first appearance (4 bytes
 * per slot), and the stack of open calls (24 bytes per call, after a spare
 * one that saves the exit a test) in the rest. */
#include "cost_hot.h"
#include "hooks.h"

#define UNIT NP_COST_RECORD_SIZE
#define MAGIC 0x4e50434f53543031ull /* "NPCOST01" */
#define MIN_SIZE 256u /* the magic, alignment, 2 slots and some open calls */
#define SLOT_BYTES (sizeof(struct np_cost_fn) + sizeof(uint32_t))
_Static_assert(sizeof(struct np_cost_fn) == 64, "one cache line per function");
_Static_assert(sizeof(struct np_cost_frame) == 24, "frame size");

int np_cost_lines(size_t size)
{
    size_t n = size / UNIT;
    return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

size_t np_cost_buffer_size(int lines)
{
    return lines > 0 ? (size_t)lines * UNIT : 0;
}

/* Lays BUF out; 0 when SIZE is too small for one function and one call. */
static int layout(struct np_cost_state *c, void *buf, size_t size)
{
    uintptr_t base = (uintptr_t)buf, end = base + (size & ~(size_t)7);
    uintptr_t tab = (base + sizeof(uint64_t) + 63) & ~(uintptr_t)63;
    if (tab >= end)
        return 0;
    size_t avail = end - tab, n = 2;
    unsigned bits = 1;
    while (2 * n * SLOT_BYTES <= avail / 4 * 3 && bits < 30) {
        n *= 2;
        bits++;
    }
    if (n * SLOT_BYTES + 2 * sizeof(struct np_cost_frame) > avail)
        return 0;
    *c = (struct np_cost_state){ 0 };
    c->magic = buf;
    c->tab = (struct np_cost_fn *)tab;
    c->order = (uint32_t *)(tab + n * sizeof(struct np_cost_fn));
    c->frames = (struct np_cost_frame *)(c->order + n) + 1;
    size_t frames = (avail - n * SLOT_BYTES) / sizeof(struct np_cost_frame) - 1;
    c->top = c->frames;
    c->end = c->frames + (frames > 0xffffffffu ? 0xffffffffu : frames);
    c->shift = (NP_ADDR_BITS > 32 ? 64 : 32) - bits;
    c->mask = (uint32_t)n - 1;
    c->limit = (uint32_t)(n / 4 * 3 + (n == 2));
    return 1;
}

int np_cost_init(void *buf, size_t size)
{
    struct np_thread *t = np_self();
    if (t->flags & NP_F_COST_INIT)
        return np_error(NP_EALREADY, "np_cost_init", "already initialised on this thread (np_cost_shutdown first)");
    if (!np_hooks_have(NP_MECH_COST))
        return np_error(NP_EINVAL, "np_cost_init", "this library was built without function cost (link libnanoprof or libnanoprof-cost)");
    if (!buf)
        return np_error(NP_EINVAL, "np_cost_init", "buffer is NULL");
    if (((uintptr_t)buf & 7) != 0)
        return np_error(NP_EINVAL, "np_cost_init", "buffer must be 8-byte aligned");
    struct np_cost_state c;
    if (size < MIN_SIZE || !layout(&c, buf, size))
        return np_error(NP_ESMALL, "np_cost_init", "buffer too small: need at least 256 bytes");
    if (!np_api_enter(t, "np_cost_init"))
        return NP_EBUSY;
    np_port_clock_thread();
    __builtin_memset(c.tab, 0, ((size_t)c.mask + 1) * sizeof *c.tab);
    *c.magic = MAGIC;
    t->cost = c;
    __atomic_store_n(&np_cost_exit_hook, np_cost_thread_exit, __ATOMIC_RELEASE);
    __atomic_store_n(&np_cost_event_hook, np_cost_event, __ATOMIC_RELEASE);
    t->flags |= NP_F_COST_INIT | NP_F_COST_ON;
    np_cost_sync_flags(t);
    np_thread_unlock(t);
    return NP_OK;
}

void np_cost_event(struct np_thread *t, uint64_t fn, int exit)
{
    if (exit)
        np_cost_exit(t);
    else
        np_cost_enter(t, fn);
}

static struct np_cost_fn *insert(struct np_cost_state *c, uint64_t fn)
{
    for (uint32_t i = np_cost_hash(c, fn);; i = (i + 1) & c->mask) {
        struct np_cost_fn *s = &c->tab[i];
        if (s->fn == fn)
            return s;
        if (s->fn == 0) {
            if (c->count == c->limit)
                return NULL;
            s->fn = fn;
            s->min = UINT64_MAX;
            c->order[c->count++] = i;
            return s;
        }
    }
}

void np_cost_reset(struct np_cost_state *c)
{
    struct np_cost_frame *f = c->frames;
    uint32_t depth = np_cost_depth(c);
    for (uint32_t i = 0; i < depth; i++)
        f[i].ref = np_cost_ref_slot(f[i].ref)->fn;
    for (uint32_t k = 0; k < c->count; k++)
        __builtin_memset(&c->tab[c->order[k]], 0, sizeof *c->tab);
    c->count = 0;
    /* the open calls' functions were all in the table: they fit again */
    for (uint32_t i = 0; i < depth; i++) {
        struct np_cost_fn *s = insert(c, f[i].ref);
        f[i].ref = (uintptr_t)s;
        s->active++;
    }
}

struct np_cost_fn *np_cost_slot(struct np_thread *t, uint64_t fn)
{
    struct np_cost_state *c = &t->cost;
    struct np_cost_fn *s = insert(c, fn);
    if (s)
        return s;
    /* Full: merge into the default table, which leaves only the functions
     * of open calls, and try again. */
    void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
    if (stats && np_stats_merge(stats, t) != NP_EINVAL)
        s = insert(c, fn);
    return s;
}

void np_cost_credit_open(struct np_thread *t)
{
    struct np_cost_state *c = &t->cost;
    uint32_t depth = np_cost_depth(c);
    if (!depth)
        return; /* no clock read: the steps clock stays reproducible */
    uint64_t now = np_thread_time(t);
    struct np_cost_frame *f = c->frames;
    for (uint32_t i = 0; i < depth; i++) {
        uint64_t until = i + 1 < depth ? f[i + 1].start : now;
        uint64_t span = (int64_t)(until - f[i].start) > 0 ? until - f[i].start : 0;
        if (span > f[i].child) {
            np_cost_ref_slot(f[i].ref)->self += span - f[i].child;
            f[i].child = span;
        }
    }
    c->last = now;
}

/* Merges T's sums into the default table, if there is one. */
static void flush(struct np_thread *t)
{
    void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
    if (stats) {
        np_cost_credit_open(t);
        np_stats_merge(stats, t);
    }
}

void np_cost_thread_exit(struct np_thread *t)
{
    if ((t->flags & NP_F_COST_INIT) && np_thread_lock(t)) {
        struct np_cost_state *c = &t->cost;
        void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
        if (*c->magic != MAGIC) {
            np_error(NP_EINVAL, "thread exit",
                     "a thread's measurement buffer was overwritten before the thread ended: its function costs are lost");
        } else if (stats) {
            /* Calls still open never return (pthread_exit): not counted,
             * and said so. */
            c->lost += 2 * (uint64_t)np_cost_depth(c) + c->lost_open;
            np_stats_merge(stats, t);
        }
        t->flags &= ~(NP_F_COST_INIT | NP_F_COST_ON | NP_F_COST_SLOW);
        np_thread_unlock(t);
    }
}

int np_cost_shutdown(void)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_COST_INIT))
        return np_error(NP_ENOTINIT, "np_cost_shutdown", "cost measurement not initialised on this thread");
    if (!np_api_enter(t, "np_cost_shutdown"))
        return NP_EBUSY;
    flush(t);
    t->flags &= ~(NP_F_COST_INIT | NP_F_COST_ON | NP_F_COST_SLOW);
    t->cost = (struct np_cost_state){ 0 };
    np_thread_unlock(t);
    return NP_OK;
}

static int set_on(const char *who, int on) /* WHO: an NP_MSG value */
{
    return np_switch_mechanism(who, NP_F_COST_INIT, NP_F_COST_ON, on,
                               NP_MSG("cost measurement not initialised on this thread"));
}

int np_cost_enable(void) { return set_on(NP_MSG("np_cost_enable"), 1); }
int np_cost_disable(void) { return set_on(NP_MSG("np_cost_disable"), 0); }
int np_cost_restore(int previous) { return set_on(NP_MSG("np_cost_restore"), previous != 0); }

int np_cost_clear(void)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_COST_INIT))
        return np_error(NP_ENOTINIT, "np_cost_clear", "cost measurement not initialised on this thread");
    if (!np_api_enter(t, "np_cost_clear"))
        return NP_EBUSY;
    struct np_cost_state *c = &t->cost;
    /* Calls open now will exit with none open: those exits are ignored, as
     * for calls entered before measuring began. */
    c->top = c->frames;
    c->lost_open = 0;
    np_cost_reset(c);
    np_cost_sync_flags(t);
    np_thread_unlock(t);
    return NP_OK;
}

#if NP_PORT_HOSTED /* a jump out of instrumented frames: setjmp.c, catch.c */
/* Closes the open calls above DEPTH at time NOW, as their exits would. */
static void close_to(struct np_cost_state *c, uint32_t depth, uint64_t now)
{
    while (np_cost_depth(c) > depth) {
        struct np_cost_frame *f = c->top - 1;
        struct np_cost_fn *s = np_cost_ref_slot(f->ref);
        uint64_t dur = (int64_t)(now - f->start) > 0 ? now - f->start : 0;
        s->calls++;
        if (s->active && --s->active == 0)
            s->total += dur;
        s->min = dur < s->min ? dur : s->min;
        s->max = dur > s->max ? dur : s->max;
        s->self += dur > f->child ? dur - f->child : 0;
        f[-1].child += dur;
        c->top = f;
    }
}

void np_cost_unwind(struct np_thread *t, uint32_t depth, uint64_t lost_open, int from_hook)
{
    struct np_cost_state *c = &t->cost;
    if (from_hook) {
        /* The jump left a hook (a signal handler that interrupted it, or a
         * user hook): an entry may have counted its frame without its
         * function's open count, and an exit may have added part of its
         * call. That call is popped and counted lost (its sums may be
         * partly in), and the open counts are made again. */
        struct np_cost_frame *f;
        for (f = c->frames; f < c->top; f++)
            np_cost_ref_slot(f->ref)->active = 0;
        if (c->top > c->frames && (c->top[-1].ref & NP_COST_CLOSING)) {
            c->top--;
            c->lost += 2;
        }
        for (f = c->frames; f < c->top; f++)
            np_cost_ref_slot(f->ref)->active++;
    }
    uint32_t open = np_cost_depth(c);
    if ((uint64_t)open + c->lost_open <= (uint64_t)depth + lost_open)
        return;
    uint64_t k = open + c->lost_open - depth - lost_open;
    uint64_t r = k < c->lost_open ? k : c->lost_open;
    c->lost_open -= r; /* the dropped calls were the innermost */
    np_cost_sync_flags(t);
    k -= r;
    if (k) {
        uint64_t now = np_thread_time(t);
        close_to(c, open - (uint32_t)k, now);
        c->last = now;
    }
}
#endif

uint64_t np_thread_time_resync(struct np_thread *t)
{
    uint64_t now = np_thread_resync_raw(t);
    /* The CPU-time clock and the counter are read at slightly different
     * moments, so the estimate may overshoot by a little: never let the
     * thread's time run backwards past its last entry or exit. */
    const struct np_cost_state *c = &t->cost;
    uint64_t floor = np_cost_now_floor(c);
    if (floor && (int64_t)(now - t->off - floor) < 0)
        t->off = now - floor;
    return now - t->off;
}

const char *np_cost_clock_name(void)
{
    np_port_clock_init();
    return np_port_clock_name();
}
