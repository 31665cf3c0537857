/* record.h - the recorder behind `nanoprof record` (docs/recording.md):
 * with NANOPROF_RECORD=<dir> in the environment, every entry and exit of
 * every OS thread goes into a per-thread buffer of raw 16-byte records; full
 * buffers go to a writer thread, which encodes them per
 * docs/trace-format.md, compresses them and appends them to <dir>/<pid>.npt.
 *
 * record.c: set-up from the environment, buffers, the writer thread, thread
 * start and end, exit, fatal signals, fork and exec.
 * record_write.c: the file (chunks), filters and the event encoder.
 * record_hot.h: what the hooks do on each event. */
#ifndef NP_RECORD_H
#define NP_RECORD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "../../runtime/thread.h"
#include "../../runtime/np_config.h"
#include "../../runtime/record_hooks.h"
#include "../../common/name_match.h"
#include "../../common/value_spec.h"

/* A raw record as the hooks write it: w0 = kind << 56 | value (the
 * function address for ENTRY and EXIT, ticks for SWITCH, a count for the
 * LOST kinds); w1 = the raw tick (np_port_ticks) of the event. */
typedef struct np_raw {
    uint64_t w0, w1;
} np_raw;

#define NP_RAW_SHIFT 56
#define NP_RAW_VALUE ((1ull << NP_RAW_SHIFT) - 1)
enum np_raw_kind {
    NP_RAW_ENTRY = 0,
    NP_RAW_EXIT = 1,
    NP_RAW_SWITCH = 2,   /* value: ticks switched out, ending at w1 */
    NP_RAW_LOST = 3,      /* value: events dropped (no buffer); LOST_NEST follows */
    NP_RAW_LOST_NEST = 4, /* value: calls open before that the dropped
                             events closed | calls they left open << 28 */
    NP_RAW_SETJMP = 5,   /* value: the jmp_buf's address (setjmp.c) */
    NP_RAW_LONGJMP = 6,  /* value: the jmp_buf longjmp returns to */
    /* a sample (sample.c), value: frames | overrun << 8 | skipped << 32;
     * the frames follow, two per record (w0, w1), in (frames + 1) / 2 */
    NP_RAW_SAMPLE = 7,
    /* a caught C++ exception (catch.c), value: the throw's frames; the
     * next record's w0 is the handler's stack pointer, then one record
     * per frame (w0 its function's start, w1 its stack pointer) */
    NP_RAW_CATCH = 8,
    /* arguments or a return value (record_values.c), value: items | the
     * records that follow << 8 | retval << 32; one record per item (w0
     * its argument's number | format << 8 | bytes << 16, w1 its value),
     * a string's bytes in the records after its own, 16 to a record */
    NP_RAW_VALUES = 9,
    /* an entry of NP_ENTER(name), value: the name's address. The hooks'
     * NP_REC_NAMED bit (63) is this kind, so they pass it as it is. */
    NP_RAW_NAMED = (int)(NP_REC_NAMED >> NP_RAW_SHIFT)
};
#define NP_RAW_EXIT_BIT ((uint64_t)NP_RAW_EXIT << NP_RAW_SHIFT)
#define NP_RAW_NEST_BITS 28
#define NP_RAW_NEST_MASK ((1ull << NP_RAW_NEST_BITS) - 1)
#define NP_RAW_SAMPLE_FRAMES(v) ((unsigned)((v) & 0xff))
#define NP_RAW_SAMPLE_OVERRUN(v) (((v) >> 8) & 0xffffff)
#define NP_RAW_SAMPLE_SKIPPED(v) (((v) >> 32) & 0xffffff)
#define NP_RAW_SAMPLE_FIELD_MAX 0xffffffu

/* Built with ThreadSanitizer (the runtime itself): its pthread_create
 * comes before the runtime's, and it refuses threads started in a forked
 * child of a threaded process (sample.c, record.c). */
#if defined(__SANITIZE_THREAD__)
#define NP_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NP_UNDER_TSAN 1
#endif
#endif
#ifndef NP_UNDER_TSAN
#define NP_UNDER_TSAN 0
#endif

/* The fast path stops this many records short of a buffer's end, so that
 * the slow path always has room for LOST, SWITCH and the event itself. */
#define NP_REC_RESERVE 4

enum np_buf_state { NP_BUF_FREE = 0, NP_BUF_LIVE, NP_BUF_QUEUED, NP_BUF_BUSY };

struct np_rec_stream;

