/* bins.h - a histogram of where the program spends its time, by bins the
 * program marks itself: NP_BIN(n) says "the program is in bin n now", and a
 * periodic tick (a timer signal on hosts, a timer interrupt on targets)
 * adds one to the current bin's counter.
 *
 * The current bin is ONE variable for the whole process, as on a
 * microcontroller: with several threads marking bins, the last mark wins.
 * Bin 0 counts time in the profiler itself (np_bins_dump); the last bin
 * counts time in np_bins_delay_us and between np_bins_idle_begin/end. */
#ifndef NANOPROF_BINS_H
#define NANOPROF_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* The current bin. Written by NP_BIN, read by the tick. */
NP_API extern unsigned np_bin_current;

/* One store; the fences keep the compiler from moving the mark across the
 * work around it (the tick reads it from a signal handler). */
#define NP_BIN(n)                                                     \
    do {                                                              \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                      \
        __atomic_store_n(&np_bin_current, (unsigned)(n), __ATOMIC_RELAXED); \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                      \
    } while (0)

/* Starts counting into NBINS bins (3 .. np_bins_max()) HZ times a second
 * (1 .. 100000), and makes bin 1 current. HZ 0 starts no timer: the program
 * calls np_bins_tick() from its own periodic interrupt or timer. On hosts
 * the timer is a POSIX timer on CLOCK_MONOTONIC that sends a real-time
 * signal (np_bins_signal()). NP_EALREADY when running; NP_EINVAL for bad
 * arguments or when no timer could be made (the line says why). */
NP_API int np_bins_init(unsigned nbins, unsigned hz);
/* np_bins_init with the table in BUF (SIZE bytes, aligned for a pointer,
 * at least NP_BINS_BUF_BYTES(nbins)), the program's memory instead of the
 * runtime's built-in table of np_bins_max() bins: a firmware that calls
 * only this links no table of its own. The buffer is the runtime's until
 * np_bins_shutdown. NP_ESMALL when it is too small; NP_EINVAL when it is
 * NULL or misaligned, and as np_bins_init. */
NP_API int np_bins_init_buf(void *buf, size_t size, unsigned nbins, unsigned hz);
/* Bytes of a table of N bins: a name and a counter (at most 32 bits) each. */
#define NP_BINS_BUF_BYTES(n) ((size_t)(n) * (sizeof(const char *) + sizeof(uint32_t)))
/* Stops the timer and the periodic dump; forgets counts and names. */
NP_API int np_bins_shutdown(void);
/* Names bin N for dumps (no spaces, static storage), while running:
 * NP_ENOTINIT before np_bins_init. */
NP_API int np_bin_name(unsigned n, const char *name);

/* One tick: adds one to the current bin. What the timer calls;
 * async-signal-safe. */
NP_API void np_bins_tick(void);

/* Waits US microseconds counted in the last bin, then makes the previous
 * bin current again. */
NP_API void np_bins_delay_us(uint32_t us);
/* Brackets any other wait (poll, a condition variable, ...) so that it is
 * counted in the last bin: begin returns the bin to give end. */
NP_API unsigned np_bins_idle_begin(void);
NP_API void np_bins_idle_end(unsigned previous);

/* One line per bin, then clears the counters:
 *   <n> <name, or - when unnamed> <count>[ (saturated)]
 * followed, only when not zero, by
 *   (<n> ticks in bins out of range)
 *   (<n> ticks counted late: the timer signal was blocked or the program was not running)
 * NP_ENOTINIT when not running. */
NP_API int np_bins_dump(void);
/* Dumps every SECONDS seconds from a thread of the runtime's; 0 stops. */
NP_API int np_bins_dump_every(unsigned seconds);

/* Bin N's count now (not cleared); 0 for a bin out of range or when
 * not running. */
NP_API uint32_t np_bins_count(unsigned n);
/* The largest bin count (NP_BIN_COUNTER_BITS when the runtime was built:
 * 65535 or 4294967295); a counter that reaches it stays there. */
NP_API uint32_t np_bins_counter_max(void);
/* Most bins np_bins_init and np_bins_init_buf accept. */
NP_API unsigned np_bins_max(void);
/* The timer's signal while running on a host, else 0. */
NP_API int np_bins_signal(void);

NP_END_DECLS
#endif
