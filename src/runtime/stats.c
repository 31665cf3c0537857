/* stats.c - the function cost statistics table, shared by all threads, and
 * the merge of a thread's sums into it.
 *
 * The table lives in the buffer the program gives np_stats_init: a header,
 * an array of per-function entries in order of first appearance, and an
 * open-addressing hash index over them (twice as many slots as entries, a
 * power of two). One critical section of the port guards it (a spin lock
 * on a host, interrupts masked on a target), so any thread may merge into
 * a shared table while others measure. Times are kept in clock ticks and
 * converted to nanoseconds when read.
 *
 * Each thread adds its calls up as they end, in a small table of its own
 * (cost_hot.h); a merge adds those sums here: counts, totals and self
 * times add, minima and maxima combine. */
#include "ns.h"
#include "hooks.h"
#include "report.h"
#include "../port/port.h"

#define STATS_MAGIC 0x4e505354u /* "NPST" */

struct stats_hdr {
    uint32_t magic;
    uint32_t cap;        /* entries */
    uint32_t count;
    uint32_t hmask;      /* index slots - 1 */
    int lock;
    uint32_t full;       /* functions that found no room */
    uint64_t lost;       /* records dropped for want of room */
};

struct stat_entry {
    uint64_t fn;         /* address, NP_REC_NAMED for a name */
    uint64_t calls, total, self, min, max;
    uint64_t pad;        /* keeps the documented 56 bytes per function */
};

void *np_default_stats;

static size_t slots_for(size_t cap)
{
    size_t s = 2;
    while (s < 2 * cap)
        s <<= 1;
    return s;
}

static size_t bytes_for(size_t cap)
{
    return sizeof(struct stats_hdr) + cap * sizeof(struct stat_entry) + slots_for(cap) * sizeof(uint32_t);
}

static struct stat_entry *entries(struct stats_hdr *h)
{
    return (struct stat_entry *)(h + 1);
}

static uint32_t *index_of(struct stats_hdr *h)
{
    return (uint32_t *)(entries(h) + h->cap);
}

int np_stats_capacity(size_t size)
{
    size_t lo = 0, hi = size / sizeof(struct stat_entry) + 1;
    if (size < bytes_for(1))
        return 0;
    while (lo + 1 < hi) { /* largest cap that fits */
        size_t mid = (lo + hi) / 2;
        if (bytes_for(mid) <= size)
            lo = mid;
        else
            hi = mid;
    }
    return lo > 0x7fffffff ? 0x7fffffff : (int)lo;
}

size_t np_stats_buffer_size(int functions)
{
    return functions > 0 ? bytes_for((size_t)functions) : 0;
}

static np_port_crit lock(struct stats_hdr *h)
{
    return np_port_crit_enter(&h->lock);
}

static void unlock(struct stats_hdr *h, np_port_crit held)
{
    np_port_crit_exit(&h->lock, held);
}

static uint32_t hash(uint64_t fn)
{
    fn ^= fn >> 33;
    fn *= 0xff51afd7ed558ccdull;
    fn ^= fn >> 33;
    return (uint32_t)fn;
}

/* The entry for FN; with ADD, makes one when there is room (else NULL). */
static struct stat_entry *find(struct stats_hdr *h, uint64_t fn, int add)
{
    uint32_t *idx = index_of(h);
    for (uint32_t i = hash(fn) & h->hmask;; i = (i + 1) & h->hmask) {
        uint32_t v = idx[i];
        if (v == 0) {
            if (!add)
                return NULL;
            if (h->count == h->cap)
                return NULL;
            struct stat_entry *e = &entries(h)[h->count++];
            __builtin_memset(e, 0, sizeof *e);
            e->fn = fn;
            e->min = UINT64_MAX;
            idx[i] = h->count;
            return e;
        }
        if (entries(h)[v - 1].fn == fn)
            return &entries(h)[v - 1];
    }
}

static void rebuild_index(struct stats_hdr *h)
{
    uint32_t *idx = index_of(h);
    __builtin_memset(idx, 0, (h->hmask + 1) * sizeof *idx);
    for (uint32_t k = 0; k < h->count; k++) {
        uint32_t i = hash(entries(h)[k].fn) & h->hmask;
        while (idx[i])
            i = (i + 1) & h->hmask;
        idx[i] = k + 1;
    }
}

