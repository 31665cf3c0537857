/* hooks.h - runtime-internal declarations shared by the hook and API files. */
#ifndef NP_HOOKS_H
#define NP_HOOKS_H

#include <stdint.h>
#include "thread.h"

#define NP_HOOK __attribute__((no_instrument_function, visibility("default")))

/* The compiler's hooks and what they call first live in a section of
 * their own, so that the sampler can tell a sample taken inside them
 * (np_hooks_text_start/end): it is the interrupted function's, not the
 * runtime's. */
#define NP_HOOKS_TEXT __attribute__((section("np_hooks_text")))
extern const char __start_np_hooks_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_np_hooks_text[] __attribute__((weak, visibility("hidden")));
static inline int np_in_hooks_text(uint64_t pc)
{
    return __start_np_hooks_text && pc >= (uint64_t)(uintptr_t)__start_np_hooks_text &&
           pc < (uint64_t)(uintptr_t)__stop_np_hooks_text;
}

/* Which mechanisms this library's hooks call (hooks.c). */
#define NP_MECH_CALLTRACE 1
#define NP_MECH_COST 2
#define NP_MECH_USER 4
#define NP_MECH_RECORD 8 /* record.c: NANOPROF_RECORD, `nanoprof record` */
extern const unsigned np_hooks_mechanisms;

/* output.c: one error line "nanoprof: <where>: <what>" on the sink */
int np_error(int status, const char *where, const char *what);
/* Marks T busy for an API call; on failure (called from inside a hook, e.g.
 * a signal handler) writes the error line and returns 0. */
int np_api_enter(struct np_thread *t, const char *where);
/* Enable/disable/restore of one mechanism on the calling thread: returns
 * the previous state (1 on, 0 off) or a negative np_status. */
int np_switch_mechanism(const char *who, uint32_t init_flag, uint32_t on_flag, int on, const char *not_init);

/* The default statistics table (the last one initialised), used when a
 * measurement buffer fills up. */
extern void *np_default_stats;
/* stats.c: summarise T's measurement buffer into STATS (table locked). */
int np_stats_summarise(void *stats, struct np_thread *t);

/* cost.c: a thread is ending: count what it recorded and never summarised
 * as lost in the default table (called by the port). */
void np_cost_thread_exit(struct np_thread *t);
/* stats.c: counts records lost outside a summary. */
void np_stats_add_lost(void *stats, uint64_t n);

#endif
