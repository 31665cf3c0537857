/* catch.c - keeps the call trace, cost and recording right across a
 * caught C++ exception.
 *
 * GCC's -finstrument-functions runs a function's exit hook when an
 * exception leaves it (a cleanup); Clang's does not, so without help the
 * calls an exception abandoned stay open: depths grow and times go to the
 * wrong calls. The shared runtime (NP_INTERPOSE_NEXT: what `nanoprof
 * record` preloads) stands in front of the C++ runtime's unwinder, as
 * setjmp.c does for longjmp: when an exception is thrown
 * (_Unwind_RaiseException, or _Unwind_Resume_or_Rethrow for `throw;`) it
 * notes the frames of the stack, each function's start and stack
 * pointer, from the unwind information; when a handler begins
 * (__cxa_begin_catch, called by the catching function) the open calls
 * whose frames lay below the handler's stack pointer are closed, at that
 * time (np_catch_abandoned
 * matches calls to frames). The same is done when the C++ personality
 * routine has a landing pad run (__gxx_personality_v0: a cleanup, the
 * destructors of an abandoned frame's locals, or the handler), so that what
 * a destructor calls while the exception unwinds is its frame's, not an
 * abandoned call's. Calls that GCC's hooks already closed are not open,
 * so nothing is closed twice. Each real function is found with
 * dlsym(RTLD_NEXT) (the unwinder's walk with RTLD_DEFAULT) when first
 * needed: a program that throws has loaded them.
 *
 * Not covered: the call trace's log mode (it keeps no function per open
 * call: its depth stays too deep, as after an uncovered longjmp), static
 * libraries (a static executable's unwinder cannot be stood in front of),
 * calls a catch more than NP_THROW_FRAMES frames out abandons. */
#define _GNU_SOURCE
#include "catch.h"
#include "mcount.h"
#include "../../runtime/cost_hot.h"
#include "../../runtime/hooks.h"
#include "../../runtime/np_config.h"
#include "../../runtime/record_hooks.h"
#include "../../runtime/thread.h"

size_t np_catch_abandoned(const struct np_throw_frame *f, size_t n, uint64_t sp, size_t depth,
                          uint64_t (*fn)(const void *ctx, size_t i), const void *ctx)
{
    if (!n)
        return 0;
    /* calls further out than the frames could reach are not abandoned */
    size_t i = depth > 4 * n ? depth - 4 * n : 0, next = n, dead_from = depth;
    uint64_t at = UINT64_MAX; /* the nearest matched call's frame's: none yet */
    for (; i < depth; i++) {
        uint64_t a = fn(ctx, i);
        for (size_t r = next; a && r-- > 0;)
            if (f[r].start == a) {
                at = f[r].sp;
                next = r;
                break;
            }
        if (at >= sp)
            dead_from = depth;
        else if (dead_from == depth)
            dead_from = i;
    }
    return depth - dead_from;
}

#if defined(NP_INTERPOSE_NEXT) && (defined(NP_INTERPOSE_SETJMP) || defined(__arm__))
#include <dlfcn.h>

/* The real NAME behind the one the runtime stands in front of, looked up
 * in HANDLE once and kept in SLOT. */
static void *next_fn(void *handle, void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(handle, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
#endif

#if defined(NP_INTERPOSE_NEXT) && defined(NP_INTERPOSE_SETJMP)
#include <pthread.h>
#include <stdlib.h>
#include <unwind.h>

/* The frames of the last throw on this OS thread (a pthread key's value:
 * allocated at the first throw, freed when the thread ends). */
struct snapshot {
    size_t n;
    uint64_t own; /* frames at or below it are the runtime's and the unwinder's */
    uint64_t done; /* the stack pointer of the last catch or cleanup seen to */
    struct np_throw_frame f[NP_THROW_FRAMES];
};
static pthread_key_t snap_key;
static int snap_ready; /* snap_key was made */
static pthread_once_t snap_once = PTHREAD_ONCE_INIT;
static void snap_init(void) { snap_ready = pthread_key_create(&snap_key, free) == 0; }

typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);
typedef _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Word (*get_fn)(struct _Unwind_Context *);
typedef void *(*begin_catch_fn)(void *);
static raise_fn real_raise, real_rethrow;
static begin_catch_fn real_begin_catch;
static backtrace_fn walk;
static get_fn get_cfa, get_start;

/* _Unwind_GetCFA, in a walk's step, is the frame's stack pointer at its
 * call (the CFA of the call it made), with GCC's unwinder as with LLVM's */
static _Unwind_Reason_Code note_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct snapshot *s = arg;
    uint64_t sp = (uint64_t)get_cfa(ctx);
    if (sp <= s->own)
        return _URC_NO_REASON;
    if (s->n == NP_THROW_FRAMES)
        return _URC_END_OF_STACK; /* the innermost are the ones that count */
    s->f[s->n].start = (uint64_t)get_start(ctx);
    s->f[s->n].sp = sp;
    s->n++;
    return _URC_NO_REASON;
}

