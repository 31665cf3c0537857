/* trace_dir.h - the trace directory a command writes into (record, emu). */
#ifndef NP_CLI_TRACE_DIR_H
#define NP_CLI_TRACE_DIR_H

#include <stddef.h>

/* A fresh, empty trace directory at OUT, its absolute path in ABS (SIZE
 * at least PATH_MAX); an existing one holding only trace files is kept as
 * OUT.old (replacing an older OUT.old). Returns 1, or 0 after a message
 * "nanoprof CMD: ..." on stderr. */
int np_trace_dir_prepare(const char *cmd, const char *out, char *abs, size_t size);

#endif
