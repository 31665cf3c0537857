/* patch.h - tracing switched on and off while the program runs, for code
 * built with patchable entries (docs/instrumenting.md):
 *
 *   gcc/clang -fpatchable-function-entry=5        (x86-64)
 *   gcc -pg -mfentry -mnop-mcount -mrecord-mcount (x86-64, -no-pie)
 *
 * Such a function runs its few NOPs, and costs nothing more, until it is
 * switched on: its entry then calls the runtime's -mfentry hook, and its
 * calls reach every mechanism (call trace, function cost, the recorder)
 * as a -pg -mfentry build's do. Switching writes the code while other
 * threads may run it (the rules docs/instrumenting.md gives); switching
 * off puts back the exact bytes. Hosted x86-64 Linux only. */
#ifndef NANOPROF_PATCH_H
#define NANOPROF_PATCH_H

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* Switches on the functions whose name matches PATTERN (a glob, or a
 * regular expression by the rule of record's -F; NULL or "" for every
 * one) in every module loaded now. Returns how many it switched on (0:
 * none matched, or all were on), or -1 when it could not
 * (np_trace_error() says why; nothing is left half-switched). Not from a
 * signal handler. */
NP_API int np_trace_on(const char *pattern);
/* Switches off the functions matching PATTERN (NULL or "": every one);
 * the same returns. */
NP_API int np_trace_off(const char *pattern);
/* Why the last np_trace_on or np_trace_off returned -1, in one line. */
NP_API const char *np_trace_error(void);

NP_END_DECLS

#endif
