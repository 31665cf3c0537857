/* thread.h - the per-thread state every mechanism keeps, and how the hooks
 * find it.
 *
 * Each OS thread owns one np_thread in the port's per-thread storage
 * (NP_PORT_TLS: TLS on a host, a plain global on a target with one core);
 * a user-level scheduler (an RTOS) may make more and switch between them
 * (np_thread_switch). The hooks reach the one in use through a single
 * pointer there, so the hot path is one TLS load on a host. The
 * BUSY flag makes every hook a no-op while another hook (or a dump) runs on
 * the same thread: a signal handler that runs instrumented code in the
 * middle of a hook, or a hook that reaches instrumented code, records
 * nothing instead of corrupting the buffers. */
#ifndef NP_THREAD_H
#define NP_THREAD_H

#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "np_config.h"
#include "../port/port.h"

/* flags */
enum {
    NP_F_CT_INIT = 1u << 0,   /* call trace has a buffer */
    NP_F_CT_ON = 1u << 1,     /* ... and is enabled */
    NP_F_COST_INIT = 1u << 2,
    NP_F_COST_ON = 1u << 3,
    NP_F_BUSY = 1u << 4,      /* a hook or dump is running on this thread */
    NP_F_ATTACHED = 1u << 5,
    NP_F_CT_LOG = 1u << 6,    /* call trace in log mode (else stack) */
    NP_F_REC_ON = 1u << 7,    /* the recorder has this thread (record.h; on a
                                 target, trace_target.h) */
    NP_F_COST_SLOW = 1u << 8  /* cost hooks take the full path: calls are
                                 being dropped, or the clock is not the
                                 CPU's counter (cost.c) */
};
#define NP_F_RECORDING (NP_F_CT_ON | NP_F_COST_ON)

/* A call trace record: two words. w0 is the function address (bit 63 set
 * for an NP_ENTER name); w1 is the call site in its low 48 bits and, in
 * log mode, the nesting depth in its high 16 bits. */
typedef struct np_trace_record {
    uint64_t w0, w1;
} np_trace_record;

#define NP_REC_NAMED (1ull << 63)
/* The bits of an address the records keep: the port's (48 on a 64-bit
 * host, 32 on a 32-bit target), in the same 16-byte records. */
#define NP_ADDR_BITS NP_PORT_ADDR_BITS
_Static_assert(NP_ADDR_BITS <= 48, "a record keeps 48 bits of address and 16 of depth");
#define NP_ADDR_MASK ((1ull << NP_ADDR_BITS) - 1)
/* A code address as the hooks store it: its low NP_ADDR_BITS bits, taken
 * as they are where the port says code never has higher ones (the hooks
 * save the instructions). */
#if NP_PORT_CODE_ADDR_FITS
#define NP_CODE_ADDR(p) ((uint64_t)(uintptr_t)(p))
#else
#define NP_CODE_ADDR(p) ((uint64_t)(uintptr_t)(p) & NP_ADDR_MASK)
#endif
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

/* Function cost keeps, per thread and inside the measurement buffer the
 * program gives np_cost_init (cost.c lays it out), the calls open now and
 * a small table of per-function sums. Each exit adds its call to the
 * sums at once; np_stats_calc (or a full table) merges the sums into the
 * shared statistics table (stats.c). */
#define NP_COST_NAMED NP_REC_NAMED

/* One function's sums since the last merge: a 64-byte slot of an
 * open-addressing table (fn 0: empty). Times in ticks. */
struct np_cost_fn {
    uint64_t fn;        /* address, | NP_COST_NAMED for an NP_ENTER name */
    uint64_t calls, total, self, min, max;
    uint32_t active;    /* calls of it open now: total counts the outermost */
    uint32_t pad[3];
};

/* One open call. */
struct np_cost_frame {
    uint64_t start;     /* the thread's running time at entry */
    uint64_t child;     /* time of its completed callees (and the self
                           time a merge already added) */
    uint64_t ref;       /* its function's slot, | NP_COST_CLOSING while its
                           exit is being added; the function itself while
                           a merge rebuilds the table (cost.c) */
};
#define NP_COST_CLOSING 0x80000000u

struct np_cost_state {
    struct np_cost_fn *tab;
    struct np_cost_frame *frames; /* frames[-1] exists: it takes the
                                     outermost call's time, unread */
    uint32_t *order;       /* slots in order of first appearance */
    uint64_t *magic;       /* the buffer's first word (cost.c) */
    uint32_t shift;        /* 64 - log2(slots): the hash's top bits */
    uint32_t mask;         /* slots - 1 */
    uint32_t count;        /* functions in the table */
    uint32_t limit;        /* most functions it takes (3/4 of the slots) */
    struct np_cost_frame *top; /* past the innermost open call: frames +
                                  the number open (np_cost_depth) */
    struct np_cost_frame *end; /* past the last frame there is room for */
    uint64_t lost_open;    /* entries dropped for want of room, still open */
    uint64_t lost;         /* records dropped since the last merge */
    uint64_t last;         /* time of the last exit (or merge) */
};

/* One setjmp seen on this thread: what to restore when longjmp returns to
 * it. */
struct np_jmp_mark {
    const void *env;
    uint32_t ct_top, ct_overflow, ct_depth;
    uint32_t cost_depth;
    uint64_t cost_lost_open;
};

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
#if !NP_PORT_HOSTED
    struct np_tt_thread {  /* a target's trace (trace_target.c), NP_F_REC_ON */
        uint32_t gen;      /* the trace these fields belong to */
        uint32_t tid;      /* the thread's id in it */
        uint64_t out;      /* when it was switched out, or 0 */
        uint64_t lost;     /* events lost that its stream has not said yet */
    } tt;
#endif
};

_Static_assert(sizeof(struct np_thread) <= NP_THREAD_SIZE, "NP_THREAD_SIZE too small");

/* The state in use on this thread: &np_unattached until it is attached,
 * never NULL. */
extern NP_PORT_TLS struct np_thread *np_cur;
extern const struct np_thread np_unattached __attribute__((visibility("default")));
struct np_thread *np_thread_attach(void);
/* The OS thread's own state (not a user-level thread's), or NULL. */
struct np_thread *np_thread_os(void);

static inline __attribute__((always_inline)) struct np_thread *np_self(void)
{
    struct np_thread *t = np_cur;
    if (__builtin_expect(t == &np_unattached, 0))
        t = np_thread_attach();
    return t;
}

/* Marks T busy for a dump or API call; returns 0 when it already was. */
/* The raw time now, and the time the OS switched T's OS thread out since
 * the last look added to T's offset (np_port_resync). */
static inline uint64_t np_thread_resync_raw(struct np_thread *t)
{
    uint64_t switched;
    uint64_t now = np_port_resync(&switched);
    t->off += switched;
    return now;
}

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
