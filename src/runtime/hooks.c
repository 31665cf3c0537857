/* hooks.c - the entry and exit hooks the compiler inserts, and the manual
 * markers, dispatched to the mechanisms this thread has turned on.
 *
 * The same file builds each library: NP_HOOKS_MECHANISMS says which
 * mechanisms the hooks call (the all-in-one library checks the thread's
 * flags for each; a single-mechanism library calls only its own), the way
 * the SDK linked libos.CALLTRACE.a or libos.FUNCTIONCOST.a.
 *
 * NP_HOOKS_NONSHARED builds libnanoprof-hooks.a, which a program linked
 * with libnanoprof.so takes into its own executable (pkg-config and the
 * CMake package put it first): only the two compiler hooks, with their
 * leaf paths (call trace alone, cost alone), the rest of the work being
 * the shared library's (np_hooks_full_enter/exit). A call from the
 * program's code to a function in a shared library, mapped terabytes
 * away, costs more than one to a function beside it (the CPU's branch
 * predictor keeps fewer bits of far targets); docs/performance.md has the
 * figures. */
#if defined(NP_HOOKS_NONSHARED)
/* the archive's own names for the state its leaf paths read (below) */
#define np_cur np_hooks_cur
#define np_switch_flag np_hooks_switch_flag
#endif
#include "calltrace_hot.h"
#include "cost_hot.h"
#include "hooks.h"
#include "output.h"

#if defined(NP_HOOKS_NONSHARED)
#undef NP_HOOKS_MECHANISMS
#define NP_HOOKS_MECHANISMS (NP_MECH_CALLTRACE | NP_MECH_COST | NP_MECH_USER | NP_MECH_RECORD)
#endif
#ifndef NP_HOOKS_MECHANISMS /* every mechanism the port can have */
#define NP_HOOKS_MECHANISMS \
    (NP_MECH_CALLTRACE | NP_MECH_COST | NP_MECH_USER | (NP_PORT_HOSTED ? NP_MECH_RECORD : NP_MECH_TRACE))
#endif
#if (NP_HOOKS_MECHANISMS & NP_MECH_RECORD) && !defined(NP_HOOKS_NONSHARED)
#include "record_hot.h" /* the POSIX port's recorder (port/posix), on the include path */
#endif
#include "record_hooks.h" /* np_rec_switch_hook: a target's trace runs */
#include "trace_target.h"
#if !NP_PORT_HOSTED
/* The trace's state the hooks read, here rather than in trace_target.c,
 * which only a firmware that starts a trace links. */
uint32_t np_tt_dropped;
struct np_tt_ring np_tt_ring = { NULL, NP_TT_RING_CLOSED, 0 };
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_TRACE
/* A call a recorded thread makes while busy (inside the trace's writer,
 * or an interrupt inside a hook) is not in the trace: the END chunk
 * counts it lost. So is one of a thread the running trace (its switch
 * hook set) has not marked yet: an interrupt's, inside np_thread_switch
 * before its hook marks the thread switched in. */
#define NP_TT_DROPPED(f)                                                          \
    ((f) & NP_F_REC_ON || __atomic_load_n(&np_rec_switch_hook, __ATOMIC_RELAXED) \
         ? (void)__atomic_fetch_add(&np_tt_dropped, 1, __ATOMIC_RELAXED)         \
         : (void)0)
#else
#define NP_TT_DROPPED(f) ((void)0)
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
/* The same for function cost: said lost at the next merge. */
#define NP_COST_DROPPED(t, f) \
    ((f) & NP_F_COST_ON ? (void)__atomic_fetch_add(&(t)->cost.lost_busy, 1, __ATOMIC_RELAXED) : (void)0)
#else
#define NP_COST_DROPPED(t, f) ((void)0)
#endif

#if defined(NP_HOOKS_NONSHARED)
/* The shared library this archive goes with: a link or load error, not a
 * wrong layout, when they come from different versions. */
