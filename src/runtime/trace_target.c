/* trace_target.c - the call trace recorded on a target (nanoprof/trace.h):
 * what its two ways of writing the calls share. The hooks give each entry
 * and exit, with the port's 64-bit clock, to the way the trace was
 * started with: encoded into EVENTS chunks (trace_events.c, np_trace_init)
 * or kept as raw words in a ring (trace_ring.c, np_trace_init_ring,
 * np_trace_init_flight). Here: starting and stopping, the threads' THREAD
 * chunks, the lock the threads take, and END. Nothing is allocated; a call
 * made while the writer (or another hook) runs on its thread, or while
 * another thread holds the lock, is counted lost, and the END chunk says
 * how many. A host has its own recorder (record.c): there this file only
 * refuses. */
#include "trace_target.h"
#include "hooks.h"
#include "output.h"
#include "report.h"
#include "record_hooks.h"
#include "trace_encode.h"
#include "nanoprof/trace.h"

#if NP_PORT_HOSTED

int np_trace_init(void *buf, size_t size)
{
    (void)buf, (void)size;
    return np_error(NP_EINVAL, "np_trace_init", "records on a target; on a host, `nanoprof record` does");
}

int np_trace_init_ring(void *buf, size_t size)
{
    (void)buf, (void)size;
    return np_error(NP_EINVAL, "np_trace_init_ring", "records on a target; on a host, `nanoprof record` does");
}

int np_tt_ring_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t), uint32_t *laps,
                     uint32_t **words, uint32_t **end)
{
    (void)buf, (void)size, (void)write, (void)laps, (void)words, (void)end;
    return np_error_msg(NP_EINVAL, who, NP_MSG("records on a target; on a host, `nanoprof record` does"));
}

int np_trace_flush(void)
{
    return np_error(NP_ENOTINIT, "np_trace_flush", "no trace is being recorded (np_trace_init starts one)");
}

int np_trace_stop(void)
{
    return np_error(NP_ENOTINIT, "np_trace_stop", "no trace is being recorded (np_trace_init starts one)");
}

uint64_t np_trace_lost(void)
{
    return 0;
}

#else

_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_CHUNK_HEADER + 4 + 2 + NP_THREAD_NAME_MAX, "a THREAD chunk fits");
_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_CHUNK_HEADER + 3 * 8, "an END chunk fits");

struct np_tt_state np_tt;

/* The trace's ticks are cycles (INFO's clock "cycles", report.c): END's
 * ns_per_tick is 1.0, as a double's bits. */
#define NP_TT_NS_PER_TICK_BITS 0x3ff0000000000000ull

/* THREAD and END are built field by field (report.c's np_chunk_field),
 * not with trace_encode's bounds-checked builders: the scratch room holds
 * each of them (NP_TRACE_BUFFER_MIN), and the code is a third of theirs.
 * The stream's opening (header, INFO, MODULE) is report.c's too. */
#define field np_chunk_field
#define PAYLOAD (np_tt.scratch + NP_TRACE_CHUNK_HEADER)

/* The chunk of TYPE whose payload ends at END, from the scratch room. */
static void write_chunk_of(uint32_t type, const uint8_t *end)
{
    np_chunk_send(np_tt.scratch, type, end, np_tt.write);
}

__attribute__((noinline)) uint64_t np_tt_now(void)
{
    return np_port_wall_ticks();
}

/* The bytes of T's name are copied, no text made. A thread named again has
 * a THREAD chunk again: the reader takes the last. */
void np_tt_write_thread(struct np_thread *t)
{
    t->tt.named = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* a name given meanwhile clears it */
    size_t n = 0;
    while (n < NP_THREAD_NAME_MAX && t->name[n])
        n++;
    uint8_t *p = field(field(PAYLOAD, t->tt.tid, 4), n, 2);
    __builtin_memcpy(p, t->name, n);
    write_chunk_of(NP_CHUNK_THREAD, p + n);
}

void np_tt_thread_seen(struct np_thread *t)
{
    if (t->tt.gen != np_tt.gen) {
        t->tt = (struct np_tt_thread){ .gen = np_tt.gen, .tid = ++np_tt.tids };
        np_tt_write_thread(t);
    } else if (!t->tt.named) {
        np_tt_write_thread(t);
    }
}

/* np_thread_switch: TO is busy (an instrumented writer records nothing)
 * while the mode writes what the switch says, and recorded after it;
 * marked recorded from the start, so that an interrupt's calls meanwhile
 * are counted lost (NP_TT_DROPPED), not left out unsaid. */
