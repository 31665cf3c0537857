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
/* np_thread's user byte as seen in its hot word */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "np_thread's hot word assumes a little-endian CPU"
#endif
#define NP_F_USER_HOT ((uint32_t)NP_USER_BYTE_ON << 16)
/* What the user byte holds when user hooks are set: the busy bit, so that
 * a mask of hot-word bits can be the same byte in both halves (one
 * immediate operand on Thumb-2: NP_HOT_MASK). */
#define NP_USER_BYTE_ON NP_F_BUSY
#define NP_HOT_MASK(m) ((uint32_t)(m) | (uint32_t)(m) << 16)
/* The value of every thread's user byte (np_thread_switch copies it into
 * the thread switched to): NP_USER_BYTE_ON while user hooks are set. */
extern uint8_t np_hooks_user_on;
/* T's user byte from np_hooks_user_on (nothing with OS threads). */
#define np_thread_user_sync(t) np_thread_user_set(t, __atomic_load_n(&np_hooks_user_on, __ATOMIC_RELAXED))

#define NP_REC_NAMED (1ull << 63)
/* The bits of an address the records keep: the port's (48 on a 64-bit
 * host, 32 on a 32-bit target). */
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

/* A call trace record (NP_CALLTRACE_RECORD_SIZE bytes). With addresses of
 * more than 32 bits, two words: w0 the function (bit 63 set for an
 * NP_ENTER name), w1 the call site in its low 48 bits and, in log mode,
 * the nesting depth in its high 16. With 32-bit addresses (a target),
 * three words, written by one store-multiple where the CPU has it: the
 * function, the site, and the level (bit 31 set for a name; the hooks
 * store the level unmasked: np_ct_log_enter keeps it under 2^30 plus one
 * round of the ring). The depth field holds the level, the depth plus
 * one. */
#if NP_ADDR_BITS > 32
typedef struct np_trace_record {
    uint64_t w0, w1;
#if NP_CALLTRACE_ARGS
    uint64_t args[4]; /* when w0 has NP_REC_ARGS */
#endif
} np_trace_record;
#define NP_DEPTH_MAX 0xffffu /* of the level */
#define NP_REC_ARGS (1ull << 62)
#else
typedef struct np_trace_record {
    uint32_t fn, site, depth;
#if NP_CALLTRACE_ARGS
    uint32_t has_args, args[4];
#endif
} np_trace_record;
#define NP_DEPTH_MAX 0x7fffffffu
#define NP_DEPTH_AT_WRAP (1u << 30) /* the most a log's depth keeps across a wrap */
#endif

/* Writes R: function FN (NP_REC_NAMED for a name), SITE, and LEVEL, the
 * call's nesting depth plus one (the count the hooks keep). */
static inline __attribute__((always_inline)) void
np_ct_record_put(np_trace_record *r, uint64_t fn, const void *site, uint32_t level)
{
#if NP_ADDR_BITS > 32
    r->w0 = fn;
    r->w1 = NP_CODE_ADDR(site) | (uint64_t)(level < NP_DEPTH_MAX ? level : NP_DEPTH_MAX) << NP_ADDR_BITS;
#else
    r->fn = (uint32_t)fn;
    r->site = (uint32_t)(uintptr_t)site;
    r->depth = level | (uint32_t)(fn >> 32); /* NP_REC_NAMED: bit 31 */
#endif
}

/* NP_CALLTRACE_ARGS: the arguments of the call whose entry event comes
 * next, as the port's -pg hook gave them (np_port_args_start) just
 * before: FN the address the entry event gives on a host (the hook tells
 * it), one at most NP_CT_ARGS_REACH bytes into the function on ARM, where
 * -pg's `push {lr}; bl __gnu_mcount_nc` follows the prologue's pushes
 * and -finstrument-functions' hook then tells the entry. The record of
 * that function takes them, once; a call in between (a signal handler's,
 * an interrupt's, each with its own -pg hook) takes or clears them, and
 * the call's record then says it has none. */
struct np_ct_pending {
    uint64_t fn; /* 0: none */
    uintptr_t regs[4];
};
#define NP_CT_ARGS_REACH 64 /* (32-bit) the longest Thumb prologue before -pg's call */
extern NP_PORT_TLS struct np_ct_pending np_ct_args;

struct np_calltrace_state {
    np_trace_record *pos;  /* where the next record goes */
    np_trace_record *end;  /* log: where the ring goes round; stack: full */
    uint32_t depth;        /* log: nesting depth now */
    uint32_t overflow;     /* stack: open frames that did not fit */
    np_trace_record *buf;
    uint32_t cap;
    uint32_t mode;
    /* log: times the ring went round, in two words: the hooks' path
     * carries into the high one with no register pair (Thumb) */
    uint32_t wraps, wraps_hi;
};

static inline uint64_t np_ct_wraps(const struct np_calltrace_state *c)
{
    return (uint64_t)c->wraps_hi << 32 | c->wraps;
}

/* Records written so far in the buffer (stack: held; log: in this round). */
static inline uint32_t np_ct_top(const struct np_calltrace_state *c)
{
    return (uint32_t)(c->pos - c->buf);
}

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
    uint64_t ref;       /* its function's slot's address, | NP_COST_CLOSING
                           while its exit is being added; the function
                           itself while a merge rebuilds the table (cost.c) */
};
#define NP_COST_CLOSING 1u /* a slot's address is even */