extern const char NP_HOOKS_ABI;
__attribute__((used)) static const char *const keep_abi = &NP_HOOKS_ABI;
/* For the sampler: a sample in these hooks belongs to the function they
 * are called for (hooks.h). */
NP_EXPORT const struct np_hooks_range np_hooks_text_exe = { __start_np_hooks_text, __stop_np_hooks_text };
/* The thread-local state the leaf paths read, defined here too, with the
 * shared library's initial values: the library's own references, through
 * its GOT, then find these (the program's definitions come first), while
 * the hooks reach them as the static library's do, at a fixed offset from
 * the thread pointer, with no GOT load on the way. */
__attribute__((visibility("hidden"))) NP_PORT_TLS struct np_thread *np_hooks_cur =
    NP_UNATTACHED;
__attribute__((visibility("hidden"))) NP_PORT_TLS volatile uint64_t *np_hooks_switch_flag =
    (volatile uint64_t *)&np_switch_never;
/* the names the shared library refers to (an executable's own hidden
 * names are what its linker turns into fixed offsets) */
#undef np_cur
#undef np_switch_flag
extern NP_PORT_TLS struct np_thread *np_cur __attribute__((alias("np_hooks_cur"), visibility("default")));
extern NP_PORT_TLS volatile uint64_t *np_switch_flag
    __attribute__((alias("np_hooks_switch_flag"), visibility("default")));
#define np_cur np_hooks_cur
#define np_switch_flag np_hooks_switch_flag
/* The global flags word, a copy of the library's beside the code: the
 * library's np_hooks_set writes both (through this pointer). */
static uint32_t hooks_global;
NP_EXPORT uint32_t *const np_hooks_global_exe = &hooks_global;
#define NP_USER_ON() (__atomic_load_n(&np_user_hooks, __ATOMIC_RELAXED) != NULL)
#define NP_GLOBAL_FLAGS() __atomic_load_n(&hooks_global, __ATOMIC_RELAXED)
#define NP_FULL_ENTER np_hooks_full_enter /* the shared library's */
#define NP_FULL_EXIT np_hooks_full_exit
#else
NP_EXPORT const char NP_HOOKS_ABI = 1;

/* Lets the init functions refuse a mechanism this library's hooks do not
 * call, instead of silently recording nothing. */
const unsigned np_hooks_mechanisms = NP_HOOKS_MECHANISMS;

#if defined(NP_INTERPOSE_SETJMP)
extern const char np_setjmp_linked;
__attribute__((used)) static const char *const keep_setjmp = &np_setjmp_linked;
#endif

#if NP_HOOKS_MECHANISMS & NP_MECH_USER
/* One immutable set of user hooks, swapped in whole (np_hooks_set is
 * rare; the hooks read one pointer). A replaced set is never freed: the
 * slots are reused round-robin, so a hook still running on another thread
 * reads a consistent set unless np_hooks_set is called NP_USER_HOOK_SLOTS more
 * times meanwhile. */
struct np_user_hooks {
    np_hook_fn enter, exit;
    void *ctx;
};
static struct np_user_hooks user_slots[NP_USER_HOOK_SLOTS];
struct np_user_hooks *np_user_hooks;
uint32_t np_hooks_global;
static unsigned user_next;

