/* thread.h - the per-thread state every mechanism keeps, and how the hooks
 * find it.
 *
 * Each OS thread owns one np_thread in TLS; a user-level scheduler may make
 * more and switch between them (np_thread_switch). The hooks reach the one
 * in use through a single TLS pointer, so the hot path is one TLS load. The
 * BUSY flag makes every hook a no-op while another hook (or a dump) runs on
 * the same thread: a signal handler that runs instrumented code in the
 * middle of a hook, or a hook that reaches instrumented code, records
 * nothing instead of corrupting the buffers. */
#ifndef NP_THREAD_H
#define NP_THREAD_H

#include <stdint.h>
#include "nanoprof/nanoprof.h"

/* flags */
enum {
    NP_F_CT_INIT = 1u << 0,   /* call trace has a buffer */
    NP_F_CT_ON = 1u << 1,     /* ... and is enabled */
    NP_F_COST_INIT = 1u << 2,
    NP_F_COST_ON = 1u << 3,
    NP_F_BUSY = 1u << 4,      /* a hook or dump is running on this thread */
    NP_F_ATTACHED = 1u << 5,
    NP_F_CT_LOG = 1u << 6,    /* call trace in log mode (else stack) */
    NP_F_REC_ON = 1u << 7     /* the recorder has this thread (record.h) */
};
#define NP_F_RECORDING (NP_F_CT_ON | NP_F_COST_ON)

/* A call trace record: two words. w0 is the function address (bit 63 set
 * for an NP_ENTER name); w1 is the call site in its low 48 bits and, in
 * log mode, the nesting depth in its high 16 bits. */
typedef struct np_trace_record {
    uint64_t w0, w1;
} np_trace_record;

#define NP_REC_NAMED (1ull << 63)
#define NP_ADDR_BITS 48
#define NP_ADDR_MASK ((1ull << NP_ADDR_BITS) - 1)
#define NP_DEPTH_MAX 0xffffu

struct np_calltrace_state {
    np_trace_record *buf;
    uint32_t cap;
    uint32_t mode;
    uint32_t top;       /* stack: records held; log: next slot */
    uint32_t depth;     /* log: nesting depth now */
    uint32_t overflow;  /* stack: open frames that did not fit */
    uint64_t wraps;     /* log: times the ring went round */
};

/* A measurement record: w0 is the function address with the record kind in
 * its top bits; w1 the thread's running time in ticks. */
typedef struct np_cost_record {
    uint64_t w0, w1;
} np_cost_record;

#define NP_COST_NAMED NP_REC_NAMED
#define NP_COST_EXIT (1ull << 62)
#define NP_COST_UNWIND (1ull << 61) /* w0 low bits: open calls left by a longjmp */
#define NP_COST_KIND_MASK (NP_COST_EXIT | NP_COST_UNWIND)

struct np_cost_state {
    np_cost_record *buf;
    uint32_t cap;
    uint32_t n;            /* records held; the first `open` are calls a
                              summary left open */
    uint32_t open_pending; /* recorded entries whose exit is still to come */
    uint32_t open;         /* summariser: open calls at the buffer's front */
    uint64_t lost_open;    /* entries dropped for want of room, still open */
    uint64_t lost;         /* records dropped since the last summary */
    uint64_t last;         /* summariser: time of the last record seen */
    int have_last;
};

/* One setjmp seen on this thread: what to restore when longjmp returns to
 * it. */
struct np_jmp_mark {
    const void *env;
    uint32_t ct_top, ct_overflow, ct_depth;
    uint32_t cost_pending;
    uint64_t cost_lost_open;
};
#define NP_JMP_MARKS 8

struct np_thread {
    uint32_t flags;
    uint64_t off;          /* ticks this thread was switched out */
    uint64_t out_at;       /* raw time of np_thread_switch away, or 0 */
    long tid;
    struct np_calltrace_state ct;
    struct np_cost_state cost;
    struct np_jmp_mark marks[NP_JMP_MARKS];
    uint32_t next_mark;
    struct np_rec_stream *rec; /* the recorder's stream, with NP_F_REC_ON */
};

_Static_assert(sizeof(struct np_thread) <= NP_THREAD_SIZE, "NP_THREAD_SIZE too small");

extern __thread struct np_thread *np_cur __attribute__((tls_model("initial-exec")));
struct np_thread *np_thread_attach(void);
/* The OS thread's own state (not a user-level thread's), or NULL. */
struct np_thread *np_thread_os(void);

static inline __attribute__((always_inline)) struct np_thread *np_self(void)
{
    struct np_thread *t = np_cur;
    if (__builtin_expect(t == 0, 0))
        t = np_thread_attach();
    return t;
}

/* Marks T busy for a dump or API call; returns 0 when it already was. */
static inline int np_thread_lock(struct np_thread *t)
{
    if (t->flags & NP_F_BUSY)
        return 0;
    t->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return 1;
}

static inline void np_thread_unlock(struct np_thread *t)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
}

#endif
