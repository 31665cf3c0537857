/* hooks.h - runtime-internal declarations shared by the hook and API files. */
#ifndef NP_HOOKS_H
#define NP_HOOKS_H

#include <stdint.h>
#include "thread.h"
#include "../common/report_format.h"

#define NP_HOOK __attribute__((no_instrument_function, visibility("default")))
/* What libnanoprof-hooks.a, linked into a program, reaches in
 * libnanoprof.so (hooks.c) */
#define NP_EXPORT __attribute__((visibility("default")))

/* The compiler's hooks and what they call first live in a section of
 * their own, so that the sampler can tell a sample taken inside them
 * (np_hooks_text_start/end): it is the interrupted function's, not the
 * runtime's. */
#define NP_HOOKS_TEXT __attribute__((section("np_hooks_text")))
extern const char __start_np_hooks_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_np_hooks_text[] __attribute__((weak, visibility("hidden")));
/* The hooks libnanoprof-hooks.a put into the program, when it did. */
struct np_hooks_range {
    const char *start, *stop;
};
extern const struct np_hooks_range np_hooks_text_exe __attribute__((weak, visibility("default")));
static inline int np_in_hooks_text(uint64_t pc)
{
    const struct np_hooks_range *exe = &np_hooks_text_exe;
    return (__start_np_hooks_text && pc >= (uint64_t)(uintptr_t)__start_np_hooks_text &&
            pc < (uint64_t)(uintptr_t)__stop_np_hooks_text) ||
           (exe && pc >= (uint64_t)(uintptr_t)exe->start && pc < (uint64_t)(uintptr_t)exe->stop);
}

/* hooks.c: __cyg_profile_func_enter and _exit under names bound inside
 * the library, for its own callers (the -pg path, mcount.c): not through
 * the PLT, whose stubs are in no function (a sample in one would be a
 * frame with no name) and cost a jump, nor to a program's own hooks. */
void np_hooks_enter_here(void *fn, void *site) __attribute__((visibility("hidden")));
void np_hooks_exit_here(void *fn, void *site) __attribute__((visibility("hidden")));
/* hooks.c: the full path of the hooks, and the user hooks in force. */
void np_hooks_full_enter(void *fn, void *site) NP_EXPORT;
void np_hooks_full_exit(void *fn, void *site) NP_EXPORT;
extern struct np_user_hooks *np_user_hooks NP_EXPORT;
/* Flags every thread's hooks take as their own too: NP_F_BUSY while user
 * hooks are set, so that their leaf paths check one word, not two; and
 * libnanoprof-hooks.a's copy of it, when a program holds one. */
extern uint32_t np_hooks_global;
extern uint32_t *const np_hooks_global_exe __attribute__((weak, visibility("default")));

/* Which mechanisms this library's hooks call (hooks.c). */
#define NP_MECH_CALLTRACE 1
#define NP_MECH_COST 2
#define NP_MECH_USER 4
#define NP_MECH_RECORD 8 /* record.c: NANOPROF_RECORD, `nanoprof record` */
#define NP_MECH_TRACE 16 /* trace_target.c: np_trace_init, on a target */
extern const unsigned np_hooks_mechanisms;
/* Whether this library's hooks call mechanism M: known as it is built
 * where every file of a library is built for it (a target's libraries
 * define NP_HOOKS_MECHANISMS for all), so that the refusal's line is not
 * in a firmware that cannot need it; else read from hooks.c. */
#ifdef NP_HOOKS_MECHANISMS
#define np_hooks_have(m) (((NP_HOOKS_MECHANISMS) & (m)) != 0)
#else
#define np_hooks_have(m) ((np_hooks_mechanisms & (m)) != 0)
#endif

/* output.c: the error "nanoprof: <where>: <what>" reported (an ERROR
 * record, report.h); returns STATUS. np_error takes literals, np_error_msg
 * NP_MSG values (a caller's WHERE passed on). */
int np_error_msg(int status, const char *where, const char *what);
#define np_error(status, where, what) np_error_msg((status), NP_MSG(where), NP_MSG(what))
/* -pg alone on a target: hands the port's -pg hook the calls' entries and
 * exits (pg_exits.c, NP_PG_EXITS); nothing otherwise. */
#if !NP_PORT_HOSTED && NP_PG_EXITS
void np_pg_exits_start(void);
#else
#define np_pg_exits_start() ((void)0)
#endif
/* Marks T busy for an API call; on failure (called from inside a hook, e.g.
 * a signal handler) reports the error and returns 0. WHERE: an NP_MSG
 * value with np_api_enter_msg, a literal with np_api_enter. */
int np_api_enter_msg(struct np_thread *t, const char *where);
#define np_api_enter(t, where) np_api_enter_msg((t), NP_MSG(where))
/* Enable/disable/restore of one mechanism on the calling thread: returns
 * the previous state (1 on, 0 off) or a negative np_status. WHO and
 * NOT_INIT: NP_MSG values. */
int np_switch_mechanism(const char *who, uint32_t init_flag, uint32_t on_flag, int on, const char *not_init);

/* The default statistics table (the last one initialised), into which a
 * thread's full table of sums is merged. */
extern void *np_default_stats;
/* stats.c: adds T's sums and lost count to STATS (under its lock) and
 * empties T's table but for the functions of its open calls. NP_EFULL
 * when some function found no room; NP_EINVAL (and nothing done) when
 * STATS was shut down meanwhile. */
int np_stats_merge(void *stats, struct np_thread *t);

/* bins.c: starts N bins (3 to NP_BINS_MAX, else NP_EINVAL for WHERE, an
 * NP_MSG value) in BUF (NP_BINS_BUF_BYTES(N), pointer-aligned), ticked
 * HZ times a second (0: by the program). */
int np_bins_start(const char *where, void *buf, unsigned n, unsigned hz);

/* cost.c: empties the thread's table but for the functions of its open
 * calls (their sums zero). */
void np_cost_reset(struct np_cost_state *c);
/* cost.c: adds to the sums the self time of the open calls so far. */
void np_cost_credit_open(struct np_thread *t);
/* cost.c: a longjmp back to where DEPTH calls were open and LOST_OPEN
 * dropped: closes the calls it abandons at the time of the jump.
 * FROM_HOOK: the jump leaves a hook (its work may be half done). Hosted
 * only: setjmp.c and catch.c, which a target has not, call it. */
void np_cost_unwind(struct np_thread *t, uint32_t depth, uint64_t lost_open, int from_hook);
/* cost.c: a thread is ending: merge its sums into the default table
 * (thread.c, when the port says the OS thread ends, through
 * np_cost_exit_hook, which np_cost_init sets: a program without function
 * cost does not link it). */
void np_cost_thread_exit(struct np_thread *t);
extern void (*np_cost_exit_hook)(struct np_thread *t);
/* cost.c: one entry or (EXIT) exit on the hooks' full path, which calls it
 * through np_cost_event_hook (np_cost_init sets it; thread.c keeps it):
 * the hooks name no mechanism's object, so that a firmware linked by the
 * documented line carries only the mechanisms it starts. */
void np_cost_event(struct np_thread *t, uint64_t fn, int exit);
extern void (*np_cost_event_hook)(struct np_thread *t, uint64_t fn, int exit);
#endif