int np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx)
{
    struct np_user_hooks *h = NULL;
    if (enter || exit) {
        h = &user_slots[__atomic_fetch_add(&user_next, 1, __ATOMIC_RELAXED) % NP_USER_HOOK_SLOTS];
        h->enter = enter;
        h->exit = exit;
        h->ctx = ctx;
    }
    __atomic_store_n(&np_user_hooks, h, __ATOMIC_RELEASE);
    /* the hooks' leaf paths read this with the thread's flags: busy sends
     * every call to the full path, which calls the user hooks */
    uint32_t g = h ? (uint32_t)NP_F_BUSY : 0u;
    __atomic_store_n(&np_hooks_global, g, __ATOMIC_RELEASE);
    if (&np_hooks_global_exe && np_hooks_global_exe) /* libnanoprof-hooks.a's copy */
        __atomic_store_n(np_hooks_global_exe, g, __ATOMIC_RELEASE);
    /* and the threads' user bytes: the current thread's now, the others'
     * when they are switched to */
    uint8_t on = h ? NP_USER_BYTE_ON : 0;
    __atomic_store_n(&np_hooks_user_on, on, __ATOMIC_RELAXED);
    struct np_thread *t = np_cur;
    if (t != NP_UNATTACHED)
        np_thread_user_set(t, on);
    return NP_OK;
}
#define NP_USER_ON() (__atomic_load_n(&np_user_hooks, __ATOMIC_RELAXED) != NULL)
#if NP_PORT_OS_THREADS
#define NP_GLOBAL_FLAGS() __atomic_load_n(&np_hooks_global, __ATOMIC_RELAXED)
#else
/* every thread is switched to by np_thread_switch: its user byte says it */
#define NP_GLOBAL_FLAGS() 0u
#endif
#else
int np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx)
{
    (void)enter, (void)exit, (void)ctx;
    return np_error(NP_EINVAL, "np_hooks_set", "this library was built without user hooks (link libnanoprof)");
}
#define NP_USER_ON() 0
#define NP_GLOBAL_FLAGS() 0u
#endif

/* The mechanisms' full paths: through the pointers their starts set
 * (hooks.h says why), or named directly by a library that has no other
 * mechanism. */
#if NP_HOOKS_MECHANISMS == NP_MECH_COST
#define NP_COST_EVENT np_cost_event
#else
#define NP_COST_EVENT __atomic_load_n(&np_cost_event_hook, __ATOMIC_RELAXED)
#endif
#define NP_TT_EVENT __atomic_load_n(&np_tt_event_hook, __ATOMIC_RELAXED) /* (two ways: trace_target.h) */

/* The full path of both hooks (EXIT is a constant where it is inlined).
 * The call trace runs without the busy flag (calltrace_hot.h says why);
 * the recorder, cost measurement and user hooks run under it. The
 * recorder goes first: it notes a switch before cost takes it into
 * account (record.c). */
static inline __attribute__((always_inline)) void
np_on_event(int exit, uint64_t fn, const void *site)
{
    struct np_thread *t = np_self();
    uint32_t f = t->flags;

    if (__builtin_expect(f & NP_F_BUSY, 0)) {
        NP_TT_DROPPED(f);
        NP_COST_DROPPED(t, f);
        return; /* inside another hook or a dump: record nothing */
    }
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    if (f & NP_F_CT_ON) {
        if (exit)
            (f & NP_F_CT_LOG) ? np_ct_log_exit(t) : np_ct_stack_exit(t);
        else if (f & NP_F_CT_LOG)
            np_ct_log_enter(t, fn, site);
        else
            np_ct_stack_enter(t, fn, site);
    }
#endif
#if NP_HOOKS_MECHANISMS & (NP_MECH_COST | NP_MECH_USER | NP_MECH_RECORD | NP_MECH_TRACE)
    if (!(f & (NP_F_COST_ON | NP_F_REC_ON)) && !NP_USER_ON()) {
        NP_TT_DROPPED(f);
        return;
    }
#if NP_HOOKS_MECHANISMS & NP_MECH_RECORD
    if (f & NP_F_REC_ON) {
        t->rec->smp.hook_fn = fn | (exit ? NP_RAW_EXIT_BIT : 0);
        t->rec->smp.hook_site = site;
        t->rec->smp.hook_fp = NP_PORT_FRAME();
    }
#endif
    t->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#if NP_HOOKS_MECHANISMS & NP_MECH_RECORD
    if (f & NP_F_REC_ON)
        np_rec_event(t, (fn & (NP_ADDR_MASK | NP_REC_NAMED)) | (exit ? NP_RAW_EXIT_BIT : 0));
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_TRACE
    if (f & NP_F_REC_ON)
        NP_TT_EVENT(t, fn, exit);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
    if (f & NP_F_COST_ON) /* (set after the hook: np_cost_init) */
        NP_COST_EVENT(t, fn, exit);
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_USER
    struct np_user_hooks *u = __atomic_load_n(&np_user_hooks, __ATOMIC_ACQUIRE);
    np_hook_fn h = u ? (exit ? u->exit : u->enter) : NULL;
    if (h)
        h(u->ctx, (const void *)(uintptr_t)(fn & NP_ADDR_MASK), site, !exit && (fn & NP_REC_NAMED) != 0);
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->flags &= ~NP_F_BUSY;
#endif
    (void)fn, (void)site;
}

