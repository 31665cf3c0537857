/* pg_exits.c - the exits of calls made by code built with -pg alone on a
 * target (NP_PG_EXITS): -pg's hook runs at each function's entry only.
 * The port's hook (np_port_calls_start) finds where the function keeps
 * its return address (its SLOT) and hands it here; the entry is kept on a
 * return stack with that address, and the port puts the address of its
 * trampoline in the slot. The function then returns to the trampoline,
 * which asks here where to go: the exit is told, and the trampoline
 * returns there.
 *
 * Code in thread mode keeps its calls on its thread's return stack (an
 * RTOS's tasks each have their own stack and np_thread); interrupt
 * handlers, which nest on one stack, on one of their own. The events go
 * to the thread in use, as -finstrument-functions' do.
 *
 * A slot at or below a new call's has no living function (a frame left by
 * a longjmp, whose target is above): those calls are closed first. A
 * return closes every call whose slot is below the stack pointer the
 * return left: the one whose slot is highest is the one returning; the
 * others were left by a jump. A tail call (the function's return address
 * is the trampoline already) is its caller's child, and both close at the
 * return. */
#include "hooks.h"

#if !NP_PORT_HOSTED && NP_PG_EXITS

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

_Static_assert(NP_PG_EXITS <= 20, "NP_PG_EXITS: an np_thread holds at most 20 (NP_THREAD_SIZE)");

static struct np_pg_returns irq_returns;
static uint32_t unhooked; /* calls the hook could not take (full, or no slot) */

static struct np_pg_returns *returns_of(struct np_thread *t, int irq)
{
    return irq ? &irq_returns : &t->pg;
}

/* Closes the calls from I up, the newest first. */
static void close_from(struct np_pg_returns *r, uint32_t i)
{
    while (r->n > i) {
        uint32_t k = r->n - 1;
        __cyg_profile_func_exit((void *)r->v[k].fn, (void *)r->v[k].ret);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        r->n = k;
    }
}

/* Closes the calls whose slot is at or below SLOT (their frames are gone:
 * left by a jump); returns how many are left. Apart from the hook's own
 * path: rare. */
static __attribute__((noinline)) uint32_t close_dead(struct np_pg_returns *r, const uintptr_t *slot)
{
    uint32_t live = r->n;
    while (live && r->v[live - 1].slot <= slot)
        live--;
    close_from(r, live);
    return live;
}

static void not_hooked(const char *why)
{
    if (unhooked++ == 0)
        np_error_msg(NP_EFULL, NP_MSG("-pg"), why);
}

/* E, read as a function that saves no return address (it returns from
 * the copy pushed for the hook, its slot), makes a call: it does save one,
 * where the port did not find it, and it will return there, round the
 * trampoline. Its slot moves up a word, to its stack pointer: a frame
 * still alive while its calls run and return, dead when one made above
 * it comes; its exit is told then, late, and counted. */
static __attribute__((noinline, cold)) void misread(struct np_pg_return *e)
{
    e->slot++;
    e->leaf = 0;
    not_hooked(NP_MSG("a function read as making no call made one: its exit comes late (the count: np_pg_unhooked)"));
}

/* The port's hook: FN's call keeps its return address in SLOT (NULL: the
 * port could not tell where), HOW says how (NP_PG_TAIL, NP_PG_LEAF), IRQ
 * when an interrupt handler runs. Returns 1 when the port is to put its
 * trampoline in the slot. */
static int pg_enter(uintptr_t fn, uintptr_t *slot, int how, int irq)
{
    int tail = how & NP_PG_TAIL;
    struct np_thread *t = np_self();
    /* (a call while the thread is busy, in another hook, is hooked: the
     * mechanisms count its entry and exit lost, as -finstrument-functions') */
    if (!(t->hot & (NP_F_CT_ON | NP_F_COST_ON | NP_F_REC_ON | NP_F_USER_HOT)))
        return 0; /* nothing records this call */
    if (!slot) {
        not_hooked(NP_MSG("a function whose prologue the hook does not know is not recorded (the count: np_pg_unhooked)"));
        return 0;
    }
    struct np_pg_returns *r = returns_of(t, irq);
    uintptr_t ret = *slot;
    uint32_t i = r->n;
    if (tail) {
        if (!i)
            return 0; /* its caller was not hooked: the return is not ours */
        ret = r->v[i - 1].ret;
    } else if (i && r->v[i - 1].slot <= slot) {
        i = close_dead(r, slot);
    } else if (i && r->v[i - 1].leaf) {
        misread(&r->v[i - 1]);
    }
    if (i == NP_PG_EXITS) {
        not_hooked(NP_MSG("calls deeper than NP_PG_EXITS are not recorded (the count: np_pg_unhooked)"));
        return 0;
    }
    r->n = i + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->v[i].slot = slot;
    r->v[i].ret = ret;
    r->v[i].fn = fn;
    r->v[i].leaf = (how & NP_PG_LEAF) != 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __cyg_profile_func_enter((void *)fn, (void *)ret);
    return !tail;
}

/* A return that ends more than the newest call (I): a tail call's, or
 * calls left by a jump above the one returning. The one returning is the
 * one whose slot is highest: the others' frames were below it (a call
 * whose return went round the trampoline, which a slot misread would
 * leave, is one of those: its address is not where to go). */
static __attribute__((noinline)) uintptr_t return_left(struct np_pg_returns *r, uint32_t i, const uintptr_t *sp)
{
    uint32_t top = i;
    while (i > 0 && r->v[i - 1].slot < sp)
        i--;
    uint32_t at = top;
    for (uint32_t k = i; k < top; k++)
        if (r->v[k].slot > r->v[at].slot)
            at = k;
    uintptr_t ret = r->v[at].ret;
    close_from(r, i);
    return ret;
}

/* The trampoline's: the return left the stack pointer at SP. Returns where
 * the function returns to. */
static uintptr_t pg_exit(const uintptr_t *sp, int irq)
{
    struct np_pg_returns *r = returns_of(np_self(), irq);
    uint32_t i = r->n;
    if (!i || r->v[i - 1].slot >= sp) {
        np_error(NP_EINVAL, "-pg", "a return through the trampoline with no record of it (a stack switched?): stopped");
        __builtin_trap();
    }
    i--;
    if (i > 0 && r->v[i - 1].slot < sp)
        return return_left(r, i, sp);
    uintptr_t ret = r->v[i].ret, fn = r->v[i].fn;
    __cyg_profile_func_exit((void *)fn, (void *)ret);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->n = i;
    return ret;
}

void np_pg_exits_start(void)
{
    np_port_calls_start(pg_enter, pg_exit, (uintptr_t)__cyg_profile_func_enter);
}

uint64_t np_pg_unhooked(void)
{
    return unhooked;
}

#else

uint64_t np_pg_unhooked(void)
{
    return 0;
}

#endif
