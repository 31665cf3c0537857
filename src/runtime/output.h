/* output.h - building text lines and sending them to the output sink,
 * without printf (the runtime also runs where there is none). */
#ifndef NP_OUTPUT_H
#define NP_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include "np_config.h"

struct np_line {
    size_t n;
    char buf[NP_LINE_MAX];
};

void np_line_str(struct np_line *l, const char *s);
void np_line_u64(struct np_line *l, uint64_t v);
void np_line_hex(struct np_line *l, uint64_t v);    /* 0x-prefixed */
void np_line_indent(struct np_line *l, unsigned n); /* n spaces */
/* Appends the name of FN (a function address, or a string when NAMED). */
void np_line_func(struct np_line *l, const void *fn, int named);
/* Ends the line with '\n', writes it to the sink and empties L. */
void np_line_emit(struct np_line *l);

void np_write(const char *bytes, size_t len);
/* Times a writer said it failed (np_output_failed). */
extern uint32_t np_output_failures;

#endif
