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

#endif
