/* sample.c - the sampler (docs/sampling.md): every recorded thread gets a
 * timer on its own CPU-time clock that sends it SIGPROF HZ times per
 * second of CPU; the handler takes the interrupted PC and the frame-pointer
 * chain above it, and appends one SAMPLE raw record (and its frames) to the
 * thread's recorder buffer, where the writer encodes it in order with the
 * thread's calls (record_write.c, trace-format.md).
 *
 * Buffers. The handler appends only when the thread is not busy: a hook
 * interrupted half-way through its append would otherwise overwrite the
 * sample, or the sample the hook's record. A sample that finds the thread
 * busy, or no room and the lock taken, is dropped and counted: the next
 * sample of the thread carries the count (`skipped`), or, when there is
 * none, a SAMPLE of no frames at the thread's end or the recording's.
 *
 * Threads. The main thread is attached when recording starts; threads
 * created later through pthread_create (which the shared library wraps) are
 * attached before their start routine runs, so a program built without
 * instrumentation is sampled on every thread. Threads that reach the
 * runtime another way (their first instrumented call) get their timer then.
 *
 * Other SIGPROF users. The shared library also stands in front of
 * sigaction() and signal() for SIGPROF once the sampler's handler is in
 * place: the program's handler is kept aside (and reported back to it), and
 * the sampler's handler passes it every SIGPROF that is not one of its own
 * timers' (setitimer(ITIMER_PROF), kill, the program's own timers). */
#define _GNU_SOURCE
#include "record_hot.h"
#include "posix.h"
#include "mcount.h"
#include "../../runtime/hooks.h"
#include "nanoprof/sample.h"
#include "../../common/parse_units.h"
#include "../../common/trace_format.h"

#include <dlfcn.h>
#include <errno.h>
#if defined(NP_HAVE_LIBUNWIND)
#define UNW_LOCAL_ONLY /* this process only: the faster, smaller API */
#include <libunwind.h>
#include "lazy.h" /* libnanoprof.so: libunwind loaded when asked for */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define CAN_SAMPLE 1
#else
#define CAN_SAMPLE 0
#endif

/* Frames per sample, the PC included: deeper stacks keep their innermost. */
#define MAX_FRAMES NP_SAMPLE_FRAMES
_Static_assert(MAX_FRAMES <= NP_SAMPLE_MAX_FRAMES && MAX_FRAMES <= 255, "frame count field");

/* (UNSANITIZED, posix.h: the frame walk reads other functions' frames;
 * the interposed functions are called by a sanitizer's runtime while it
 * starts, before instrumented code may run) */

/* Under ThreadSanitizer (the runtime built with it), the sanitizer's
 * pthread_create comes first and calls ours: a start routine of ours would
 * run before the sanitizer has set the thread up, so threads are not
 * wrapped there (docs/sampling.md). */
#define WRAP_THREADS (!NP_UNDER_TSAN)

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

static struct {
    unsigned cfg_hz;   /* NANOPROF_SAMPLE */
    unsigned unwinder; /* NANOPROF_UNWIND: NP_UNWIND_FP or NP_UNWIND_DWARF */
    unsigned hz;       /* atomic: sampling at this rate now, or 0 */
    int wanted;        /* atomic: sampling was asked for in this process */
    int installed;     /* atomic: our handler is in place */
} S;

/* Our timers' sigev_value: what tells their signals from any other SIGPROF. */
static char sample_tag;

static uint64_t period_ns(unsigned hz)
{
    return (1000000000ull + hz / 2) / hz;
}

/* ---- the program's SIGPROF handler, kept aside ---------------------------- */

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction; /* the next definition, for the handler */
#ifdef NP_INTERPOSE_SIGNALS
static void *next_sigaction;
static void *next_fn(void **cache, const char *name);
#endif

static struct sigaction chained[2]; /* the program's, in chained[chain_cur] */
static int chain_cur;                /* atomic */
static int chain_lock;               /* atomic: writers only */
static NP_PORT_TLS int installing; /* our own sigaction call is under way */

