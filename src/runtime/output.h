/* output.h - the output sink: where reports (report.h) and a target's
 * trace go. */
#ifndef NP_OUTPUT_H
#define NP_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include "np_config.h"

void np_write(const char *bytes, size_t len);
/* Whether the writer's stream had its opening (report.c, on a target):
 * 0 again when the program sets another writer; but while a trace is
 * recorded (np_output_tracing), the trace's stream stays the one reports
 * go into, whatever the writer. */
extern int np_output_opened, np_output_tracing;
/* Times a writer said it failed (np_output_failed). */
extern uint32_t np_output_failures;

#endif
