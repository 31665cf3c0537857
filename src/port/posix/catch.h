/* catch.h - which open calls a caught C++ exception abandoned, one way for
 * the mechanisms in the program (catch.c) and the recorder's writer
 * (record_write.c). */
#ifndef NP_CATCH_H
#define NP_CATCH_H

#include <stddef.h>
#include <stdint.h>

/* One frame of the stack an exception was thrown from: the start of its
 * function (its unwind information's) and its stack pointer at the call
 * it made. Innermost first. */
struct np_throw_frame {
    uint64_t start, sp;
};

/* How many of the DEPTH open calls a catch whose handler runs with stack
 * pointer SP abandoned, given the N frames of the throw. The open calls
 * are FN(CTX, I), I from 0, the outermost (0: a call of no known
 * function). They are matched to the frames outermost first, each to the
 * next frame of its function; a call no frame matches (inlined, or its
 * entry lost) shares the frame of the nearest matched call outside it. A
 * call whose frame's stack pointer is below SP (the catching function's
 * own is SP) is abandoned; the count is that of the innermost calls that
 * all are. Calls that already ended (a compiler
 * that runs exit hooks while unwinding) are not open, so not counted
 * twice: the open calls are matched the same way whatever ended. */
size_t np_catch_abandoned(const struct np_throw_frame *f, size_t n, uint64_t sp, size_t depth,
                          uint64_t (*fn)(const void *ctx, size_t i), const void *ctx);

#endif