static void chain_set(const struct sigaction *act, struct sigaction *old)
{
    while (__atomic_exchange_n(&chain_lock, 1, __ATOMIC_ACQUIRE))
        ;
    int cur = LOAD(&chain_cur);
    if (old)
        *old = chained[cur];
    if (act) {
        chained[!cur] = *act;
        STORE(&chain_cur, !cur);
    }
    __atomic_store_n(&chain_lock, 0, __ATOMIC_RELEASE);
}

/* A SIGPROF that is not ours: what the program asked for. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction c = chained[LOAD(&chain_cur)];
    int info = (c.sa_flags & SA_SIGINFO) != 0;
    if (!info && c.sa_handler == SIG_IGN)
        return;
    if (!info && c.sa_handler == SIG_DFL) {
        /* SIGPROF's default action ends the process, as without nanoprof */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        if (real_sigaction)
            real_sigaction(sig, &dfl, NULL);
        raise(sig); /* pending until this handler returns */
        return;
    }
    if (c.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        chain_set(&dfl, NULL);
    }
    sigset_t before;
    pthread_sigmask(SIG_BLOCK, &c.sa_mask, &before);
    if (info)
        c.sa_sigaction(sig, si, uc);
    else
        c.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* ---- taking a sample -------------------------------------------------------- */

#if defined(__x86_64__)
/* Whether the bytes at P begin a jump to a -pg thunk (thunks.c): an
 * instrumented function's call of its hook, rewritten. Each byte is read
 * only while the instruction it belongs to may go on. */
static int thunk_jump(const volatile uint8_t *p)
{
    if (p[0] != 0xe9)
        return 0;
    uint32_t rel = (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 24;
    return np_thunk_code((uintptr_t)p + 5 + (uintptr_t)(int64_t)(int32_t)rel);
}

/* A function interrupted before its frame is made, or once it is taken
 * down, in a -pg build with thunks: its return address is at the stack
 * pointer SP (above the frame pointer FP just pushed, in between), while
 * FP is still its caller's. Where PC is that function's (-mfentry: the
 * jump to its thunk, after an endbr64; -pg: GCC's prologue before it,
 * push %rbp, mov %rsp,%rbp), the caller's own address; where the address
 * there is a thunk's return point (in its body, called by the thunk), the
 * caller from the return stack. 0: none of these. */
static uint64_t unframed_caller(uint64_t pc, uint64_t fp, uint64_t sp, long *rs_at)
{
    const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)pc;
    const volatile uint64_t *top = (const volatile uint64_t *)(uintptr_t)sp;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4; /* endbr64 */
    if (thunk_jump(p) || (p[0] == 0x55 && p[1] == 0x48 && p[2] == 0x89 && p[3] == 0xe5 && thunk_jump(p + 4)))
        return top[0] & NP_ADDR_MASK;
    if (top[0] == fp && p[0] == 0x48 && p[1] == 0x89 && p[2] == 0xe5 && thunk_jump(p + 3))
        return top[1] & NP_ADDR_MASK; /* (%rbp pushed) */
    for (unsigned k = 0; k < 2; k++) {
        uint64_t ret = top[k] & NP_ADDR_MASK;
        uint64_t caller = np_mcount_frame_return((const uintptr_t *)(uintptr_t)(sp + 8 * k), (uintptr_t)ret, rs_at);
        if ((caller & NP_ADDR_MASK) != ret)
            return caller & NP_ADDR_MASK;
        if (top[0] != fp) /* (nothing pushed: no second look) */
            break;
    }
    return 0;
}
#endif

/* The interrupted PC, frame pointer and stack pointer of context UC (0
 * where the architecture is not known here). */
struct regs {
    uint64_t pc, fp, sp;
};

static struct regs regs_of(const ucontext_t *uc)
{
#if defined(__x86_64__)
    return (struct regs){ (uint64_t)uc->uc_mcontext.gregs[REG_RIP], (uint64_t)uc->uc_mcontext.gregs[REG_RBP],
                          (uint64_t)uc->uc_mcontext.gregs[REG_RSP] };
#elif defined(__aarch64__)
    return (struct regs){ uc->uc_mcontext.pc, uc->uc_mcontext.regs[29], uc->uc_mcontext.sp };
#else
    (void)uc;
    return (struct regs){ 0, 0, 0 };
#endif
}

