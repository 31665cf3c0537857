/* flame_svg.c - the call tree as an SVG flame graph (flame_svg.h).
 *
 * Two passes: the layout walks every thread's tree in preorder, as
 * np_stacks gives it (stacks.h: the model's tree with deep recursion
 * merged, so that a 100,000-deep recursion is a few frames, not 100,000
 * levels), and gives each kept stack frame a frame of the graph (its
 * offset and width in ns within its parent's, its depth), leaving out
 * those too narrow to see with their subtrees; then the frames are
 * written, in that preorder, which the script relies on: a frame's
 * descendants follow it, before the next frame at its depth or above.
 * Names come from traces: everything printed goes through np_xml_text. */
#define _GNU_SOURCE
#include "flame_svg.h"
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "stacks.h"
#include "textfmt.h"

enum {
    XPAD = 10,      /* left and right margins */
    FRAME_H = 16,   /* one level of the graph */
    TOP = 52,       /* room for the title, the subtitle and the buttons */
    NOTE_H = 16,    /* and for the note of what the trace lost, when it did */
    BOTTOM = 28,    /* room for the details line */
    FONT_PX = 12,
    TITLE_FONT_PX = 17,
};
#define CHAR_W (FONT_PX * 0.6) /* width of one glyph of a monospace font */

struct frame {
    uint32_t node;           /* its stack frame; NP_NONE: "all" */
    uint32_t parent;         /* index of its parent frame; NP_NONE for "all" */
    uint32_t depth;          /* 0: "all"; 1: threads */
    uint64_t off, total;     /* ns from the left edge, inclusive ns */
    uint64_t self, calls;
    uint64_t cursor;         /* where its next child starts, ns from the left */
};

struct layout {
    struct frame *frames;
    size_t n, cap;
    uint32_t max_depth;
    size_t omitted;
    double px_per_ns;
};

static int push(struct layout *l, const struct frame *f)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct frame *p = realloc(l->frames, cap * sizeof *p);
        if (!p)
            return -1;
        l->frames = p;
        l->cap = cap;
    }
    l->frames[l->n++] = *f;
    if (f->depth > l->max_depth)
        l->max_depth = f->depth;
    return 0;
}

/* The stack frame after N in preorder within TOP's subtree (below N only
 * when DESCEND), or NP_NONE. Iterative: trees may be deep. */
static uint32_t next_node(const struct np_stack_frame *nodes, uint32_t n, uint32_t top, bool descend)
{
    if (descend && nodes[n].first_child != NP_NONE)
        return nodes[n].first_child;
    for (; n != top; n = nodes[n].parent)
        if (nodes[n].next_sibling != NP_NONE)
            return nodes[n].next_sibling;
    return NP_NONE;
}

static size_t nodes_with_calls(const struct np_stack_frame *nodes, uint32_t top)
{
    size_t n = 0;
    for (uint32_t i = top; i != NP_NONE; i = next_node(nodes, i, top, true))
        n += nodes[i].calls != 0;
    return n;
}

/* Frames for the stack frames of one thread's tree, under frame 0 ("all"). */
static int lay_out_thread(struct layout *l, const struct np_stack_frame *nodes, uint32_t root, uint32_t *frame_of,
                          double min_px)
{
    for (uint32_t i = root; i != NP_NONE;) {
        const struct np_stack_frame *nd = &nodes[i];
        /* only kept nodes are descended into: a visited node's parent has a frame */
        uint32_t pi = i == root ? 0 : frame_of[nd->parent];
        struct frame *parent = &l->frames[pi];
        uint64_t end = parent->off + parent->total;
        uint64_t off = parent->cursor < end ? parent->cursor : end;
        uint64_t total = nd->total_ns < end - off ? nd->total_ns : end - off; /* never past the parent */
        parent->cursor = off + total;
        bool keep = nd->calls != 0;
        if (keep && (double)total * l->px_per_ns < min_px) {
            l->omitted += nodes_with_calls(nodes, i);
            keep = false;
        }
        if (keep) {
            struct frame f = { i, pi, parent->depth + 1, off, total, nd->self_ns, nd->calls, off };
            frame_of[i] = (uint32_t)l->n;
            if (push(l, &f))
                return -1;
        }
        i = next_node(nodes, i, root, keep);
    }
    return 0;
}

