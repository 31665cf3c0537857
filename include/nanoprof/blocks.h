/* blocks.h - basic-block execution counts (docs/blocks.md).
 *
 * Code built with -fsanitize-coverage=trace-pc (GCC or Clang) calls
 * __sanitizer_cov_trace_pc() at the start of each basic block (GCC) or
 * edge (Clang); the runtime defines it and counts the calls per block,
 * the block being named by the call's return address (an address inside
 * the block, right after the call). Counting is process-wide: one table
 * for every thread, in static storage (NP_BLOCKS_SLOTS slots, 65,536 by
 * default), or mapped once at start when NANOPROF_BLOCKS=N asks for
 * another number of slots. The callback claims a slot with a
 * compare-and-swap and counts with an atomic add: no lock, no allocation.
 * A block that finds no free slot near its place (the table is full) is
 * counted as lost. Counting starts on by default.
 *
 * When the program records (NANOPROF_RECORD, `nanoprof record`), the
 * counts go into the trace when it ends; `nanoprof blocks` shows them per
 * function and source line. A forked child starts with every count at 0. */
#ifndef NANOPROF_BLOCKS_H
#define NANOPROF_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* Turn counting on or off for the whole process; each returns the
 * previous state (1 on, 0 off). */
NP_API int np_blocks_enable(void);
NP_API int np_blocks_disable(void);

/* Counts one execution of the block at PC, as the coverage callback does
 * (for code that knows its own blocks: an interpreter, a test). */
NP_API void np_blocks_hit(const void *pc);

/* The executions counted for the block at PC (a return address of the
 * coverage callback), 0 when it never ran. */
NP_API uint64_t np_blocks_count(const void *pc);

/* Counts into a table in BUF (SIZE bytes, 8-byte aligned) from now on:
 * the most slots that fit, a power of two (NP_BLOCKS_BUF_BYTES(n) bytes
 * hold n), with what the runtime's table counted so far. Call it early,
 * before other threads run covered code: an execution counted while the
 * counts move may be lost. A target's runtime has no table of its own
 * (every execution is lost until the firmware gives one, and the dump
 * says so); a host's has NP_BLOCKS_SLOTS slots. NP_EINVAL for a
 * buffer NULL, misaligned or smaller than one slot; NP_EALREADY the
 * second time. */
NP_API int np_blocks_init_buf(void *buf, size_t size);
/* Bytes of a table of N slots: 16 a slot and 16 of header. */
#define NP_BLOCKS_BUF_BYTES(n) (16u * (size_t)(n) + 16u)

/* Executions not counted because the table had no room for their block. */
NP_API uint64_t np_blocks_lost(void);
/* Slots in the table: the most blocks it can hold (0 with no table). */
NP_API size_t np_blocks_capacity(void);

/* One counted block. */
typedef struct np_block_count {
    const void *pc;
    uint64_t count;
} np_block_count;

/* Copies up to MAX blocks that ran (count > 0), in no particular order,
 * into OUT; returns how many such blocks there are (more than MAX when
 * OUT was too small). */
NP_API size_t np_blocks_read(np_block_count *out, size_t max);

/* Sets every count (and the lost count) to 0. Blocks keep their slots.
 * Executions counted while it runs may survive it or not. */
NP_API void np_blocks_clear(void);

/* Writes the counts to the output sink, by address:
 *   blocks: <n> blocks, <executions> executions, <lost> lost, <slots> slots
 *   (no table: a target's runtime counts in the one the program gives, np_blocks_init_buf)
 *                                           (only when there are no slots)
 *   <function>+0x<offset>: <count>          (or 0x<address>: <count>)
 */
NP_API int np_blocks_dump(void);

/* Log mode: also keep the last N blocks executed, over all threads, in
 * one ring (N rounded up to a power of two, at most 2^28; 0 turns it
 * off). NANOPROF_BLOCKS_LOG=N does this at start. Each call maps a new
 * ring and keeps the previous one mapped (a thread may still write to
 * it): call it rarely. */
NP_API int np_blocks_log(size_t n);
/* Copies up to MAX of the most recent blocks, newest first, into OUT;
 * returns how many. Exact when no other thread runs covered code
 * meanwhile; with concurrent threads the newest entries may be a moment
 * old. */
NP_API size_t np_blocks_recent(const void **out, size_t max);

NP_END_DECLS
#endif
