/* nanoprof.h - the public API of the nanoprof runtime: status codes, output
 * sink, manual markers, user hooks and thread switching.
 *
 * The runtime receives the compiler's function entry/exit hooks
 * (-finstrument-functions) and feeds them to the mechanisms a program turns
 * on: the call trace (calltrace.h) and function cost (cost.h). Every
 * mechanism records per thread into buffers the program gives it; the hook
 * path never allocates, and takes a lock only to merge a thread's full
 * table of sums into the shared statistics table. */
#ifndef NANOPROF_H
#define NANOPROF_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

#define NP_VERSION_MAJOR 0
#define NP_VERSION_MINOR 1
#define NP_VERSION_PATCH 0
#define NP_VERSION_STRING "0.1.0"

/* Keeps a function out of -finstrument-functions (the SDK's
 * "#pragma profile off" for one function). */
#define NP_NO_PROFILE __attribute__((no_instrument_function))

/* Every API call that can fail returns one of these; failures also write one
 * line, starting "nanoprof: ", to the output sink. */
typedef enum np_status {
    NP_OK = 0,
    NP_EINVAL = -1,    /* NULL pointer or an argument out of range */
    NP_ESMALL = -2,    /* the buffer given is too small */
    NP_EALREADY = -3,  /* this thread already initialised the mechanism */
    NP_ENOTINIT = -4,  /* the mechanism was not initialised on this thread */
    NP_EFULL = -5,     /* a table ran out of room: results are incomplete */
    NP_EBUSY = -6      /* called from inside a hook (e.g. a signal handler) */
} np_status;

NP_API const char *np_version(void);
NP_API const char *np_strerror(int status);

/* ---- Output sink -------------------------------------------------------
 * Dumps and error lines go through one byte writer. On a host the default
 * writes to stderr; on a target the program sets its own (UART, RTT, ...).
 * Passing NULL restores the default. */
typedef void (*np_write_fn)(void *ctx, const char *bytes, size_t len);
NP_API void np_output_set(np_write_fn write, void *ctx);
/* A writer that could not take the bytes it was given (a UART that timed
 * out) calls this before it returns: the trace being recorded on a target
 * (trace.h) counts that chunk's events lost. */
NP_API void np_output_failed(void);

/* ---- Manual markers ----------------------------------------------------
 * For code built without -finstrument-functions, or to mark a region inside
 * a function. NAME must be a string with static storage; it is what dumps
 * print. Every NP_ENTER must be matched by one NP_EXIT on the same thread. */
NP_API void np_enter(const char *name);
NP_API void np_exit(void);
#define NP_ENTER(name) np_enter(name)
#define NP_EXIT() np_exit()

/* ---- -pg alone on a target ---------------------------------------------
 * With a runtime built with NP_PG_EXITS (docs/porting.md), code built with
 * -pg and not -finstrument-functions has its calls' exits from a
 * trampoline the hook puts in place of each return address. The calls it
 * could not follow: not recorded (deeper than NP_PG_EXITS, or a prologue
 * it could not read), or their exit recorded late (a copy of the return
 * address the reading missed); said once, the first time, through the
 * output. 0 elsewhere. */
NP_API uint64_t np_pg_unhooked(void);

/* ---- User hooks (the SDK's "other profilers") ----------------------------
 * Receive every entry and exit the runtime sees, on every thread, alongside
 * the built-in mechanisms. FN is the function address; for NP_ENTER it is
 * the name string and NAMED is 1; for NP_EXIT it is NULL. SITE is the call
 * site. The runtime guards against re-entry, so a handler may itself be
 * instrumented. NULL, NULL removes them. Returns NP_EINVAL in the
 * single-mechanism libraries, which do not call user hooks. */
typedef void (*np_hook_fn)(void *ctx, const void *fn, const void *site, int named);
NP_API int np_hooks_set(np_hook_fn enter, np_hook_fn exit, void *ctx);

/* ---- Threads ------------------------------------------------------------
 * Each OS thread has its own state. A user-level scheduler (coroutines, an
 * RTOS on a target) gives each of its threads an np_thread made in memory it
 * owns, and calls np_thread_switch from its context-switch hook, so each
 * thread records into its own buffers and the time a thread is switched out
 * is not counted in its function costs. */
typedef struct np_thread np_thread;

#define NP_THREAD_SIZE 512  /* bytes an np_thread needs */
NP_API size_t np_thread_size(void);
/* Prepares MEM (at least NP_THREAD_SIZE bytes, 16-byte aligned). */
NP_API np_thread *np_thread_init(void *mem, size_t size);
/* The state in use on the calling OS thread now. */
NP_API np_thread *np_thread_current(void);
/* Marks FROM switched out and TO switched in, now. FROM may be NULL for the
 * current one; TO may be NULL for the OS thread's own state. */
NP_API void np_thread_switch(np_thread *from, np_thread *to);
/* Names thread T (NULL: the state in use on the calling OS thread) NAME,
 * copied, up to 15 bytes (the rest is cut; NULL or "" takes the name
 * away): every view of its records shows it. Cheap, and callable from a
 * kernel's task-creation hook or an interrupt. Returns NP_OK. */
NP_API int np_thread_name(np_thread *t, const char *name);

NP_END_DECLS

#include "nanoprof/blocks.h"
#include "nanoprof/calltrace.h"
#include "nanoprof/cost.h"
#include "nanoprof/sections.h"
#include "nanoprof/bins.h"
#include "nanoprof/sample.h"
#include "nanoprof/gprof.h"
#include "nanoprof/trace.h"
#include "nanoprof/patch.h"
#include "nanoprof/rtt.h"

#endif
