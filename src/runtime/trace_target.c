/* trace_target.c - the call trace recorded on a target (nanoprof/trace.h):
 * the hooks encode each entry and exit, with the port's 64-bit clock,
 * into the one chunk buffer the firmware gives, as records of the thread
 * running now; the chunk goes whole to the output writer when it fills
 * and at each thread switch, so that every chunk holds one thread's
 * records. Nothing is allocated, nothing waits: a chunk the writer
 * refuses, and a call made while the writer (or another hook) runs, are
 * counted lost, and the END chunk says how many. A host has its own
 * recorder (record.c): there this file only refuses. */
#include "trace_target.h"
#include "hooks.h"
#include "output.h"
#include "record_hooks.h"
#include "trace_encode.h"
#include "nanoprof/trace.h"

uint32_t np_tt_dropped;

#if NP_PORT_HOSTED

int np_trace_init(void *buf, size_t size)
{
    (void)buf, (void)size;
    return np_error(NP_EINVAL, "np_trace_init", "records on a target; on a host, `nanoprof record` does");
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

void np_tt_event(struct np_thread *t, uint64_t fn, int exit)
{
    (void)t, (void)fn, (void)exit;
}

#else

_Static_assert(NP_TRACE_BUFFER_MIN >= NP_TRACE_ENC_MIN, "NP_TRACE_BUFFER_MIN below the encoder's minimum");

static struct {
    struct np_trace_enc enc;
    struct np_thread *cur; /* whose records the chunk holds */
    uint64_t lost;         /* events in chunks the writer refused */
    uint32_t calls;        /* ENTRY and EXIT records in the chunk */
    uint32_t carried;      /* events its LOST records say */
    uint32_t gen;          /* this trace's number: threads' fields of an
                              earlier trace are stale */
    uint32_t tids;         /* thread ids given so far */
    uint64_t last_name;    /* the NP_ENTER name a NAME chunk said last */
    int on;
} tt;

/* The trace's ticks are cycles (INFO's clock "cycles"): the reader shows
 * them as they are, or as time given the clock's rate (--clock). */
#define NP_TT_NS_PER_TICK 1.0

/* The first N bytes of the buffer to the writer. */
static void write_bytes(size_t n)
{
    np_write((const char *)tt.enc.buf, n);
}

/* The encoder's flush: the chunk to the writer; refused, its events lost,
 * which the thread's next record says (a LOST record). */
static void write_chunk(struct np_trace_enc *e, void *ctx)
{
    (void)ctx;
    uint32_t failed = np_output_failures;
    write_bytes(np_trace_enc_chunk(e));
    if (np_output_failures != failed) {
        tt.lost += tt.calls;
        tt.cur->tt.lost += tt.calls + tt.carried;
    }
    tt.calls = tt.carried = 0;
}

/* T's records start a chunk of their own, after T's THREAD chunk when
 * this trace has not seen T yet. */
static void begin_thread(struct np_thread *t)
{
    np_trace_enc_flush(&tt.enc);
    if (t->tt.gen != tt.gen) {
        t->tt = (struct np_tt_thread){ .gen = tt.gen, .tid = ++tt.tids };
        /* the OS thread's own state is "main"; an RTOS's threads have no
         * name the runtime knows: the reader numbers them */
        int is_main = t == np_thread_os();
        write_bytes(np_trace_thread_chunk(tt.enc.buf, tt.enc.size, t->tt.tid, "main", is_main ? 4 : 0));
    }
    tt.cur = t;
    np_trace_enc_thread(&tt.enc, t->tt.tid);
}

void np_tt_event(struct np_thread *t, uint64_t fn, int exit)
{
    uint64_t now = np_port_wall_ticks();
    if (!tt.on) {
        t->flags &= ~(uint32_t)NP_F_REC_ON; /* stopped meanwhile */
        return;
    }
    if (t != tt.cur)
        begin_thread(t);
    if (t->tt.lost) {
        uint64_t n = t->tt.lost;
        t->tt.lost = 0;
        tt.carried += (uint32_t)n;
        np_trace_enc_put(&tt.enc, NP_EV_LOST, n, now);
    }
    uint64_t addr = fn & NP_ADDR_MASK;
    if (fn & NP_REC_NAMED) {
        /* NAME comes before the chunk that calls it: this one ends */
        if (addr != tt.last_name) {
            np_trace_enc_flush(&tt.enc);
            const char *s = (const char *)(uintptr_t)addr;
            write_bytes(np_trace_name_chunk(tt.enc.buf, tt.enc.size, addr, s,
                                            np_trace_strnlen(s, NP_TRACE_NAME_MAX)));
            tt.last_name = addr;
        }
    } else {
        addr &= ~(uint64_t)1; /* a Thumb function's address has bit 0 set */
    }
    tt.calls++;
    np_trace_enc_put(&tt.enc, exit ? NP_EV_EXIT : NP_EV_ENTRY, addr, now);
}

/* np_thread_switch: TO's records from now on; a SWITCH record says how
 * long it was out. */
static void on_switch(struct np_thread *from, struct np_thread *to)
{
    if (!tt.on)
        return;
    uint32_t f = to->flags;
    to->flags = f | NP_F_BUSY; /* an instrumented writer records nothing */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint64_t now = np_port_wall_ticks();
    from->tt.out = now;
    begin_thread(to);
    if (to->tt.out) {
        np_trace_enc_put(&tt.enc, NP_EV_SWITCH, now - to->tt.out, now);
        to->tt.out = 0;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    to->flags = f | NP_F_REC_ON;
}

/* The build-id of the firmware, from its .note.gnu.build-id note, which
 * the boards' linker scripts keep between these symbols (weak: a script
 * without them gives an empty build-id). */
extern const uint8_t __np_build_id_start[] __attribute__((weak));
extern const uint8_t __np_build_id_end[] __attribute__((weak));

static const uint8_t *build_id(size_t *len)
{
    const uint8_t *p = __np_build_id_start;
    *len = 0;
    if (!p || __np_build_id_end - p < 12)
        return NULL;
    /* the note: u32 namesz, u32 descsz, u32 type, the name (padded to 4
     * bytes), the build-id */
    uint32_t namesz = np_get_u32(p), descsz = np_get_u32(p + 4);
    size_t off = 12 + ((namesz + 3) & ~3u);
    if (off + descsz > (size_t)(__np_build_id_end - p))
        return NULL;
    *len = descsz;
    return p + off;
}

int np_trace_init(void *buf, size_t size)
{
    static const char who[] = "np_trace_init";
    if (!buf)
        return np_error(NP_EINVAL, who, "needs a buffer");
    if (size < NP_TRACE_BUFFER_MIN)
        return np_error(NP_ESMALL, who, "needs NP_TRACE_BUFFER_MIN bytes");
    if (tt.on)
        return np_error(NP_EALREADY, who, "a trace is being recorded (np_trace_stop ends it)");
    struct np_thread *t = np_self();
    if (!np_api_enter(t, who))
        return NP_EBUSY;
    np_port_clock_init();
    size_t id_len;
    const uint8_t *id = build_id(&id_len);
    struct np_trace_info info = { .ns_per_tick = NP_TT_NS_PER_TICK, .start_tick = np_port_wall_ticks(),
                                  .clock = np_port_wall_clock_name() };
    uint8_t *b = buf, head[NP_TRACE_HEADER_SIZE];
    int st = NP_OK;
    /* MODULE: u64 bias, start, end, the build-id, an empty path */
    if (id_len > NP_BUILD_ID_MAX || NP_TRACE_CHUNK_HEADER + 3 * 8 + 2 + id_len + 2 > size) {
        st = np_error(NP_ESMALL, who, "the firmware's build-id does not fit the buffer");
    } else {
        (void)np_trace_enc_init(&tt.enc, b, size, 0, write_chunk, NULL);
        np_trace_file_header(head);
        np_write((const char *)head, sizeof head);
        write_bytes(np_trace_info_chunk(b, size, &info));
        /* the firmware is one module: every address is its own */
        write_bytes(np_trace_module_chunk(b, size, 0, 0, (uint64_t)1 << NP_ADDR_BITS, id, id_len, "", 0));
        tt.gen++;
        tt.cur = NULL;
        tt.lost = 0;
        tt.calls = tt.carried = 0;
        tt.tids = 0;
        tt.last_name = 0;
        np_tt_dropped = 0;
        np_rec_switch_hook = on_switch;
        tt.on = 1;
        t->flags |= NP_F_REC_ON;
    }
    np_thread_unlock(t);
    return st;
}

/* The calling thread, marked busy, when a trace is being recorded. */
static struct np_thread *api_enter(const char *who)
{
    if (!tt.on) {
        np_error(NP_ENOTINIT, who, "no trace is being recorded (np_trace_init starts one)");
        return NULL;
    }
    struct np_thread *t = np_self();
    return np_api_enter(t, who) ? t : NULL;
}

int np_trace_flush(void)
{
    struct np_thread *t = api_enter("np_trace_flush");
    if (!t)
        return tt.on ? NP_EBUSY : NP_ENOTINIT;
    np_trace_enc_flush(&tt.enc);
    np_thread_unlock(t);
    return NP_OK;
}

int np_trace_stop(void)
{
    struct np_thread *t = api_enter("np_trace_stop");
    if (!t)
        return tt.on ? NP_EBUSY : NP_ENOTINIT;
    np_trace_enc_flush(&tt.enc);
    tt.on = 0;
    np_rec_switch_hook = NULL;
    t->flags &= ~(uint32_t)NP_F_REC_ON;
    write_bytes(np_trace_end_chunk(tt.enc.buf, tt.enc.size, np_port_wall_ticks(), np_trace_lost(),
                                   NP_TT_NS_PER_TICK));
    np_thread_unlock(t);
    return NP_OK;
}

uint64_t np_trace_lost(void)
{
    return tt.lost + __atomic_load_n(&np_tt_dropped, __ATOMIC_RELAXED);
}

#endif
