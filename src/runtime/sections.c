/* sections.c - measured code sections (sections.h): the performance-counter
 * peripheral of an FPGA soft core, in software. Each OS thread keeps the
 * begin time of the sections it has open, and where the OS runs threads
 * its own totals beside them, which only it writes: an end adds the
 * elapsed time and one occurrence with plain stores (an atomic add on
 * shared totals cost as much as the two clock reads), and a reader sums
 * the threads' totals, those of ended threads included (below). With one
 * OS thread, the totals are the table's, added atomically (an interrupt
 * may end a section too). */
#include "ns.h"
#include "hooks.h"
#include "report.h"
#include "../port/port.h"
#include "nanoprof/sections.h"
#include "np_config.h"

/* sections_builtin.c: the built-in table's storage (SIZE bytes), which
 * np_sections_init gives to np_sections_init_in (BUILTIN: a table the
 * sections may use already); on a host, sections use it unasked. An
 * object apart: a firmware that gives its own table (np_sections_init_buf)
 * does not carry it. */
void *np_sections_builtin(size_t *size);
int np_sections_init_in(const char *who, unsigned flags, void *buf, size_t size, int builtin);

_Static_assert(NP_SECTIONS_MAX >= 2, "NP_SECTIONS_MAX: the global section and at least one more");

/* Totals, one cache line per section on hosts so that threads in
 * different sections do not share lines. */
struct section {
    uint64_t ticks;
    uint64_t hw[NP_HW_EVENTS];
    uint32_t count;
    const char *name;
} __attribute__((aligned(NP_SHARED_ALIGN)));

/* Per OS thread and section: what is open. depth counts nested begins of
 * the same id, so only the outermost one is timed. */
struct open_section {
    uint64_t begin;
    uint64_t hw_begin[NP_HW_EVENTS];
    uint32_t depth;
    uint8_t hw_read; /* hw_begin holds this occurrence's */
#if NP_PORT_OS_THREADS
    uint32_t count; /* the section's totals by this block's threads */
    uint64_t ticks;
#endif
};

struct section_thread {
#if NP_PORT_OS_THREADS
    struct section_thread *next; /* every block there is (the pool) */
    uint32_t owned;              /* a thread runs with it */
#endif
    int8_t hw; /* 1 counters open, -1 refused, 0 off */
    uint8_t ready;
    struct open_section open[]; /* one per id in the table */
};

/* In the buffer: a section (and, with one OS thread, its open state)
 * per id, and the alignment or the thread's header. */
_Static_assert(sizeof(struct section) + (NP_PORT_OS_THREADS ? 0 : sizeof(struct open_section)) <= 64 &&
                   NP_SHARED_ALIGN <= 64 && sizeof(struct section_thread) <= 64 - 8,
               "NP_SECTIONS_BUF_BYTES holds n sections");

/* The table: the program's buffer (np_sections_init_buf) or the built-in
 * one of NP_SECTIONS_MAX sections. nmax is stored last, with release:
 * once it is not 0, table is whole. */
static struct section *table;
static unsigned nmax;
static int claimed; /* a table is being set or is set */
#if !NP_PORT_OS_THREADS
/* The one OS thread's state: beside the table, in the same buffer. */
static struct section_thread *one_thread;
#endif

/* Each thread's state is a block of its own, taken at its first section
 * from a pool and given back when it ends: only a pointer is per-thread
 * storage, so that the runtime's TLS stays small enough for a dlopen'ed
 * libnanoprof.so (docs/instrumenting.md). Blocks are mapped (no lock: the
 * first section may be in a signal handler that interrupted malloc) and
 * never unmapped, so that a reader may walk them while threads end; a
 * block keeps its totals from thread to thread, and the pool is as large
 * as the most threads that ran sections at once. Where the OS runs one
 * thread, its state is in the table's memory. */
static NP_PORT_TLS struct section_thread *me;
#if NP_PORT_OS_THREADS
static struct section_thread *pool;