/* OUT from N on: the return address of each frame along the frame-pointer
 * chain from FP, within LO..HI (RS_AT: the return stack's cursor, -pg).
 * Returns the frames in OUT. */
UNSANITIZED static unsigned walk_chain(uint64_t fp, uint64_t lo, uint64_t hi, long *rs_at, uint64_t *out, unsigned n)
{
    while (n < MAX_FRAMES && fp >= lo && fp + 16 <= hi && !(fp & 7)) {
        const volatile uint64_t *f = (const volatile uint64_t *)(uintptr_t)fp;
        uint64_t next = f[0], ret = f[1] & NP_ADDR_MASK; /* AArch64: no pointer authentication bits */
        ret = np_mcount_frame_return((const uintptr_t *)(uintptr_t)(fp + 8), (uintptr_t)ret, rs_at) & NP_ADDR_MASK;
        if (!ret)
            break;
        out[n++] = ret;
        lo = fp + 16;
        fp = next;
    }
    return n;
}

/* The PC, then the return address of each frame along the frame-pointer
 * chain. Every frame pointer is checked against the thread's stack before
 * it is read (at or above the interrupted stack pointer, below the top,
 * aligned, each one above the last), so a program built without frame
 * pointers, whose frame-pointer register holds anything, gives a shorter
 * or wrong stack, never a fault. */
UNSANITIZED static unsigned walk(const ucontext_t *uc, const struct np_rec_stream *s, uint64_t *out)
{
    struct regs r = regs_of(uc);
    uint64_t pc = r.pc, fp = r.fp, sp = r.sp;
    unsigned n = 0;
    out[n++] = pc & NP_ADDR_MASK;
    uint64_t lo = s->smp.stack_lo, hi = s->smp.stack_hi;
    if (sp < lo || sp >= hi)
        return n; /* on another stack (a signal stack), or bounds unknown */
    long rs_at = -1; /* (-pg: a return address the trampoline's or a thunk's, the caller's instead) */
#if defined(__x86_64__)
    uint64_t caller = fp != sp && sp + 16 <= hi ? unframed_caller(pc, fp, sp, &rs_at) : 0;
    if (caller)
        out[n++] = caller;
#endif
    return walk_chain(fp, sp, hi, &rs_at, out, n);
}

#if defined(NP_HAVE_LIBUNWIND) && defined(__x86_64__)
/* -pg (x86-64): a frame whose return address is a hook's return point (a
 * thunk's, the trampoline's) has no unwind entry; its caller's address
 * is on the return stack (np_mcount_frame_return, as in walk). The walk
 * then starts again from the caller, its registers as the frame left
 * them: unw_set_reg would write the address into the stack's slot. 0, or
 * -1 when it cannot. */
UNSANITIZED static int resume_caller(unw_cursor_t *cur, const ucontext_t *uc, unw_word_t *ip, long *rs_at)
{
    static const struct {
        int greg, unw;
    } keep[] = { { REG_RBX, UNW_X86_64_RBX }, { REG_RBP, UNW_X86_64_RBP }, { REG_R12, UNW_X86_64_R12 },
                 { REG_R13, UNW_X86_64_R13 }, { REG_R14, UNW_X86_64_R14 }, { REG_R15, UNW_X86_64_R15 } };
    unw_word_t sp, v;
    if (unw_get_reg(cur, UNW_REG_SP, &sp) < 0)
        return 0;
    uintptr_t ret = np_mcount_frame_return((const uintptr_t *)(uintptr_t)(sp - 8), (uintptr_t)*ip, rs_at);
    if (ret == (uintptr_t)*ip)
        return 0;
    ucontext_t again = *uc;
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        if (unw_get_reg(cur, keep[i].unw, &v) < 0)
            return -1;
        again.uc_mcontext.gregs[keep[i].greg] = (greg_t)v;
    }
    again.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    again.uc_mcontext.gregs[REG_RIP] = (greg_t)ret;
    *ip = ret;
    /* (a return address: its call is the instruction before it) */
    return unw_init_local2(cur, (unw_context_t *)&again, 0) == 0 ? 0 : -1;
}
#endif

