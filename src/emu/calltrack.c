/* calltrack.c - calls, returns and jumps from the PC writes of emulated
 * firmware (calltrack.h says the rules). */
#include "calltrack.h"

#include <stdlib.h>
#include <string.h>

struct frame {
    uint32_t fn;       /* the function called (bit 0 clear) */
    uint32_t ret;      /* where its return goes (bit 0 clear) */
    uint32_t sp;       /* the stack pointer when it was called */
    uint8_t exc;       /* an exception's call: ends with an exception return */
    uint8_t told;      /* its entry was told (not while it may still be a veneer) */
    uint8_t maybe_jump; /* a Thumb bl inside one function: a long jump, unless
                           it landed on a `bx rN` that jumps on to a function */
    uint8_t sp_exact;  /* a Cortex-M exception's: sp is the one its return restores */
    uint64_t cycles, insns;
};

struct thread {
    uint32_t tid;
    struct frame *frames;
    uint32_t (*args)[4]; /* with options.keep_args: r0-r3 at each open call, beside frames */
    uint32_t n, cap;
    uint32_t nexc;     /* exception calls open */
    uint64_t deep;     /* calls open beyond NP_CALLTRACK_MAX_DEPTH */
    uint32_t sp_hi;    /* the highest stack pointer seen outside exceptions */
    bool sp_known;
    uint64_t out_cycles, out_insns; /* when it was switched out */
    uint32_t *rets;    /* its open calls' return addresses counted by ret_slot,
                          from NP_CALLTRACK_RETS_FROM open calls on; else NULL */
};

/* A return that matches no open call is a jump, and the thread's whole
 * stack is searched to know it: a deep stack (recursion, or calls whose
 * returns went unseen) would make every such jump cost its depth. From
 * NP_CALLTRACK_RETS_FROM open calls on, a thread counts its calls' return
 * addresses by hash: an address none has is known at once. */
#define NP_CALLTRACK_RET_SLOTS 1024u
#define NP_CALLTRACK_RETS_FROM 64u

static inline uint32_t ret_slot(uint32_t ret)
{
    return (ret >> 1) * 2654435761u >> 22; /* Fibonacci hashing: 10 bits */
}

#define NP_CALLTRACK_FUNC_CACHE 4096

struct func_slot {
    uint32_t addr;     /* bit 0 set: empty */
    uint32_t start;
};

struct np_calltrack {
    struct func_slot funcs_cache[NP_CALLTRACK_FUNC_CACHE];
    struct np_calltrack_out out;
    struct np_calltrack_funcs funcs;
    struct np_calltrack_options opt;
    struct thread *threads;
    uint32_t nthreads, cap;
    uint32_t cur;      /* index of the running thread */
    bool started;
    int status;        /* an output callback's non-zero return */
    struct np_calltrack_stats stats;
    const uint32_t *telling; /* r0-r3 of the call whose entry is being told (keep_args) */
};

/* The start of the function holding ADDR (0: none, or no functions
 * known), through a cache: the tracker asks of the same few addresses at
 * every call, and the lookup behind it is a search of the symbols. */
static __attribute__((noinline)) uint32_t func_of_missed(struct np_calltrack *t, struct func_slot *s, uint32_t addr)
{
    s->addr = addr;
    s->start = t->funcs.func_of ? t->funcs.func_of(t->funcs.ctx, addr) : 0;
    return s->start;
}

static inline uint32_t func_of(struct np_calltrack *t, uint32_t addr)
{
    struct func_slot *s = &t->funcs_cache[(addr >> 1) & (NP_CALLTRACK_FUNC_CACHE - 1)];
    return s->addr == addr ? s->start : func_of_missed(t, s, addr);
}

/* Whether ADDR starts a function (every address does when no functions
 * are known). */
static bool func_start(struct np_calltrack *t, uint32_t addr)
{
    return !t->funcs.func_of || func_of(t, addr) == addr;
}

