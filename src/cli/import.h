/* import.h - a trace recorded on a target, taken out of its captured
 * output (import.c): for `nanoprof import`, and for the views given
 * --elf, which read a capture as it is. */
#ifndef NP_CLI_IMPORT_H
#define NP_CLI_IMPORT_H

struct np_import;

/* Finds and checks the trace in CAPTURE against the firmware's ELF (its
 * build-id, the NP_ENTER names it holds); NULL after one line "nanoprof
 * CMD: ..." on stderr. */
struct np_import *np_import_read(const char *cmd, const char *capture, const char *elf);
/* Writes it as the trace file FILE; says on stderr where the capture was
 * cut or had no END, and, with SAID_AS, what went into it. Returns 0, or
 * 1 after a line. */
int np_import_write(struct np_import *im, const char *file, const char *said_as);
void np_import_free(struct np_import *im);

#endif
