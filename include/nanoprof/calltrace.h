/* calltrace.h - the function call trace: which calls are active now (stack
 * mode) or which calls happened most recently (log mode), per thread. */
#ifndef NANOPROF_CALLTRACE_H
#define NANOPROF_CALLTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

typedef enum np_calltrace_mode {
    /* entry pushes a record, exit pops it: a dump shows the active chain */
    NP_CALLTRACE_STACK = 1,
    /* entry appends to a ring, exit records nothing: a dump shows the most
     * recent calls, newest first, each with its nesting depth */
    NP_CALLTRACE_LOG = 2
} np_calltrace_mode;

/* NP_CALLTRACE_ARGS 1: each record also keeps the call's first four
 * integer arguments (r0-r3 on ARM; rdi, rsi, rdx, rcx on x86-64) where
 * the hook sees them: functions built with -pg -mfentry, -pg or
 * patchable entries (docs/instrumenting.md). A record from a hook that
 * does not see them (-finstrument-functions, NP_ENTER) says it has none.
 * A choice of the library's build (CMake -DNP_CALLTRACE_ARGS=ON), which
 * pkg-config and the CMake package pass on to the program: the two must
 * agree, as the record's size does. */
#ifndef NP_CALLTRACE_ARGS
#define NP_CALLTRACE_ARGS 0
#endif

/* Bytes per record: 16 with 64-bit pointers, 12 with 32-bit ones (a
 * microcontroller); with NP_CALLTRACE_ARGS, 48 and 32. */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 4
#define NP_CALLTRACE_RECORD_SIZE (NP_CALLTRACE_ARGS ? 32 : 12)
#else
#define NP_CALLTRACE_RECORD_SIZE (NP_CALLTRACE_ARGS ? 48 : 16)
#endif

/* How many records a buffer of SIZE bytes holds, and the reverse. */
NP_API int np_calltrace_lines(size_t size);
NP_API size_t np_calltrace_buffer_size(int lines);

/* Starts recording the calling thread's calls into BUF. Only this thread
 * records there; each thread that wants a trace calls this with its own
 * buffer. In stack mode, call it from the outermost level you want to see. */
NP_API int np_calltrace_init(void *buf, size_t size, np_calltrace_mode mode);
/* Stops the calling thread's trace and forgets its buffer (so init may be
 * called again, e.g. with another mode). */
NP_API int np_calltrace_shutdown(void);

/* Enable, disable, restore: act on the calling thread; each returns the
 * previous state (1 enabled, 0 disabled), or a negative np_status. */
NP_API int np_calltrace_enable(void);
NP_API int np_calltrace_disable(void);
NP_API int np_calltrace_restore(int previous);
/* Empties the calling thread's buffer. */
NP_API int np_calltrace_clear(void);

/* Writes the calling thread's trace to the output sink:
 *   calltrace: <mode> mode, thread <tid>, lr=<hex>, <n> records, <lost> lost
 *   <indent><function>: lr=<hex call site>
 * newest record first, indented two spaces per nesting depth; a record
 * with arguments (NP_CALLTRACE_ARGS) ends ", arg1=<hex>, ..., arg4=<hex>". */
NP_API int np_calltrace_dump(void);

/* One record, for programs and tests that read the trace themselves. */
typedef struct np_calltrace_entry {
    const void *fn;     /* function address, or the NP_ENTER name */
    const void *site;   /* call site (return address) */
    uint32_t depth;     /* nesting depth, 0 = outermost recorded */
    int named;          /* 1 when fn is an NP_ENTER name string */
#if NP_CALLTRACE_ARGS
    int has_args;       /* 1 when the hook saw the arguments */
    uintptr_t args[4];  /* the first four integer arguments (0 without) */
#endif
} np_calltrace_entry;

/* Copies up to MAX records, newest first, into OUT; returns how many. */
NP_API int np_calltrace_read(np_calltrace_entry *out, int max);
/* Records lost: stack frames deeper than the buffer now open (stack mode),
 * or records overwritten by the ring (log mode). */
NP_API uint64_t np_calltrace_lost(void);

NP_END_DECLS
#endif