static bool is_return_form(uint8_t kind)
{
    return kind == NP_BR_BX || kind == NP_BR_MOV_PC || kind == NP_BR_LDR_PC || kind == NP_BR_LDM_PC ||
           kind == NP_BR_EXC_RETURN;
}

static int put(struct np_calltrack *t, int rc)
{
    if (rc && !t->status)
        t->status = rc;
    return rc;
}

static struct thread *running(struct np_calltrack *t)
{
    return &t->threads[t->cur];
}

static struct thread *add_thread(struct np_calltrack *t)
{
    if (t->nthreads == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 4;
        struct thread *a = realloc(t->threads, cap * sizeof *a);
        if (!a)
            return NULL;
        t->threads = a;
        t->cap = cap;
    }
    struct thread *th = &t->threads[t->nthreads];
    memset(th, 0, sizeof *th);
    th->tid = ++t->nthreads;
    t->stats.threads = t->nthreads;
    return th;
}

static void tell_thread(struct np_calltrack *t, struct thread *th, struct np_cpu *cpu, uint32_t entry)
{
    const char *name = th->tid == 1 ? "main" : NULL;
    /* the RTOS kernel's name of its task: the kernel has made it the
     * current one before returning into it */
    if (!name && t->funcs.thread_name)
        name = t->funcs.thread_name(t->funcs.thread_ctx, cpu);
    if (!name && entry && t->funcs.name_of)
        name = t->funcs.name_of(t->funcs.ctx, entry);
    if (t->out.thread)
        put(t, t->out.thread(t->out.ctx, th->tid, name));
}

static void tell_enter(struct np_calltrack *t, struct thread *th, struct frame *f)
{
    f->told = 1;
    t->telling = th->args ? th->args[f - th->frames] : NULL;
    if (t->out.enter)
        put(t, t->out.enter(t->out.ctx, th->tid, f->cycles, f->insns, f->fn));
    t->telling = NULL;
}

const uint32_t *np_calltrack_entry_args(const struct np_calltrack *t)
{
    return t->telling;
}

/* The innermost call's entry, unless it was told already. */
static void settle(struct np_calltrack *t, struct thread *th)
{
    if (th->n && !th->frames[th->n - 1].told)
        tell_enter(t, th, &th->frames[th->n - 1]);
}

static void push(struct np_calltrack *t, struct thread *th, const struct np_cpu *cpu, uint32_t fn, uint32_t ret,
                 bool exc)
{
    settle(t, th);
    t->stats.calls++;
    if (th->n == NP_CALLTRACK_MAX_DEPTH || th->deep) {
        th->deep++;
        t->stats.too_deep++;
        return;
    }
    if (th->n == th->cap) {
        uint32_t cap = th->cap ? 2 * th->cap : 64;
        struct frame *a = realloc(th->frames, cap * sizeof *a);
        uint32_t(*r)[4] = a && t->opt.keep_args ? realloc(th->args, cap * sizeof *r) : NULL;
        if (a)
            th->frames = a;
        if (r)
            th->args = r;
        if (!a || (t->opt.keep_args && !r)) {
            th->deep++;
            t->stats.too_deep++;
            return;
        }
        th->cap = cap;
    }
    struct frame *f = &th->frames[th->n++];
    f->fn = fn & ~1u;
    f->ret = ret & ~1u;
    if (th->rets) {
        th->rets[ret_slot(f->ret)]++;
    } else if (th->n >= NP_CALLTRACK_RETS_FROM && (th->rets = calloc(NP_CALLTRACK_RET_SLOTS, sizeof *th->rets))) {
        for (uint32_t i = 0; i < th->n; i++)
            th->rets[ret_slot(th->frames[i].ret)]++;
    }
    f->sp = cpu->r[13];
    f->exc = exc;
    f->told = 0;
    f->maybe_jump = 0;
    f->sp_exact = 0;
    f->cycles = cpu->cycles;
    f->insns = cpu->insns;
    if (th->args)
        memcpy(th->args[th->n - 1], cpu->r, sizeof th->args[0]);
    if (exc)
        th->nexc++;
    else if (!th->nexc && (!th->sp_known || cpu->r[13] > th->sp_hi)) {
        th->sp_hi = cpu->r[13];
        th->sp_known = true;
    }
}

