/* export_chrome.c - the timeline as Chrome trace-event JSON (the JSON
 * Object Format), which ui.perfetto.dev and chrome://tracing open: one
 * "B" and one "E" event per call, names of processes and threads as "M"
 * events. Times are microseconds since the trace began, printed with
 * three decimals so that nanoseconds survive.
 *
 * The calls are written as the model reads them (its listener, model.h):
 * the model keeps only the open calls, so memory stays bounded by the
 * nesting depth whatever the number of calls. Per thread a call's B comes
 * after its callers' and its E before theirs, in time order; threads
 * interleave as the trace's chunks do (viewers group events by thread).
 * ts 0 must be known at the first event, before the other processes are
 * read: it is the earliest time read by then (np_model_first_ns: the
 * first process's start, as a rule; the files are read by pid, so a
 * parent comes before the children it forks, which start later). The
 * names of processes and threads (a THREAD chunk may follow the thread's
 * events) are written last: the order of events in the array does not
 * matter to the viewers. So is otherData, after the array: what the
 * trace lost, and whether the calls are estimated from samples, are
 * known only once it is read (the order of an object's members does not
 * matter either). A timeline is wall time, so dump
 * takes no --exclude-switched for it.
 *
 * A trace that counts cycles or instructions puts them where the format
 * wants microseconds (1 us of "ts" is 1000 cycles), and otherData says
 * so ("time_unit", "ts_unit"). The end of a call closed by
 * re-synchronisation has "args":{"resynced":true}: a viewer shows it
 * with the call. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "export.h"
#include "textfmt.h"

struct chrome {
    FILE *out;
    const struct np_export_options *opt; /* its note: what was lost, set by finish */
    bool started;            /* the head is written */
    bool first;              /* no event written yet */
    bool failed;             /* a write failed: the read was stopped */
    bool nomem;
    uint64_t base_ns;        /* ts 0 */
    char **names;            /* per function: its name as a JSON string, or NULL until needed */
    size_t *name_lens;
    size_t cap_names;
    char *line;              /* the event being written */
    size_t cap_line;
};

static void head(struct chrome *c, const struct np_model *m)
{
    c->started = true;
    c->base_ns = np_model_first_ns(m);
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", c->out);
}

/* After the events: otherData. (Perfetto wants displayTimeUnit before
 * the events: it counts a later one as "too late".) */
static void tail(struct chrome *c, const struct np_model *m)
{
    enum np_time_unit unit = np_model_time_unit(m);
    if (unit == NP_UNIT_NS)
        fprintf(c->out, "\n],\"otherData\":{\"source\":\"nanoprof\",\"start_unix_ns\":%" PRIu64, c->base_ns);
    else
        fprintf(c->out,
                "\n],\"otherData\":{\"source\":\"nanoprof\",\"time_unit\":\"%s\","
                "\"ts_unit\":\"1 us of ts is 1000 %s\",\"start\":%" PRIu64,
                np_time_unit_name(unit), np_time_unit_name(unit), c->base_ns);
    if (np_model_estimated(m)) { /* calls from successive samples */
        char label[NP_ESTIMATE_LABEL_MAX];
        fputs(",\"estimate\":", c->out);
        np_json_string(c->out, np_model_estimate_label(m, label, sizeof label));
        fputs(",\"events\":\"each call spans the successive samples its frame was on the stack in\"", c->out);
    }
    np_export_json_note(c->out, c->opt);
    fputs("}}\n", c->out);
}

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

/* Function F's name as a JSON string, made once. */
static const char *json_name(struct chrome *c, const struct np_model *m, uint32_t f, size_t *len)
{
    if (f >= c->cap_names) {
        size_t old = c->cap_names;
        if (NP_GROW(c->names, c->cap_names, (size_t)f + 1) < 0)
            return NULL;
        memset(c->names + old, 0, (c->cap_names - old) * sizeof *c->names);
        size_t *lens = realloc(c->name_lens, c->cap_names * sizeof *lens);
        if (!lens)
            return NULL;
        c->name_lens = lens;
    }
    if (!c->names[f]) {
        char *text = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&text, &size);
        if (!mem)
            return NULL;
        np_json_string(mem, np_model_functions(m, &(size_t){ 0 })[f].name);
        if (fclose(mem) != 0) {
            free(text);
            return NULL;
        }
        c->names[f] = text;
        c->name_lens[f] = size;
    }
    *len = c->name_lens[f];
    return c->names[f];
}

/* V as a JSON value at P: a number for decimal formats, else a string
 * (the text the other views show; a C string's bytes as they are, each
 * outside printable ASCII as \u00NN). Returns the bytes written. */
