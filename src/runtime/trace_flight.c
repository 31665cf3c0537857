/* trace_flight.c - the trace's flight recorder (nanoprof/trace.h,
 * np_trace_init_flight): the ring of np_trace_init_ring, which wraps over
 * its oldest words instead of going to the writer, and the stream's
 * chunks (header, INFO, MODULE, THREAD, END) kept in RAM before it, under
 * a control block a debugger finds by its id (trace_format.h, "the
 * flight recorder's control block"). Nothing leaves the target: a RAM
 * image read after a fault or at a breakpoint (gdb's dump binary memory)
 * is the capture `nanoprof import` reads. */
#include "trace_target.h"
#include "hooks.h"
#include "output.h"
#include "nanoprof/trace.h"

#if NP_PORT_HOSTED

int np_trace_init_flight(void *buf, size_t size)
{
    (void)buf, (void)size;
    return np_error(NP_EINVAL, "np_trace_init_flight", "records on a target; on a host, `nanoprof record` does");
}

#else

_Static_assert(NP_TRACE_FLIGHT_MIN >= NP_FLIGHT_BLOCK + NP_TRACE_FLIGHT_META + NP_TRACE_BUFFER_MIN + 8,
               "the block, the chunks' room and a ring");
_Static_assert(NP_TRACE_FLIGHT_META >= 256, "the stream's opening (header, INFO, MODULE) and a THREAD chunk");

static uint32_t *block; /* the control block, as words */

#define FIELD(f) block[(f) / 4]

/* A chunk (or a piece of the opening) into the chunks' room, whole or,
 * without room, not at all (DROPPED counts it). */
static void keep(const char *bytes, size_t len)
{
    uint32_t n = FIELD(NP_FLIGHT_META_LEN);
    if (len > FIELD(NP_FLIGHT_META_CAP) - n) {
        FIELD(NP_FLIGHT_DROPPED)++;
        return;
    }
    uint8_t *m = (uint8_t *)block + NP_FLIGHT_BLOCK + n;
    for (size_t i = 0; i < len; i++) /* (no memcpy linked) */
        m[i] = (uint8_t)bytes[i];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    FIELD(NP_FLIGHT_META_LEN) = n + (uint32_t)len;
}

int np_trace_init_flight(void *buf, size_t size)
{
    const char *who = NP_MSG("np_trace_init_flight");
    if (!buf)
        return np_error_msg(NP_EINVAL, who, NP_MSG("buffer is NULL"));
    uintptr_t a = ((uintptr_t)buf + 3) & ~(uintptr_t)3;
    size_t skip = a - (uintptr_t)buf, ring = NP_FLIGHT_BLOCK + NP_TRACE_FLIGHT_META;
    if (size < NP_TRACE_FLIGHT_MIN)
        return np_error_msg(NP_ESMALL, who, NP_MSG("buffer too small"));
    if (np_tt_running()) /* (its block is not touched) */
        return np_error_msg(NP_EALREADY, who, NP_MSG("already started"));
    uint32_t *b = (uint32_t *)a;
    for (unsigned i = 0; i < NP_FLIGHT_BLOCK / 4; i++)
        b[i] = 0; /* the id too: a block half made is not found */
    block = b;
    FIELD(NP_FLIGHT_VERSION) = 1;
    FIELD(NP_FLIGHT_SELF) = (uint32_t)a;
    FIELD(NP_FLIGHT_META) = (uint32_t)a + NP_FLIGHT_BLOCK;
    FIELD(NP_FLIGHT_META_CAP) = NP_TRACE_FLIGHT_META;
    uint32_t *words, *end;
    int st = np_tt_ring_start(who, (uint8_t *)a + ring, size - skip - ring, keep, &FIELD(NP_FLIGHT_LAPS), &words,
                              &end);
    if (st)
        return st;
    FIELD(NP_FLIGHT_WORDS) = (uint32_t)(uintptr_t)words;
    FIELD(NP_FLIGHT_NWORDS) = (uint32_t)(end - words);
    FIELD(NP_FLIGHT_POS_AT) = (uint32_t)(uintptr_t)&np_tt_ring.pos;
    FIELD(NP_FLIGHT_BASE) = np_tt_ring.base;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    static const char id[NP_FLIGHT_ID_LEN] = NP_FLIGHT_ID;
    uint8_t *p = (uint8_t *)b;
    for (unsigned i = 0; i < NP_FLIGHT_ID_LEN; i++)
        p[i] = (uint8_t)id[i];
    return NP_OK;
}

#endif
