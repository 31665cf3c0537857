/* blocks.c - basic-block counts (nanoprof/blocks.h, docs/blocks.md): the
 * coverage callback, the table, the ring of recent blocks and the API.
 *
 * The table maps a block's address (the callback's return address) to a
 * 64-bit count by open addressing with linear probing. A slot is claimed
 * by a compare-and-swap of its address from 0, and never given back, so a
 * slot's address, once seen, never changes: readers need no lock. Probing
 * stops after PROBE_MAX slots, which bounds the cost of a block that finds
 * the table full: it is counted in `lost`. The table is static storage
 * (NP_BLOCKS_SLOTS, set at build time); NANOPROF_BLOCKS=N maps one of N
 * slots at start, once, and moves into it what the static one counted
 * before (constructors of other libraries may run covered code first).
 * The environment, the mapping and the start-up come from the port
 * (np_port_getenv, np_port_map, NP_PORT_AT_START): a target has none. The
 * program may give a table of its own instead (np_blocks_init_buf), which
 * is how a target, built with no static table, gets one.
 *
 * The ring of recent blocks is global, not per thread: one atomic
 * increment claims an entry, so a thread needs no buffer of its own (and
 * none is allocated when a thread starts); the price is that threads
 * interleave in it.
 *
 * This file is built without coverage (src/CMakeLists.txt strips the
 * flag, and the callback carries the attribute too): the callback calls
 * nothing that could call it back. */
#include "blocks_table.h"
#include "hooks.h"
#include "report.h"
#include "nanoprof/blocks.h"
#include "../common/parse_size.h"
#include "../port/port.h"
#include "np_config.h"

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define RELAXED(p) __atomic_load_n(p, __ATOMIC_RELAXED)

_Static_assert((NP_BLOCKS_SLOTS & (NP_BLOCKS_SLOTS - 1)) == 0, "NP_BLOCKS_SLOTS must be a power of two, or 0");
_Static_assert(sizeof(struct np_blocks_table) <= NP_BLOCKS_BUF_BYTES(0), "a table's header fits NP_BLOCKS_BUF_BYTES");
#define SIZE_MAX_SLOTS ((uint64_t)NP_BLOCKS_RUNTIME_MAX)
#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)

#if defined(__has_attribute)
#if __has_attribute(no_sanitize_coverage)
#define NP_NO_COVERAGE __attribute__((no_sanitize_coverage))
#elif defined(__clang__)
#define NP_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#endif
#endif
#ifndef NP_NO_COVERAGE
#define NP_NO_COVERAGE
#endif

#if NP_BLOCKS_SLOTS > 0
static struct np_blocks_slot static_slots[NP_BLOCKS_SLOTS];
static struct np_blocks_table static_table = { NP_BLOCKS_SLOTS - 1, static_slots };
#else
/* No table yet: one slot that no block claims (no address is all ones),
 * so the callback's path stays the same and every execution is lost.
 * Nothing writes it (a claim needs a free slot, a count a match, clear a
 * count above 0), so it stays in flash. */
static const struct np_blocks_slot no_slot = { UINT64_MAX, 0 };
static const struct np_blocks_table static_table = { 0, (struct np_blocks_slot *)&no_slot };
#endif
struct np_blocks_table *np_blocks_tab = (struct np_blocks_table *)&static_table;
uint64_t np_blocks_lost_n;
struct np_blocks_ring *np_blocks_ring;
static int enabled = 1, given;
static int started;

void (*np_blocks_start_hook)(void);


/* The first block of the process: the recorder may have a trace to open. */
static __attribute__((noinline, cold)) void first_block(void)
{
    if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
        return;
    void (*hook)(void) = LOAD(&np_blocks_start_hook);
    if (hook)
        hook();
}

