/* rtt.h - the output writer as a RAM ring a debug probe reads while the
 * firmware runs: SEGGER RTT's control block, one up-buffer named
 * "nanoprof" (docs/porting.md, "Streaming through a debug probe (RTT)").
 * OpenOCD's `rtt` commands, probe-rs and pyOCD find it by searching RAM for
 * "SEGGER RTT" (or by its symbol, _SEGGER_RTT) and copy out what the
 * firmware wrote, so the trace and every dump stream through any probe. */
#ifndef NANOPROF_RTT_H
#define NANOPROF_RTT_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* What a write that does not fit in the ring does. The values are SEGGER's
 * (SEGGER_RTT_MODE_NO_BLOCK_SKIP, SEGGER_RTT_MODE_BLOCK_IF_FIFO_FULL): the
 * up-buffer's Flags word holds the mode. */
enum np_rtt_mode {
    /* Dropped whole and counted (np_rtt_dropped): never waits. The trace
     * counts that chunk's events lost, and every view says so. */
    NP_RTT_SKIP = 0,
    /* Waits for the host to read (its RdOff): nothing is lost, and without
     * a host reading, the firmware waits for ever once the ring is full. */
    NP_RTT_BLOCK = 2
};

/* The smallest ring np_rtt_init takes. A ring holds one byte less than
 * its size; with NP_RTT_SKIP it should hold several of the trace's chunks
 * (its buffer, np_trace_init) or they are all dropped. */
#define NP_RTT_BUFFER_MIN 16

/* Makes BUF (SIZE bytes, the firmware's, the ring's bytes) the up-buffer
 * of the RTT control block, in MODE, and the output writer
 * (np_output_set(np_rtt_write, NULL)): the trace, dumps and error lines go
 * into it from now on. The control block's ID is written last, so a host
 * never finds it half made. NP_EINVAL (BUF NULL, MODE unknown, SIZE over
 * 2 GiB), NP_ESMALL, NP_EALREADY (called before). */
NP_API int np_rtt_init(void *buf, size_t size, enum np_rtt_mode mode);
/* The writer np_rtt_init sets (an np_write_fn), for a writer of the
 * firmware's that passes bytes on. Bytes before np_rtt_init are dropped
 * and counted. A write made while another one runs (an interrupt's, into
 * the writer it interrupted) cannot be put in order: it is dropped and
 * counted too, and says so (np_output_failed). */
NP_API void np_rtt_write(void *ctx, const char *bytes, size_t len);
/* Bytes written and not yet read by the host: 0 when it has everything
 * (before a reset, or the end of main: `while (np_rtt_pending()) ;`). */
NP_API size_t np_rtt_pending(void);
/* Bytes dropped so far (NP_RTT_SKIP's full ring, writes from inside a
 * write, writes before np_rtt_init). */
NP_API uint32_t np_rtt_dropped(void);

NP_END_DECLS
#endif