/* The header at the start of each buffer (one mmap each). */
struct np_rec_buf {
    uint32_t state;              /* np_buf_state; atomic */
    uint32_t seq;                /* order in the owner's stream */
    struct np_rec_stream *owner;
    uint64_t count;              /* records held, set when queued */
    uint64_t done;               /* records already written by a final flush */
    struct np_rec_buf *next;     /* queue or free list (under the lock) */
    uint32_t last;               /* the owner thread ended with this buffer */
    uint32_t cap;                /* records it holds */
    np_raw *recs;
};

/* The writer's state for one thread's stream: the open calls as the
 * filters saw them, and the calls the time filter holds back. */
struct np_rec_pend {
    uint64_t value;   /* ENTRY: address; SWITCH: ticks */
    uint64_t tick;
    uint32_t kind;    /* NP_EV_ENTRY or NP_EV_SWITCH */
};

struct np_rec_wstate {
    uint8_t *stack;          /* per open call: NP_WS_* bits */
    size_t depth, cap;
    size_t f_in, n_in, kept; /* open calls matching -F, matching -N, kept */
    size_t overflow;         /* open calls past a stack that could not grow */
    size_t unknown;          /* plain mode: open calls whose entries were lost */
    struct np_rec_pend *pend;
    size_t phead, plen, pcap;
    size_t *pidx;            /* indices in pend of the held entries */
    size_t npidx, pidxcap;
    uint64_t lost;           /* events lost, for END */
    struct {
        uint64_t env;
        size_t depth;
    } jmp[8];                /* setjmp seen: the open calls then */
    unsigned jnext;
    int thread_sent;
    char sent_name[16];
    uint64_t *fns;           /* per open call (plain mode: calls whose entries
                                were lost counted in): its function, or 0 */
    size_t fcap;
    uint64_t *held_frames;   /* samples the time filter holds: n, overrun,
                                skipped, frames... (pend value: index) */
    size_t hflen, hfcap;
};
#define NP_WS_KEPT 1
#define NP_WS_F 2
#define NP_WS_N 4

/* One recorded OS thread. */
struct np_rec_stream {
    /* written by the owner thread (the hooks) */
    np_raw *pos;                 /* next slot (release store: others read it) */
    np_raw *end;                 /* the fast path's limit */
    struct np_rec_buf *buf;      /* live buffer, or NULL (atomic) */
    /* events dropped since the last LOST records (atomic): how many, the
     * nesting they leave (entries - exits) and its lowest point */
    uint64_t lost_n;
    int64_t lost_d, lost_min;
    uint32_t seq;
    uint32_t used;               /* slot taken (under the lock) */
    uint32_t ended;              /* the thread ended: no more buffers */
    long tid;
    char name[16];
    void *altstack;              /* the signal stack given to the thread, or NULL */
    uint64_t out_tick;           /* a user-level thread: when it was switched out, or 0 */
    /* the sampler's (sample.c), under the lock but `skipped` (the owner's
     * signal handler) */
    struct {
        pthread_t self;
        timer_t timer;
        int has_timer;
        uintptr_t stack_lo, stack_hi; /* bounds for the frame-pointer walk */
        uint64_t skipped;             /* periods not sampled since the last sample */
        /* The hook under way (set before the thread is busy): a sample
         * that finds the thread busy in it is that function's, and waits
         * in pend until the hook is done with the buffer. */
        uint64_t hook_fn;             /* address | NP_REC_NAMED | exit bit, as w0 */
        const void *hook_site;        /* its caller's return address */
        uint64_t hook_fp;             /* the frame pointer as the hook began (NP_PORT_FRAME) */
        int pending;                  /* pend holds a sample (the owner's handler sets it) */
        unsigned pend_n;
        uint64_t pend_periods;
        uint64_t pend[NP_REC_PEND_FRAMES];
    } smp;
    /* written by the writer (or a final flush, the writer stopped) */
    struct np_rec_wstate w;
};

/* Configuration, from the environment (record.c). */
struct np_rec_config {
    size_t buf_bytes;          /* NANOPROF_BUFFER */
    unsigned depth;            /* NANOPROF_DEPTH, 0 = no limit */
    uint64_t min_ns;           /* NANOPROF_MIN_NS */
    uint64_t min_ticks;        /* min_ns in ticks, rounded up */
    struct np_name_pattern filter[64], notrace[64]; /* NANOPROF_FILTER, NANOPROF_NOTRACE */
    unsigned nfilter, nnotrace;
    int ppid;                  /* the parent at start or fork: an orphan's getppid()
                                  later names its reaper, not its parent */
};

