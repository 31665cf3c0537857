/* cost.h - function cost: per-thread sums of calls, inclusive and exclusive
 * time, added up as calls end and merged on demand into a statistics table
 * shared by all threads. Time while the measuring thread is switched out is
 * not counted. */
#ifndef NANOPROF_COST_H
#define NANOPROF_COST_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* The unit measurement buffers are counted in (np_cost_lines): 16 bytes. A
 * buffer holds the thread's open calls (24 bytes each) and its table of
 * per-function sums (68 bytes per slot); 256 bytes at least. */
#define NP_COST_RECORD_SIZE 16

NP_API int np_cost_lines(size_t size);
NP_API size_t np_cost_buffer_size(int lines);

/* Starts measuring the calling thread into BUF. Each thread that wants its
 * costs measured calls this with its own buffer, which must stay valid
 * until np_cost_shutdown or the thread's end (which merges it). */
NP_API int np_cost_init(void *buf, size_t size);
NP_API int np_cost_shutdown(void);
NP_API int np_cost_enable(void);
NP_API int np_cost_disable(void);
NP_API int np_cost_restore(int previous);
/* Drops the calling thread's sums not yet merged, and its open calls. */
NP_API int np_cost_clear(void);

/* ---- Statistics table -------------------------------------------------
 * One table may be shared by every thread. The most recently initialised
 * table (until np_stats_shutdown) also receives a thread's sums
 * automatically when its measurement buffer's table fills up, and when the
 * thread ends; with no table, calls that do not fit are counted as lost
 * and the dump says so. */
NP_API int np_stats_capacity(size_t size);           /* functions SIZE bytes hold */
NP_API size_t np_stats_buffer_size(int functions);
NP_API int np_stats_init(void *stats, size_t size);
/* Stops using STATS: it is no longer the default table, and the runtime
 * never touches it again. Call it before the table's memory goes away. */
NP_API int np_stats_shutdown(void *stats);
/* Merges the calling thread's sums into STATS and empties its table (calls
 * still open stay pending). Thread-safe. Returns NP_EFULL when the table
 * had no room for some function (the dump says so). */
NP_API int np_stats_calc(void *stats);
/* One line per function, largest total first:
 *   <function>: count <calls>, cost <total ns>, self <self ns>, min <ns>, max <ns>
 * Total is inclusive time, counted once for recursive calls; min and max
 * are per call. */
NP_API int np_stats_dump(void *stats);

typedef struct np_func_stats {
    const void *fn;     /* function address, or the NP_ENTER name */
    int named;
    uint64_t calls;
    uint64_t total_ns;  /* inclusive */
    uint64_t self_ns;   /* exclusive */
    uint64_t min_ns;
    uint64_t max_ns;
} np_func_stats;

NP_API int np_stats_count(void *stats);
/* Entry I (0 <= I < count), in order of first appearance. */
NP_API int np_stats_get(void *stats, int i, np_func_stats *out);
/* The entry for FN; NP_EINVAL when FN has none. */
NP_API int np_stats_find(void *stats, const void *fn, np_func_stats *out);
/* Records lost for want of room (measurement buffers full, no table). */
NP_API uint64_t np_stats_lost(void *stats);

/* Which clock cost measurement uses: "tsc", "cntvct", "thread-cputime" or
 * "monotonic". */
NP_API const char *np_cost_clock_name(void);

NP_END_DECLS
#endif