static size_t json_value(char *p, const struct np_value *v)
{
    char t[4 * NP_VALUE_STR_MAX + 32];
    size_t n;
    if (v->format == NP_VAL_INT || v->format == NP_VAL_UINT || (v->format == NP_VAL_AUTO && !np_value_auto_hex(v->v)))
        return np_value_text(p, 32, v);
    const char *s = t;
    if (v->format == NP_VAL_STR) {
        s = v->str;
        n = v->len;
    } else {
        n = np_value_text(t, sizeof t, v);
    }
    char *o = p;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            *o++ = '\\', *o++ = (char)c;
        else if (c >= 0x20 && c < 0x7f)
            *o++ = (char)c;
        else
            o += snprintf(o, 8, "\\u%04x", c);
    }
    *o++ = '"';
    return (size_t)(o - p);
}

/* An E event's args: the call's arguments (arg1...), its return value. */
static char *json_values(char *p, const struct np_call_values *v, bool resynced)
{
    memcpy(p, ",\"args\":{", 9);
    p += 9;
    const char *sep = "";
    for (unsigned i = 0; i < v->nargs; i++) {
        p += sprintf(p, "%s\"arg%u\":", sep, v->args[i].index);
        p += json_value(p, &v->args[i]);
        sep = ",";
    }
    if (v->has_ret) {
        p += sprintf(p, "%s\"retval\":", sep);
        p += json_value(p, &v->ret);
        sep = ",";
    }
    if (resynced)
        p += sprintf(p, "%s\"resynced\":true", sep);
    *p++ = '}';
    return p;
}

/* One B or E event, built in c->line and written at once. */
static int call_event(struct chrome *c, const struct np_model *m, char ph, const struct np_call *k, uint64_t ns)
{
    if (c->failed)
        return -1;
    if (!c->started)
        head(c, m);
    size_t nlen;
    const char *name = json_name(c, m, k->function, &nlen);
    size_t vlen = ph == 'E' && k->values ? (NP_VALUES_MAX + 1) * (6 * NP_VALUE_STR_MAX + 48) : 0;
    if (!name || NP_GROW(c->line, c->cap_line, nlen + 160 + vlen) < 0) {
        c->nomem = c->failed = true;
        return -1;
    }
    const struct np_thread *t = &np_model_threads(m, &(size_t){ 0 })[k->thread];
    char *p = c->line;
    if (!c->first)
        *p++ = ',';
    *p++ = '\n';
    c->first = false;
    memcpy(p, "{\"ph\":\"B\",\"pid\":", 16);
    p[7] = ph;
    p += 16;
    p += np_put_decimal(p, t->pid);
    memcpy(p, ",\"tid\":", 7);
    p += 7;
    p += np_put_decimal(p, t->tid);
    memcpy(p, ",\"ts\":", 6);
    p += 6;
    uint64_t us = ns - c->base_ns; /* ns, in fact: printed as us with three decimals */
    if (ns < c->base_ns) { /* in a process read later that started earlier */
        *p++ = '-';
        us = c->base_ns - ns;
    }
    p += np_put_decimal(p, us / 1000);
    *p++ = '.';
    *p++ = (char)('0' + us / 100 % 10);
    *p++ = (char)('0' + us / 10 % 10);
    *p++ = (char)('0' + us % 10);
    memcpy(p, ",\"name\":", 8);
    p += 8;
    memcpy(p, name, nlen);
    p += nlen;
    memcpy(p, ",\"cat\":\"function\"", 17);
    p += 17;
    if (vlen) {
        p = json_values(p, k->values, k->resynced);
    } else if (ph == 'E' && k->resynced) {
        static const char args[] = ",\"args\":{\"resynced\":true}";
        memcpy(p, args, sizeof args - 1);
        p += sizeof args - 1;
    }
    *p++ = '}';
    size_t n = (size_t)(p - c->line);
    if (fwrite(c->line, 1, n, c->out) != n) {
        c->failed = true; /* a closed pipe or a full disk: read no further */
        return -1;
    }
    return 0;
}

static int on_begin(void *ctx, const struct np_model *m, const struct np_call *k)
{
    return call_event(ctx, m, 'B', k, k->start_ns);
}

static int on_end(void *ctx, const struct np_model *m, const struct np_call *k)
{
    return call_event(ctx, m, 'E', k, k->start_ns + k->duration_ns);
}

int np_export_chrome_listen(const struct np_export_options *o, FILE *out, struct np_call_listener *l)
{
    struct chrome *c = calloc(1, sizeof *c);
    if (!c)
        return NP_EXPORT_ENOMEM;
    c->out = out;
    c->opt = o;
    c->first = true;
    *l = (struct np_call_listener){ c, on_begin, on_end, NULL };
    return 0;
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

int np_export_chrome_finish(const struct np_model *m, void *ctx)
{
    struct chrome *c = ctx;
    int rc = c->nomem ? NP_EXPORT_ENOMEM : 0;
    if (m && !c->failed) {
        if (!c->started)
            head(c, m);
        write_names(c, m);
        tail(c, m);
    }
    for (size_t i = 0; i < c->cap_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->name_lens);
    free(c->line);
    free(c);
    return rc;
}
