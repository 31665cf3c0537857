/* blocks_query.c - what a program asks of the basic-block counts beyond
 * their dump (nanoprof/blocks.h): one block's count, clearing them, and
 * the ring of recent blocks. An object apart from blocks.c, so that a
 * firmware that only counts and dumps does not carry it. */
#include "blocks_table.h"
#include "hooks.h"
#include "report.h"
#include "nanoprof/blocks.h"
#include "../port/port.h"
#include "np_config.h"

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define RELAXED(p) __atomic_load_n(p, __ATOMIC_RELAXED)

#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)

static struct np_blocks_slot *find(struct np_blocks_table *t, uint64_t pc)
{
    uint64_t mask = t->mask, i = np_blocks_home(pc, mask);
    for (uint64_t k = np_blocks_probes(mask); k; k--, i = (i + 1) & mask) {
        uint64_t v = LOAD(&t->slots[i].pc);
        if (v == pc)
            return &t->slots[i];
        if (v == 0)
            return NULL;
    }
    return NULL;
}

uint64_t np_blocks_count(const void *pc)
{
    struct np_blocks_slot *s = pc ? find(LOAD(&np_blocks_tab), (uint64_t)(uintptr_t)pc) : NULL;
    return s ? RELAXED(&s->count) : 0;
}

void np_blocks_clear(void)
{
    struct np_blocks_table *t = LOAD(&np_blocks_tab);
    for (uint64_t i = 0; i <= t->mask; i++)
        if (RELAXED(&t->slots[i].count))
            __atomic_store_n(&t->slots[i].count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&np_blocks_lost_n, 0, __ATOMIC_RELAXED);
}

int np_blocks_log(size_t n)
{
    if (n > ((uint64_t)NP_BLOCKS_RUNTIME_MAX))
        return np_error(NP_EINVAL, "np_blocks_log", "at most " NP_STR(NP_BLOCKS_RUNTIME_MAX) " entries");
    struct np_blocks_ring *r = NULL;
    if (n) {
        uint64_t size = np_blocks_round_pow2(n);
        void *m = np_port_map(sizeof *r + size * sizeof r->pcs[0]);
        if (!m)
            return np_error(NP_ESMALL, "np_blocks_log", "cannot map the ring");
        r = m;
        r->mask = size - 1;
    }
    __atomic_store_n(&np_blocks_ring, r, __ATOMIC_RELEASE); /* the old one stays mapped */
    return NP_OK;
}

size_t np_blocks_recent(const void **out, size_t max)
{
    struct np_blocks_ring *r = LOAD(&np_blocks_ring);
    if (!r || !out)
        return 0;
    uint64_t next = RELAXED(&r->next), n = next <= r->mask ? next : r->mask + 1;
    if (n > max)
        n = max;
    for (uint64_t i = 0; i < n; i++)
        out[i] = (const void *)(uintptr_t)RELAXED(&r->pcs[(next - 1 - i) & r->mask]);
    return (size_t)n;
}
