/* flame_svg.h - the call tree of a model as a self-contained SVG flame
 * graph: one frame per tree node (deep recursion merged: stacks.h), "all"
 * at the base, one frame per thread above it, widths in proportion to
 * inclusive time; a tooltip per frame, and an embedded script for
 * click-to-zoom and search (docs/flame.md). */
#ifndef NP_ANALYZE_FLAME_SVG_H
#define NP_ANALYZE_FLAME_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "model.h"
#include "stacks.h"

struct np_flame_options {
    const char *title;       /* NULL: "Flame Graph" ("Icicle Graph" inverted) */
    const char *subtitle;    /* NULL: none */
    unsigned width;          /* of the image, px; 0: NP_FLAME_WIDTH */
    double min_width;        /* frames narrower are left out with what they call */
    bool min_width_percent;  /* min_width is a percentage of the whole width */
    bool inverted;           /* an icicle graph: the root at the top */
    const char *note;        /* what the trace lost, shown on a line of its own (NULL: none) */
};

#define NP_FLAME_WIDTH 1200
#define NP_FLAME_MIN_WIDTH 100 /* px: below it there is no room for frames */

struct np_flame_stats {
    size_t frames;           /* drawn, "all" and threads included */
    size_t omitted;          /* stack frames with calls left out as too narrow */
    char merged[NP_STACK_NOTE_MAX]; /* the note of what deep recursion was merged (stacks.h), or "" */
};

/* Writes the flame graph of M to OUT. Returns 0, or -1 when out of memory
 * (OUT then holds part of a graph). Write errors are OUT's (ferror).
 * STATS may be NULL. */
int np_flame_svg(FILE *out, const struct np_model *m, const struct np_flame_options *opt,
                 struct np_flame_stats *stats);

#endif
