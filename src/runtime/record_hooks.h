/* record_hooks.h - where the core (thread.c) and the POSIX port's
 * interpositions (setjmp.c, catch.c) tell the recorder what they see:
 * pointers that record.c (port/posix) sets when recording starts, so that
 * the single-mechanism libraries, and ports without a recorder, need
 * nothing of it. */
#ifndef NP_RECORD_HOOKS_H
#define NP_RECORD_HOOKS_H

#include <stddef.h>
#include <stdint.h>

struct np_thread;

/* A thread is attached (its first hook), and an OS thread ends. */
extern void (*np_rec_attach_hook)(struct np_thread *t);
extern void (*np_rec_exit_hook)(struct np_thread *t);
/* setjmp.c: a setjmp or longjmp (KIND) on ENV, on a recorded thread that
 * is marked busy. */
extern void (*np_rec_jump_hook)(struct np_thread *t, unsigned kind, const void *env);
/* catch.c: a C++ exception thrown from the N frames F (innermost first)
 * is caught by a handler whose stack pointer is SP, on a recorded thread
 * that is marked busy. */
struct np_throw_frame;
extern void (*np_rec_catch_hook)(struct np_thread *t, uint64_t sp, const struct np_throw_frame *f, size_t n);
/* np_thread_switch between user-level threads (thread.c): FROM leaves the
 * OS thread, TO runs on it from now. */
extern void (*np_rec_switch_hook)(struct np_thread *from, struct np_thread *to);
/* np_thread_name named T (its name field holds the new name); NOW: the
 * caller is marked busy (not inside a hook), and the recorder may write. */
extern void (*np_rec_name_hook)(struct np_thread *t, int now);

#endif
