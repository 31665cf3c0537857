/* cost.c - the function cost API: set-up and state of the per-thread
 * measurement buffer. The work on each call is in cost_hot.h; turning the
 * records into statistics is in stats.c. */
#include "cost_hot.h"
#include "hooks.h"

#define REC sizeof(np_cost_record)
_Static_assert(sizeof(np_cost_record) == NP_COST_RECORD_SIZE, "record size");
/* The buffer must hold an entry and its exit. */
#define MIN_LINES 2

int np_cost_lines(size_t size)
{
    size_t n = size / REC;
    return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

size_t np_cost_buffer_size(int lines)
{
    return lines > 0 ? (size_t)lines * REC : 0;
}

int np_cost_init(void *buf, size_t size)
{
    struct np_thread *t = np_self();
    if (t->flags & NP_F_COST_INIT)
        return np_error(NP_EALREADY, "np_cost_init", "already initialised on this thread (np_cost_shutdown first)");
    if (!(np_hooks_mechanisms & NP_MECH_COST))
        return np_error(NP_EINVAL, "np_cost_init", "this library was built without function cost (link libnanoprof or libnanoprof-cost)");
    if (!buf)
        return np_error(NP_EINVAL, "np_cost_init", "buffer is NULL");
    if (((uintptr_t)buf & 7) != 0)
        return np_error(NP_EINVAL, "np_cost_init", "buffer must be 8-byte aligned");
    if (size < MIN_LINES * REC || size / REC > 0xffffffffu)
        return np_error(NP_ESMALL, "np_cost_init", "buffer too small: need at least 32 bytes (two records)");
    if (!np_api_enter(t, "np_cost_init"))
        return NP_EBUSY;
    np_port_clock_thread();
    struct np_cost_state *c = &t->cost;
    *c = (struct np_cost_state){ 0 };
    c->buf = buf;
    c->cap = (uint32_t)(size / REC);
    t->flags |= NP_F_COST_INIT | NP_F_COST_ON;
    np_thread_unlock(t);
    return NP_OK;
}

/* Summarises what T recorded into the default table, so that records are
 * not lost when the buffer goes away. */
static void flush(struct np_thread *t)
{
    void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
    if (stats)
        np_stats_summarise(stats, t);
}

void np_cost_thread_exit(struct np_thread *t)
{
    if ((t->flags & NP_F_COST_INIT) && np_thread_lock(t)) {
        /* The buffer may have been on the thread's stack, gone by now, so
         * it is not read: what it held is counted as lost, and the dump
         * says so. A thread keeps its records by calling np_stats_calc. */
        void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
        struct np_cost_state *c = &t->cost;
        if (stats)
            np_stats_add_lost(stats, (uint64_t)c->n + c->lost);
        t->flags &= ~(NP_F_COST_INIT | NP_F_COST_ON);
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
    t->flags &= ~(NP_F_COST_INIT | NP_F_COST_ON);
    t->cost = (struct np_cost_state){ 0 };
    np_thread_unlock(t);
    return NP_OK;
}

static int set_on(const char *who, int on)
{
    return np_switch_mechanism(who, NP_F_COST_INIT, NP_F_COST_ON, on, "cost measurement not initialised on this thread");
}

int np_cost_enable(void) { return set_on("np_cost_enable", 1); }
int np_cost_disable(void) { return set_on("np_cost_disable", 0); }
int np_cost_restore(int previous) { return set_on("np_cost_restore", previous != 0); }

int np_cost_clear(void)
{
    struct np_thread *t = np_self();
    if (!(t->flags & NP_F_COST_INIT))
        return np_error(NP_ENOTINIT, "np_cost_clear", "cost measurement not initialised on this thread");
    if (!np_api_enter(t, "np_cost_clear"))
        return NP_EBUSY;
    struct np_cost_state *c = &t->cost;
    /* Calls open now will exit with nothing pending: those exits are
     * ignored, as for calls entered before measuring began. */
    c->n = c->open = c->open_pending = 0;
    c->lost_open = 0;
    c->have_last = 0;
    np_thread_unlock(t);
    return NP_OK;
}

/* Called from a hook (the thread is already BUSY) when the buffer is full. */
int np_cost_make_room(struct np_thread *t, uint32_t need)
{
    void *stats = __atomic_load_n(&np_default_stats, __ATOMIC_ACQUIRE);
    if (!stats)
        return 0;
    np_stats_summarise(stats, t);
    return t->cost.n + need <= t->cost.cap;
}

uint64_t np_thread_time_resync(struct np_thread *t)
{
    uint64_t now = np_port_resync(t);
    /* The CPU-time clock and the counter are read at slightly different
     * moments, so the estimate may overshoot by a little: never let the
     * thread's time run backwards past its last record. */
    const struct np_cost_state *c = &t->cost;
    uint64_t floor = c->have_last ? c->last : 0;
    if (c->n > c->open && (int64_t)(c->buf[c->n - 1].w1 - floor) > 0)
        floor = c->buf[c->n - 1].w1;
    if (c->n && (int64_t)(now - t->off - floor) < 0)
        t->off = now - floor;
    return now - t->off;
}

const char *np_cost_clock_name(void)
{
    np_port_clock_init();
    return np_port_clock_name();
}
