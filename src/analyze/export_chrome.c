/* export_chrome.c - the timeline as Chrome trace-event JSON (the JSON
 * Object Format), which ui.perfetto.dev and chrome://tracing open: one
 * "B" and one "E" event per call, names of processes and threads as "M"
 * events. Times are microseconds since the trace began, printed with
 * three decimals so that nanoseconds survive.
 *
 * Calls come from np_model_calls() (by thread, start, depth). Per thread
 * a stack of open calls rebuilds the nesting: an open call is closed
 * before the next call when it ended by then and is not that call's
 * ancestor. Calls of zero length at the same time (whose order the model
 * does not keep) then still nest, and every E follows its B with
 * timestamps that never go back. A timeline is wall time, so dump takes
 * no --exclude-switched for it; an end past the caller's, which only
 * that would give, is drawn at the caller's end all the same.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "export.h"
#include "textfmt.h"

struct open_call {
    uint64_t end_ns;
    uint32_t function;
};

struct chrome {
    FILE *out;
    const struct np_function *fns;
    uint64_t base_ns;        /* ts 0 */
    bool first;              /* no event written yet */
    struct open_call *stack;
    size_t depth, cap;
};

/* Starts an event: the separator, ph, pid, tid. */
static void event_start(struct chrome *c, char ph, uint32_t pid, uint32_t tid)
{
    fprintf(c->out, "%s\n{\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, c->first ? "" : ",", ph, pid, tid);
    c->first = false;
}

static void metadata(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    event_start(c, 'M', pid, tid);
    fprintf(c->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
    np_json_string(c->out, name);
    fputs("}}", c->out);
}

static void call_event(struct chrome *c, char ph, const struct np_thread *t, uint64_t ns, uint32_t function)
{
    uint64_t us = ns - c->base_ns;
    event_start(c, ph, t->pid, t->tid);
    fprintf(c->out, ",\"ts\":%" PRIu64 ".%03u,\"name\":", us / 1000, (unsigned)(us % 1000));
    np_json_string(c->out, c->fns[function].name);
    fputs(",\"cat\":\"function\"}", c->out);
}

static void close_top(struct chrome *c, const struct np_thread *t)
{
    const struct open_call *o = &c->stack[--c->depth];
    call_event(c, 'E', t, o->end_ns, o->function);
}

/* Where the timeline starts: the earliest process start or event. */
static uint64_t base_time(const struct np_model *m)
{
    size_t np, nt, nc;
    const struct np_process *p = np_model_processes(m, &np);
    const struct np_thread *t = np_model_threads(m, &nt);
    const struct np_call *calls = np_model_calls(m, &nc);
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < np; i++)
        if (p[i].start_ns < base)
            base = p[i].start_ns;
    for (size_t i = 0; i < nt; i++)
        if (t[i].calls && t[i].first_ns < base)
            base = t[i].first_ns;
    for (size_t i = 0; i < nc; i++) /* sorted by start within each thread */
        if (calls[i].start_ns < base)
            base = calls[i].start_ns;
    return base == UINT64_MAX ? 0 : base;
}

static void write_names(struct chrome *c, const struct np_model *m)
{
    size_t np, nt;
    const struct np_process *p = np_model_processes(m, &np);
    const struct np_thread *t = np_model_threads(m, &nt);
    for (size_t i = 0; i < np; i++) {
        bool seen = false; /* an exec'd program keeps its pid: the first name stays */
        for (size_t j = 0; j < i && !seen; j++)
            seen = p[j].pid == p[i].pid;
        if (!seen)
            metadata(c, "process_name", p[i].pid, 0, p[i].argc ? p[i].argv[0] : p[i].file);
    }
    for (size_t i = 0; i < nt; i++)
        if (t[i].name)
            metadata(c, "thread_name", t[i].pid, t[i].tid, t[i].name);
}

int np_export_chrome(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    size_t nc, nt;
    const struct np_call *calls = np_model_calls(m, &nc);
    const struct np_thread *threads = np_model_threads(m, &nt);
    struct chrome c = { out, np_model_functions(m, &(size_t){ 0 }), base_time(m), true, NULL, 0, 0 };
    const struct np_thread *cur = NULL; /* whose calls are open */
    int rc = 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"nanoprof\",", out);
    fprintf(out, "\"start_unix_ns\":%" PRIu64, c.base_ns);
    np_export_json_note(out, o);
    if (np_model_estimated(m)) { /* calls from successive samples */
        char label[NP_ESTIMATE_LABEL_MAX];
        fputs(",\"estimate\":", out);
        np_json_string(out, np_model_estimate_label(m, label, sizeof label));
        fputs(",\"events\":\"each call spans the successive samples its frame was on the stack in\"", out);
    }
    fputs("},\"traceEvents\":[", out);
    write_names(&c, m);
    for (size_t i = 0; i < nc; i++) {
        const struct np_call *k = &calls[i];
        const struct np_thread *t = &threads[k->thread];
        while (c.depth && cur != t)
            close_top(&c, cur);
        cur = t;
        while (c.depth && (c.stack[c.depth - 1].end_ns < k->start_ns ||
                           (c.depth > k->depth && c.stack[c.depth - 1].end_ns <= k->start_ns)))
            close_top(&c, t);
        if (c.depth == c.cap) {
            size_t cap = c.cap ? 2 * c.cap : 64;
            struct open_call *s = realloc(c.stack, cap * sizeof *s);
            if (!s) {
                rc = -1;
                break;
            }
            c.stack = s;
            c.cap = cap;
        }
        uint64_t end = k->start_ns + k->duration_ns;
        if (c.depth && end > c.stack[c.depth - 1].end_ns)
            end = c.stack[c.depth - 1].end_ns;
        c.stack[c.depth++] = (struct open_call){ end, k->function };
        call_event(&c, 'B', t, k->start_ns, k->function);
    }
    while (c.depth)
        close_top(&c, cur);
    fputs("\n]}\n", out);
    free(c.stack);
    return rc;
}
