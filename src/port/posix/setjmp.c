/* setjmp.c - keeps the call trace and cost records right across longjmp.
 *
 * A longjmp leaves every call between it and its setjmp without an exit
 * hook. The runtime stands in front of the C library's setjmp and longjmp
 * (by symbol interposition: these definitions come before libc's): at
 * setjmp it notes, per thread, how deep each mechanism is; at longjmp it
 * cuts each mechanism back to that depth (cost measurement closes the calls
 * the jump abandons, at the time of the jump), then calls the real longjmp.
 * The setjmp side is a few instructions of assembly (below), since setjmp
 * returns twice and cannot be wrapped in C: it notes the depths, then jumps
 * to the real setjmp with the caller's stack as it was, so the real one
 * saves the right frame.
 *
 * Covered everywhere: setjmp and _setjmp, returned to by longjmp,
 * _longjmp or siglongjmp. The shared library (NP_INTERPOSE_NEXT: what
 * `nanoprof record` preloads) also covers sigsetjmp, which is the C
 * library's __sigsetjmp (x86-64), and _FORTIFY_SOURCE's __longjmp_chk,
 * what longjmp becomes in a program built with it and optimised: there
 * the real ones are found with dlsym(RTLD_NEXT). A static library cannot
 * (__sigsetjmp is the one implementation a static executable has, and
 * __longjmp_chk its one public longjmp), so there a jump to or through
 * those cuts nothing. Where no assembly exists for the CPU, nothing is
 * interposed. docs/instrumenting.md says what that means. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "../../runtime/cost_hot.h"
#include "../../runtime/hooks.h"
#include "mcount.h"
#include "record.h"

#if defined(NP_INTERPOSE_SETJMP)

/* hooks.c refers to this, so linking a static library that provides the
 * hooks always brings these definitions along, even when another library
 * (a sanitizer runtime) named first also defines setjmp. */
const char np_setjmp_linked = 1;

/* NP_SETJMP(name, savemask): np_setjmp_note(env), then a tail jump to the
 * C library's __sigsetjmp(env, savemask), which is what setjmp and _setjmp
 * are, with the caller's stack untouched. __sigsetjmp itself (sigsetjmp)
 * is left alone except by the shared library on x86-64 (NP_SIGSETJMP): it
 * is the one real implementation every build can reach, static
 * executables included. */
#if defined(__x86_64__)
#if defined(NP_INTERPOSE_NEXT)
/* __sigsetjmp is ours too: jump past it to the C library's, which
 * np_setjmp_note has found */
#define NP_SIGSETJMP_REAL "jmp *np_real_sigsetjmp(%rip)\n"
#else
#define NP_SIGSETJMP_REAL "jmp __sigsetjmp@PLT\n"
#endif
#define NP_SETJMP(name, savemask)                                           \
    ".globl " name "\n.type " name ", @function\n" name ":\n"             \
    ".cfi_startproc\n"                                                     \
    "pushq %rdi\n.cfi_adjust_cfa_offset 8\n"                               \
    "call np_setjmp_note\n"                                                \
    "popq %rdi\n.cfi_adjust_cfa_offset -8\n"                               \
    "movl $" #savemask ", %esi\n"                                          \
    NP_SIGSETJMP_REAL                                                      \
    ".cfi_endproc\n.size " name ", . - " name "\n"
#if defined(NP_INTERPOSE_NEXT)
/* __sigsetjmp(env, savemask): both arguments kept across the note (and
 * the stack aligned for the call) */
