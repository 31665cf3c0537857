/* thread.c - per-thread state: finding it, and switching between the
 * states of a user-level scheduler's threads. */
#include "hooks.h"
#include "cost_hot.h"
#include "record_hooks.h"
#include "../port/port.h"

/* What np_cur points to until the thread's first hook or API call: busy,
 * so that the hooks' leaf paths send that call to the full path, which
 * attaches the thread (np_self). Read-only: nothing may write to it. */
#if NP_PORT_HOSTED
__attribute__((visibility("default"))) const struct np_thread np_unattached = { .flags = NP_F_BUSY };
#else
const uint32_t np_unattached_hot __attribute__((aligned(8))) = NP_F_BUSY;
#endif
NP_PORT_TLS struct np_thread *np_cur __attribute__((visibility("default"))) = NP_UNATTACHED;
static NP_PORT_TLS struct np_thread own __attribute__((aligned(16)));
uint8_t np_hooks_user_on;
void (*np_cost_exit_hook)(struct np_thread *t);
void (*np_cost_event_hook)(struct np_thread *t, uint64_t fn, int exit);
void (*np_tt_event_hook)(struct np_thread *t, uint64_t fn, int exit);

/* Set by the recorder (record.c) when it starts; NULL otherwise. */
void (*np_rec_attach_hook)(struct np_thread *t);
void (*np_rec_exit_hook)(struct np_thread *t);
void (*np_rec_jump_hook)(struct np_thread *t, unsigned kind, const void *env);
void (*np_rec_catch_hook)(struct np_thread *t, uint64_t sp, const struct np_throw_frame *f, size_t n);
void (*np_rec_switch_hook)(struct np_thread *from, struct np_thread *to);
void (*np_rec_name_hook)(struct np_thread *t, int now);

/* The OS thread ends (the port calls this on it): the recorder hands its
 * last buffer to the writer, and function cost merges its sums (a thread
 * that ends without np_stats_calc has its open calls counted lost). */
static void os_thread_exit(void)
{
    struct np_thread *t = np_thread_os();
    if (t) {
        void (*rec)(struct np_thread *) = __atomic_load_n(&np_rec_exit_hook, __ATOMIC_ACQUIRE);
        if (rec)
            rec(t);
        void (*cost)(struct np_thread *) = __atomic_load_n(&np_cost_exit_hook, __ATOMIC_ACQUIRE);
        if (cost)
            cost(t);
    }
}

struct np_thread *np_thread_attach(void)
{
    struct np_thread *t = &own;
    if (!(t->flags & NP_F_ATTACHED)) {
        t->flags |= NP_F_ATTACHED;
        np_thread_user_sync(t);
        t->tid = np_port_tid();
        np_port_thread_start(os_thread_exit);
        np_pg_exits_start(); /* (a target's one thread: once) */
        void (*rec)(struct np_thread *) = __atomic_load_n(&np_rec_attach_hook, __ATOMIC_ACQUIRE);
        if (rec)
            rec(t);
    }
    np_cur = t;
    return t;
}

struct np_thread *np_thread_os(void)
{
    return (own.flags & NP_F_ATTACHED) ? &own : NULL;
}

struct np_thread *np_thread_own(void)
{
    return &own;
}

int np_switch_mechanism(const char *who, uint32_t init_flag, uint32_t on_flag, int on, const char *not_init)
{
    struct np_thread *t = np_self();
    if (!(t->flags & init_flag))
        return np_error_msg(NP_ENOTINIT, who, not_init);
    if (!np_api_enter_msg(t, who))
        return NP_EBUSY;
    int was = (t->flags & on_flag) != 0;
    if (on)
        t->flags |= on_flag;
    else
        t->flags &= ~on_flag;
    np_thread_unlock(t);
    return was;
}