#define np_on_enter(fn, site) np_on_event(0, fn, site)
#define np_on_exit(fn, site) np_on_event(1, fn, site)

/* The call trace alone: the full path only attaches the thread (or finds
 * it busy, in a dump), then hands the call back to the hook, whose own
 * paths take it; the other mechanisms' dispatch is not in the library. */
#define NP_HOOKS_CALLTRACE_ONLY (NP_HOOKS_MECHANISMS == NP_MECH_CALLTRACE)
#if NP_HOOKS_CALLTRACE_ONLY
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);
#endif

#if !NP_HOOKS_CALLTRACE_ONLY
static NP_HOOKS_TEXT __attribute__((noinline)) void enter_slow(uint64_t fn, void *site)
{
    np_on_enter(fn, site);
}

static NP_HOOKS_TEXT __attribute__((noinline)) void exit_slow(uint64_t fn, void *site)
{
    np_on_exit(fn, site);
}
#endif

#if NP_HOOKS_MECHANISMS & NP_MECH_RECORD
/* The recorder alone on the thread: the append, under the busy flag,
 * without the register saves of the full path, which it falls back on
 * (by a tail call) when there is a switch to note or the buffer is full. */
#define NP_REC_ONLY_MASK (NP_F_BUSY | NP_F_CT_ON | NP_F_COST_ON | NP_F_REC_ON)
#define NP_REC_ONLY(t) (((t)->flags & NP_REC_ONLY_MASK) == NP_F_REC_ON && !NP_USER_ON())

static NP_HOOKS_TEXT __attribute__((noinline)) void rec_only(struct np_thread *t, uint64_t w0, void *site)
{
    if (!np_rec_append(t, w0, site, np_port_wall_ticks)) {
        uint64_t fn = w0 & NP_ADDR_MASK;
        if (w0 & NP_RAW_EXIT_BIT)
            exit_slow(fn, site);
        else
            enter_slow(fn, site);
    }
}
#else
#define NP_REC_ONLY(t) ((void)(t), 0)
#define rec_only(t, w0, site) ((void)0)
#endif

/* Everything but the hooks' leaf paths, by a tail call from them (the
 * recorder alone to its own path, first); exported for
 * libnanoprof-hooks.a. */
NP_HOOK NP_HOOKS_TEXT __attribute__((noinline)) void np_hooks_full_enter(void *fn, void *site)
{
#if NP_HOOKS_CALLTRACE_ONLY
    if (!(np_self()->flags & NP_F_BUSY))
        np_hooks_enter_here(fn, site);
#else
    uint64_t a = (uint64_t)(uintptr_t)fn & NP_ADDR_MASK;
    struct np_thread *t = np_cur;
    if (NP_REC_ONLY(t))
        rec_only(t, a, site);
    else
        enter_slow(a, site);
#endif
}

NP_HOOK NP_HOOKS_TEXT __attribute__((noinline)) void np_hooks_full_exit(void *fn, void *site)
{
#if NP_HOOKS_CALLTRACE_ONLY
    if (!(np_self()->flags & NP_F_BUSY))
        np_hooks_exit_here(fn, site);
#else
    uint64_t a = (uint64_t)(uintptr_t)fn & NP_ADDR_MASK;
    struct np_thread *t = np_cur;
    if (NP_REC_ONLY(t))
        rec_only(t, a | NP_RAW_EXIT_BIT, site);
    else
        exit_slow(a, site);
#endif
}

/* Both, bound inside the library for the hooks below (hooks.h's
 * np_hooks_enter_here says why) */
