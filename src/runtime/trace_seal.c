/* trace_seal.c - np_trace_chunk_seal out of line (trace_encode.h): an
 * object of its own, so that a firmware's every chunk (EVENTS, RING,
 * THREAD, END) is checksummed by one copy of the code, which brings
 * nothing else with it. A RING chunk's words, aligned there, are summed
 * by the port's routine when it has one. */
#include "../port/port.h"
#ifdef NP_PORT_WORDS_SUM
#define NP_RING_WORDS_SUM NP_PORT_WORDS_SUM
#endif
#include "trace_encode.h"

void np_trace_seal(void *chunk)
{
    np_trace_chunk_seal(chunk);
}