static int lay_out(struct layout *l, const struct np_model *m, const struct np_stacks *s, double usable,
                   double min_px)
{
    size_t nthreads;
    const struct np_stack_frame *nodes = s->frames;
    np_model_threads(m, &nthreads);
    struct frame all = { NP_NONE, NP_NONE, 0, 0, 0, 0, 0, 0 };
    for (size_t t = 0; t < nthreads; t++) {
        all.total += nodes[s->roots[t]].total_ns;
        all.calls += nodes[s->roots[t]].calls;
    }
    l->px_per_ns = all.total ? usable / (double)all.total : 0;
    if (push(l, &all))
        return -1;
    uint32_t *frame_of = malloc((s->n ? s->n : 1) * sizeof *frame_of);
    if (!frame_of)
        return -1;
    int rc = 0;
    for (size_t t = 0; t < nthreads && !rc; t++)
        rc = lay_out_thread(l, nodes, s->roots[t], frame_of, min_px);
    free(frame_of);
    return rc;
}

/* ---- writing ----------------------------------------------------------------- */

/* V with at most 3 decimals, without trailing zeros. */
static void put_number(FILE *out, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", v);
    char *end = buf + strlen(buf);
    while (end[-1] == '0')
        end--;
    if (end[-1] == '.')
        end--;
    fwrite(buf, 1, (size_t)(end - buf), out);
}

/* A warm colour from NAME (FNV-1a): the same function, the same colour. */
static void put_colour(FILE *out, const char *name, bool synthetic)
{
    if (synthetic) {
        fputs("rgb(200,200,190)", out);
        return;
    }
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    fprintf(out, "rgb(%u,%u,%u)", 205 + (h & 0xff) * 50 / 255, (h >> 8 & 0xff) * 230 / 255,
            (h >> 16 & 0xff) * 55 / 255);
}

/* NAME cut to what fits in W px ("..." marks a cut); nothing below 3 characters. */
static void put_label(FILE *out, const char *name, double w)
{
    double fit = (w - 6) / CHAR_W;
    if (fit < 3)
        return;
    size_t n = (size_t)fit;
    if (np_utf8_chars(name) <= n) {
        np_xml_text(out, name, SIZE_MAX);
        return;
    }
    np_xml_text(out, name, n - 2);
    fputs("..", out);
}

struct writer {
    FILE *out;
    const struct np_model *m;
    const struct np_stacks *s;
    const struct layout *l;
    double usable;
    unsigned top;            /* where the frames start */
    bool inverted;
    const char *calls_word;  /* "samples" in a profile estimated from them */
    enum np_time_unit unit;  /* of the times (cycles, instructions: np_format_time) */
};

static void write_frame(const struct writer *w, size_t i, const char *name)
{
    const struct frame *f = &w->l->frames[i];
    const struct frame *all = &w->l->frames[0];
    FILE *out = w->out;
    double x = XPAD + (double)f->off * w->l->px_per_ns;
    double width = i == 0 ? w->usable : (double)f->total * w->l->px_per_ns;
    unsigned level = w->inverted ? f->depth : w->l->max_depth - f->depth;
    unsigned y = w->top + level * FRAME_H;
    char total[NP_DURATION_MAX], self[NP_DURATION_MAX];

    fprintf(out, "<g class=\"frame\" id=\"f%zu\" data-parent=\"%ld\"><title>", i,
            f->parent == NP_NONE ? -1L : (long)f->parent);
    np_xml_text(out, name, SIZE_MAX);
    fprintf(out, " (%s %" PRIu64 ", total %s, self %s, %.2f%%)</title><rect x=\"", w->calls_word, f->calls,
            np_format_time(total, sizeof total, f->total, w->unit), np_format_time(self, sizeof self, f->self, w->unit),
            all->total ? 100.0 * (double)f->total / (double)all->total : 0.0);
    put_number(out, x);
    fprintf(out, "\" y=\"%u\" width=\"", y);
    put_number(out, width);
    fprintf(out, "\" height=\"%d\" rx=\"2\" ry=\"2\" fill=\"", FRAME_H - 1);
    put_colour(out, name, f->depth <= 1); /* "all" and the threads */
    fputs("\"/><text x=\"", out);
    put_number(out, x + 3);
    fprintf(out, "\" y=\"%u\">", y + FRAME_H - 4);
    put_label(out, name, width);
    fputs("</text></g>\n", out);
}