extern __typeof(np_hooks_full_enter) np_hooks_full_enter_here
    __attribute__((alias("np_hooks_full_enter"), visibility("hidden")));
extern __typeof(np_hooks_full_exit) np_hooks_full_exit_here
    __attribute__((alias("np_hooks_full_exit"), visibility("hidden")));
#define NP_FULL_ENTER np_hooks_full_enter_here
#define NP_FULL_EXIT np_hooks_full_exit_here
#endif /* !NP_HOOKS_NONSHARED */

/* The compiler's hooks. The common cases, the call trace alone or cost
 * measurement alone on an attached thread, are handled here with no call
 * at all, so these stay leaf functions that save no registers; everything
 * else goes to the full path by a tail call. */
#define NP_FAST_MASK (NP_F_BUSY | NP_F_COST_ON | NP_F_REC_ON)
/* The call trace alone, not busy: its mode decides the rest. */
#define NP_CT_MASK NP_HOT_MASK(NP_FAST_MASK | NP_F_CT_ON | NP_F_CT_LOG)
/* Cost measurement alone (the call trace off), not busy, not recording,
 * nothing that needs its full path. */
#define NP_COST_MASK (NP_HOT_MASK(NP_F_BUSY | NP_F_CT_ON | NP_F_COST_ON | NP_F_REC_ON) | NP_F_COST_SLOW)

/* The hooks: the call trace in log mode first, then the rest. On a host
 * the rest is inlined into the hooks, which keep their registers anyway.
 * On a target with few registers (Thumb) the rest is a function of its
 * own, reached by a tail call: inlined, its registers would be saved on
 * every call of the hooks, the log mode's too. EXIT is a constant. */
#if NP_PORT_HOSTED
#define NP_HOOK_REST static inline __attribute__((always_inline))
#else
#define NP_HOOK_REST static NP_HOOKS_TEXT __attribute__((noinline))
#endif

/* G: T's hot word with the process-wide flags, as the hook read them. */
static inline __attribute__((always_inline)) void hook_rest(int exit, void *fn, void *site, struct np_thread *t, uint32_t g)
{
#if NP_HOOKS_MECHANISMS & (NP_MECH_CALLTRACE | NP_MECH_COST)
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
    if ((g & NP_COST_MASK) == NP_F_COST_ON) {
#if NP_PORT_HOOKS_MASK
        /* interrupts masked for the whole update, the clock's read in it:
         * an interrupt's hooks (which may merge the table, moving the
         * slots, or switch threads) come before or after it */
        np_port_crit m = np_port_crit_enter(NULL);
        int done = exit ? np_cost_exit_fast(t) : np_cost_enter_fast(t, NP_CODE_ADDR(fn));
        np_port_crit_exit(NULL, m);
#else
        int done = np_cost_fast_busy(t, exit, NP_CODE_ADDR(fn));
#endif
        if (__builtin_expect(done, 1))
            return;
        goto full;
    }
#endif
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    uint32_t k = g & NP_CT_MASK;
    if (!(k & ~NP_F_CT_LOG))
        return; /* nothing on */
    if (k == NP_F_CT_ON) {
        if (exit)
            np_ct_stack_exit(t);
        else
            np_ct_stack_enter(t, NP_CODE_ADDR(fn), site);
        return;
    }
#endif
#endif
    (void)t, (void)g;
#if NP_HOOKS_MECHANISMS & NP_MECH_COST
full:
#endif
    if (exit)
        NP_FULL_EXIT(fn, site);
    else
        NP_FULL_ENTER(fn, site);
}

NP_HOOK_REST void hook_rest_enter(void *fn, void *site, struct np_thread *t, uint32_t g)
{
    hook_rest(0, fn, site, t, g);
}

NP_HOOK_REST void hook_rest_exit(void *fn, void *site, struct np_thread *t, uint32_t g)
{
    hook_rest(1, fn, site, t, g);
}

