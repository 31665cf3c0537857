/* sections.c - measured code sections (sections.h): the performance-counter
 * peripheral of an FPGA soft core, in software. Each OS thread keeps the
 * begin time of the sections it has open (no locks; the state is mapped by
 * the thread's first section, below); an end adds the elapsed time and one
 * occurrence to the section's totals with atomic adds, so threads in the
 * same section all add up. */
#include "ns.h"
#include "hooks.h"
#include "output.h"
#include "../port/port.h"
#include "nanoprof/sections.h"
#include "np_config.h"

_Static_assert(NP_SECTIONS_MAX >= 2, "NP_SECTIONS_MAX: the global section and at least one more");

/* Totals, one cache line per section so that threads in different
 * sections do not share lines. */
struct section {
    uint64_t ticks;
    uint64_t hw[NP_HW_EVENTS];
    uint32_t count;
    const char *name;
} __attribute__((aligned(64)));

static struct section table[NP_SECTIONS_MAX];

/* Per OS thread: what is open. depth counts nested begins of the same id,
 * so only the outermost one is timed. */
struct section_thread {
    uint32_t depth[NP_SECTIONS_MAX];
    uint64_t begin[NP_SECTIONS_MAX];
    uint64_t hw_begin[NP_SECTIONS_MAX][NP_HW_EVENTS];
    uint8_t hw_read[NP_SECTIONS_MAX]; /* hw_begin holds this occurrence's */
    int8_t hw;                        /* 1 counters open, -1 refused, 0 off */
    uint8_t ready;
};

/* Each thread's state is a block of its own, which the port hands out at
 * its first section and takes back when it ends: only a pointer is
 * per-thread storage, so that the runtime's TLS stays small enough for a
 * dlopen'ed libnanoprof.so (docs/instrumenting.md). The POSIX port maps
 * it (no lock: the first section may be in a signal handler that
 * interrupted malloc). */
static NP_PORT_TLS struct section_thread *me;

/* The thread ends: the port takes its block back. */
static void me_forget(void)
{
    me = NULL;
}

static int initialised, hw_on;
static uint32_t hw_refused_threads;
static int said_bad_id, said_unmatched;

/* One line per kind of misuse per process: a section in a loop must not
 * flood the output. */
static int misuse(int *said, const char *where, const char *what)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        np_error(NP_EINVAL, where, what);
    return NP_EINVAL;
}

static int bad_id(const char *where)
{
    return misuse(&said_bad_id, where, "section id out of range (see np_sections_max; reported once)");
}

static void open_hw(struct section_thread *s)
{
    s->hw = np_port_hw_open(NULL) ? 1 : -1;
    if (s->hw < 0)
        __atomic_fetch_add(&hw_refused_threads, 1, __ATOMIC_RELAXED);
}

/* The first section on a thread: its state, the clock chosen before any
 * time is read, and the thread's counters opened when they are in use.
 * NULL when no memory could be had. */
