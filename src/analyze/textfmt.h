/* textfmt.h - text in and out for every view: durations as people read
 * them, CSV fields (RFC 4180) and JSON strings, and the progress bar.
 *
 * One place for these so that report, graph, tree and the exporters print
 * the same "1.234 ms", quote the same way, and emit valid UTF-8 JSON and
 * XML even from hostile names (invalid bytes become U+FFFD). */
#ifndef NP_ANALYZE_TEXTFMT_H
#define NP_ANALYZE_TEXTFMT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "events.h"

#define NP_DURATION_MAX 24 /* bytes np_format_duration and np_format_time may write, NUL included */

/* V in decimal at BUF (up to 20 bytes, no NUL); returns its length. */
size_t np_put_decimal(char *buf, uint64_t v);
/* NS as "123 ns", "12.345 us", "1.234 ms", "1.234 s" into BUF; returns BUF. */
char *np_format_duration(char *buf, size_t size, uint64_t ns);
/* VALUE in UNIT into BUF: a duration for NP_UNIT_NS (np_format_duration);
 * cycles and instructions exact below a million ("999999 cyc", "12 insn"),
 * then to two decimals with a prefix ("12.35 Mcyc", "1.50 Ginsn": M, G,
 * T, P, E), at most 12 characters, as a duration is. Returns BUF. */
char *np_format_time(char *buf, size_t size, uint64_t value, enum np_time_unit unit);
/* "250", "250ns", "1.5us", "2ms", "1s" -> ns; 0 or -1 when malformed. */
int np_parse_duration(const char *text, uint64_t *ns);

/* V as the views show an argument or a return value, into BUF (SIZE
 * bytes, NUL-terminated, cut to fit): 42, -1, 0x2a, 052, 0x7ffd1234 (NULL
 * for 0), 'a', "text" (a string with " \\ and bytes outside printable
 * ASCII escaped as \" \\ \xNN). Returns its length. */
size_t np_value_text(char *buf, size_t size, const struct np_value *v);
/* N values, ", " between them (as np_value_text). Returns the length. */
size_t np_values_text(char *buf, size_t size, const struct np_value *v, unsigned n);

/* Replaces control characters in S with '?', so that text from a trace
 * (paths, names) cannot break a message or a row into several lines;
 * returns S. */
char *np_scrub_line(char *s);
/* FMT and AP formatted into BUF (SIZE bytes, cut to fit), scrubbed as
 * np_scrub_line does: a one-line message with text from a trace in it.
 * Returns BUF. */
char *np_format_line(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* S on one line: control characters printed as '?'. */
void np_text_field(FILE *out, const char *s);

/* S as one CSV field: quoted (quotes doubled) when it holds a comma, a
 * quote, CR or LF. NULL prints nothing. */
void np_csv_field(FILE *out, const char *s);
/* S as a JSON string, quotes included; NULL prints null. */
void np_json_string(FILE *out, const char *s);
/* At most MAX characters of S as XML text or attribute value: & < > " '
 * escaped, control characters as '?', bytes that are not valid UTF-8 (and
 * U+FFFE, U+FFFF, which XML forbids) as U+FFFD. SIZE_MAX: all of it. */
void np_xml_text(FILE *out, const char *s, size_t max);
/* The characters np_xml_text counts in S. */
size_t np_utf8_chars(const char *s);

/* A progress bar on a terminal: drawn when enabled, redrawn only when the
 * percentage changes, erased by np_progress_done. */
struct np_progress {
    FILE *out;
    bool enabled;
    int shown; /* percentage drawn, -1 none */
};
/* Enables it when OUT is a terminal and TOTAL reaches MIN_BYTES. */
void np_progress_init(struct np_progress *p, FILE *out, uint64_t total, uint64_t min_bytes);
void np_progress_update(struct np_progress *p, uint64_t done, uint64_t total);
void np_progress_done(struct np_progress *p);

#endif