/* The call trace alone, in log mode (not busy, no user hooks), from G. */
static inline __attribute__((always_inline)) int log_mode_alone(uint32_t g)
{
    return __builtin_expect((g & NP_CT_MASK) == (NP_F_CT_ON | NP_F_CT_LOG), 1);
}

/* On a cache line of their own each: their speed depends on where they
 * fall (a few tenths of a nanosecond per call, from one build to the
 * next, measured); aligned, it does not. */
/* libnanoprof-trace.a (the trace alone) with a clock the hooks read in
 * one load: the ring's epoch alone says whether its own path may write.
 * It is open only while a ring runs and no record is being written
 * elsewhere (the full path, a switch, flush and stop close it), and the
 * trace's is the only mechanism such a library has; a thread comes in by
 * np_thread_switch, whose hook writes its THREAD word first. */
#if NP_HOOKS_MECHANISMS == NP_MECH_TRACE && defined(NP_PORT_CYCLES32)
#define NP_RING_FIRST 1
#else
#define NP_RING_FIRST 0
#endif

NP_HOOK NP_HOOKS_TEXT __attribute__((aligned(64))) void __cyg_profile_func_enter(void *fn, void *site)
{
#if NP_RING_FIRST
    if (np_tt_ring_put((uint32_t)(uintptr_t)fn, 0))
        return;
#endif
    struct np_thread *t = np_cur; /* NP_UNATTACHED (busy) at first */
    uint32_t g = t->hot | NP_GLOBAL_FLAGS();
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    if (log_mode_alone(g)) {
        np_ct_log_enter(t, NP_CODE_ADDR(fn), site);
        return;
    }
#endif
#if (NP_HOOKS_MECHANISMS & NP_MECH_TRACE) && defined(NP_PORT_CYCLES32) && !NP_RING_FIRST /* (else it never writes) */
    if ((g & NP_CT_MASK) == NP_F_REC_ON && np_tt_ring_put((uint32_t)(uintptr_t)fn, 0))
        return; /* the ring trace alone, on its own path */
#endif
    hook_rest_enter(fn, site, t, g);
}

NP_HOOK NP_HOOKS_TEXT __attribute__((aligned(64))) void __cyg_profile_func_exit(void *fn, void *site)
{
#if NP_RING_FIRST
    if (np_tt_ring_put(0, 1))
        return;
#endif
    struct np_thread *t = np_cur;
    uint32_t g = t->hot | NP_GLOBAL_FLAGS();
#if NP_HOOKS_MECHANISMS & NP_MECH_CALLTRACE
    if (log_mode_alone(g)) {
        np_ct_log_exit(t);
        return;
    }
#endif
#if (NP_HOOKS_MECHANISMS & NP_MECH_TRACE) && defined(NP_PORT_CYCLES32)
    /* the ring trace alone: its own path (tried first with NP_RING_FIRST),
     * else the full one, which an exit asks no site of here (no call
     * trace, no user hooks): the register it frees spares the path a save */
    if ((g & NP_CT_MASK) == NP_F_REC_ON) {
        if (NP_RING_FIRST || !np_tt_ring_put(0, 1))
            NP_FULL_EXIT(fn, NULL);
        return;
    }
#endif
    hook_rest_exit(fn, site, t, g);
}

/* The same two, bound inside the library (hooks.h) */
extern __typeof(__cyg_profile_func_enter) np_hooks_enter_here
    __attribute__((alias("__cyg_profile_func_enter"), visibility("hidden")));
extern __typeof(__cyg_profile_func_exit) np_hooks_exit_here
    __attribute__((alias("__cyg_profile_func_exit"), visibility("hidden")));

#if !defined(NP_HOOKS_NONSHARED)
/* Manual markers: the name string stands for the function. noinline so
 * that the return address is the marker's own call site. */
__attribute__((noinline)) void np_enter(const char *name)
{
    np_on_enter(((uint64_t)(uintptr_t)name & NP_ADDR_MASK) | NP_REC_NAMED,
                __builtin_return_address(0));
}

__attribute__((noinline)) void np_exit(void)
{
    np_on_exit(0, __builtin_return_address(0));
}
#endif
