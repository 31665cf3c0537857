/* cost_hot.h - what function cost measurement does on each entry and exit.
 *
 * An entry is only recorded when the buffer also has room for the exits of
 * every call still open, so an exit is never lost once its entry was kept:
 * the summary pairs them exactly. Entries that do not fit are counted
 * (lost_open) and so are their exits, which come back in LIFO order. */
#ifndef NP_COST_HOT_H
#define NP_COST_HOT_H

#include "thread.h"
#include "../port/port.h"

/* Makes room by summarising into the default table; returns 1 on success. */
int np_cost_make_room(struct np_thread *t, uint32_t need);
/* After a switch: takes the switched-out time off; returns the time now. */
uint64_t np_thread_time_resync(struct np_thread *t);

/* The thread's running time: raw ticks less the time it was switched out. */
static inline __attribute__((always_inline)) uint64_t np_thread_time(struct np_thread *t)
{
    if (__builtin_expect(np_port_switched(), 0))
        return np_thread_time_resync(t);
    return np_port_ticks() - t->off;
}

static inline __attribute__((always_inline)) void
np_cost_enter(struct np_thread *t, uint64_t w0)
{
    struct np_cost_state *c = &t->cost;
    /* pending exits: every open call in the buffer plus this one */
    uint32_t need = c->open_pending + 2;

    if (__builtin_expect(c->lost_open != 0, 0) ||
        (__builtin_expect(c->n + need > c->cap, 0) && !np_cost_make_room(t, need))) {
        c->lost_open++;
        c->lost++;
        return;
    }
    uint64_t now = np_thread_time(t); /* before the record counts as held */
    np_cost_record *r = &c->buf[c->n];
    r->w0 = w0;
    r->w1 = now;
    c->n++; /* written, then counted: a jump out of the hook leaves no half record */
    c->open_pending++;
}

static inline __attribute__((always_inline)) void
np_cost_exit(struct np_thread *t, uint64_t fn)
{
    struct np_cost_state *c = &t->cost;

    if (__builtin_expect(c->lost_open != 0, 0)) {
        c->lost_open--;
        c->lost++;
        return;
    }
    if (__builtin_expect(c->open_pending == 0, 0))
        return; /* the exit of a call entered before measuring began */
    uint64_t now = np_thread_time(t);
    np_cost_record *r = &c->buf[c->n]; /* room was reserved at entry */
    r->w0 = fn | NP_COST_EXIT;
    r->w1 = now;
    c->n++;
    c->open_pending--;
}

#endif