/* Closes the calls of TH from index K up. One of them returned, the
 * others missed their return and are re-synchronised: the innermost when
 * INNERMOST (it ran the return instruction: it returned past its caller),
 * else call K (the return went to its caller: the calls above it ended
 * some way no return showed). */
static void pop_to(struct np_calltrack *t, struct thread *th, uint32_t k, bool innermost, const struct np_cpu *cpu)
{
    settle(t, th);
    uint32_t skipped = th->n - 1 - k;
    for (uint32_t i = k; i < th->n; i++) {
        if (th->frames[i].exc)
            th->nexc--;
        if (th->rets)
            th->rets[ret_slot(th->frames[i].ret)]--;
    }
    th->n = k;
    t->stats.returns++;
    t->stats.resynced += skipped;
    if (innermost && t->out.exit)
        put(t, t->out.exit(t->out.ctx, th->tid, cpu->cycles, cpu->insns));
    if (skipped && t->out.resync)
        put(t, t->out.resync(t->out.ctx, th->tid, cpu->cycles, cpu->insns, skipped));
    if (!innermost && t->out.exit)
        put(t, t->out.exit(t->out.ctx, th->tid, cpu->cycles, cpu->insns));
}

/* Whether the return instruction at FROM is the innermost call's own. */
static bool from_innermost(struct np_calltrack *t, const struct thread *th, uint32_t from)
{
    if (!th->n)
        return false;
    uint32_t fn = func_of(t, from);
    return fn && fn == th->frames[th->n - 1].fn;
}

/* Whether stack pointer SP is back where it was, at CALL_SP. */
static bool near(uint32_t sp, uint32_t call_sp)
{
    return (uint32_t)(sp - call_sp + NP_CALLTRACK_SP_SLACK) <= 2 * NP_CALLTRACK_SP_SLACK;
}

/* The open call of TH a return to TO with the stack at SP ends: its
 * index, or -1. EXACT: the stack pointer must be back where it was. */
static int64_t match(const struct thread *th, uint32_t to, uint32_t sp, bool exact)
{
    if (th->rets && !th->rets[ret_slot(to)])
        return -1;
    for (uint32_t i = th->n; i-- > 0;) {
        const struct frame *f = &th->frames[i];
        if (f->ret != to)
            continue;
        if (!exact || near(sp, f->sp))
            return i;
    }
    return -1;
}

/* Another thread whose innermost open call a return to TO ends. */
static int64_t match_suspended(const struct np_calltrack *t, uint32_t to, uint32_t sp, bool exact)
{
    for (uint32_t i = 0; i < t->nthreads; i++) {
        const struct thread *th = &t->threads[i];
        if (i == t->cur || !th->n)
            continue;
        const struct frame *f = &th->frames[th->n - 1];
        if (f->ret == to && (!exact || near(sp, f->sp)))
            return i;
    }
    return -1;
}

static void switch_to(struct np_calltrack *t, uint32_t next, const struct np_cpu *cpu)
{
    struct thread *from = running(t);
    settle(t, from);
    from->out_cycles = cpu->cycles;
    from->out_insns = cpu->insns;
    t->cur = next;
    t->stats.switches++;
    struct thread *to = running(t);
    if (t->out.resume)
        put(t, t->out.resume(t->out.ctx, to->tid, cpu->cycles, cpu->insns, to->out_cycles, to->out_insns));
}

/* Whether the stack pointer has left the running thread's stack. */
static bool left_stack(const struct thread *th, uint32_t sp)
{
    if (th->nexc)
        return false;
    if (th->n && sp + NP_CALLTRACK_SP_SLACK < th->frames[th->n - 1].sp)
        return true;
    return th->sp_known && sp > th->sp_hi + NP_CALLTRACK_SP_SLACK;
}