/* WHO: an NP_MSG value */
static struct stats_hdr *table(void *stats, const char *who)
{
    struct stats_hdr *h = stats;
    if (!h || ((uintptr_t)h & 7) || h->magic != STATS_MAGIC) {
        np_error_msg(NP_EINVAL, who, NP_MSG("not a statistics table (np_stats_init first)"));
        return NULL;
    }
    return h;
}

int np_stats_init(void *stats, size_t size)
{
    if (!stats)
        return np_error(NP_EINVAL, "np_stats_init", "buffer is NULL");
    if ((uintptr_t)stats & 7)
        return np_error(NP_EINVAL, "np_stats_init", "buffer must be 8-byte aligned");
    int cap = np_stats_capacity(size);
    if (cap < 1)
        return np_error(NP_ESMALL, "np_stats_init", "buffer too small for even one function");
    struct stats_hdr *h = stats;
    __builtin_memset(h, 0, sizeof *h);
    h->cap = (uint32_t)cap;
    h->hmask = (uint32_t)slots_for((size_t)cap) - 1;
    __builtin_memset(index_of(h), 0, (h->hmask + 1) * sizeof(uint32_t));
    h->magic = STATS_MAGIC;
    np_port_clock_init();
    __atomic_store_n(&np_default_stats, stats, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_stats_merge(void *stats, struct np_thread *t)
{
    struct stats_hdr *h = stats;
    struct np_cost_state *c = &t->cost;
    int status = NP_OK;

    np_port_crit held = lock(h);
    if (h->magic != STATS_MAGIC) { /* shut down meanwhile */
        unlock(h, held);
        return NP_EINVAL;
    }
    for (uint32_t k = 0; k < c->count; k++) {
        const struct np_cost_fn *s = &c->tab[c->order[k]];
        struct stat_entry *e = find(h, s->fn, 1);
        if (!e) {
            h->full += s->calls;
            status = NP_EFULL;
            continue;
        }
        e->calls += s->calls;
        e->total += s->total;
        e->self += s->self;
        if (s->calls && s->min < e->min)
            e->min = s->min;
        if (s->max > e->max)
            e->max = s->max;
    }
    h->lost += c->lost + __atomic_exchange_n(&c->lost_busy, 0, __ATOMIC_RELAXED);
    c->lost = 0;
    unlock(h, held);
    np_cost_reset(c);
    return status;
}

int np_stats_calc(void *stats)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_calc"));
    if (!h)
        return NP_EINVAL;
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_COST_INIT))
        return np_error(NP_ENOTINIT, "np_stats_calc", "cost measurement not initialised on this thread");
    if (!np_api_enter(t, "np_stats_calc"))
        return NP_EBUSY;
    np_cost_credit_open(t);
    int status = np_stats_merge(h, t);
    np_thread_unlock(t);
    if (status == NP_EFULL)
        np_error(NP_EFULL, "np_stats_calc", "statistics table full: some functions not counted");
    return status;
}

static void to_public(const struct stat_entry *e, uint64_t ns, np_func_stats *out)
{
    out->fn = (const void *)(uintptr_t)(e->fn & NP_ADDR_MASK);
    out->named = (e->fn & NP_COST_NAMED) != 0;
    out->calls = e->calls;
    out->total_ns = np_ticks_ns(e->total, ns);
    out->self_ns = np_ticks_ns(e->self, ns);
    out->min_ns = e->calls ? np_ticks_ns(e->min, ns) : 0;
    out->max_ns = np_ticks_ns(e->max, ns);
}

/* Orders index slots [0, n) by total, largest first (heap sort: no memory
 * beyond the table's own index). */
static int before(struct stats_hdr *h, uint32_t a, uint32_t b)
{
    const struct stat_entry *x = &entries(h)[a - 1], *y = &entries(h)[b - 1];
    if (x->total != y->total)
        return x->total < y->total; /* min-heap on total => descending */
    return x->fn > y->fn;
}

static void sift(struct stats_hdr *h, uint32_t *v, uint32_t i, uint32_t n)
{
    for (;;) {
        uint32_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(h, v[l], v[m]))
            m = l;
        if (r < n && before(h, v[r], v[m]))
            m = r;
        if (m == i)
            return;
        uint32_t tmp = v[i];
        v[i] = v[m];
        v[m] = tmp;
        i = m;
    }
}

