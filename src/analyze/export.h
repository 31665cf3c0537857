/* export.h - the model written in other tools' formats, one file per
 * format (export_<name>.c) and one line per format in the table of
 * export.c. An exporter reads only the model and writes to a FILE; the
 * caller checks the FILE for write errors. docs/exporters.md describes
 * every format.
 *
 * Most formats write the finished model (write). A format of every call
 * (a timeline) writes them as the model reads them instead, in memory
 * bounded by the nesting depth: listen, before the model is loaded, gives
 * the listener to load it with (model.h), and finish writes the rest
 * once it is loaded. */
#ifndef NP_ANALYZE_EXPORT_H
#define NP_ANALYZE_EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"

/* What a folded line's number counts. */
enum np_export_value { NP_EXPORT_SELF_NS, NP_EXPORT_CALLS };

/* Options a format may take; the table says which make sense for it
 * (EXCLUDE_SWITCHED is the model's --exclude-switched). NP_EXPORT_BINARY
 * is no option: it marks a format whose output is binary data. */
enum {
    NP_EXPORT_OPT_VALUE = 1,
    NP_EXPORT_OPT_PER_THREAD = 2,
    NP_EXPORT_OPT_EXCLUDE_SWITCHED = 4,
    NP_EXPORT_OPT_BUCKET = 8,
    NP_EXPORT_BINARY = 0x100
};
struct np_export_options {
    enum np_export_value value;
    bool per_thread;         /* a frame for the thread below each stack */
    uint64_t bucket;         /* gmon: bytes of text per histogram bin; 0: the default */
    /* What the trace lost, one line (NULL: nothing): formats with room for
     * a comment carry it (callgrind's desc:, chrome's otherData.loss). */
    const char *note;
    /* Warnings, and the reason of NP_EXPORT_FAILED, one line each (NULL: none). */
    void (*diag)(void *ctx, enum np_diag_level level, const char *line);
    void *diag_ctx;
};

/* What write returns besides 0. */
enum { NP_EXPORT_ENOMEM = -1, NP_EXPORT_FAILED = -2 };

struct np_exporter {
    const char *name;        /* --format=NAME */
    const char *description; /* one line, for --help */
    unsigned options;        /* NP_EXPORT_OPT_* it takes */
    /* 0; NP_EXPORT_ENOMEM when out of memory (what was written is then
     * incomplete); NP_EXPORT_FAILED when there is nothing the format can
     * hold, nothing written and the reason given to o->diag. NULL for a
     * format that streams (below). */
    int (*write)(const struct np_model *m, const struct np_export_options *o, FILE *out);
    bool labels_estimate;    /* its output says when times are estimated from samples */
    /* A format that streams the calls: sets *L to the listener to load the
     * model with (L->ctx: its state, O and OUT kept until finish); 0 or
     * NP_EXPORT_ENOMEM. The listener stops the read when writing fails. */
    int (*listen)(const struct np_export_options *o, FILE *out, struct np_call_listener *l);
    /* Then, with the model loaded (NULL when it could not be: nothing is
     * written), writes the rest and frees CTX; returns as write does. */
    int (*finish)(const struct np_model *m, void *ctx);
};

/* For JSON formats: ,"loss":"NOTE" when O has a note; nothing otherwise. */
void np_export_json_note(FILE *out, const struct np_export_options *o);

/* Every exporter, ending with a NULL name. */
extern const struct np_exporter np_exporters[];
/* The exporter called NAME, or NULL. */
const struct np_exporter *np_exporter_find(const char *name);

int np_export_chrome_listen(const struct np_export_options *o, FILE *out, struct np_call_listener *l);
int np_export_chrome_finish(const struct np_model *m, void *ctx);
int np_export_folded(const struct np_model *m, const struct np_export_options *o, FILE *out);
int np_export_callgrind(const struct np_model *m, const struct np_export_options *o, FILE *out);
int np_export_gmon(const struct np_model *m, const struct np_export_options *o, FILE *out);

#endif