/* The same from the DWARF call-frame information (.eh_frame), through
 * libunwind, for code built without frame pointers. libunwind's local
 * unwinding is async-signal-safe (libunwind(3)); it reads the unwind
 * tables of the loaded objects, which it finds with dl_iterate_phdr, so it
 * costs more than the frame-pointer walk (docs/sampling.md). Starting from
 * the signal's context (UNW_INIT_SIGNAL_FRAME) makes the first frame the
 * interrupted PC itself. */
UNSANITIZED static unsigned walk_dwarf(ucontext_t *uc, uint64_t *out)
{
#if defined(NP_HAVE_LIBUNWIND)
    unw_cursor_t cur;
    unsigned n = 0;
    long rs_at = -1;
    (void)rs_at;
    /* (AArch64's unw_context_t is a struct of its own, laid out as ucontext_t) */
    if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
                break;
#if defined(__x86_64__)
            if (n && resume_caller(&cur, uc, &ip, &rs_at) < 0) {
                out[n++] = (uint64_t)ip & NP_ADDR_MASK;
                break;
            }
#endif
            out[n++] = (uint64_t)ip & NP_ADDR_MASK;
        } while (n < MAX_FRAMES && unw_step(&cur) > 0);
    }
    return n;
#else
    (void)uc, (void)out;
    return 0;
#endif
}

static uint64_t field(uint64_t v)
{
    return v > NP_RAW_SAMPLE_FIELD_MAX ? NP_RAW_SAMPLE_FIELD_MAX : v;
}

/* The owner's counts of a sample under way: written by the thread and its
 * signal handler only, read by a final flush on another thread (at most
 * stale by a sample); relaxed atomics, for the sanitizer's sake. */
#define SMP_GET(f) __atomic_load_n(&s->smp.f, __ATOMIC_RELAXED)
#define SMP_SET(f, v) __atomic_store_n(&s->smp.f, v, __ATOMIC_RELAXED)
#define SMP_ADD(f, v) SMP_SET(f, SMP_GET(f) + (v))

/* The raw SAMPLE of the N frames FR at P (1 + (N + 1) / 2 slots): 1 +
 * OVERRUN periods, SKIPPED before them, at the time NOW. N = 0: the
 * SKIPPED periods alone (trace-format.md). */
static size_t put_sample(np_raw *p, const uint64_t *fr, unsigned n, uint64_t overrun, uint64_t skipped,
                         uint64_t now)
{
    p[0].w0 = (uint64_t)NP_RAW_SAMPLE << NP_RAW_SHIFT | n | field(overrun) << 8 | field(skipped) << 32;
    p[0].w1 = now;
    for (unsigned i = 0; i < n; i += 2) {
        p[1 + i / 2].w0 = fr[i];
        p[1 + i / 2].w1 = i + 1 < n ? fr[i + 1] : 0;
    }
    return 1 + (n + 1) / 2;
}

/* Appends the sample (the thread not busy); 0 when there is no room, or
 * no frame to append. */
static int append(struct np_rec_stream *s, const uint64_t *fr, unsigned n, uint64_t overrun)
{
    size_t need = 1 + (n + 1) / 2;
    np_raw *p = s->pos, *end = s->end;
    if (!n)
        return 0;
    if (!p || !end || p >= end || (size_t)(end - p) < need) {
        p = np_rec_refill_signal(s);
        if (!p)
            return 0;
    }
    STORE(&s->pos, p + put_sample(p, fr, n, overrun, SMP_GET(skipped), np_port_wall_ticks()));
    SMP_SET(skipped, 0);
    return 1;
}