/* The frames: "all", "PID/TID NAME" for threads, function names (and
 * the merged frames' names: stacks.h). */
static int write_frames(const struct writer *w)
{
    size_t nthreads;
    const struct np_stack_frame *nodes = w->s->frames;
    const struct np_thread *threads = np_model_threads(w->m, &nthreads);
    char merged[NP_STACK_NAME_MAX];
    for (size_t i = 0; i < w->l->n; i++) {
        const struct frame *f = &w->l->frames[i];
        if (f->node == NP_NONE) {
            write_frame(w, i, "all");
        } else if (nodes[f->node].kind == NP_STACK_THREAD) {
            const struct np_thread *t = &threads[nodes[f->node].thread];
            char *name;
            int len = t->name ? asprintf(&name, "%" PRIu32 "/%" PRIu32 " %s", t->pid, t->tid, t->name)
                              : asprintf(&name, "%" PRIu32 "/%" PRIu32, t->pid, t->tid);
            if (len < 0)
                return -1;
            write_frame(w, i, name);
            free(name);
        } else {
            write_frame(w, i, np_stack_name(w->s, w->m, f->node, merged, sizeof merged));
        }
    }
    return 0;
}

/* Click a frame: it fills the width, its ancestors stay (faded), the rest
 * hides; click "all" or "Reset Zoom" to restore. "Search" (or Ctrl-F)
 * highlights the frames whose name matches a regular expression and shows
 * the share of time they cover (nested matches counted once). Frames are
 * in preorder, so a frame's descendants are the frames after it that are
 * deeper than it. */