#define NP_SIGSETJMP                                                        \
    ".globl __sigsetjmp\n.type __sigsetjmp, @function\n__sigsetjmp:\n"    \
    ".cfi_startproc\n"                                                     \
    "pushq %rdi\n.cfi_adjust_cfa_offset 8\n"                               \
    "pushq %rsi\n.cfi_adjust_cfa_offset 8\n"                               \
    "subq $8, %rsp\n.cfi_adjust_cfa_offset 8\n"                            \
    "call np_setjmp_note\n"                                                \
    "addq $8, %rsp\n.cfi_adjust_cfa_offset -8\n"                           \
    "popq %rsi\n.cfi_adjust_cfa_offset -8\n"                               \
    "popq %rdi\n.cfi_adjust_cfa_offset -8\n"                               \
    "jmp *np_real_sigsetjmp(%rip)\n"                                       \
    ".cfi_endproc\n.size __sigsetjmp, . - __sigsetjmp\n"
#endif
#elif defined(__aarch64__)
#define NP_SETJMP(name, savemask)                                           \
    ".globl " name "\n.type " name ", %function\n" name ":\n"             \
    ".cfi_startproc\n"                                                     \
    "stp x29, x30, [sp, #-32]!\n.cfi_def_cfa_offset 32\n"                  \
    ".cfi_offset 29, -32\n.cfi_offset 30, -24\n"                           \
    "mov x29, sp\n"                                                        \
    "str x0, [sp, #16]\n"                                                  \
    "bl np_setjmp_note\n"                                                  \
    "ldr x0, [sp, #16]\n"                                                  \
    "ldp x29, x30, [sp], #32\n.cfi_def_cfa_offset 0\n"                     \
    "mov w1, #" #savemask "\n"                                             \
    "b __sigsetjmp\n"                                                      \
    ".cfi_endproc\n.size " name ", . - " name "\n"
#endif

#if !defined(NP_SIGSETJMP)
#define NP_SIGSETJMP ""
#endif

__asm__(".text\n"
        NP_SETJMP("setjmp", 1)
        NP_SETJMP("_setjmp", 0)
        NP_SIGSETJMP);

/* The C library's longjmp: found at the first setjmp (dlsym in a dynamic
 * executable, which also finds a sanitizer's interceptor); a fully static
 * executable has no dynamic symbols, and there __longjmp_chk, the one other
 * public longjmp, does the jump (a static library does not define it). */
typedef void (*jmp_fn)(void *, int) __attribute__((noreturn));
extern void __longjmp_chk(void *env, int val) __attribute__((noreturn));
static jmp_fn real_longjmp;
#if defined(NP_INTERPOSE_NEXT)
static jmp_fn real_longjmp_chk;
/* the C library's __sigsetjmp, for the assembly above */
__attribute__((visibility("hidden"))) void *np_real_sigsetjmp;
#endif

static jmp_fn find_longjmp(void)
{
    jmp_fn f = __atomic_load_n(&real_longjmp, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (jmp_fn)dlsym(RTLD_NEXT, "siglongjmp");
#if defined(NP_INTERPOSE_NEXT)
        /* all three are there in any dynamic executable */
        __atomic_store_n(&real_longjmp_chk, (jmp_fn)dlsym(RTLD_NEXT, "__longjmp_chk"), __ATOMIC_RELEASE);
        __atomic_store_n(&np_real_sigsetjmp, dlsym(RTLD_NEXT, "__sigsetjmp"), __ATOMIC_RELEASE);
#else
        if (!f)
            f = __longjmp_chk;
#endif
        __atomic_store_n(&real_longjmp, f, __ATOMIC_RELEASE);
    }
    return f;
}

static struct np_jmp_mark *mark_for(struct np_thread *t, const void *env, int make)
{
    for (int i = 0; i < NP_JMP_MARKS; i++)
        if (t->marks[i].env == env)
            return &t->marks[i];
    if (!make)
        return NULL;
    struct np_jmp_mark *m = &t->marks[t->next_mark];
    t->next_mark = (t->next_mark + 1) % NP_JMP_MARKS;
    m->env = env;
    return m;
}