extern struct np_rec_config np_rec_cfg;

/* record_hot.h's slow path: switch, full buffer, lost events. */
void np_rec_slow(struct np_thread *t, uint64_t w0);
/* The same for N records in a row (a VALUES group), the thread busy. */
void np_rec_put_group(struct np_thread *t, const np_raw *g, size_t n);
/* The same for a call's arguments, right after its entry event (raw word
 * ENTRY): the group takes the entry's time rather than reading the clock
 * again (np_rec_put_group's way when the entry is not the last record). */
void np_rec_put_values(struct np_thread *t, const np_raw *g, size_t n, uint64_t entry);


/* Whether more than half the writer's queue waits (record.c: its chunks
 * then go uncompressed). */
int np_rec_writer_behind(void);

/* record_values.c: reads NANOPROF_ARGS and NANOPROF_RETVAL (-A, -R); 0
 * when one is bad (said). */
int np_rec_values_configure(void);
#define NP_RAW_VALUES_ITEMS(v) ((unsigned)((v) & 0xff))
#define NP_RAW_VALUES_SLOTS(v) ((size_t)(((v) >> 8) & 0xffffff))
#define NP_RAW_VALUES_RETVAL(v) ((int)(((v) >> 32) & 1))
/* A group of integers only (no string): the registers as the hook had them
 * (argument N in word N - 1, the return value in word 0), two a record,
 * which spec (NP_RAW_VALUES_SPEC) cuts and formats in the writer. */
#define NP_RAW_VALUES_PACKED (1ull << 33)
#define NP_RAW_VALUES_SPEC(v) ((unsigned)(((v) >> 40) & 0xff))
/* record_values.c: a packed group's spec I (NP_RAW_VALUES_SPEC), as the
 * writer reads it: value K is register word WORD[K] of the group, cut to
 * its bits by shifting left by SHIFT[K] and back (arithmetically when
 * SIGNED[K]), as np_value_cut does. */
struct np_rec_packed {
    unsigned n, words; /* values; register words kept (0: not packed, a string) */
    unsigned slots;    /* records after the head: (words + 1) / 2 */
    unsigned whole;    /* every value a whole word (no SHIFT): the word itself */
    uint64_t head;     /* the group's first word, as the hook writes it */
    uint8_t index[NP_VALUE_ARGS_MAX], format[NP_VALUE_ARGS_MAX];
    uint8_t word[NP_VALUE_ARGS_MAX], shift[NP_VALUE_ARGS_MAX], sign[NP_VALUE_ARGS_MAX];
};
const struct np_rec_packed *np_rec_packed_spec(unsigned i);
/* record_values.c's plans (NP_RAW_VALUES_SPEC indexes them) and its table
 * of each function's specs, found once per address and read without a
 * lock: a word per function, address << 16 | (-A spec + 1) << 8 | (-R
 * spec + 1), 0 an empty slot, probed from the address's hash. */
#define NP_REC_VCACHE_BITS 14
extern struct np_rec_packed np_rec_packed[] __attribute__((visibility("hidden")));
extern uint64_t np_rec_vcache[1u << NP_REC_VCACHE_BITS] __attribute__((visibility("hidden")));

/* ADDR's word in the table; 0 not there (yet), *AT its probe's end. */
static inline __attribute__((always_inline)) uint64_t np_rec_vcache_find(uint64_t addr, unsigned *at)
{
    unsigned i = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> (64 - NP_REC_VCACHE_BITS));
    for (unsigned k = 0; k < (1u << NP_REC_VCACHE_BITS); k++, i = (i + 1) & ((1u << NP_REC_VCACHE_BITS) - 1)) {
        uint64_t c = __atomic_load_n(&np_rec_vcache[i], __ATOMIC_ACQUIRE);
        if (!c)
            break;
        if (c >> 16 == addr)
            return c;
    }
    *at = i;
    return 0;
}

/* record_write.c */
enum np_rec_mode { NP_REC_NORMAL = 0, NP_REC_FATAL = 1 };
/* Opens <dir>/<pid>[.<n>].npt (never an existing file), writes the header,
 * INFO and MODULE chunks; returns the fd or -1. */