static void switched(struct np_thread *from, struct np_thread *to)
{
    if (!np_tt.on)
        return;
    uint32_t f = to->flags;
    to->flags = f | NP_F_BUSY | NP_F_REC_ON;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    np_tt.mode->switched(from, to);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    to->flags = f | NP_F_REC_ON;
}

/* np_thread_name: a thread this trace has seen gets its THREAD chunk
 * again now, or, when the caller cannot write (inside a hook) or another
 * thread holds the lock, with its next records (in a ring, the next the
 * hooks do not write themselves); one it has not seen, with its first. */
static void named(struct np_thread *t, int now)
{
    t->tt.named = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!now || !np_tt.on || t->tt.gen != np_tt.gen || !np_tt_take())
        return;
    if (np_tt.mode->clear_scratch)
        np_tt.mode->clear_scratch();
    np_tt_write_thread(t);
    np_tt_unlock();
}

/* The calling thread, marked busy for the API call WHO, or NULL. */
static struct np_thread *enter(const char *who) /* WHO: an NP_MSG value */
{
    struct np_thread *t = np_self();
    return np_api_enter_msg(t, who) ? t : NULL;
}

/* A flight recorder's stream (WRITE not np_write) is its own, apart from
 * the writer's. */
int np_tt_start(const char *who, void *buf, size_t size, void (*write)(const char *, size_t),
                const struct np_tt_mode *mode)
{
    if (!buf)
        return np_error_msg(NP_EINVAL, who, NP_MSG("buffer is NULL"));
    if (size < NP_TRACE_BUFFER_MIN)
        return np_error_msg(NP_ESMALL, who, NP_MSG("buffer too small"));
    if (np_tt.on)
        return np_error_msg(NP_EALREADY, who, NP_MSG("already started"));
    struct np_thread *t = enter(who);
    if (!t)
        return NP_EBUSY;
    np_port_clock_init();
    /* the stream's opening, which the firmware's reports may have sent
     * already; a trace after another opens a stream of its own (the
     * host reads each from its header) */
    np_tt.write = write;
    if (write == np_write) {
        np_stream_open(np_tt.gen != 0);
        np_output_tracing = 1;
    } else {
        np_stream_opening(write);
    }
    np_tt.gen++;
    __builtin_memset(&np_tt.cur, 0, sizeof np_tt - __builtin_offsetof(struct np_tt_state, cur));
    np_tt_dropped = 0;
    np_tt.mode = mode;
    mode->setup(t, buf, size);
    np_rec_switch_hook = switched;
    np_rec_name_hook = named;
    /* never unset: a thread that finds the trace stopped clears its flag */
    __atomic_store_n(&np_tt_event_hook, mode->event, __ATOMIC_RELEASE);
    np_tt.on = 1;
    t->flags |= NP_F_REC_ON;
    np_thread_unlock(t);
    return NP_OK;
}

int np_tt_running(void)
{
    return np_tt.on;
}

/* np_trace_flush, np_trace_stop (STOP): what is kept goes out; stopping,
 * the END chunk after it. */
static int finish(const char *who, int stop) /* WHO: an NP_MSG value */
{
    if (!np_tt.on)
        return np_error_msg(NP_ENOTINIT, who, NP_MSG("not started"));
    struct np_thread *t = enter(who);
    if (!t)
        return NP_EBUSY;
    if (!np_tt_take()) {
        np_thread_unlock(t);
        return np_error_msg(NP_EBUSY, who, NP_MSG("another thread is in it"));
    }
    np_tt.mode->finish(stop);
    if (stop) {
        np_tt.on = 0;
        np_output_tracing = 0;
        np_rec_switch_hook = NULL;
        np_rec_name_hook = NULL;
        t->flags &= ~(uint32_t)NP_F_REC_ON;
        /* END: the end tick, the events lost, ns_per_tick (1.0) */
        uint8_t *p = field(field(PAYLOAD, np_tt_now(), 8), np_trace_lost(), 8);
        write_chunk_of(NP_CHUNK_END, field(p, NP_TT_NS_PER_TICK_BITS, 8));
    }
    np_tt_unlock();
    np_thread_unlock(t);
    return NP_OK;
}

int np_trace_flush(void)
{
    return finish(NP_MSG("np_trace_flush"), 0);
}

int np_trace_stop(void)
{
    return finish(NP_MSG("np_trace_stop"), 1);
}

uint64_t np_trace_lost(void)
{
    return np_tt.lost + __atomic_load_n(&np_tt_dropped, __ATOMIC_RELAXED);
}

#endif