static __attribute__((noinline)) struct section_thread *thread_start(void)
{
    struct section_thread *s = me;
    if (!s) {
        s = np_port_thread_alloc(sizeof *s, me_forget);
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

static int no_memory(const char *where)
{
    static int said;
    return misuse(&said, where, "no memory for this thread's sections (reported once)");
}

int np_section_begin(unsigned id)
{
    if (__builtin_expect(id >= NP_SECTIONS_MAX, 0))
        return bad_id("np_section_begin");
    struct section_thread *s = me;
    if (__builtin_expect(!s || !s->ready, 0) && !(s = thread_start()))
        return no_memory("np_section_begin");
    if (s->depth[id]++ != 0)
        return NP_OK;
    if (__builtin_expect(s->hw > 0, 0))
        s->hw_read[id] = (uint8_t)np_port_hw_read(s->hw_begin[id]);
    s->begin[id] = np_port_wall_ticks(); /* last: the time leaves out the above */
    return NP_OK;
}

static void add_hw(struct section_thread *s, unsigned id)
{
    uint64_t v[NP_HW_EVENTS];
    if (s->hw_read[id] && np_port_hw_read(v))
        for (int i = 0; i < NP_HW_EVENTS; i++)
            __atomic_fetch_add(&table[id].hw[i], v[i] - s->hw_begin[id][i], __ATOMIC_RELAXED);
    s->hw_read[id] = 0;
}

int np_section_end(unsigned id)
{
    uint64_t now = np_port_wall_ticks(); /* first: the time leaves out the rest */
    if (__builtin_expect(id >= NP_SECTIONS_MAX, 0))
        return bad_id("np_section_end");
    struct section_thread *s = me;
    if (__builtin_expect(!s || s->depth[id] == 0, 0))
        return misuse(&said_unmatched, "np_section_end", "section ended without a begin on this thread (reported once)");
    if (--s->depth[id] != 0)
        return NP_OK;
    __atomic_fetch_add(&table[id].ticks, now - s->begin[id], __ATOMIC_RELAXED);
    __atomic_fetch_add(&table[id].count, 1, __ATOMIC_RELAXED);
    if (__builtin_expect(s->hw > 0, 0))
        add_hw(s, id);
    return NP_OK;
}

int np_section_name(unsigned id, const char *name)
{
    if (id >= NP_SECTIONS_MAX)
        return bad_id("np_section_name");
    __atomic_store_n(&table[id].name, name, __ATOMIC_RELEASE);
    return NP_OK;
}

int np_section_begin_named(unsigned id, const char *name)
{
    /* A load, not a store, when named already: no cache line written by
     * every thread at every begin. */
    if (id < NP_SECTIONS_MAX && __atomic_load_n(&table[id].name, __ATOMIC_RELAXED) != name)
        __atomic_store_n(&table[id].name, name, __ATOMIC_RELEASE);
    return np_section_begin(id);
}

unsigned np_sections_max(void)
{
    return NP_SECTIONS_MAX;
}

int np_sections_init(unsigned flags)
{
    if (flags & ~NP_SECTIONS_HW)
        return np_error(NP_EINVAL, "np_sections_init", "unknown flag");
    if (__atomic_exchange_n(&initialised, 1, __ATOMIC_ACQ_REL))
        return np_error(NP_EALREADY, "np_sections_init", "already initialised");
    np_port_clock_init();
    struct section_thread *s = thread_start();
    if (!s)
        return no_memory("np_sections_init");
    if (flags & NP_SECTIONS_HW) {
        const char *why = NULL;
        if (np_port_hw_open(&why)) {
            s->hw = 1;
            __atomic_store_n(&hw_on, 1, __ATOMIC_RELEASE);
        } else {
            struct np_line l = { 0 };
            np_line_str(&l, "nanoprof: np_sections_init: hardware events unavailable (");
            np_line_str(&l, why);
            np_line_str(&l, "): sections measure time only");
            np_line_emit(&l);
        }
    }
    return NP_OK;
}

int np_sections_clear(void)
{
    for (unsigned id = 0; id < NP_SECTIONS_MAX; id++) {
        __atomic_store_n(&table[id].ticks, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&table[id].count, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < NP_HW_EVENTS; i++)
            __atomic_store_n(&table[id].hw[i], 0, __ATOMIC_RELAXED);
    }
    return NP_OK;
}

static void read_section(unsigned id, uint64_t ns_per_tick, np_section_stats *out)
{
    const struct section *e = &table[id];
    out->name = __atomic_load_n(&e->name, __ATOMIC_ACQUIRE);
    out->count = __atomic_load_n(&e->count, __ATOMIC_RELAXED);
    out->time_ns = np_ticks_ns(__atomic_load_n(&e->ticks, __ATOMIC_RELAXED), ns_per_tick);
    out->hw = __atomic_load_n(&hw_on, __ATOMIC_ACQUIRE);
    out->instructions = __atomic_load_n(&e->hw[0], __ATOMIC_RELAXED);
    out->cache_misses = __atomic_load_n(&e->hw[1], __ATOMIC_RELAXED);
}

int np_sections_get(unsigned id, np_section_stats *out)
{
    if (id >= NP_SECTIONS_MAX || !out)
        return np_error(NP_EINVAL, "np_sections_get", "section id out of range or output is NULL");
    np_port_clock_init();
    read_section(id, np_port_ns_per_tick_q32(), out);
    return NP_OK;
}

static void dump_line(unsigned id, const np_section_stats *s, uint64_t global_ns)
{
    struct np_line l = { 0 };
    if (s->name) {
        np_line_str(&l, s->name);
    } else if (id == NP_SECTION_GLOBAL) {
        np_line_str(&l, "global");
    } else {
        np_line_str(&l, "section ");
        np_line_u64(&l, id);
    }
    np_line_str(&l, ": count ");
    np_line_u64(&l, s->count);
    np_line_str(&l, ", time ");
    np_line_u64(&l, s->time_ns);
    np_line_str(&l, ", ");
    if (global_ns) {
        /* the ratio in 32 bits: no 64-bit division on a target */
        uint64_t t = s->time_ns, g = global_ns;
        while ((t | g) >> 22)
            t >>= 1, g >>= 1;
        uint32_t tenths = g ? ((uint32_t)t * 1000u + (uint32_t)g / 2) / (uint32_t)g : 0;
        np_line_u64(&l, tenths / 10);
        np_line_str(&l, ".");
        np_line_u64(&l, tenths % 10);
    } else {
        np_line_str(&l, "-");
    }
    np_line_str(&l, "% of global");
    if (s->hw) {
        np_line_str(&l, ", ");
        np_line_str(&l, np_port_hw_name(0));
        np_line_str(&l, " ");
        np_line_u64(&l, s->instructions);
        np_line_str(&l, ", ");
        np_line_str(&l, np_port_hw_name(1));
        np_line_str(&l, " ");
        np_line_u64(&l, s->cache_misses);
    }
    np_line_emit(&l);
}

int np_sections_dump(void)
{
    np_port_clock_init();
    uint64_t npt = np_port_ns_per_tick_q32();
    np_section_stats global;
    read_section(NP_SECTION_GLOBAL, npt, &global);
    for (unsigned id = 1; id < NP_SECTIONS_MAX; id++) {
        np_section_stats s;
        read_section(id, npt, &s);
        if (s.name || s.count)
            dump_line(id, &s, global.time_ns);
    }
    dump_line(NP_SECTION_GLOBAL, &global, global.time_ns);
    uint32_t refused = __atomic_load_n(&hw_refused_threads, __ATOMIC_RELAXED);
    if (global.hw && refused) {
        struct np_line l = { 0 };
        np_line_str(&l, "(hardware events missing from ");
        np_line_u64(&l, refused);
        np_line_str(&l, refused == 1 ? " thread: its counters" : " threads: their counters");
        np_line_str(&l, " could not be opened)");
        np_line_emit(&l);
    }
    return NP_OK;
}