static const char *const script[] = {
    "'use strict';\n",
    "(function () {\n",
    "  var doc = document, framesGroup = doc.getElementById('frames');\n",
    "  var svg = framesGroup.ownerSVGElement || doc.documentElement;\n",
    "  var xpad = +svg.getAttribute('data-xpad'), usable = +svg.getAttribute('data-usable');\n",
    "  var charw = +svg.getAttribute('data-charw');\n",
    "  var unzoomButton = doc.getElementById('unzoom'), searchButton = doc.getElementById('search');\n",
    "  var details = doc.getElementById('details'), matched = doc.getElementById('matched');\n",
    "  var frames = [], searching = false;\n",
    "  var groups = framesGroup.getElementsByTagName('g');\n",
    "  for (var i = 0; i < groups.length; i++) {\n",
    "    var g = groups[i], rect = g.getElementsByTagName('rect')[0];\n",
    "    var title = g.getElementsByTagName('title')[0].textContent, parent = +g.getAttribute('data-parent');\n",
    "    frames.push({ g: g, rect: rect, text: g.getElementsByTagName('text')[0], title: title,\n",
    "      name: title.slice(0, Math.max(title.lastIndexOf(' (calls '), title.lastIndexOf(' (samples '))),\n",
    "      parent: parent,\n",
    "      depth: parent < 0 ? 0 : frames[parent].depth + 1, x: +rect.getAttribute('x'),\n",
    "      w: +rect.getAttribute('width'), fill: rect.getAttribute('fill') });\n",
    "  }\n",
    "  function num(v) { return String(Math.round(v * 1000) / 1000); }\n",
    "  function label(f, w) {\n",
    "    var fit = Math.floor((w - 6) / charw), chars = Array.from(f.name);\n",
    "    if (fit < 3) return '';\n",
    "    return chars.length <= fit ? f.name : chars.slice(0, fit - 2).join('') + '..';\n",
    "  }\n",
    "  function place(f, x, w, cls) {\n",
    "    f.rect.setAttribute('x', num(x));\n",
    "    f.rect.setAttribute('width', num(w));\n",
    "    f.text.setAttribute('x', num(x + 3));\n",
    "    f.text.textContent = label(f, w);\n",
    "    f.g.setAttribute('class', cls);\n",
    "  }\n",
    "  function unzoom() {\n",
    "    for (var i = 0; i < frames.length; i++) place(frames[i], frames[i].x, frames[i].w, 'frame');\n",
    "    unzoomButton.setAttribute('class', 'button hide');\n",
    "  }\n",
    "  function zoom(z) {\n",
    "    var f = frames[z], end = z + 1;\n",
    "    if (f.parent < 0 || !(f.w > 0)) { unzoom(); return; }\n",
    "    var scale = usable / f.w;\n",
    "    while (end < frames.length && frames[end].depth > f.depth) end++;\n",
    "    for (var i = 0; i < frames.length; i++) frames[i].g.setAttribute('class', 'frame hide');\n",
    "    for (var a = f.parent; a >= 0; a = frames[a].parent) place(frames[a], xpad, usable, 'frame parent');\n",
    "    for (i = z; i < end; i++)\n",
    "      place(frames[i], xpad + (frames[i].x - f.x) * scale, frames[i].w * scale, 'frame');\n",
    "    unzoomButton.setAttribute('class', 'button');\n",
    "  }\n",
    "  function resetSearch() {\n",
    "    for (var i = 0; i < frames.length; i++) frames[i].rect.setAttribute('fill', frames[i].fill);\n",
    "    matched.textContent = '';\n",
    "    searchButton.textContent = 'Search';\n",
    "    searching = false;\n",
    "  }\n",
    "  function search(text) {\n",
    "    var re, cover = 0, hit = [false];\n",
    "    try { re = new RegExp(text); } catch (e) { matched.textContent = 'bad regular expression'; return; }\n",
    "    resetSearch();\n",
    "    for (var i = 1; i < frames.length; i++) {\n",
    "      var f = frames[i], a = f.parent;\n",
    "      hit[i] = re.test(f.name);\n",
    "      if (!hit[i]) continue;\n",
    "      f.rect.setAttribute('fill', 'rgb(230,0,230)');\n",
    "      while (a > 0 && !hit[a]) a = frames[a].parent;\n",
    "      if (a <= 0) cover += f.w; /* no matching ancestor: not counted yet */\n",
    "    }\n",
    "    var total = frames[0].w;\n",
    "    matched.textContent = 'Matched: ' + (total > 0 ? 100 * cover / total : 0).toFixed(1) + '%';\n",
    "    searchButton.textContent = 'Reset Search';\n",
    "    searching = true;\n",
    "  }\n",
    "  function ask() {\n",
    "    var text = window.prompt('Search frames (a regular expression):', '');\n",
    "    if (text) search(text);\n",
    "  }\n",
    "  function frameOf(el) {\n",
    "    for (; el && el !== svg; el = el.parentNode) {\n",
    "      var id = el.getAttribute ? el.getAttribute('id') : null;\n",
    "      if (id && /^f[0-9]+$/.test(id)) return +id.slice(1);\n",
    "    }\n",
    "    return -1;\n",
    "  }\n",
    "  svg.addEventListener('click', function (e) {\n",
    "    if (e.target === unzoomButton) unzoom();\n",
    "    else if (e.target === searchButton) { if (searching) resetSearch(); else ask(); }\n",
    "    else { var i = frameOf(e.target); if (i >= 0) zoom(i); }\n",
    "  });\n",
    "  svg.addEventListener('mouseover', function (e) {\n",
    "    var i = frameOf(e.target);\n",
    "    details.textContent = i >= 0 ? frames[i].title : ' ';\n",
    "  });\n",
    "  svg.addEventListener('mouseout', function () { details.textContent = ' '; });\n",
    "  window.addEventListener('keydown', function (e) {\n",
    "    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.keyCode === 70)) { e.preventDefault(); ask(); }\n",
    "    else if (e.key === 'Escape' && searching) resetSearch();\n",
    "  });\n",
    "})();\n",
};

