/* replay.c - `nanoprof replay`: every call of a trace in the order it was
 * made, printed as the trace is read.
 *
 * The model tells each call as it reads it (its listener, model.h) and
 * keeps only the open calls, so replay runs in memory bounded by the
 * nesting depth, whatever the number of calls, and its first lines come
 * out at once. Threads come as the trace's chunks interleave them: a
 * "# thread" line whenever the thread changes. A call's duration is known
 * only at its end, after its callees' lines, so a call with callees takes
 * two lines, as in `uftrace replay`: its name and an opening brace where
 * it starts, a closing brace, its name and its duration where it ends; a
 * call without any is one line. Which of the two a call is shows at its
 * thread's next call, so each thread keeps its last entry back until
 * then. Lines carry the
 * start in seconds since the call's process started (to the nanosecond,
 * so that lines order as the calls did; in cycles or instructions since
 * then for a trace that counts those), the duration, and the name
 * indented two spaces per nesting level; the line that closes a call
 * closed by re-synchronisation ends in " (?)". The totals, known at the end,
 * close the output. A write that fails stops the reading (a closed pipe,
 * as `replay | head` makes, quietly). Exit: as report. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "view.h"
#include "analyze/containers.h"
#include "common/trace_format.h"

static void usage(FILE *out)
{
    fputs("usage: nanoprof replay [PATH] [options]\n"
          "\n"
          "Every call of a trace in the order it was made, printed as the trace\n"
          "is read. A call is one line with its start (seconds since its process\n"
          "started), its duration and its name, indented two spaces per nesting\n"
          "level; a call that made calls is two lines around theirs: \"name {\"\n"
          "with its start, and \"} /* name */\" with its duration. A \"# thread\"\n"
          "line comes whenever the thread changes (threads interleave as they\n"
          "were recorded); the last line gives the totals. Only the calls still\n"
          "open are kept, so any trace replays in a few MB, and `replay | head`\n"
          "stops reading when head is done. PATH is a trace directory or one\n"
          ".npt file (default " NP_TRACE_DEFAULT_PATH ").\n"
          "\n"
          "options:\n" NP_VIEW_OPTIONS_HELP
          "\n"
          "Times are wall time, or what the trace counts (cycles, instructions),\n"
          "as the first line says; a start is then the count since its process\n"
          "started. The line that closes a call closed by re-synchronisation (its\n"
          "return missed, its end not exact) ends in \"(?)\". A call recorded\n"
          "with its arguments (nanoprof record -A) shows them, \"name(1, \"x\") {\",\n"
          "and with its return value (-R) ends \"} = 42 /* name */\", or, on one\n"
          "line, \"name(1) = 42\".\n",
          out);
}

/* Per thread of the model. */
#define ARGS_TEXT_MAX (NP_VALUES_MAX * (4 * NP_VALUE_STR_MAX + 4))

struct thread_state {
    struct np_call entry;    /* its innermost call, not printed yet (open) */
    bool open;
    bool has_args;           /* args holds entry's arguments */
    char args[ARGS_TEXT_MAX];
};

struct name {
    char *text;              /* the function's name on one line, or NULL until needed */
    size_t len;
};

struct replay {
    struct np_view *v;
    FILE *out;
    enum np_time_unit unit;  /* of the times, known at the first call */
    bool head;               /* the title lines are out */
    uint32_t thread;         /* whose line came last, NP_NONE */
    struct thread_state *threads;
    size_t cap_threads;
    struct name *names;
    size_t cap_names;
    char *line;
    size_t cap_line;
    uint64_t calls;
    bool nomem;
};

enum line_kind { LINE_ENTRY, LINE_LEAF, LINE_EXIT };

static int put(struct replay *r, const char *s, size_t n)
{
    if (fwrite(s, 1, n, r->out) == n)
        return 0;
    np_view_write_failed(r->v);
    return -1;
}

static int print_head(struct replay *r, const struct np_model *m)
{
    r->head = true;
    r->unit = np_model_time_unit(m); /* the first process's: begun before its first call */
    fputs("# ", r->out);
    np_text_field(r->out, r->v->path);
    fprintf(r->out, ": every call, %s\n", np_view_time_kind(r->v, m));
    if (np_model_estimated(m))
        fputs("# each call spans the successive samples its frame was on the stack in\n", r->out);
    np_view_print_estimate(r->out, m, "# ");
    fprintf(r->out, "%14s %12s  %s\n", "Start", "Duration", "Function");
    if (!ferror(r->out))
        return 0;
    np_view_write_failed(r->v);
    return -1;
}