/* Notes the stack an exception is thrown from, for the catch. */
static __attribute__((noinline)) void note_throw(void)
{
    np_mcount_unwinding(); /* -pg's frames: their return addresses back */
    (void)next_fn(RTLD_DEFAULT, (void **)&get_cfa, "_Unwind_GetCFA"); /* for the landing pads */
    struct np_thread *t = np_cur;
    if (t == NP_UNATTACHED || !(t->flags & (NP_F_CT_INIT | NP_F_COST_INIT | NP_F_REC_ON)))
        return;
    pthread_once(&snap_once, snap_init);
    struct snapshot *s = snap_ready ? pthread_getspecific(snap_key) : NULL;
    if (snap_ready && !s && (s = malloc(sizeof *s)) != NULL && pthread_setspecific(snap_key, s) != 0) {
        free(s);
        s = NULL;
    }
    if (!s)
        return;
    s->n = 0;
    s->done = 0;
    s->own = (uint64_t)(uintptr_t)__builtin_dwarf_cfa();
    if (next_fn(RTLD_DEFAULT, (void **)&walk, "_Unwind_Backtrace") &&
        next_fn(RTLD_DEFAULT, (void **)&get_cfa, "_Unwind_GetCFA") &&
        next_fn(RTLD_DEFAULT, (void **)&get_start, "_Unwind_GetRegionStart"))
        walk(note_frame, s);
}

/* The function of open call I: of the call trace's stack (its records
 * are the open calls, outermost first; those that did not fit have none),
 * and of function cost's frames. A name (NP_ENTER) is no function. */
static uint64_t ct_fn(const void *ctx, size_t i)
{
    const struct np_calltrace_state *c = ctx;
    uint64_t fn = i < np_ct_top(c) ? c->buf[i].w0 : 0;
    return fn & NP_REC_NAMED ? 0 : fn;
}

static uint64_t cost_fn(const void *ctx, size_t i)
{
    const struct np_cost_state *c = ctx;
    uint64_t fn = np_cost_ref_slot(c->frames[i].ref)->fn;
    return fn & NP_COST_NAMED ? 0 : fn;
}

/* A handler or a cleanup begins, its function's stack pointer SP (the
 * CFA of the call it makes, as the frames'). */
static void note_catch(uint64_t sp)
{
    struct np_thread *t = np_cur;
    pthread_once(&snap_once, snap_init);
    struct snapshot *s = snap_ready ? pthread_getspecific(snap_key) : NULL;
    if (t == NP_UNATTACHED || !s || !s->n || s->done == sp)
        return; /* (the handler that the personality routine had run) */
    s->done = sp;
    /* kept after the catch: an exception caught while another unwinds
     * (in a destructor) left the frames of the other's catch in it */
    size_t n = s->n;
    if (!np_thread_lock(t))
        return; /* thrown in a hook (a user hook's): left alone */
    if ((t->flags & NP_F_REC_ON) && np_rec_catch_hook)
        np_rec_catch_hook(t, sp, s->f, n);
    struct np_calltrace_state *c = &t->ct;
    if ((t->flags & NP_F_CT_INIT) && c->mode != NP_CALLTRACE_LOG) {
        size_t top = np_ct_top(c);
        size_t k = np_catch_abandoned(s->f, n, sp, top + c->overflow, ct_fn, c);
        size_t r = k < c->overflow ? k : c->overflow;
        c->overflow -= (uint32_t)r;
        c->pos -= k - r;
    }
    if (t->flags & NP_F_COST_INIT) {
        uint32_t open = np_cost_depth(&t->cost);
        size_t k = np_catch_abandoned(s->f, n, sp, open, cost_fn, &t->cost);
        if (k) /* the calls dropped for want of room were inside them */
            np_cost_unwind(t, open - (uint32_t)k, 0, 0);
    }
    np_thread_unlock(t);
}

