/* trace_events.c - the trace's calls encoded into EVENTS chunks
 * (np_trace_init): the hooks encode each entry and exit into the one
 * chunk buffer the firmware gives, as records of the thread running now;
 * the chunk goes whole to the output writer when it fills and at each
 * thread switch, so that every chunk holds one thread's records. A chunk
 * the writer refuses is counted lost, and the thread's next records say
 * it (a LOST record). What the ring's way shares is trace_target.c's. */
#include "trace_target.h"
#include "output.h"
#include "report.h"
#include "trace_encode.h"
#include "nanoprof/trace.h"

#if !NP_PORT_HOSTED

_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_ENC_MIN, "NP_TRACE_BUFFER_MIN below the encoder's minimum");

static struct {
    struct np_trace_enc enc;
    uint32_t calls;   /* ENTRY and EXIT records in the chunk */
    uint32_t carried; /* events its LOST records say */
} ev;

/* The encoder's flush: the chunk to the writer; refused, its events lost,
 * which the thread's next record says (a LOST record). */
static void write_chunk(struct np_trace_enc *e, void *ctx)
{
    (void)ctx;
    uint32_t failed = np_output_failures;
    np_tt.write((const char *)ev.enc.buf, np_trace_enc_chunk(e));
    if (np_output_failures != failed) {
        np_tt.lost += ev.calls;
        np_tt.cur->tt.lost += ev.calls + ev.carried;
    }
    ev.calls = ev.carried = 0;
}

/* T's records start a chunk of their own, after T's THREAD chunk when
 * this trace has not seen T yet, or T's name changed since it. */
static void begin_thread(struct np_thread *t)
{
    np_trace_enc_flush(&ev.enc);
    np_tt_thread_seen(t);
    np_tt.cur = t;
    np_trace_enc_thread(&ev.enc, t->tt.tid);
}

/* The events of T's refused chunks, said by a LOST record before its next
 * one. */
static void say_lost(struct np_thread *t, uint64_t now)
{
    if (t->tt.lost) {
        uint64_t n = t->tt.lost;
        t->tt.lost = 0;
        ev.carried += (uint32_t)n;
        np_trace_enc_put_small(&ev.enc, NP_EV_LOST, n, now);
    }
}

static void event(struct np_thread *t, uint64_t fn, int exit)
{
    uint64_t now = np_tt_now();
    if (!np_tt_event_begin(t))
        return;
    if (t != np_tt.cur)
        begin_thread(t);
    say_lost(t, now);
    /* a Thumb function's address has bit 0 set; an NP_ENTER name's
     * address is the string's, which the host reads from the ELF */
    uint64_t addr = fn & NP_REC_NAMED ? fn & NP_ADDR_MASK : fn & ~(uint64_t)1;
    ev.calls++;
    np_trace_enc_put_small(&ev.enc, exit ? NP_EV_EXIT : NP_EV_ENTRY, addr, now);
    np_tt_unlock();
}

/* np_thread_switch (TO busy): TO's records from now on; a SWITCH record
 * says how long it was out. */
static void switched(struct np_thread *from, struct np_thread *to)
{
    uint64_t now = np_tt_now();
    from->tt.out = now;
    if (np_tt_take()) {
        begin_thread(to);
        say_lost(to, now);
        if (to->tt.out) {
            np_trace_enc_put_small(&ev.enc, NP_EV_SWITCH, now - to->tt.out, now);
            to->tt.out = 0;
        }
        np_tt_unlock();
    } else { /* inside another thread's use: its SWITCH record is lost
                (END counts it; its calls are whole: no LOST record) */
        __atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED);
    }
}

/* The encoder's buffer is the scratch room: its chunk goes out first. */
static void clear_scratch(void)
{
    np_trace_enc_flush(&ev.enc);
}

static void finish(int stop)
{
    (void)stop;
    np_trace_enc_flush(&ev.enc);
}

static void setup(struct np_thread *t, void *buf, size_t size)
{
    (void)t;
    (void)np_trace_enc_init(&ev.enc, buf, size, 0, write_chunk, NULL);
    ev.calls = ev.carried = 0;
    np_tt.scratch = ev.enc.buf; /* (THREAD and END go with the encoder empty) */
}

static const struct np_tt_mode events = { setup, event, finish, switched, clear_scratch };

int np_trace_init(void *buf, size_t size)
{
    return np_tt_start(NP_MSG("np_trace_init"), buf, size, np_write, &events);
}

#endif