/* The thread state of thread index T, grown to hold it. */
static struct thread_state *thread_state(struct replay *r, uint32_t t)
{
    if (t >= r->cap_threads) {
        size_t old = r->cap_threads;
        if (NP_GROW(r->threads, r->cap_threads, (size_t)t + 1) < 0)
            return NULL;
        memset(r->threads + old, 0, (r->cap_threads - old) * sizeof *r->threads);
    }
    return &r->threads[t];
}

/* Function F's name with control characters as '?', made once. */
static const struct name *name_of(struct replay *r, const struct np_model *m, uint32_t f)
{
    if (f >= r->cap_names) {
        size_t old = r->cap_names;
        if (NP_GROW(r->names, r->cap_names, (size_t)f + 1) < 0)
            return NULL;
        memset(r->names + old, 0, (r->cap_names - old) * sizeof *r->names);
    }
    struct name *n = &r->names[f];
    if (!n->text) {
        if (!(n->text = strdup(np_model_functions(m, &(size_t){ 0 })[f].name)))
            return NULL;
        n->len = strlen(np_scrub_line(n->text));
    }
    return n;
}

/* NS after BASE as seconds with nine decimals ("-" before, should a clock
 * disagree with the process's start), right-aligned in 14 columns; a
 * count (cycles, instructions: not COUNT_NS) as it is. */
static char *put_start(char *p, uint64_t ns, uint64_t base, bool count)
{
    char text[32];
    size_t n = 0;
    uint64_t d = ns >= base ? ns - base : base - ns;
    if (ns < base)
        text[n++] = '-';
    if (count) {
        n += np_put_decimal(text + n, d);
    } else {
        n += np_put_decimal(text + n, d / 1000000000u);
        text[n++] = '.';
        for (uint64_t frac = d % 1000000000u, div = 100000000u; div; div /= 10)
            text[n++] = (char)('0' + frac / div % 10);
    }
    for (size_t i = n; i < 14; i++)
        *p++ = ' ';
    memcpy(p, text, n);
    return p + n;
}

static int print_line(struct replay *r, const struct np_model *m, enum line_kind kind, const struct np_call *c,
                      const char *args)
{
    const struct np_thread *th = &np_model_threads(m, &(size_t){ 0 })[c->thread];
    if (c->thread != r->thread) {
        r->thread = c->thread;
        fputs("# ", r->out);
        np_view_print_thread(r->out, th);
        putc('\n', r->out);
    }
    const struct name *name = name_of(r, m, c->function);
    if (!name || NP_GROW(r->line, r->cap_line, name->len + 2 * NP_VIEW_DRAWN_LEVELS + 2 * ARGS_TEXT_MAX + 128) < 0) {
        r->nomem = true;
        return -1;
    }
    char *p = r->line;
    if (kind == LINE_EXIT) {
        memset(p, ' ', 14);
        p += 14;
    } else {
        p = put_start(p, c->start_ns, np_model_processes(m, &(size_t){ 0 })[th->process].start_ns,
                      r->unit != NP_UNIT_NS);
    }
    *p++ = ' ';
    char d[NP_DURATION_MAX];
    size_t dlen = kind == LINE_ENTRY ? 0 : strlen(np_format_time(d, sizeof d, c->duration_ns, r->unit));
    if (dlen < 12) { /* right-aligned in 12 columns */
        memset(p, ' ', 12 - dlen);
        p += 12 - dlen;
    }
    memcpy(p, d, dlen);
    p += dlen;
    memcpy(p, "  ", 2);
    p += 2;
    bool cut = c->depth > NP_VIEW_DRAWN_LEVELS;
    size_t indent = 2 * (cut ? NP_VIEW_DRAWN_LEVELS : c->depth);
    memset(p, ' ', indent);
    p += indent;
    if (cut) {
        memcpy(p, "[depth ", 7);
        p += 7;
        p += np_put_decimal(p, (uint64_t)c->depth + 1);
        memcpy(p, "] ", 2);
        p += 2;
    }
    const struct np_call_values *vals = kind == LINE_ENTRY ? NULL : c->values;
    if (kind == LINE_EXIT) {
        memcpy(p, "} ", 2);
        p += 2;
        if (vals && vals->has_ret) {
            memcpy(p, "= ", 2);
            p += 2 + np_value_text(p + 2, ARGS_TEXT_MAX, &vals->ret);
            *p++ = ' ';
        }
        memcpy(p, "/* ", 3);
        p += 3;
    }
    memcpy(p, name->text, name->len);
    p += name->len;
    if (kind == LINE_LEAF && vals && vals->nargs) {
        *p++ = '(';
        p += np_values_text(p, ARGS_TEXT_MAX, vals->args, vals->nargs);
        *p++ = ')';
    } else if (kind == LINE_ENTRY && args) {
        *p++ = '(';
        size_t n = strlen(args);
        memcpy(p, args, n);
        p += n;
        *p++ = ')';
    }
    if (kind == LINE_LEAF && vals && vals->has_ret) {
        memcpy(p, " = ", 3);
        p += 3 + np_value_text(p + 3, ARGS_TEXT_MAX, &vals->ret);
    }
    if (kind == LINE_ENTRY) {
        memcpy(p, " {", 2);
        p += 2;
    } else if (kind == LINE_EXIT) {
        memcpy(p, " */", 3);
        p += 3;
    }
    if (kind != LINE_ENTRY && c->resynced) {
        memcpy(p, " (?)", 4);
        p += 4;
    }
    *p++ = '\n';
    return put(r, r->line, (size_t)(p - r->line));
}