/* Adds N to PC's slot in T; 0 when T has no room for it. */
static inline __attribute__((always_inline)) int table_add(struct np_blocks_table *t, uint64_t pc, uint64_t n)
{
    uint64_t mask = t->mask, i = np_blocks_home(pc, mask);
    for (uint64_t k = np_blocks_probes(mask); k; k--, i = (i + 1) & mask) {
        struct np_blocks_slot *s = &t->slots[i];
        uint64_t v = LOAD(&s->pc);
        if (v == 0 && __atomic_compare_exchange_n(&s->pc, &v, pc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            v = pc;
            if (!RELAXED(&started))
                first_block();
        }
        if (v == pc) {
            __atomic_fetch_add(&s->count, n, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}

static inline __attribute__((always_inline)) void count_block(uint64_t pc)
{
    if (!table_add(LOAD(&np_blocks_tab), pc, 1))
        __atomic_fetch_add(&np_blocks_lost_n, 1, __ATOMIC_RELAXED);
    struct np_blocks_ring *r = LOAD(&np_blocks_ring);
    if (r) {
        uint64_t i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&r->pcs[i & r->mask], pc, __ATOMIC_RELAXED);
    }
}

/* Called by the compiler at each block (GCC) or edge (Clang). */
NP_HOOK NP_NO_COVERAGE void __sanitizer_cov_trace_pc(void)
{
    if (__builtin_expect(!RELAXED(&enabled), 0))
        return;
    count_block((uint64_t)(uintptr_t)__builtin_return_address(0));
}

void np_blocks_hit(const void *pc)
{
    if (pc && RELAXED(&enabled))
        count_block((uint64_t)(uintptr_t)pc);
}

/* ---- reading -------------------------------------------------------------- */

uint64_t np_blocks_lost(void)
{
    return RELAXED(&np_blocks_lost_n);
}

size_t np_blocks_capacity(void)
{
    const struct np_blocks_table *t = LOAD(&np_blocks_tab);
    return NP_BLOCKS_SLOTS || t != &static_table ? (size_t)t->mask + 1 : 0;
}

int np_blocks_started(void)
{
    return RELAXED(&started);
}

int np_blocks_next(uint64_t *pos, uint64_t *pc, uint64_t *count)
{
    struct np_blocks_table *t = LOAD(&np_blocks_tab);
    for (; *pos <= t->mask; ++*pos) {
        const struct np_blocks_slot *s = &t->slots[*pos];
        uint64_t v = LOAD(&s->pc), c = RELAXED(&s->count);
        if (v && c) {
            *pc = v;
            *count = c;
            ++*pos;
            return 1;
        }
    }
    return 0;
}

size_t np_blocks_read(np_block_count *out, size_t max)
{
    size_t n = 0;
    uint64_t pos = 0, pc, count;
    while (np_blocks_next(&pos, &pc, &count)) {
        if (out && n < max)
            out[n] = (np_block_count){ (const void *)(uintptr_t)pc, count };
        n++;
    }
    return n;
}

/* ---- control ---------------------------------------------------------------- */

int np_blocks_enable(void)
{
    return __atomic_exchange_n(&enabled, 1, __ATOMIC_RELAXED);
}

int np_blocks_disable(void)
{
    return __atomic_exchange_n(&enabled, 0, __ATOMIC_RELAXED);
}

/* ---- the dump ------------------------------------------------------------------ */

/* Heap sort by address: no library call, no memory beyond the array. */
static void sift(np_block_count *v, size_t i, size_t n)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && v[l].pc > v[m].pc)
            m = l;
        if (r < n && v[r].pc > v[m].pc)
            m = r;
        if (m == i)
            return;
        np_block_count tmp = v[i];
        v[i] = v[m];
        v[m] = tmp;
        i = m;
    }
}

static void sort_by_pc(np_block_count *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(v, i, n);
    for (size_t end = n; end > 1; end--) {
        np_block_count tmp = v[0];
        v[0] = v[end - 1];
        v[end - 1] = tmp;
        sift(v, 0, end - 1);
    }
}