static void new_thread(struct np_calltrack *t, struct np_cpu *cpu, uint32_t to)
{
    struct thread *from = running(t);
    if (t->nthreads >= NP_CALLTRACK_MAX_THREADS) {
        t->stats.thread_limit = true;
        np_cpu_halt(cpu);
        return;
    }
    settle(t, from);
    from->out_cycles = cpu->cycles;
    from->out_insns = cpu->insns;
    struct thread *th = add_thread(t);
    if (!th) {
        put(t, -1);
        return;
    }
    t->cur = th->tid - 1;
    t->stats.switches++;
    uint32_t fn = func_of(t, to);
    tell_thread(t, th, cpu, fn == to ? to : 0);
    th->sp_hi = cpu->r[13];
    th->sp_known = true;
    if (fn == to) {
        /* its first call: the function it lands in; nothing returns to 0 */
        push(t, th, cpu, to, 0, false);
    }
}

/* A return-form PC write: a return, a thread switch or a jump. */
static void leave(struct np_calltrack *t, struct np_cpu *cpu, const struct np_branch *b)
{
    struct thread *th = running(t);
    uint32_t to = b->to, sp = cpu->r[13];
    bool switch_fn = t->opt.switch_fn != 0;
    bool from_switch = switch_fn && th->n && th->frames[th->n - 1].fn == t->opt.switch_fn;
    int64_t k;

    if (from_switch) {
        /* the named context switch: its own thread's return, or another's */
        if (th->frames[th->n - 1].ret == to && near(sp, th->frames[th->n - 1].sp)) {
            pop_to(t, th, th->n - 1, true, cpu);
            return;
        }
        if ((k = match_suspended(t, to, sp, true)) >= 0 || (k = match_suspended(t, to, sp, false)) >= 0) {
            switch_to(t, (uint32_t)k, cpu);
            pop_to(t, running(t), running(t)->n - 1, true, cpu);
        } else {
            new_thread(t, cpu, to);
        }
        return;
    }
    if ((k = match(th, to, sp, true)) >= 0) {
        /* the common case, the innermost call's return, asks nothing more */
        pop_to(t, th, (uint32_t)k, (uint32_t)k + 1 == th->n || from_innermost(t, th, b->from), cpu);
        return;
    }
    bool innermost = from_innermost(t, th, b->from);
    if (!switch_fn && (k = match_suspended(t, to, sp, true)) >= 0) {
        switch_to(t, (uint32_t)k, cpu);
        pop_to(t, running(t), running(t)->n - 1, true, cpu);
        return;
    }
    if (th->deep) {
        /* the return of a call too deep to keep */
        th->deep--;
        t->stats.returns++;
        return;
    }
    if ((k = match(th, to, sp, false)) >= 0) {
        pop_to(t, th, (uint32_t)k, innermost, cpu);
        return;
    }
    if (!switch_fn && left_stack(th, sp)) {
        if ((k = match_suspended(t, to, sp, false)) >= 0) {
            switch_to(t, (uint32_t)k, cpu);
            pop_to(t, running(t), running(t)->n - 1, true, cpu);
            return;
        }
        /* a thread's first run lands at a function's start; anything else
         * is a jump (a jump table in a function with a big frame) */
        if (func_of(t, to) == to) {
            new_thread(t, cpu, to);
            return;
        }
    }
    /* A longjmp: the innermost call returns into the middle of a caller
     * whose stack pointer is back: the calls made from at or below it
     * end (a tail call lands on a function start instead) */
    if (innermost && th->frames[th->n - 1].sp < sp && !th->frames[th->n - 1].exc &&
        func_of(t, to) != to) {
        uint32_t m = th->n - 1;
        while (m > 0 && !th->frames[m - 1].exc && th->frames[m - 1].sp <= sp)
            m--;
        pop_to(t, th, m, true, cpu);
        return;
    }
    t->stats.jumps++;
}

/* An exception return: ends the innermost exception's call (with the
 * calls opened inside it), or resumes the thread it returns to. */
/* Whether exception call F is the one exception return B ends: where it
 * goes, and on a Cortex-M the stack it restores (two threads may have
 * been interrupted at one address). */