static int on_begin(void *ctx, const struct np_model *m, const struct np_call *c)
{
    struct replay *r = ctx;
    struct thread_state *ts = thread_state(r, c->thread);
    if (!ts) {
        r->nomem = true;
        return -1;
    }
    if (!r->head && print_head(r, m))
        return -1;
    /* the call held back made this one: it has callees */
    if (ts->open && print_line(r, m, LINE_ENTRY, &ts->entry, ts->has_args ? ts->args : NULL))
        return -1;
    ts->entry = *c;
    ts->open = true;
    ts->has_args = false;
    return 0;
}

/* The arguments of the call held back came. */
static int on_values(void *ctx, const struct np_model *m, const struct np_call *c)
{
    (void)m;
    struct replay *r = ctx;
    struct thread_state *ts = &r->threads[c->thread]; /* its begin made it */
    if (ts->open && c->values) {
        np_values_text(ts->args, sizeof ts->args, c->values->args, c->values->nargs);
        ts->has_args = c->values->nargs > 0;
    }
    return 0;
}

static int on_end(void *ctx, const struct np_model *m, const struct np_call *c)
{
    struct replay *r = ctx;
    struct thread_state *ts = &r->threads[c->thread]; /* its begin made it */
    r->calls++;
    /* still held back: no callee came, one line */
    bool leaf = ts->open;
    ts->open = false;
    return print_line(r, m, leaf ? LINE_LEAF : LINE_EXIT, c, NULL);
}

static void replay_free(struct replay *r)
{
    for (size_t i = 0; i < r->cap_names; i++)
        free(r->names[i].text);
    free(r->names);
    free(r->threads);
    free(r->line);
}

static int run(struct np_view *v)
{
    struct replay r = { .v = v, .out = stdout, .thread = NP_NONE };
    const struct np_call_listener listener = { &r, on_begin, on_end, on_values };
    struct np_model *m;
    int rc;
    v->opt.listener = &listener;
    if (isatty(STDOUT_FILENO)) /* the lines show the progress */
        np_view_no_progress(v);
    int failed = np_view_load(v, &m, &rc);
    if (failed) {
        replay_free(&r);
        return failed;
    }
    int written = np_view_write_status(v, "the timeline");
    if (written >= 0) {
        rc = written;
    } else if (r.nomem) {
        fputs("nanoprof replay: out of memory\n", stderr);
        rc = 1;
    } else {
        if (!r.head)
            print_head(&r, m);
        char threads[96]; /* counted as every view counts them */
        printf("# %" PRIu64 " call%s in %s\n", r.calls, r.calls == 1 ? "" : "s",
               np_view_threads(v, m, threads, sizeof threads));
        np_view_print_loss(v, stdout, "# "); /* known once read: said last */
        if (np_view_flush(v, stdout, "the timeline"))
            rc = 1;
    }
    np_model_free(m);
    replay_free(&r);
    return rc;
}

int np_cmd_replay(int argc, char **argv)
{
    static const struct np_view_spec spec = { NULL, NULL, usage, 1 };
    struct np_view v = { .cmd = NULL };
    int rc = np_view_parse(&v, &spec, NULL, argc, argv);
    if (!rc)
        rc = np_view_status(&v, run(&v));
    np_view_free(&v);
    return rc < 0 ? 0 : rc;
}