int np_blocks_dump(void)
{
    size_t n = np_blocks_read(NULL, 0);
    /* not a hot path: the sorted copy may be allocated (unsorted without it) */
    np_block_count *all = NP_PORT_CAN_ALLOC ? np_port_alloc((n ? n : 1) * sizeof *all) : NULL;
    uint64_t total = 0;
    if (all) {
        size_t got = np_blocks_read(all, n); /* blocks may have appeared meanwhile */
        if (got < n)
            n = got;
        sort_by_pc(all, n);
        for (size_t i = 0; i < n; i++)
            total += all[i].count;
    } else {
        uint64_t pos = 0, pc, count;
        while (np_blocks_next(&pos, &pc, &count))
            total += count;
    }
    NP_REPORT(NP_REP_BLOCKS_HEAD, n, total, np_blocks_lost(), np_blocks_capacity());
    uint64_t pos = 0;
    for (size_t i = 0;; i++) {
        uint64_t pc, count;
        if (all) {
            if (i >= n)
                break;
            pc = (uint64_t)(uintptr_t)all[i].pc;
            count = all[i].count;
        } else if (!np_blocks_next(&pos, &pc, &count)) {
            break;
        }
        NP_REPORT(NP_REP_BLOCK, pc, count);
    }
    np_port_free(all);
    return NP_OK;
}

/* ---- start -------------------------------------------------------------------- */

/* Makes M (zeroed or not) a table of N slots and counts into it from now
 * on, with what the table before it counted: an execution that lands in
 * the old table while its counts move may be lost, hence "early" in
 * np_blocks_init_buf's contract. */
static void take_over(void *m, uint64_t n)
{
    struct np_blocks_table *t = m, *old = LOAD(&np_blocks_tab);
    t->mask = n - 1;
    t->slots = (struct np_blocks_slot *)(t + 1);
    for (uint64_t i = 0; i < n; i++) { /* stores, not a call of memset */
        __atomic_store_n(&t->slots[i].pc, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->slots[i].count, 0, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&np_blocks_tab, t, __ATOMIC_RELEASE);
#if NP_BLOCKS_SLOTS > 0 /* else the table before counted nothing */
    for (uint64_t i = 0; i <= old->mask; i++) {
        struct np_blocks_slot *s = &old->slots[i];
        uint64_t pc = LOAD(&s->pc), c = __atomic_exchange_n(&s->count, 0, __ATOMIC_RELAXED);
        if (pc && c && !table_add(t, pc, c))
            __atomic_fetch_add(&np_blocks_lost_n, c, __ATOMIC_RELAXED);
    }
#else
    (void)old;
#endif
}

int np_blocks_init_buf(void *buf, size_t size)
{
    if (!buf || ((uintptr_t)buf & 7) || size < NP_BLOCKS_BUF_BYTES(1))
        return np_error(NP_EINVAL, "np_blocks_init_buf", "no buffer, or one misaligned or too small");
    if (__atomic_exchange_n(&given, 1, __ATOMIC_ACQ_REL))
        return np_error(NP_EALREADY, "np_blocks_init_buf", "a table was given already");
    uint64_t n = 1;
    while (n < SIZE_MAX_SLOTS && NP_BLOCKS_BUF_BYTES(2 * n) <= size)
        n *= 2;
    take_over(buf, n);
    return NP_OK;
}

/* A forked child counts its own executions (its trace holds them alone). */
static void fork_child(void)
{
    np_blocks_clear();
}

/* NANOPROF_BLOCKS=N: a table of N slots (rounded up to a power of two),
 * taking over what the static one counted so far. */
static void resize_from_env(const char *v)
{
    uint64_t n = np_parse_size(v);
    if (n < 1 || n > SIZE_MAX_SLOTS) {
        np_error(NP_EINVAL, "NANOPROF_BLOCKS", "not a number of slots from 1 to 256M");
        return;
    }
    n = np_blocks_round_pow2(n);
    if (n == static_table.mask + 1)
        return;
    void *m = np_port_map(sizeof(struct np_blocks_table) + n * sizeof(struct np_blocks_slot));
    if (!m) {
        np_error(NP_ESMALL, "NANOPROF_BLOCKS", "cannot map a table of that size");
        return;
    }
    take_over(m, n);
}

NP_PORT_AT_START static void blocks_init(void)
{
    const char *v = np_port_getenv("NANOPROF_BLOCKS");
    if (v && *v)
        resize_from_env(v);
    v = np_port_getenv("NANOPROF_BLOCKS_LOG");
    if (v && *v) {
        uint64_t n = np_parse_size(v);
        if (n < 1 || n > SIZE_MAX_SLOTS)
            np_error(NP_EINVAL, "NANOPROF_BLOCKS_LOG", "not a number of entries from 1 to 256M");
        else
            np_blocks_log((size_t)n);
    }
    np_port_atfork_child(fork_child);
}