static void write_head(const struct writer *w, const struct np_flame_options *o, const char *merged, unsigned width,
                       unsigned height)
{
    FILE *out = w->out;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
            "viewBox=\"0 0 %u %u\" data-xpad=\"%d\" data-usable=\"",
            width, height, width, height, XPAD);
    put_number(out, w->usable);
    fputs("\" data-charw=\"", out);
    put_number(out, CHAR_W);
    fprintf(out,
            "\">\n"
            "<!-- flame graph written by nanoprof: %zu frames, %zu omitted%s -->\n"
            "<style type=\"text/css\">\n"
            "text { font-family: monospace; font-size: %dpx; fill: #000; }\n"
            "#title { font-size: %dpx; }\n"
            ".frame { cursor: pointer; }\n"
            ".frame:hover rect { stroke: #000; stroke-width: 0.5; }\n"
            ".parent { opacity: 0.5; }\n"
            ".hide { display: none; }\n"
            ".button { cursor: pointer; fill: #225; }\n"
            "#note { fill: #b00000; }\n"
            "</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f2\"/>\n"
            "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
            w->l->n, w->l->omitted, merged ? ", deep recursion merged" : "", FONT_PX, TITLE_FONT_PX, width, height,
            width / 2);
    np_xml_text(out, o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph", SIZE_MAX);
    fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"42\" text-anchor=\"middle\">", width / 2);
    if (o->subtitle)
        np_xml_text(out, o->subtitle, SIZE_MAX);
    if (w->l->omitted)
        fprintf(out, "%s%zu frame%s narrower than %g%s left out", o->subtitle ? "; " : "", w->l->omitted,
                w->l->omitted == 1 ? "" : "s", o->min_width, o->min_width_percent ? "%" : " px");
    fputs("</text>\n", out);
    unsigned y = TOP + 6;
    if (o->note) { /* below the subtitle, where it cannot be missed */
        fprintf(out, "<text id=\"note\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">", width / 2, y);
        np_xml_text(out, o->note, SIZE_MAX);
        fputs("</text>\n", out);
        y += NOTE_H;
    }
    if (merged) { /* frames that are not one path of calls each say so */
        fprintf(out, "<text id=\"merged\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">", width / 2, y);
        np_xml_text(out, merged, SIZE_MAX);
        fputs("</text>\n", out);
    }
    fprintf(out,
            "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
            "<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n"
            "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
            "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
            "<g id=\"frames\">\n",
            XPAD, width - XPAD, XPAD, height - 10, width - XPAD, height - 10);
}

int np_flame_svg(FILE *out, const struct np_model *m, const struct np_flame_options *o, struct np_flame_stats *stats)
{
    unsigned width = o->width ? o->width : NP_FLAME_WIDTH;
    if (width < NP_FLAME_MIN_WIDTH)
        width = NP_FLAME_MIN_WIDTH;
    double usable = width - 2 * XPAD;
    double min_px = o->min_width_percent ? usable * o->min_width / 100 : o->min_width;
    struct layout l = { 0 };
    struct np_stacks s;
    if (np_stacks_build(&s, m))
        return -1;
    if (lay_out(&l, m, &s, usable, min_px)) {
        free(l.frames);
        np_stacks_free(&s);
        return -1;
    }
    char note[NP_STACK_NOTE_MAX];
    const char *merged = np_stacks_note(&s, m, note, sizeof note);
    unsigned top = TOP + (o->note ? NOTE_H : 0) + (merged ? NOTE_H : 0);
    unsigned height = top + (l.max_depth + 1) * FRAME_H + BOTTOM;
    struct writer w = { out, m, &s, &l, usable, top, o->inverted, np_model_estimated(m) ? "samples" : "calls",
                        np_model_time_unit(m) };
    write_head(&w, o, merged, width, height);
    int rc = write_frames(&w);
    if (!rc) {
        fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
        for (size_t i = 0; i < sizeof script / sizeof script[0]; i++)
            fputs(script[i], out);
        fputs("]]></script>\n</svg>\n", out);
    }
    if (stats) {
        stats->frames = l.n;
        stats->omitted = l.omitted;
        snprintf(stats->merged, sizeof stats->merged, "%s", merged ? merged : "");
    }
    free(l.frames);
    np_stacks_free(&s);
    return rc;
}