NP_HOOK _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
    note_throw();
    return ((raise_fn)next_fn(RTLD_NEXT, (void **)&real_raise, "_Unwind_RaiseException"))(e);
}

NP_HOOK _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
    note_throw();
    return ((raise_fn)next_fn(RTLD_NEXT, (void **)&real_rethrow, "_Unwind_Resume_or_Rethrow"))(e);
}

/* The C++ personality routine, which the unwinder calls for each frame
 * with exception-handling information: when it has the unwinder run one
 * of its frame's landing pads (a handler, or a cleanup: the destructors
 * of its locals), the calls below that frame are over before that code
 * runs, so that what a cleanup calls is that frame's. The context's
 * CFA, here as in a walk, is the frame's stack pointer. */
typedef _Unwind_Reason_Code (*personality_fn)(int, _Unwind_Action, _Unwind_Exception_Class,
                                              struct _Unwind_Exception *, struct _Unwind_Context *);
static personality_fn real_personality;

NP_HOOK _Unwind_Reason_Code __gxx_personality_v0(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
                                                 struct _Unwind_Exception *e, struct _Unwind_Context *ctx)
{
    personality_fn p = (personality_fn)next_fn(RTLD_NEXT, (void **)&real_personality, "__gxx_personality_v0");
    _Unwind_Reason_Code r = p(version, actions, cls, e, ctx);
    get_fn cfa = __atomic_load_n(&get_cfa, __ATOMIC_ACQUIRE); /* found at the throw */
    if (r == _URC_INSTALL_CONTEXT && (actions & _UA_CLEANUP_PHASE) && cfa) {
        uint64_t sp = (uint64_t)cfa(ctx);
        np_mcount_unwound((const void *)(uintptr_t)sp);
        note_catch(sp);
    }
    return r;
}

NP_HOOK void *__cxa_begin_catch(void *e)
{
    np_mcount_unwound(__builtin_dwarf_cfa());
    np_mcount_caught();
    note_catch((uint64_t)(uintptr_t)__builtin_dwarf_cfa());
    return ((begin_catch_fn)next_fn(RTLD_NEXT, (void **)&real_begin_catch, "__cxa_begin_catch"))(e);
}
#elif defined(NP_INTERPOSE_NEXT) && defined(__arm__)
/* 32-bit ARM's unwinder (EHABI) reads the return addresses too: -pg's
 * originals go back before a throw, and at the catch the calls whose
 * frames lay below the handler's are over and the living frames' return
 * addresses are taken again. The destructors a throw runs on its way are
 * nested in the calls it abandons (the personality routine, EHABI's own,
 * is not stood in front of). The unwinder's types are left to it: only
 * pointers pass. */
typedef int (*raise_fn)(void *);
typedef void *(*begin_catch_fn)(void *);
static raise_fn real_raise, real_rethrow;
static begin_catch_fn real_begin_catch;

NP_HOOK int _Unwind_RaiseException(void *e)
{
    np_mcount_unwinding();
    return ((raise_fn)next_fn(RTLD_NEXT, (void **)&real_raise, "_Unwind_RaiseException"))(e);
}

NP_HOOK int _Unwind_Resume_or_Rethrow(void *e)
{
    np_mcount_unwinding();
    return ((raise_fn)next_fn(RTLD_NEXT, (void **)&real_rethrow, "_Unwind_Resume_or_Rethrow"))(e);
}

NP_HOOK void *__cxa_begin_catch(void *e)
{
    np_mcount_unwound(__builtin_dwarf_cfa());
    np_mcount_caught();
    return ((begin_catch_fn)next_fn(RTLD_NEXT, (void **)&real_begin_catch, "__cxa_begin_catch"))(e);
}
#endif