/* The slot a frame's REF names. */
static inline struct np_cost_fn *np_cost_ref_slot(uint64_t ref)
{
    return (struct np_cost_fn *)(uintptr_t)(ref & ~(uint64_t)NP_COST_CLOSING);
}

struct np_cost_state {
    struct np_cost_fn *tab;
    struct np_cost_frame *frames; /* frames[-1] exists: it takes the
                                     outermost call's time, unread */
    uint32_t *order;       /* slots in order of first appearance */
    uint64_t *magic;       /* the buffer's first word (cost.c) */
    uint32_t shift;        /* 64 (32 on a 32-bit target) - log2(slots): the hash's top bits */
    uint32_t mask;         /* slots - 1 */
    uint32_t count;        /* functions in the table */
    uint32_t limit;        /* most functions it takes (3/4 of the slots) */
    struct np_cost_frame *top; /* past the innermost open call: frames +
                                  the number open (np_cost_depth) */
    struct np_cost_frame *end; /* past the last frame there is room for */
    uint32_t lost_busy;    /* records dropped as the thread was busy (an
                              interrupt's or a signal handler's calls
                              inside a hook or a dump), atomically: lost
                              at the merge */
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

#if !NP_PORT_HOSTED && NP_PG_EXITS
/* The calls -pg's hook gave the port's trampoline the return of
 * (pg_exits.c), oldest first. N is raised before an entry is written and
 * lowered after it is read: an interrupt's calls come and go above it. */
struct np_pg_returns {
    uint32_t n;
    struct np_pg_return {
        uintptr_t *slot; /* where the function keeps its return address */
        uintptr_t ret;   /* that address */
        uintptr_t fn;    /* the function, as its entry event gave it */
        uintptr_t leaf;  /* the slot is the copy pushed for the hook (NP_PG_LEAF) */
    } v[NP_PG_EXITS];
};
#endif

struct np_thread {
    /* The word the hooks read. Where the runtime switches every thread
     * (no OS threads), it holds the flags and the user-hooks byte, read in
     * one load: the byte is written only by np_hooks_set and
     * np_thread_switch, the flags by everything else, and a store of
     * either leaves the other be. With OS threads it is the flags alone
     * (the hooks read user hooks' state from a process-wide word), so
     * that no narrow store is followed by a wide load of it. */
    union {
        uint32_t hot;
#if NP_PORT_OS_THREADS
        uint32_t flags;
#else
        struct {
            uint16_t flags;
            uint8_t user; /* NP_USER_BYTE_ON: user hooks are set */
            uint8_t spare;
        };
#endif
    };
    uint64_t off;          /* ticks this thread was switched out */
    uint64_t out_at;       /* raw time of np_thread_switch away, or 0 */
    long tid;
    char name[NP_THREAD_NAME_MAX + 1]; /* np_thread_name's, or empty */
    struct np_calltrace_state ct;
    struct np_cost_state cost;
#if NP_PORT_HOSTED /* setjmp interposition is a hosted part */
    struct np_jmp_mark marks[NP_JMP_MARKS];
    uint32_t next_mark;
#endif
    struct np_rec_stream *rec; /* the recorder's stream, with NP_F_REC_ON */
#if !NP_PORT_HOSTED
    struct np_tt_thread {  /* a target's trace (trace_target.c), NP_F_REC_ON */
        uint32_t gen;      /* the trace these fields belong to */
        uint32_t tid;      /* the thread's id in it */
        uint64_t out;      /* when it was switched out, or 0 */
        uint32_t lost;     /* events lost that its stream has not said yet
                              (a LOST record says at most 2^32 - 1) */
        uint32_t named;    /* its THREAD chunk holds its name as it is */
    } tt;
#endif
#if !NP_PORT_HOSTED && NP_PG_EXITS
    struct np_pg_returns pg; /* its calls in thread mode (interrupts have their own) */
#endif
};

_Static_assert(sizeof(struct np_thread) <= NP_THREAD_SIZE, "NP_THREAD_SIZE too small");

/* The state in use on this thread: NP_UNATTACHED until it is attached,
 * never NULL. */
extern NP_PORT_TLS struct np_thread *np_cur;
#if NP_PORT_HOSTED
extern const struct np_thread np_unattached __attribute__((visibility("default")));
#define NP_UNATTACHED ((struct np_thread *)&np_unattached)
#else
/* On a target, its hot word alone: all that is read of it, in ROM. */
extern const uint32_t np_unattached_hot;
#define NP_UNATTACHED ((struct np_thread *)&np_unattached_hot)
#endif
struct np_thread *np_thread_attach(void);
/* The OS thread's own state (not a user-level thread's), or NULL. */
struct np_thread *np_thread_os(void);
/* The OS thread's own state, attached or not (np_thread_switch's TO by
 * default). */
struct np_thread *np_thread_own(void);

static inline void np_thread_user_set(struct np_thread *t, uint8_t on)
{
#if NP_PORT_OS_THREADS
    (void)t, (void)on;
#else
    t->user = on;
#endif
}

static inline __attribute__((always_inline)) struct np_thread *np_self(void)
{
    struct np_thread *t = np_cur;
    if (__builtin_expect(t == NP_UNATTACHED, 0))
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