int np_rec_file_open(const char *dir, int argc, char **argv, uint64_t start_tick, double ns_per_tick);
/* Encodes N raw records of S (filters, time filter) into EVENTS chunks on FD. */
void np_rec_write_events(int fd, struct np_rec_stream *s, const np_raw *r, size_t n, int mode);
/* The stream ends (thread exit or end of the trace): releases what the
 * time filter holds, and a THREAD chunk if the name changed. */
void np_rec_write_stream_end(int fd, struct np_rec_stream *s, int mode);
void np_rec_write_end(int fd, uint64_t end_tick, uint64_t lost, double ns_per_tick);
/* BLOCKS chunks with the basic-block counts (blocks.c), LOST in the first
 * (a chunk with LOST alone when no block has a count). */
void np_rec_write_blocks(int fd, uint64_t lost);
/* Forgets the writer state of S (a new file begins); frees nothing. */
void np_rec_wstate_reset(struct np_rec_wstate *w);
/* Frees what the writer state holds (normal exit). */
void np_rec_wstate_free(struct np_rec_wstate *w);
/* Frees the compression context (normal exit). */
void np_rec_write_shutdown(void);
/* After fork: the child's file must list every module again. */
void np_rec_modules_forget(void);

/* The SAMPLING chunk (trace-format.md). */
void np_rec_write_sampling(int fd, uint64_t tick, uint32_t hz, unsigned unwinder, uint32_t flags,
                           uint64_t period_ns, unsigned max_frames);

/* record.c: one line "nanoprof: recording: WHAT[: DETAIL]" on stderr. */
void np_rec_say(const char *what, const char *detail);

/* record.c, for the sampler (sample.c) */
/* From the owner thread's signal handler, the thread not busy: queues S's
 * live buffer and takes a fresh one if the lock is free at once and the
 * writer runs; returns its first slot or NULL. */
np_raw *np_rec_refill_signal(struct np_rec_stream *s);
/* Recording has ended, or never began. */
int np_rec_stopped(void);
/* Under the lock: returns -1 when not recording; else calls FILE_FN with
 * the trace file (if open) and EACH for every live thread's stream. */
int np_rec_each_stream(void (*file_fn)(int fd, void *ctx), void (*each)(struct np_rec_stream *s, void *ctx),
                       void *ctx);
/* Recording is on in this process (NANOPROF_RECORD). */
int np_rec_active(void);
/* Attaches the calling thread (recording on): it gets a stream. */
void np_rec_attach_self(void);

/* sample.c, for the recorder */
/* Reads NANOPROF_SAMPLE; 0 when it is bad (said on stderr). */
int np_sample_configure(void);
/* Sampling was asked for (NANOPROF_SAMPLE, np_sample_start): new threads
 * are attached at creation, so that they are sampled. */
int np_sample_wanted(void);
/* Starts sampling as configured, the file open (recording starts). */
void np_sample_begin(int fd);
/* Appends the sample taken while a hook ran (s->smp.pending), the thread
 * busy: np_rec_slow, at the next event. */
void np_sample_append_pending(struct np_rec_stream *s);
/* What S's samples still owe the trace, into OUT (NP_SAMPLE_TAIL_MAX
 * records, time NOW), returning how many: the sample taken in its last
 * hook (OWN: S is the calling thread's; else its periods count as not
 * sampled), and the periods not sampled since its last sample, as a
 * SAMPLE of no frames. For the thread's end, or the recording's. */
#define NP_SAMPLE_TAIL_MAX (2 + (NP_REC_PEND_FRAMES + 1) / 2)
size_t np_sample_tail(struct np_rec_stream *s, np_raw *out, uint64_t now, int own);
/* A thread's stream is set up (lock held, on the thread): its timer. */
void np_sample_thread_begin(struct np_rec_stream *s);
/* The thread ends (lock held): its timer goes. */
void np_sample_thread_end(struct np_rec_stream *s);
/* A new file was opened (fork child, failed exec): SAMPLING again. */
void np_sample_file_opened(int fd);
/* The fork child: OWN (the forking thread's stream, or NULL) gets a timer
 * (timers are not inherited). */
void np_sample_fork_child(struct np_rec_stream *own);
/* pthread_create itself, for the runtime's own threads (never sampled). */
int np_sample_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* record_exec.c calls these around an exec. */
void np_rec_before_exec(void);
void np_rec_exec_failed(void);

/* Stream ids of user-level threads (np_thread_init): above any Linux tid. */
#define NP_REC_UTHREAD_TID 0x40000000L

#endif
