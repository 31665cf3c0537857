/* setjmp.c - keeps the call trace and cost records right across longjmp.
 *
 * A longjmp leaves every call between it and its setjmp without an exit
 * hook. The runtime stands in front of the C library's setjmp and longjmp
 * (by symbol interposition: these definitions come before libc's): at
 * setjmp it notes, per thread, how deep each mechanism is; at longjmp it
 * cuts each mechanism back to that depth (and tells the cost summary, with
 * an UNWIND record, which calls ended there), then calls the real longjmp.
 * The setjmp side is a few instructions of assembly (below), since setjmp
 * returns twice and cannot be wrapped in C: it notes the depths, then jumps
 * to the real setjmp with the caller's stack as it was, so the real one
 * saves the right frame. Where no assembly exists for the CPU, nothing is
 * interposed and docs/instrumenting.md says what that means. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "cost_hot.h"
#include "hooks.h"

#if defined(NP_INTERPOSE_SETJMP)

/* hooks.c refers to this, so linking a static library that provides the
 * hooks always brings these definitions along, even when another library
 * (a sanitizer runtime) named first also defines setjmp. */
const char np_setjmp_linked = 1;

/* NP_SETJMP(name, which): call np_setjmp_note(env, which), then tail-jump
 * to the real function it returns, arguments and stack untouched. */
#if defined(__x86_64__)
#define NP_SETJMP(name, which)                                              \
    ".globl " name "\n.type " name ", @function\n" name ":\n"             \
    ".cfi_startproc\n"                                                     \
    "pushq %rdi\n.cfi_adjust_cfa_offset 8\n"                               \
    "pushq %rsi\n.cfi_adjust_cfa_offset 8\n"                               \
    "subq $8, %rsp\n.cfi_adjust_cfa_offset 8\n"                            \
    "movl $" #which ", %esi\n"                                             \
    "call np_setjmp_note\n"                                                \
    "addq $8, %rsp\n.cfi_adjust_cfa_offset -8\n"                           \
    "popq %rsi\n.cfi_adjust_cfa_offset -8\n"                               \
    "popq %rdi\n.cfi_adjust_cfa_offset -8\n"                               \
    "jmp *%rax\n"                                                          \
    ".cfi_endproc\n.size " name ", . - " name "\n"
#elif defined(__aarch64__)
#define NP_SETJMP(name, which)                                              \
    ".globl " name "\n.type " name ", %function\n" name ":\n"             \
    ".cfi_startproc\n"                                                     \
    "stp x29, x30, [sp, #-32]!\n.cfi_def_cfa_offset 32\n"                  \
    ".cfi_offset 29, -32\n.cfi_offset 30, -24\n"                           \
    "mov x29, sp\n"                                                        \
    "stp x0, x1, [sp, #16]\n"                                              \
    "mov w1, #" #which "\n"                                                \
    "bl np_setjmp_note\n"                                                  \
    "mov x16, x0\n"                                                        \
    "ldp x0, x1, [sp, #16]\n"                                              \
    "ldp x29, x30, [sp], #32\n.cfi_def_cfa_offset 0\n"                     \
    "br x16\n"                                                             \
    ".cfi_endproc\n.size " name ", . - " name "\n"
#endif

__asm__(".text\n"
        NP_SETJMP("setjmp", 0)
        NP_SETJMP("_setjmp", 1)
        NP_SETJMP("__sigsetjmp", 2));

enum { J_SETJMP, J__SETJMP, J___SIGSETJMP, J_LONGJMP, J__LONGJMP, J_SIGLONGJMP, J___LONGJMP_CHK, J_COUNT };
static const char *const jmp_names[J_COUNT] = {
    "setjmp", "_setjmp", "__sigsetjmp", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"
};
static void *real[J_COUNT];

__attribute__((constructor)) static void resolve_real(void)
{
    for (int i = 0; i < J_COUNT; i++)
        if (!real[i])
            real[i] = dlsym(RTLD_NEXT, jmp_names[i]);
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

/* Called by the assembly in front of each setjmp; returns the real one. */
__attribute__((visibility("hidden"))) void *np_setjmp_note(const void *env, int which)
{
    struct np_thread *t = np_cur;
    if (!real[which])
        resolve_real();
    if (t && (t->flags & (NP_F_CT_INIT | NP_F_COST_INIT)) && !(t->flags & NP_F_BUSY)) {
        struct np_jmp_mark *m = mark_for(t, env, 1);
        m->ct_top = t->ct.top;
        m->ct_overflow = t->ct.overflow;
        m->ct_depth = t->ct.depth;
        m->cost_pending = t->cost.open_pending;
        m->cost_lost_open = t->cost.lost_open;
    }
    return real[which];
}

static void unwind_to(struct np_thread *t, const struct np_jmp_mark *m)
{
    struct np_calltrace_state *c = &t->ct;
    if (t->flags & NP_F_CT_INIT) {
        if (c->mode == NP_CALLTRACE_LOG) {
            if (c->depth > m->ct_depth)
                c->depth = m->ct_depth;
        } else if ((uint64_t)c->top + c->overflow > (uint64_t)m->ct_top + m->ct_overflow) {
            uint64_t k = (uint64_t)c->top + c->overflow - m->ct_top - m->ct_overflow;
            uint64_t r = k < c->overflow ? k : c->overflow;
            c->overflow -= (uint32_t)r;
            c->top -= (uint32_t)(k - r);
        }
    }
    struct np_cost_state *s = &t->cost;
    if ((t->flags & NP_F_COST_INIT) &&
        s->open_pending + s->lost_open > (uint64_t)m->cost_pending + m->cost_lost_open) {
        uint64_t k = s->open_pending + s->lost_open - m->cost_pending - m->cost_lost_open;
        uint64_t r = k < s->lost_open ? k : s->lost_open;
        s->lost_open -= r;
        k -= r;
        if (k) { /* one record replaces the k exits reserved for it */
            uint64_t now = np_thread_time(t);
            s->open_pending -= (uint32_t)k;
            np_cost_record *rec = &s->buf[s->n++];
            rec->w0 = NP_COST_UNWIND | s->open_pending;
            rec->w1 = now;
        }
    }
}

static void note_longjmp(const void *env)
{
    struct np_thread *t = np_cur;
    if (!t || !np_thread_lock(t))
        return;
    struct np_jmp_mark *m = mark_for(t, env, 0);
    if (m)
        unwind_to(t, m);
    np_thread_unlock(t);
}

typedef void (*jmp_fn)(void *, int) __attribute__((noreturn));

static __attribute__((noreturn)) void jump(int which, void *env, int val)
{
    note_longjmp(env);
    if (!real[which])
        resolve_real();
    ((jmp_fn)real[which])(env, val);
}

NP_HOOK __attribute__((noreturn)) void longjmp(void *env, int val) { jump(J_LONGJMP, env, val); }
NP_HOOK __attribute__((noreturn)) void _longjmp(void *env, int val) { jump(J__LONGJMP, env, val); }
NP_HOOK __attribute__((noreturn)) void siglongjmp(void *env, int val) { jump(J_SIGLONGJMP, env, val); }
NP_HOOK __attribute__((noreturn)) void __longjmp_chk(void *env, int val) { jump(J___LONGJMP_CHK, env, val); }

#endif
