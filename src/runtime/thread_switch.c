/* thread_switch.c - the user-level threads' API (nanoprof/nanoprof.h):
 * an RTOS or a user-level scheduler gives its threads their own state,
 * switches between them and names them. An object apart from thread.c,
 * so that a firmware without threads of its own does not carry it. */
#include "hooks.h"
#include "cost_hot.h"
#include "record_hooks.h"
#include "../port/port.h"

size_t np_thread_size(void)
{
    return sizeof(struct np_thread);
}

np_thread *np_thread_init(void *mem, size_t size)
{
    if (!mem || ((uintptr_t)mem & 15) || size < sizeof(struct np_thread)) {
        np_error(NP_EINVAL, "np_thread_init", "needs NP_THREAD_SIZE bytes, 16-byte aligned");
        return NULL;
    }
    struct np_thread *t = mem;
    __builtin_memset(t, 0, sizeof *t);
    t->flags = NP_F_ATTACHED;
    np_thread_user_sync(t);
    t->tid = np_port_tid();
    return t;
}

np_thread *np_thread_current(void)
{
    return np_self();
}

void np_thread_switch(np_thread *from, np_thread *to)
{
    struct np_thread *cur = np_self();
    if (np_port_switched())
        (void)np_thread_time_resync(cur);
    uint64_t now = np_port_ticks();
    if (!from)
        from = cur;
    if (!to)
        to = np_thread_own();
    if (from == to)
        return;
    from->out_at = now ? now : 1;
    if (to->out_at) {
        to->off += now - to->out_at;
        to->out_at = 0;
    }
    np_thread_user_sync(to);
    np_cur = to;
    void (*rec)(struct np_thread *, struct np_thread *) = __atomic_load_n(&np_rec_switch_hook, __ATOMIC_ACQUIRE);
    if (rec)
        rec(from, to);
}

/* The name is copied: an RTOS's task name may live in memory the task
 * gives back (FreeRTOS's TCB), and the recorder writes it later. Cut at
 * NP_THREAD_NAME_MAX bytes. Nothing but the copy and the recorder's hook:
 * cheap enough for a kernel's task-creation hook. */
int np_thread_name(np_thread *t, const char *name)
{
    struct np_thread *self = np_self();
    if (!t)
        t = self;
    size_t n = 0;
    if (name)
        while (n < NP_THREAD_NAME_MAX && name[n])
            n++;
    /* byte by byte: a switch to T in the middle (an RTOS's, from an
     * interrupt) reads whole bytes, and the hook then writes it again */
    for (size_t i = 0; i <= NP_THREAD_NAME_MAX; i++)
        __atomic_store_n(&t->name[i], i < n ? name[i] : 0, __ATOMIC_RELAXED);
    void (*rec)(struct np_thread *, int) = __atomic_load_n(&np_rec_name_hook, __ATOMIC_ACQUIRE);
    if (rec) {
        int now = np_thread_lock(self); /* what the recorder writes is not recorded */
        rec(t, now);
        if (now)
            np_thread_unlock(self);
    }
    return NP_OK;
}