/* The stack of a sample taken while the thread is in a hook: the
 * instrumented function the hook is for, then its callers. The hook's
 * SITE is the function's return address into its caller; when the walk
 * (W, N frames) passes through SITE, the callers from there on are the
 * walk's. Else the function had no frame of its own: the hook ran before
 * its prologue or after its epilogue (a -pg thunk's fast path; __fentry__,
 * whose frame's return address, the walk's first, is the function's own
 * start), or it keeps no frame pointer, and the walk went on in its
 * caller's frame: SITE, then the walk's callers of the caller. */
#define HOOK_CALL_REACH 16 /* __fentry__'s call ends this near its function's start (endbr64, 6 bytes) */

/* Where the walk W (N frames, the PC first) passes through SITE, or N. */
static unsigned site_in(const uint64_t *w, unsigned n, uint64_t site)
{
    unsigned k = 1;
    while (k < n && w[k] != site)
        k++;
    return k;
}

static unsigned hook_stack(uint64_t fn, uint64_t site, const uint64_t *w, unsigned n, uint64_t *out)
{
    unsigned k = site_in(w, n, site), m = 0;
    out[m++] = fn;
    if (k == n && site) {
        out[m++] = site;
#if defined(__SANITIZE_THREAD__)
        k = n; /* (the sanitizer's code, called from the hooks, uses the frame-pointer register: no walk) */
#else
        k = n > 1 && w[1] - fn < HOOK_CALL_REACH ? 2 : 1;
#endif
    }
    while (k < n && m < MAX_FRAMES)
        out[m++] = w[k++];
    return m;
}

/* A sample that found the thread busy in a hook: kept in the stream
 * until the hook ends (np_sample_flush_pending), as a sample of the
 * function the hook is for. A manual marker's hook (NP_ENTER) has no
 * function: that sample is left out, counted as skipped. */
static void defer(struct np_rec_stream *s, void *uc, uint64_t periods)
{
    if (SMP_GET(pending)) {
        SMP_ADD(pend_periods, periods);
        return;
    }
    uint64_t w0 = s->smp.hook_fn;
    if (!w0 || (w0 & NP_REC_NAMED) || np_rec_stopped()) {
        SMP_ADD(skipped, periods);
        return;
    }
    uint64_t w[MAX_FRAMES], site = (uint64_t)(uintptr_t)s->smp.hook_site & NP_ADDR_MASK;
    unsigned n = S.unwinder == NP_UNWIND_DWARF ? walk_dwarf(uc, w) : 0;
    /* the unwind tables end in the hooks' own code where it has none (a
     * thunk's, the trampoline's: .cfi_undefined): a walk that did not
     * reach the call site holds the runtime's frames only; the frame
     * pointers' walk goes through them */
    if (!n || site_in(w, n, site) == n)
        n = walk(uc, s, w);
    /* a walk lost in code without frame pointers the hook called (libc's):
     * again from the frame pointer the hook began with, its caller's or
     * its function's */
    uint64_t fp = s->smp.hook_fp, sp = regs_of(uc).sp;
    if (site_in(w, n, site) == n && sp >= s->smp.stack_lo && sp < s->smp.stack_hi && fp > sp) {
        long rs_at = -1;
        n = walk_chain(fp, sp, s->smp.stack_hi, &rs_at, w, 1);
    }
    s->smp.pend_n = hook_stack(w0 & NP_ADDR_MASK, site, w, n, s->smp.pend);
    /* what a sample added after the last pending one was taken (below):
     * not sampled */
    SMP_ADD(skipped, SMP_GET(pend_periods));
    SMP_SET(pend_periods, periods);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SMP_SET(pending, 1);
    /* the thread's next event takes the slow path, which appends it: the
     * hook under way compared its position with the end already, and the
     * hooks' fast path stays as it is */
    s->end = NULL;
}

void np_sample_append_pending(struct np_rec_stream *s)
{
    struct np_rec_buf *b = s->buf;
    s->end = b ? b->recs + b->cap - NP_REC_RESERVE : NULL;
    /* taken whole in one instruction: a sample that comes before pending
     * is cleared adds to what is left (0), for the next defer */
    uint64_t periods = __atomic_exchange_n(&s->smp.pend_periods, 0, __ATOMIC_RELAXED);
    if (np_rec_stopped() || !append(s, s->smp.pend, s->smp.pend_n, periods - 1))
        SMP_ADD(skipped, periods);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    SMP_SET(pending, 0);
}

