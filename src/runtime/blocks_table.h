/* blocks_table.h - what the recorder (record.c, record_write.c) reads of
 * the basic-block counts (blocks.c, public API in nanoprof/blocks.h). */
#ifndef NP_BLOCKS_TABLE_H
#define NP_BLOCKS_TABLE_H

#include <stdint.h>

/* True once a block has been counted in this process. */
int np_blocks_started(void);
/* The next block with a count above 0 at or after slot *POS: fills *PC
 * and *COUNT, advances *POS; 0 when there is none. Lock-free, no
 * allocation: a fatal signal handler may call it. */
int np_blocks_next(uint64_t *pos, uint64_t *pc, uint64_t *count);
/* Called once, outside any lock, when the first block of the process is
 * counted (set by the recorder: a program built with coverage only never
 * calls the function hooks, which open the trace otherwise). */
extern void (*np_blocks_start_hook)(void);

/* ---- between blocks.c and blocks_query.c ---- */

#include "np_config.h"

struct np_blocks_slot {
    uint64_t pc;    /* 0: free */
    uint64_t count;
};

struct np_blocks_table {
    uint64_t mask;  /* slots - 1 */
    struct np_blocks_slot *slots;
};

struct np_blocks_ring {
    uint64_t mask;
    uint64_t next;  /* entries ever written */
    uint64_t pcs[];
};

/* The table counted into now, executions lost, the ring of recent blocks
 * (NULL: none). */
extern struct np_blocks_table *np_blocks_tab;
extern uint64_t np_blocks_lost_n;
extern struct np_blocks_ring *np_blocks_ring;

/* PC's first slot, and how many slots a lookup probes. */
static inline __attribute__((always_inline)) uint64_t np_blocks_home(uint64_t pc, uint64_t mask)
{
    return (pc * 0x9e3779b97f4a7c15ull) >> 32 & mask;
}

static inline __attribute__((always_inline)) uint64_t np_blocks_probes(uint64_t mask)
{
    return mask < (uint64_t)NP_BLOCKS_PROBE_MAX ? mask + 1 : (uint64_t)NP_BLOCKS_PROBE_MAX;
}

/* The power of two at or above N. */
static inline uint64_t np_blocks_round_pow2(uint64_t n)
{
    uint64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

#endif
