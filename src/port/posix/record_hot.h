/* record_hot.h - what the recorder does on each entry and exit: one raw
 * record (address | kind, raw tick) appended to the thread's buffer. Runs
 * in the hooks' full path with the thread busy, so a signal handler that
 * interrupts it records nothing. The position is published with a release
 * store (a plain store on x86-64 and a store-release on AArch64) so that a
 * final flush on another thread reads only whole records. Everything else
 * (a switch seen, a full buffer, lost events) is np_rec_slow's. */
#ifndef NP_RECORD_HOT_H
#define NP_RECORD_HOT_H

#include "record.h"
#include "../port.h"

static inline __attribute__((always_inline)) void np_rec_event(struct np_thread *t, uint64_t w0)
{
    struct np_rec_stream *s = t->rec;
    np_raw *p = s->pos;
    if (__builtin_expect(p >= s->end || np_port_switched(), 0)) {
        np_rec_slow(t, w0);
        return;
    }
    p->w0 = w0;
    p->w1 = np_port_wall_ticks(); /* the recording clock: wall time, as the format wants */
    __atomic_store_n(&s->pos, p + 1, __ATOMIC_RELEASE);
}

#endif