size_t np_sample_tail(struct np_rec_stream *s, np_raw *out, uint64_t now, int own)
{
    uint64_t skipped = SMP_GET(skipped), periods = 0;
    size_t k = 0;
    if (SMP_GET(pending)) {
        periods = __atomic_exchange_n(&s->smp.pend_periods, 0, __ATOMIC_RELAXED);
        if (own && periods) { /* its frames are this thread's to read */
            k = put_sample(out, s->smp.pend, s->smp.pend_n, periods - 1, skipped, now);
            skipped = periods = 0;
        }
        SMP_SET(pending, 0);
    }
    skipped += periods + SMP_GET(pend_periods); /* (left by a sample as the last was taken) */
    SMP_SET(pend_periods, 0);
    SMP_SET(skipped, 0);
    if (skipped)
        k += put_sample(out + k, NULL, 0, 0, skipped, now);
    return k;
}

static void take(const siginfo_t *si, void *uc)
{
    /* the thread running now: a user-level thread's own stream while a
     * scheduler has switched to it (its stack bounds are unknown: the PC
     * only), else the OS thread's */
    struct np_thread *t = np_cur != NP_UNATTACHED ? np_cur : np_thread_os();
    if (!t || !(t->flags & NP_F_REC_ON) || !t->rec)
        return;
    struct np_rec_stream *s = t->rec;
    uint64_t overrun = si->si_overrun > 0 ? (uint64_t)si->si_overrun : 0;
    if (!np_thread_lock(t)) { /* in a hook, which may be appending */
        defer(s, uc, 1 + overrun);
        return;
    }
    if (SMP_GET(pending)) /* deferred, and no event since */
        np_sample_append_pending(s);
    if (!np_rec_stopped()) {
        uint64_t fr[MAX_FRAMES];
        unsigned n = S.unwinder == NP_UNWIND_DWARF ? walk_dwarf(uc, fr) : 0;
        if (!n) /* or libunwind found nothing: the PC, at least */
            n = walk(uc, s, fr);
        /* in a hook, before it is busy or after: which function it is for
         * is not known yet, or no longer; left out, counted */
        if (np_in_hooks_text(fr[0]) || np_thunk_code((uintptr_t)fr[0]) || !append(s, fr, n, overrun))
            SMP_ADD(skipped, 1 + overrun);
    }
    np_thread_unlock(t);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (si && si->si_code == SI_TIMER && si->si_value.sival_ptr == &sample_tag)
        take(si, uc);
    else
        chain(sig, si, uc);
    errno = saved;
}

/* ---- set-up --------------------------------------------------------------- */

/* SA_RESTART: a sample must not make the program's system calls fail with
 * EINTR. The handler in place before (a program's, a constructor's) is
 * kept aside as the program's. */
static void install(void)
{
    if (LOAD(&S.installed))
        return;
#ifdef NP_INTERPOSE_SIGNALS
    real_sigaction = (sigaction_fn)next_fn(&next_sigaction, "sigaction");
#else
    real_sigaction = sigaction;
#endif
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    installing = 1; /* through the global sigaction: a sanitizer's sees it */
    int r = sigaction(SIGPROF, &sa, &old);
    installing = 0;
    if (r != 0) {
        np_rec_say("cannot install the SIGPROF handler: not sampling", strerror(errno));
        return;
    }
    if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_prof))
        chain_set(&old, NULL);
    STORE(&S.installed, 1);
}

static void stack_bounds(struct np_rec_stream *s)
{
    uintptr_t lo, hi;
    if (np_posix_thread_stack(s->smp.self, &lo, &hi) == 0) {
        s->smp.stack_lo = lo;
        s->smp.stack_hi = hi;
    }
}

/* Creates S's timer if it has none (on its thread's CPU clock, its signal
 * to that thread) and sets it to HZ (0: disarmed). Lock held. */