static void sort_by_total(struct stats_hdr *h, uint32_t *v, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift(h, v, i, n);
    for (uint32_t end = n; end > 1; end--) {
        uint32_t tmp = v[0];
        v[0] = v[end - 1];
        v[end - 1] = tmp;
        sift(h, v, 0, end - 1);
    }
}

int np_stats_dump(void *stats)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_dump"));
    if (!h)
        return NP_EINVAL;
    struct np_thread *t = np_self();
    if (!np_api_enter(t, "np_stats_dump"))
        return NP_EBUSY;
    uint64_t ns = np_port_ns_per_tick_q32();
    np_port_crit held = lock(h);
    uint32_t *v = index_of(h);
    for (uint32_t k = 0; k < h->count; k++)
        v[k] = k + 1;
    sort_by_total(h, v, h->count);
    for (uint32_t k = 0; k < h->count; k++) {
        np_func_stats s;
        to_public(&entries(h)[v[k] - 1], ns, &s);
        if (s.calls)
            NP_REPORT(NP_REP_COST_FN, NP_RV(s.fn), (uint64_t)s.named, s.calls, s.total_ns, s.self_ns, s.min_ns,
                      s.max_ns);
    }
    if (h->lost)
        NP_REPORT(NP_REP_COST_LOST, h->lost);
    if (h->full)
        NP_REPORT(NP_REP_COST_FULL, h->full);
    rebuild_index(h);
    int status = h->full ? NP_EFULL : NP_OK;
    unlock(h, held);
    np_thread_unlock(t);
    return status;
}

int np_stats_shutdown(void *stats)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_shutdown"));
    if (!h)
        return NP_EINVAL;
    struct np_thread *t = np_self();
    if (!np_api_enter(t, "np_stats_shutdown"))
        return NP_EBUSY;
    np_port_crit held = lock(h);
    void *expected = stats;
    __atomic_compare_exchange_n(&np_default_stats, &expected, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    h->magic = 0;
    unlock(h, held);
    np_thread_unlock(t);
    return NP_OK;
}

int np_stats_count(void *stats)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_count"));
    return h ? (int)__atomic_load_n(&h->count, __ATOMIC_ACQUIRE) : NP_EINVAL;
}

int np_stats_get(void *stats, int i, np_func_stats *out)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_get"));
    if (!h)
        return NP_EINVAL;
    if (!out || i < 0)
        return np_error(NP_EINVAL, "np_stats_get", "bad index or NULL output");
    struct np_thread *t = np_self();
    if (!np_api_enter(t, "np_stats_get"))
        return NP_EBUSY;
    uint64_t ns = np_port_ns_per_tick_q32();
    np_port_crit held = lock(h);
    int ok = (uint32_t)i < h->count;
    if (ok)
        to_public(&entries(h)[i], ns, out);
    unlock(h, held);
    np_thread_unlock(t);
    return ok ? NP_OK : np_error(NP_EINVAL, "np_stats_get", "index out of range");
}

int np_stats_find(void *stats, const void *fn, np_func_stats *out)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_find"));
    if (!h)
        return NP_EINVAL;
    if (!out)
        return np_error(NP_EINVAL, "np_stats_find", "output is NULL");
    struct np_thread *t = np_self();
    if (!np_api_enter(t, "np_stats_find"))
        return NP_EBUSY;
    uint64_t ns = np_port_ns_per_tick_q32();
    np_port_crit held = lock(h);
    struct stat_entry *e = find(h, (uint64_t)(uintptr_t)fn & NP_ADDR_MASK, 0);
    if (!e) /* an NP_ENTER name? */
        e = find(h, ((uint64_t)(uintptr_t)fn & NP_ADDR_MASK) | NP_COST_NAMED, 0);
#if !NP_PORT_HOSTED && NP_PG_EXITS
    /* -pg alone: the function is its hook's return address, a few bytes in */
    uintptr_t self = e ? 0 : np_port_pg_self(fn);
    if (self)
        e = find(h, (uint64_t)self & NP_ADDR_MASK, 0);
#endif
    if (e)
        to_public(e, ns, out);
    unlock(h, held);
    np_thread_unlock(t);
    return e ? NP_OK : NP_EINVAL; /* not an error: FN was never called */
}

uint64_t np_stats_lost(void *stats)
{
    struct stats_hdr *h = table(stats, NP_MSG("np_stats_lost"));
    return h ? h->lost : 0;
}