/* Called by the assembly in front of setjmp and _setjmp. */
__attribute__((visibility("hidden"))) void np_setjmp_note(const void *env)
{
    struct np_thread *t = np_cur;
    /* Find the real longjmp now, not at the first longjmp, which may run in
     * a signal handler where dlsym is not safe. */
    (void)find_longjmp();
    np_mcount_setjmp(env);
    if ((t->flags & NP_F_REC_ON) && !(t->flags & NP_F_BUSY)) {
        /* the recorder notes it in the thread's stream (record.c) */
        t->flags |= NP_F_BUSY;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        np_rec_jump_hook(t, NP_RAW_SETJMP, env);
        np_thread_unlock(t);
    }
    if ((t->flags & (NP_F_CT_INIT | NP_F_COST_INIT)) && !(t->flags & NP_F_BUSY)) {
        struct np_jmp_mark *m = mark_for(t, env, 1);
        m->ct_top = np_ct_top(&t->ct);
        m->ct_overflow = t->ct.overflow;
        m->ct_depth = t->ct.depth;
        m->cost_depth = np_cost_depth(&t->cost);
        m->cost_lost_open = t->cost.lost_open;
    }
}

static void unwind_to(struct np_thread *t, const struct np_jmp_mark *m, int from_hook)
{
    struct np_calltrace_state *c = &t->ct;
    if (t->flags & NP_F_CT_INIT) {
        if (c->mode == NP_CALLTRACE_LOG) {
            if (c->depth > m->ct_depth)
                c->depth = m->ct_depth;
        } else if ((uint64_t)np_ct_top(c) + c->overflow > (uint64_t)m->ct_top + m->ct_overflow) {
            uint64_t k = (uint64_t)np_ct_top(c) + c->overflow - m->ct_top - m->ct_overflow;
            uint64_t r = k < c->overflow ? k : c->overflow;
            c->overflow -= (uint32_t)r;
            c->pos -= (uint32_t)(k - r);
        }
    }
    if (t->flags & NP_F_COST_INIT)
        np_cost_unwind(t, m->cost_depth, m->cost_lost_open, from_hook);
}

static void note_longjmp(const void *env)
{
    np_mcount_longjmp(env);
    struct np_thread *t = np_cur;
    if (t == NP_UNATTACHED)
        return;
    if (t->flags & NP_F_REC_ON) {
        /* also from inside a hook: the recorder's append is complete or
         * not begun, since the busy flag keeps signal handlers out of it */
        uint32_t busy = t->flags & NP_F_BUSY;
        t->flags |= NP_F_BUSY;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        np_rec_jump_hook(t, NP_RAW_LONGJMP, env);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->flags = (t->flags & ~NP_F_BUSY) | busy;
    }
    struct np_jmp_mark *m = mark_for(t, env, 0);
    if (!m)
        return;
    /* Marks are only made outside hooks, so a thread that is busy now is
     * jumping out of a hook (from a user hook, or a signal handler that
     * interrupted one): that hook is abandoned, and so is its busy flag. */
    int from_hook = (t->flags & NP_F_BUSY) != 0;
    t->flags |= NP_F_BUSY;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    unwind_to(t, m, from_hook);
    np_thread_unlock(t);
}

static __attribute__((noreturn)) void jump(void *env, int val)
{
    note_longjmp(env);
    find_longjmp()(env, val);
}

NP_HOOK __attribute__((noreturn)) void longjmp(void *env, int val) { jump(env, val); }
NP_HOOK __attribute__((noreturn)) void _longjmp(void *env, int val) { jump(env, val); }
NP_HOOK __attribute__((noreturn)) void siglongjmp(void *env, int val) { jump(env, val); }

#if defined(NP_INTERPOSE_NEXT)
/* _FORTIFY_SOURCE's longjmp: the same, then the C library's own check
 * (that the jump does not go up the stack) and jump. */
NP_HOOK __attribute__((noreturn)) void __longjmp_chk(void *env, int val)
{
    note_longjmp(env);
    (void)find_longjmp();
    __atomic_load_n(&real_longjmp_chk, __ATOMIC_ACQUIRE)(env, val);
}
#endif

#endif