static void arm(struct np_rec_stream *s, unsigned hz)
{
    if (!s->smp.has_timer) {
        if (!hz)
            return;
        if (!s->smp.stack_hi)
            stack_bounds(s);
        clockid_t clock;
        if (pthread_getcpuclockid(s->smp.self, &clock) != 0)
            return;
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGPROF;
        ev.sigev_value.sival_ptr = &sample_tag;
        ev._sigev_un._tid = (pid_t)s->tid;
        if (timer_create(clock, &ev, &s->smp.timer) != 0)
            return;
        s->smp.has_timer = 1;
    }
    uint64_t ns = hz ? period_ns(hz) : 0;
    struct itimerspec it;
    it.it_value.tv_sec = it.it_interval.tv_sec = (time_t)(ns / 1000000000u);
    it.it_value.tv_nsec = it.it_interval.tv_nsec = (long)(ns % 1000000000u);
    timer_settime(s->smp.timer, 0, &it, NULL);
}

static void write_sampling(int fd, unsigned hz)
{
    np_rec_write_sampling(fd, np_port_wall_ticks(), hz, S.unwinder, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS,
                          hz ? period_ns(hz) : 0, MAX_FRAMES);
}

int np_sample_configure(void)
{
    const char *v = getenv("NANOPROF_SAMPLE");
    if (!v || !*v)
        return 1;
    unsigned hz = np_parse_hz(v);
    if (!hz) {
        np_rec_say("NANOPROF_SAMPLE: not a rate from 1 to 100000 (Hz)", v);
        return 0;
    }
    if (!CAN_SAMPLE) {
        np_rec_say("NANOPROF_SAMPLE: sampling is not supported on this machine", NULL);
        return 0;
    }
    S.cfg_hz = hz;
    S.unwinder = NP_UNWIND_FP;
    const char *u = getenv("NANOPROF_UNWIND");
    if (u && *u && strcmp(u, "fp") != 0) {
        if (strcmp(u, "dwarf") != 0) {
            np_rec_say("NANOPROF_UNWIND: not fp or dwarf", u);
            return 0;
        }
#if defined(NP_HAVE_LIBUNWIND)
        if (!np_lazy_unwind()) {
            np_rec_say("NANOPROF_UNWIND=dwarf: libunwind could not be loaded: frame pointers only", NULL);
        } else {
            S.unwinder = NP_UNWIND_DWARF;
            /* a cache per thread takes no lock in the handler; one unwind
             * here sets libunwind up outside any signal handler */
            unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
            unw_context_t ctx;
            unw_cursor_t cur;
            if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0)
                (void)unw_step(&cur);
        }
#else
        np_rec_say("NANOPROF_UNWIND=dwarf: this runtime has no DWARF unwinder (libnanoprof.so has): "
                   "frame pointers only", NULL);
#endif
    }
    STORE(&S.wanted, 1);
    return 1;
}

int np_sample_wanted(void)
{
    return LOAD(&S.wanted);
}

void np_sample_begin(int fd)
{
    if (!S.cfg_hz || LOAD(&S.hz))
        return;
    install();
    if (!LOAD(&S.installed))
        return;
    STORE(&S.hz, S.cfg_hz);
    write_sampling(fd, S.cfg_hz);
}

void np_sample_file_opened(int fd)
{
    unsigned hz = LOAD(&S.hz);
    if (hz)
        write_sampling(fd, hz);
}

void np_sample_thread_begin(struct np_rec_stream *s)
{
    s->smp.self = pthread_self();
    if (!LOAD(&S.wanted))
        return;
    stack_bounds(s);
    arm(s, LOAD(&S.hz));
}

void np_sample_thread_end(struct np_rec_stream *s)
{
    if (s->smp.has_timer)
        timer_delete(s->smp.timer);
    s->smp.has_timer = 0;
}

void np_sample_fork_child(struct np_rec_stream *own)
{
    if (!own)
        return;
    own->smp.has_timer = 0; /* the parent's: not inherited */
    own->smp.skipped = 0;   /* the parent's periods, which its trace has */
    own->smp.pending = 0;
    own->smp.pend_periods = 0;
    own->smp.self = pthread_self();
    arm(own, LOAD(&S.hz));
}