static bool returns_to(const struct frame *f, const struct np_branch *b, const struct np_cpu *cpu)
{
    return f->ret == b->to && (!f->sp_exact || f->sp == cpu->r[13]);
}

static void exception_return(struct np_calltrack *t, struct np_cpu *cpu, const struct np_branch *b)
{
    struct thread *th = running(t);
    uint32_t i = th->nexc ? th->n : 0; /* (none open: no search of a deep stack) */
    while (i > 0 && !th->frames[i - 1].exc)
        i--;
    bool innermost = from_innermost(t, th, b->from);
    if (i > 0 && returns_to(&th->frames[i - 1], b, cpu)) {
        pop_to(t, th, i - 1, innermost, cpu);
        return;
    }
    /* a scheduler switching threads in its handler */
    for (uint32_t j = 0; j < t->nthreads; j++) {
        struct thread *o = &t->threads[j];
        if (j == t->cur || !o->nexc)
            continue;
        uint32_t m = o->n;
        while (m > 0 && !o->frames[m - 1].exc)
            m--;
        if (m > 0 && returns_to(&o->frames[m - 1], b, cpu)) {
            switch_to(t, j, cpu);
            pop_to(t, o, m - 1, false, cpu);
            return;
        }
    }
    if (i > 0) {
        uint32_t fn = func_of(t, b->to);
        if (fn == b->to && th->frames[i - 1].ret != b->to && t->nthreads >= 1 && !t->opt.switch_fn) {
            /* into a function start no interrupted code was at: a thread's
             * first run, its stack made up by the scheduler */
            new_thread(t, cpu, b->to);
            return;
        }
        pop_to(t, th, i - 1, innermost, cpu);
        return;
    }
    leave(t, cpu, b);
}

