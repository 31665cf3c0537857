/* gprof.h - the GNU profiler on a target: a firmware built with -pg counts
 * its calls (caller, callee, count) and samples the interrupted PC from a
 * timer interrupt into a histogram of its code, both in buffers it gives;
 * then writes them to the host as a gmon.out file, which
 * `arm-none-eabi-gprof FIRMWARE.elf gmon.out` reads (docs/porting.md, "The
 * GNU profiler on the target"). On a host, use `nanoprof record --sample`
 * and `nanoprof dump --format=gmon` instead: these calls return NP_EINVAL. */
#ifndef NANOPROF_GPROF_H
#define NANOPROF_GPROF_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* The arc buffer holds the profiler's state (NP_GPROF_STATE_SIZE bytes),
 * then the call arcs, NP_GPROF_ARC_SIZE bytes each (one per caller and
 * callee pair): NP_GPROF_ARCS_SIZE(n) bytes hold n arcs. */
#define NP_GPROF_STATE_SIZE 48
#define NP_GPROF_ARC_SIZE 12
#define NP_GPROF_ARCS_SIZE(n) (NP_GPROF_STATE_SIZE + (size_t)(n) * NP_GPROF_ARC_SIZE)

/* The default file, on the host (relative to the debugger's or QEMU's
 * working directory). */
#define NP_GPROF_FILE "gmon.out"

typedef struct np_gprof_config {
    void *arcs;            /* the arc buffer, 4-byte aligned */
    size_t arcs_size;      /* its bytes: NP_GPROF_ARCS_SIZE(arcs) */
    uint16_t *hist;        /* the histogram's bins, one sample counter each */
    size_t hist_size;      /* its bytes */
    unsigned hz;           /* samples a second (the timer interrupt's rate) */
    /* The code the histogram covers; both NULL: the firmware's text as the
     * board's link.ld marks it (_stext, _etext). The bins are the fewest
     * the buffer allows: each covers a power of two of bytes, up to 64
     * (NP_GPROF_BUCKET_MAX when the runtime was built). */
    const void *text_start, *text_end;
} np_gprof_config;

/* Starts counting calls and sampling. The program's end (main returning,
 * on the boards' startup.c) writes NP_GPROF_FILE. NP_EINVAL (NULL or
 * misaligned buffer, no text range, hz out of range or refused by the
 * timer), NP_ESMALL (no room for one arc, or the histogram would need
 * bins wider than NP_GPROF_BUCKET_MAX: the line says the size needed),
 * NP_EALREADY (running). */
NP_API int np_gprof_init(const np_gprof_config *config);

/* Writes what was counted so far to PATH on the host (NULL:
 * NP_GPROF_FILE), for a firmware whose main never returns; counting goes
 * on. NP_OK; NP_EFULL when written but incomplete: calls not counted
 * (the arc table full, or an arc's count at 2^32-1) or samples lost (a
 * bin at 65535), the line says how many; NP_EINVAL when the host did not
 * take the file; NP_ENOTINIT before np_gprof_init. */
NP_API int np_gprof_write(const char *path);

NP_END_DECLS

#endif