/* The thread ends: its block back to the pool, its totals kept, what it
 * left open dropped. */
static void me_forget(void)
{
    struct section_thread *s = me;
    me = NULL;
    if (!s)
        return;
    for (unsigned id = 0; id < nmax; id++) {
        s->open[id].depth = 0;
        s->open[id].hw_read = 0;
    }
    s->ready = 0;
    s->hw = 0;
    __atomic_store_n(&s->owned, 0, __ATOMIC_RELEASE);
}

/* A block for the calling thread: a free one from the pool, else a new
 * one added to it. */
static struct section_thread *block_take(void)
{
    struct section_thread *s;
    for (s = __atomic_load_n(&pool, __ATOMIC_ACQUIRE); s; s = s->next) {
        uint32_t free_ = 0;
        if (!__atomic_load_n(&s->owned, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&s->owned, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return s;
    }
    s = np_port_map(sizeof *s + nmax * sizeof s->open[0]);
    if (!s)
        return NULL;
    s->owned = 1;
    s->next = __atomic_load_n(&pool, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&pool, &s->next, s, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return s;
}
#endif

static int initialised, hw_on;
static uint32_t hw_refused_threads;
static int said_bad_id, said_unmatched;

/* One line per kind of misuse per process: a section in a loop must not
 * flood the output. */
/* WHERE, WHAT (and the helpers' WHERE below): NP_MSG values */
static int misuse(int *said, const char *where, const char *what)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        np_error_msg(NP_EINVAL, where, what);
    return NP_EINVAL;
}

static int bad_id(const char *where)
{
    return misuse(&said_bad_id, where, NP_MSG("section id out of range (see np_sections_max; reported once)"));
}

static void open_hw(struct section_thread *s)
{
    s->hw = np_port_hw_open(NULL) ? 1 : -1;
    if (s->hw < 0)
        __atomic_fetch_add(&hw_refused_threads, 1, __ATOMIC_RELAXED);
}

/* Sets the table (claimed already) to N sections at T, zeroed, with the
 * one OS thread's state at THREAD where there is one. */
static void set_table(struct section *t, unsigned n, void *thread)
{
    table = t;
#if !NP_PORT_OS_THREADS
    one_thread = thread;
#else
    (void)thread;
#endif
    __atomic_store_n(&nmax, n, __ATOMIC_RELEASE);
}

/* The table in BUF, SIZE bytes (8-aligned, claimed already): as many
 * sections as fit, at most MAX, zeroed, with the one OS thread's state
 * after them where there is one. */
static void carve(void *buf, size_t size, size_t max)
{
    uintptr_t a = (uintptr_t)buf, t = (a + NP_SHARED_ALIGN - 1) & ~(uintptr_t)(NP_SHARED_ALIGN - 1);
    size_t room = size - (t - a), per = sizeof(struct section);
#if !NP_PORT_OS_THREADS
    room -= sizeof(struct section_thread);
    per += sizeof(struct open_section);
#endif
    size_t n = room / per;
    if (n > max)
        n = max;
    /* zeroed with stores (no memset on the way) */
    for (uint64_t *w = (uint64_t *)buf, *e = (uint64_t *)((char *)buf + (size & ~(size_t)7)); w < e; w++)
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
    set_table((struct section *)t, (unsigned)n, (struct section *)t + n);
}

/* The built-in table (sections_builtin.c's storage, BUF, SIZE bytes),
 * set unless a table is. */
static void builtin_table(void *buf, size_t size)
{
    if (!__atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
        carve(buf, size, NP_SECTIONS_MAX);
    else
        while (!__atomic_load_n(&nmax, __ATOMIC_ACQUIRE))
            np_port_relax(); /* another thread sets it: a few stores */
}

/* A table is set: on hosts, the built-in one when none was (sections work
 * without np_sections_init); a target takes no RAM unasked and has none
 * until np_sections_init or np_sections_init_buf. */
static int have_table(void)
{
    if (__builtin_expect(__atomic_load_n(&nmax, __ATOMIC_ACQUIRE) != 0, 1))
        return 1;
#if NP_PORT_OS_THREADS
    size_t size;
    void *b = np_sections_builtin(&size);
    builtin_table(b, size);
    return 1;
#else
    return 0;
#endif
}

/* The first section on a thread: its state, the clock chosen before any
 * time is read, and the thread's counters opened when they are in use.
 * NULL when there is no table or no memory. */
static __attribute__((noinline)) struct section_thread *thread_start(void)
{
    if (!have_table())
        return NULL;
    struct section_thread *s = me;
    if (!s) {
#if NP_PORT_OS_THREADS
        s = block_take();
        if (s && !np_port_at_thread_end(me_forget)) {
            __atomic_store_n(&s->owned, 0, __ATOMIC_RELEASE);
            s = NULL;
        }
#else
        s = one_thread;
#endif
        if (!s)
            return NULL;
        me = s;
    }
    if (!s->ready) {
        np_port_clock_init();
        if (!s->hw && __atomic_load_n(&hw_on, __ATOMIC_ACQUIRE))
            open_hw(s);
        s->ready = 1;
    }
    return s;
}

#define NO_TABLE "no table: np_sections_init or np_sections_init_buf first"

/* No state for the thread: no table, or (where the OS runs threads) no
 * memory for it. Said once. */
static int no_memory(const char *where)
{
    static int said;
#if NP_PORT_OS_THREADS
    if (have_table())
        return misuse(&said, where, NP_MSG("no memory for this thread's sections (reported once)"));
#endif
    return misuse(&said, where, NP_MSG(NO_TABLE));
}

int np_section_begin(unsigned id)
{
    struct section_thread *s = me;
    if (__builtin_expect(!s || !s->ready, 0) && !(s = thread_start()))
        return no_memory(NP_MSG("np_section_begin"));
    if (__builtin_expect(id >= __atomic_load_n(&nmax, __ATOMIC_RELAXED), 0))
        return bad_id(NP_MSG("np_section_begin"));
    struct open_section *o = &s->open[id];
    if (o->depth++ != 0)
        return NP_OK;
    if (__builtin_expect(s->hw > 0, 0))
        o->hw_read = (uint8_t)np_port_hw_read(o->hw_begin);
    o->begin = np_port_wall_ticks(); /* last: the time leaves out the above */
    return NP_OK;
}

/* (out of line where threads keep their own totals: the end's common path
 * then needs no frame; on a target inline, the fewest bytes) */
#if NP_PORT_OS_THREADS
__attribute__((noinline))
#endif
static void add_hw(struct open_section *o, struct section *e)
{
    uint64_t v[NP_HW_EVENTS];
    if (o->hw_read && np_port_hw_read(v))
        for (int i = 0; i < NP_HW_EVENTS; i++)
            __atomic_fetch_add(&e->hw[i], v[i] - o->hw_begin[i], __ATOMIC_RELAXED);
    o->hw_read = 0;
}

int np_section_end(unsigned id)
{
    uint64_t now = np_port_wall_ticks(); /* first: the time leaves out the rest */
    if (__builtin_expect(id >= __atomic_load_n(&nmax, __ATOMIC_RELAXED), 0))
        return bad_id(NP_MSG("np_section_end"));
    struct section_thread *s = me;
    if (__builtin_expect(!s || s->open[id].depth == 0, 0))
        return misuse(&said_unmatched, NP_MSG("np_section_end"),
                      NP_MSG("section ended without a begin on this thread (reported once)"));
    struct open_section *o = &s->open[id];
    if (--o->depth != 0)
        return NP_OK;
    struct section *e = &table[id];
#if NP_PORT_OS_THREADS
    /* only this thread writes them; whole words for readers */
    __atomic_store_n(&o->ticks, o->ticks + (now - o->begin), __ATOMIC_RELAXED);
    __atomic_store_n(&o->count, o->count + 1, __ATOMIC_RELAXED);
#else
    __atomic_fetch_add(&e->ticks, now - o->begin, __ATOMIC_RELAXED);
    __atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED);
#endif
    if (__builtin_expect(s->hw > 0, 0))
        add_hw(o, e);
    return NP_OK;
}

/* NP_OK when there is a table, else NP_ENOTINIT, said as WHERE. */
static int need_table(const char *where)
{
    return have_table() ? NP_OK : np_error_msg(NP_ENOTINIT, where, NP_MSG(NO_TABLE));
}

int np_section_name(unsigned id, const char *name)
{
    int rc = need_table(NP_MSG("np_section_name"));
    if (rc != NP_OK)
        return rc;
    if (id >= nmax)
        return bad_id(NP_MSG("np_section_name"));
    __atomic_store_n(&table[id].name, name, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_section_begin_named(unsigned id, const char *name)
{
    /* A load, not a store, when named already: no cache line written by
     * every thread at every begin. */
    if (have_table() && id < nmax && __atomic_load_n(&table[id].name, __ATOMIC_RELAXED) != name)
        __atomic_store_n(&table[id].name, name, __ATOMIC_RELEASE);
    return np_section_begin(id);
}

unsigned np_sections_max(void)
{
    unsigned n = __atomic_load_n(&nmax, __ATOMIC_ACQUIRE);
    return n ? n : NP_SECTIONS_MAX;
}

/* What both inits do once the table is set. */
static int start(const char *where, unsigned flags)
{
    np_port_clock_init();
    struct section_thread *s = thread_start();
    if (!s)
        return no_memory(where);
    if (flags & NP_SECTIONS_HW) {
        const char *why = NP_MSG("");
        if (np_port_hw_open(&why)) {
            s->hw = 1;
            __atomic_store_n(&hw_on, 1, __ATOMIC_RELEASE);
        } else {
            NP_REPORT(NP_REP_SECTIONS_HW_OFF, NP_RV(why)); /* (the port's: an NP_MSG value) */
        }
    }
    return NP_OK;
}

int np_sections_init_in(const char *who, unsigned flags, void *buf, size_t size, int builtin)
{
    if (flags & ~NP_SECTIONS_HW)
        return np_error_msg(NP_EINVAL, who, NP_MSG("unknown flag"));
    if (!builtin && (!buf || ((uintptr_t)buf & 7)))
        return np_error_msg(NP_EINVAL, who, NP_MSG("no buffer, or one not 8-byte aligned"));
    if (!builtin && size < NP_SECTIONS_BUF_BYTES(2))
        return np_error_msg(NP_ESMALL, who, NP_MSG("buffer smaller than NP_SECTIONS_BUF_BYTES(2)"));
    if (__atomic_exchange_n(&initialised, 1, __ATOMIC_ACQ_REL))
        return np_error_msg(NP_EALREADY, who, NP_MSG("already initialised"));
    if (builtin)
        builtin_table(buf, size); /* or the one sections already use */
    else if (__atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
        return np_error_msg(NP_EALREADY, who, NP_MSG("sections began before it: call it first"));
    else
        carve(buf, size, 65536); /* ids are unsigned; more is no use */
    return start(who, flags);
}

int np_sections_init_buf(void *buf, size_t size, unsigned flags)
{
    return np_sections_init_in(NP_MSG("np_sections_init_buf"), flags, buf, size, 0);
}

/* The sum of the threads' totals of section ID (0 with one OS thread,
 * whose totals are the table's). */
static void blocks_sum(unsigned id, uint64_t *ticks, uint32_t *count)
{
    *ticks = 0;
    *count = 0;
#if NP_PORT_OS_THREADS
    for (const struct section_thread *s = __atomic_load_n(&pool, __ATOMIC_ACQUIRE); s; s = s->next) {
        *ticks += __atomic_load_n(&s->open[id].ticks, __ATOMIC_RELAXED);
        *count += __atomic_load_n(&s->open[id].count, __ATOMIC_RELAXED);
    }
#else
    (void)id;
#endif
}

/* Section ID's totals: the table's and the threads'. With OS threads the
 * table holds what a clear took away from the threads' sum (modulo 2^64
 * and 2^32). */
static void totals(unsigned id, uint64_t *ticks, uint32_t *count)
{
    const struct section *e = &table[id];
    blocks_sum(id, ticks, count);
    *count += __atomic_load_n(&e->count, __ATOMIC_RELAXED);
    *ticks += __atomic_load_n(&e->ticks, __ATOMIC_RELAXED);
}

int np_sections_clear(void)
{
    unsigned n = have_table() ? nmax : 0;
    for (unsigned id = 0; id < n; id++) {
        uint64_t ticks;
        uint32_t count;
        blocks_sum(id, &ticks, &count);
        /* (the blocks' totals are their threads' to write) */
        __atomic_store_n(&table[id].ticks, 0 - ticks, __ATOMIC_RELAXED);
        __atomic_store_n(&table[id].count, 0 - count, __ATOMIC_RELAXED);
        for (int i = 0; i < NP_HW_EVENTS; i++)
            __atomic_store_n(&table[id].hw[i], 0, __ATOMIC_RELAXED);
    }
    return NP_OK;
}

static void read_section(unsigned id, uint64_t ns_per_tick, np_section_stats *out)
{
    const struct section *e = &table[id];
    uint64_t ticks;
    uint32_t count;
    out->name = __atomic_load_n(&e->name, __ATOMIC_ACQUIRE);
    totals(id, &ticks, &count);
    out->count = count;
    out->time_ns = np_ticks_ns(ticks, ns_per_tick);
    out->hw = __atomic_load_n(&hw_on, __ATOMIC_ACQUIRE);
    out->instructions = __atomic_load_n(&e->hw[0], __ATOMIC_RELAXED);
    out->cache_misses = __atomic_load_n(&e->hw[1], __ATOMIC_RELAXED);
}

int np_sections_get(unsigned id, np_section_stats *out)
{
    int rc = need_table(NP_MSG("np_sections_get"));
    if (rc != NP_OK)
        return rc;
    if (id >= nmax || !out)
        return np_error(NP_EINVAL, "np_sections_get", "section id out of range or output is NULL");
    np_port_clock_init();
    read_section(id, np_port_ns_per_tick_q32(), out);
    return NP_OK;
}

static void dump_line(unsigned id, const np_section_stats *s, uint64_t global_ns)
{
    NP_REPORT(NP_REP_SECTION, id, NP_RV(s->name), s->count, s->time_ns, global_ns,
              s->hw ? NP_RV(np_port_hw_name(0)) : 0, s->instructions, NP_RV(np_port_hw_name(1)), s->cache_misses);
}

int np_sections_dump(void)
{
    int rc = need_table(NP_MSG("np_sections_dump"));
    if (rc != NP_OK)
        return rc;
    np_port_clock_init();
    uint64_t npt = np_port_ns_per_tick_q32();
    np_section_stats global;
    read_section(NP_SECTION_GLOBAL, npt, &global);
    for (unsigned id = 1; id < nmax; id++) {
        np_section_stats s;
        read_section(id, npt, &s);
        if (s.name || s.count)
            dump_line(id, &s, global.time_ns);
    }
    dump_line(NP_SECTION_GLOBAL, &global, global.time_ns);
    uint32_t refused = __atomic_load_n(&hw_refused_threads, __ATOMIC_RELAXED);
    if (global.hw && refused)
        NP_REPORT(NP_REP_SECTIONS_HW_MISSING, refused);
    return NP_OK;
}