void np_calltrack_branch(void *tracker, struct np_cpu *cpu, const struct np_branch *b)
{
    struct np_calltrack *t = tracker;
    if (!t->started) {
        t->started = true;
        if (!add_thread(t)) {
            put(t, -1);
            np_cpu_halt(cpu);
            return;
        }
        t->cur = 0;
        tell_thread(t, running(t), cpu, 0);
    }
    struct thread *th = running(t);

    /* the innermost call's return, the most common PC write there is,
     * decided before anything else */
    if (__builtin_expect(th->n != 0 && !th->deep, 1) && is_return_form(b->kind) && b->kind != NP_BR_EXC_RETURN &&
        !(b->flags & NP_BRF_LINKED) && !t->opt.switch_fn) {
        struct frame *f = &th->frames[th->n - 1];
        if (f->ret == b->to && near(cpu->r[13], f->sp) && !f->maybe_jump) {
            if (!f->told)
                tell_enter(t, th, f);
            th->n--;
            th->nexc -= f->exc;
            if (th->rets)
                th->rets[ret_slot(f->ret)]--;
            t->stats.returns++;
            if (t->out.exit)
                put(t, t->out.exit(t->out.ctx, th->tid, cpu->cycles, cpu->insns));
            goto out;
        }
    }

    if (th->n && !th->frames[th->n - 1].told) {
        struct frame *f = &th->frames[th->n - 1];
        if (b->kind != NP_BR_EXCEPTION && b->kind != NP_BR_EXC_RETURN && b->kind != NP_BR_BL &&
            b->kind != NP_BR_BLX_REG && !(b->flags & NP_BRF_LINKED) && b->to != f->ret &&
            b->from - f->fn < NP_CALLTRACK_VENEER_BYTES && cpu->insns - f->insns <= NP_CALLTRACK_VENEER_INSNS &&
            cpu->r[13] == f->sp &&
            ((!f->maybe_jump && b->to - f->fn < NP_CALLTRACK_VENEER_BYTES) || func_start(t, b->to))) {
            /* a veneer or a vector: the call is of where it jumps (a
             * function that returns at once is not one, nor one that
             * moves the stack: a context switch) */
            f->fn = b->to;
            f->maybe_jump = 0;
            t->stats.veneers++;
            goto out;
        }
        if (f->maybe_jump) {
            /* it was a long jump after all */
            th->n--;
            if (th->rets)
                th->rets[ret_slot(f->ret)]--;
            t->stats.calls--;
            t->stats.long_jumps++;
            t->stats.jumps++;
        } else {
            tell_enter(t, th, f);
        }
    }

    switch (b->kind) {
    case NP_BR_EXCEPTION: {
        t->stats.exceptions++;
        /* where its return goes: the interrupted instruction, or the one
         * after the svc / undefined instruction that raised it */
        uint32_t ret = b->from;
        if (!(b->flags & NP_BRF_EXC_M) && (b->vector == NP_VEC_SWI || b->vector == NP_VEC_UNDEF))
            ret += (b->flags & NP_BRF_FROM_THUMB) ? 2 : 4;
        push(t, th, cpu, b->to, ret, true);
        if ((b->flags & NP_BRF_EXC_M) && th->n && !th->deep) {
            th->frames[th->n - 1].sp = b->sp;
            th->frames[th->n - 1].sp_exact = 1;
        }
        break;
    }
    case NP_BR_EXC_RETURN:
        exception_return(t, cpu, b);
        break;
    case NP_BR_BL:
        /* a long jump is a Thumb idiom (its b reaches 2 KiB only) */
        if (b->flags & NP_BRF_FROM_THUMB) {
            uint32_t fn_to = func_of(t, b->to);
            if (fn_to != b->to && fn_to && fn_to == func_of(t, b->from)) {
                /* decided at the next PC write: a jump, or a call through
                 * GCC's `bx r3` placed after the function's code */
                push(t, th, cpu, b->to, cpu->r[14], false);
                if (th->n && th->frames[th->n - 1].fn == b->to && !th->deep)
                    th->frames[th->n - 1].maybe_jump = 1;
                break;
            }
        }
        push(t, th, cpu, b->to, cpu->r[14], false);
        break;
    case NP_BR_BLX_REG:
        push(t, th, cpu, b->to, cpu->r[14], false);
        break;
    case NP_BR_B:
    case NP_BR_DP_PC:
        if ((b->flags & NP_BRF_LINKED) && b->kind == NP_BR_DP_PC)
            push(t, th, cpu, b->to, cpu->r[14], false);
        else
            t->stats.jumps++;
        break;
    default:
        if (b->flags & NP_BRF_LINKED)
            push(t, th, cpu, b->to, cpu->r[14], false);
        else if (is_return_form(b->kind))
            leave(t, cpu, b);
        else
            t->stats.jumps++;
        break;
    }
out:
    if (t->status)
        np_cpu_halt(cpu);
}

struct np_calltrack *np_calltrack_new(const struct np_calltrack_out *out, const struct np_calltrack_funcs *funcs,
                                      const struct np_calltrack_options *opt)
{
    struct np_calltrack *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->out = *out;
    if (funcs)
        t->funcs = *funcs;
    for (unsigned i = 0; i < NP_CALLTRACK_FUNC_CACHE; i++)
        t->funcs_cache[i].addr = 1;
    if (opt)
        t->opt = *opt;
    t->opt.switch_fn &= ~1u;
    return t;
}

int np_calltrack_finish(struct np_calltrack *t, const struct np_cpu *cpu)
{
    (void)cpu;
    if (t->started)
        settle(t, running(t));
    return t->status;
}

int np_calltrack_status(const struct np_calltrack *t)
{
    return t->status;
}

bool np_calltrack_in_exception(const struct np_calltrack *t)
{
    if (!t->started)
        return false;
    const struct thread *th = &t->threads[t->cur];
    return th->n && !th->deep && th->frames[th->n - 1].exc;
}

const struct np_calltrack_stats *np_calltrack_stats(const struct np_calltrack *t)
{
    return &t->stats;
}

void np_calltrack_free(struct np_calltrack *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        free(t->threads[i].frames);
        free(t->threads[i].args);
        free(t->threads[i].rets);
    }
    free(t->threads);
    free(t);
}
