/* trace.h - the call trace recorded on a target: every call's entry and
 * exit, with the cycle clock, streamed in nanoprof's trace format
 * (docs/trace-format.md) through the output writer, for `nanoprof import`
 * to turn into a trace every view reads (docs/porting.md, "Recording a
 * trace on the target"). On a host, `nanoprof record` does this. */
#ifndef NANOPROF_TRACE_H
#define NANOPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* The smallest buffer np_trace_init takes. A larger one makes fewer,
 * larger chunks (each costs 29 bytes of header); 1 KiB is a good size. */
#define NP_TRACE_BUFFER_MIN 160

/* Starts recording the calls of every thread (the calling one, and each
 * one np_thread_switch switches to) into BUF, SIZE bytes that the trace
 * owns until np_trace_stop. Writes the trace's header (its clock, the
 * firmware's build-id) to the output writer (np_output_set) at once, then
 * each chunk of calls when BUF fills, and at each np_thread_switch. The
 * firmware is linked with -Wl,--build-id, so that the host checks the ELF
 * it is given. NP_EINVAL (BUF NULL, or a hosted library), NP_ESMALL,
 * NP_EALREADY (running). */
NP_API int np_trace_init(void *buf, size_t size);
/* As np_trace_init, the calls kept as raw words in BUF (4 bytes an entry
 * or exit, a few more where the clock's low 12 bits wrap), which go out
 * as RING chunks when BUF fills, at np_trace_flush and np_trace_stop; the
 * host decodes them (`nanoprof import`). With the DWT cycle counter as the
 * clock and a buffer of NP_TRACE_RING_FAST bytes or more, the hooks
 * write each word themselves (about 20 instructions). The firmware's
 * instrumented functions lie in the 1 MiB window this library's code is
 * in; a call to a function beyond takes 8 bytes. */
#define NP_TRACE_RING_FAST 4096
NP_API int np_trace_init_ring(void *buf, size_t size);
/* As np_trace_init_ring, a flight recorder: nothing goes to the writer.
 * The ring wraps over its oldest words, and keeps the newest; the trace's
 * header and thread names stay in BUF too, under a control block a
 * debugger finds by its id ("NANOPROF FLIGHT"), as OpenOCD finds RTT's.
 * After a fault or at a breakpoint, an image of the RAM that holds BUF
 * and the runtime's data (gdb: dump binary memory FILE START END) is a
 * capture `nanoprof import` reads. SIZE: at least NP_TRACE_FLIGHT_MIN
 * (NP_ESMALL). np_trace_stop stops it, its words left to be read. */
#define NP_TRACE_FLIGHT_MIN 1024
NP_API int np_trace_init_flight(void *buf, size_t size);
/* Writes the calls in the buffer now, without stopping. NP_ENOTINIT. */
NP_API int np_trace_flush(void);
/* Writes the calls in the buffer and the trace's END chunk (with the
 * events lost) and stops; np_trace_init may start a new trace. NP_ENOTINIT. */
NP_API int np_trace_stop(void);
/* Events lost so far: calls made while the writer or another hook ran
 * (an interrupt), and the chunks the writer refused (np_output_failed). */
NP_API uint64_t np_trace_lost(void);

NP_END_DECLS
#endif