/* ---- the API (nanoprof/sample.h) ------------------------------------------ */

static void file_cb(int fd, void *ctx)
{
    write_sampling(fd, *(unsigned *)ctx);
}

static void arm_cb(struct np_rec_stream *s, void *ctx)
{
    arm(s, *(unsigned *)ctx);
}

/* Sets the rate of every recorded thread (0 stops). The SAMPLING chunk
 * goes first, with the time the rate takes effect: samples already in
 * buffers, taken at the old rate, are written after it. */
static int set_rate(const char *who, unsigned hz)
{
    if (!np_rec_active())
        return np_error_msg(NP_ENOTINIT, who, NP_MSG("not recording (NANOPROF_RECORD is not set)"));
    struct np_thread *t = np_self();
    if (!np_api_enter_msg(t, who))
        return NP_EBUSY;
    if (hz) {
        STORE(&S.wanted, 1);
        install();
        np_rec_attach_self(); /* the caller, at least, is sampled */
    }
    if (hz && !LOAD(&S.installed)) {
        np_thread_unlock(t);
        return np_error_msg(NP_EINVAL, who, NP_MSG("cannot install the SIGPROF handler"));
    }
    if (hz || LOAD(&S.hz)) {
        STORE(&S.hz, hz);
        np_rec_each_stream(file_cb, arm_cb, &hz);
    }
    np_thread_unlock(t);
    return NP_OK;
}

int np_sample_start(unsigned hz)
{
    if (!CAN_SAMPLE)
        return np_error(NP_EINVAL, "np_sample_start", "sampling is not supported on this machine");
    if (!hz || hz > NP_SAMPLE_HZ_MAX)
        return np_error(NP_EINVAL, "np_sample_start", "the rate must be 1 to 100000 Hz");
    return set_rate(NP_MSG("np_sample_start"), hz);
}

int np_sample_stop(void)
{
    return set_rate(NP_MSG("np_sample_stop"), 0);
}

/* ---- interposed: pthread_create, sigaction, signal ------------------------ */

static NP_PORT_TLS int internal_create; /* the runtime's own thread: not wrapped */

int np_sample_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    /* through the global symbol, so that a sanitizer's interceptor sees
     * the thread; ours lets it through */
    internal_create = 1;
    int r = pthread_create(th, attr, fn, arg);
    internal_create = 0;
    return r;
}

#ifdef NP_INTERPOSE_SIGNALS
/* The next definitions, looked up at the first call (a sanitizer may make
 * it before the constructors run), never in a signal handler after that:
 * the recorder's fatal-signal handler calls sigaction. */
UNSANITIZED static void *next_fn(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
    void *(*fn)(void *);
    void *arg;
};

static void *sampled_start(void *p)
{
    struct start st = *(struct start *)p;
    free(p);
    if (np_rec_active())
        np_rec_attach_self();
    return st.fn(st.arg);
}

UNSANITIZED NP_HOOK int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static void *next;
    create_fn f = (create_fn)next_fn(&next, "pthread_create");
    if (!f)
        return EAGAIN;
    struct start *st;
    if (!WRAP_THREADS || internal_create || !LOAD(&S.wanted) || !np_rec_active() || !(st = malloc(sizeof *st)))
        return f(th, attr, fn, arg);
    st->fn = fn;
    st->arg = arg;
    int r = f(th, attr, sampled_start, st);
    if (r)
        free(st);
    return r;
}

UNSANITIZED NP_HOOK int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = (sigaction_fn)next_fn(&next_sigaction, "sigaction");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (sig != SIGPROF || installing || !LOAD(&S.installed))
        return f(sig, act, old);
    chain_set(act, old);
    return 0;
}

UNSANITIZED NP_HOOK sighandler_t signal(int sig, sighandler_t h)
{
    if (sig != SIGPROF || !LOAD(&S.installed)) {
        static void *next;
        sighandler_t (*f)(int, sighandler_t) = (sighandler_t(*)(int, sighandler_t))next_fn(&next, "signal");
        if (!f) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return f(sig, h);
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction : old.sa_handler;
}
#endif
