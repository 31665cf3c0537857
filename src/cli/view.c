/* view.c - options, diagnostics and loading shared by the view commands
 * (view.h). */
#define _GNU_SOURCE
#include "view.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/trace_format.h"
#include "analyze/source_qemu_log.h"

/* Below any command's own long option values, above any character. */
enum {
    OPT_TID = 300,
    OPT_DEPTH,
    OPT_MIN_DURATION,
    OPT_EXCLUDE_SWITCHED,
    OPT_SAMPLES,
    OPT_STRICT,
    OPT_CLOCK,
    OPT_METRIC,
    OPT_ELF,
    OPT_NO_DEMANGLE
};

static const struct np_cli_option common_options[] = {
    NP_CLI_FILTER_OPTIONS,
    { "tid", 0, NP_CLI_VALUE, OPT_TID },
    { "depth", 0, NP_CLI_VALUE, OPT_DEPTH },
    { "min-duration", 0, NP_CLI_VALUE, OPT_MIN_DURATION },
    { "exclude-switched", 0, NP_CLI_NO_VALUE, OPT_EXCLUDE_SWITCHED },
    { "samples", 0, NP_CLI_NO_VALUE, OPT_SAMPLES },
    { "strict", 0, NP_CLI_NO_VALUE, OPT_STRICT },
    { "clock", 0, NP_CLI_VALUE, OPT_CLOCK },
    { "metric", 0, NP_CLI_VALUE, OPT_METRIC },
    { "elf", 0, NP_CLI_VALUE, OPT_ELF },
    { "no-demangle", 0, NP_CLI_NO_VALUE, OPT_NO_DEMANGLE },
};
#define NCOMMON (sizeof common_options / sizeof common_options[0])

int np_view_usage_error(const struct np_view *v, const char *fmt, const char *what)
{
    return np_cli_usage_error(v->cmd, fmt, what);
}

int np_view_pick(const struct np_view *v, const char *const *names, const char *value, const char *what, int *out)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], value) == 0) {
            *out = i;
            return 0;
        }
    fprintf(stderr, "nanoprof %s: unknown %s '%s' (see nanoprof %s --help)\n", v->cmd, what, value, v->cmd);
    return 2;
}

/* "48000000", "48M", "48MHz", "1.5GHz", "32768Hz": cycles per second;
 * 0 when malformed. */
static double parse_hz(const char *arg)
{
    char *end;
    if ((*arg < '0' || *arg > '9') && *arg != '.')
        return 0;
    double hz = strtod(arg, &end);
    if (*end == 'k' || *end == 'K')
        hz *= 1e3, end++;
    else if (*end == 'M')
        hz *= 1e6, end++;
    else if (*end == 'G')
        hz *= 1e9, end++;
    if (strcmp(end, "Hz") == 0 || strcmp(end, "hz") == 0)
        end += 2;
    return *end || !isfinite(hz) || hz <= 0 ? 0 : hz;
}

/* HZ as people write it ("48 MHz", "32.768 kHz") into BUF. */
static void format_hz(char *buf, size_t size, double hz)
{
    static const struct { double scale; const char *name; } units[] = {
        { 1e9, "GHz" }, { 1e6, "MHz" }, { 1e3, "kHz" }, { 1, "Hz" } };
    size_t i = 0;
    while (i + 1 < sizeof units / sizeof *units && hz < units[i].scale)
        i++;
    snprintf(buf, size, "%.9g %s", hz / units[i].scale, units[i].name);
}

static const char *const metric_names[] = { "time", "count", NULL };

static int common_option(struct np_view *v, int c, const char *arg)
{
    char err[256];
    int opt;
    switch (c) {
    case OPT_CLOCK: {
        double hz = parse_hz(arg);
        if (!hz || 1e9 / hz > 1e12)
            return np_view_usage_error(v, "bad --clock '%s' (cycles per second: 48000000, 48MHz, 1.5GHz)", arg);
        v->opt.source.clock_hz = hz;
        char rate[48];
        format_hz(rate, sizeof rate, hz);
        snprintf(v->clock_kind[0], sizeof v->clock_kind[0], "time from cycles at %s", rate);
        snprintf(v->clock_kind[1], sizeof v->clock_kind[1], "time from cycles at %s less switched-out time",
                 rate);
        return 0;
    }
    case OPT_ELF:
        v->elf = arg;
        return 0;
    case OPT_METRIC: {
        int m;
        if (np_view_pick(v, metric_names, arg, "metric", &m))
            return 2;
        v->opt.source.metric = (enum np_metric)m;
        return 0;
    }
    case OPT_TID: opt = NP_MODEL_OPT_TID; break;
    case OPT_DEPTH: opt = NP_MODEL_OPT_DEPTH; break;
    case OPT_MIN_DURATION: opt = NP_MODEL_OPT_MIN_DURATION; break;
    case 'F': opt = NP_MODEL_OPT_INCLUDE; break;
    case 'N': opt = NP_MODEL_OPT_EXCLUDE; break;
    case OPT_EXCLUDE_SWITCHED:
        v->opt.exclude_switched = true;
        return 0;
    case OPT_SAMPLES:
        v->opt.from_samples = true;
        return 0;
    case OPT_STRICT:
        v->strict = true;
        return 0;
    case OPT_NO_DEMANGLE:
        v->opt.no_demangle = true;
        return 0;
    default:
        return 1;
    }
    if (np_model_option(&v->opt, (enum np_model_opt)opt, arg, err, sizeof err))
        return np_view_usage_error(v, "%s", err);
    if (opt == NP_MODEL_OPT_MIN_DURATION) /* a bare number is in the trace's unit */
        v->min_duration_unit = arg[strspn(arg, "0123456789.")] != 0;
    return 0;
}

struct parsing {
    struct np_view *v;
    const struct np_view_spec *spec;
    void *ctx;
};

static int view_option(void *ctx, int id, const char *value)
{
    struct parsing *p = ctx;
    int rc = common_option(p->v, id, value);
    if (rc == 1)
        rc = p->spec->option ? p->spec->option(p->ctx, id, value) : 2;
    return rc;
}

static int view_argument(void *ctx, const char *arg)
{
    struct parsing *p = ctx;
    struct np_view *v = p->v;
    if (v->nargs >= p->spec->max_args || v->nargs >= NP_VIEW_MAX_ARGS)
        return np_view_usage_error(v, "unexpected argument '%s'", arg);
    v->args[v->nargs++] = arg;
    return 0;
}

int np_view_parse(struct np_view *v, const struct np_view_spec *spec, void *ctx, int argc, char **argv)
{
    struct np_cli_option options[NP_CLI_MAX_OPTIONS];
    size_t n = 0;
    for (const struct np_cli_option *o = spec->options; o && o->id && n + NCOMMON + 1 < NP_CLI_MAX_OPTIONS; o++)
        options[n++] = *o;
    memcpy(&options[n], common_options, sizeof common_options);
    memset(&options[n + NCOMMON], 0, sizeof options[0]);
    v->cmd = argv[0];
    v->path = NP_TRACE_DEFAULT_PATH;
    struct parsing p = { v, spec, ctx };
    struct np_cli cli = { v->cmd, options, NP_CLI_IN_ORDER, spec->usage, view_option, view_argument };
    int rc = np_cli_parse(&cli, &p, argc, argv, NULL);
    if (rc)
        return rc == NP_CLI_HELP ? -1 : rc;
    if (v->nargs)
        v->path = v->args[0];
    return 0;
}

const char *np_view_path_and_name(struct np_view *v)
{
    struct stat st;
    if (v->nargs >= 2) {
        v->path = v->args[0];
        return v->args[1];
    }
    v->path = NP_TRACE_DEFAULT_PATH;
    /* a name with a slash is no function: a missing trace is said so */
    if (v->nargs == 1 && (stat(v->args[0], &st) == 0 || strchr(v->args[0], '/'))) {
        v->path = v->args[0];
        return NULL;
    }
    return v->nargs == 1 ? v->args[0] : NULL;
}

/* ---- loading -------------------------------------------------------------- */

#define PROGRESS_MIN_BYTES (8u << 20)

void np_view_diag(void *ctx, enum np_diag_level level, const char *line)
{
    struct np_view *v = ctx;
    np_progress_done(&v->progress);
    if (v->write_error) /* the reading was stopped for it: nothing more to say */
        return;
    fprintf(stderr, "nanoprof %s: %s", v->cmd,
            level == NP_DIAG_WARNING ? "warning: " : level == NP_DIAG_NOTE ? "note: " : "");
    np_text_field(stderr, line); /* one line, whatever a source says */
    putc('\n', stderr);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct np_view *v = ctx;
    if (!v->progress_ready) {
        np_progress_init(&v->progress, stderr, total, PROGRESS_MIN_BYTES);
        v->progress_ready = true;
    }
    np_progress_update(&v->progress, done, total);
}

/* With --elf, PATH is a QEMU execution log (analyze/source_qemu_log.h)
 * or else a target's capture (analyze/source_capture.h), read with the
 * ELF named. */
static int load_capture(struct np_view *v, struct np_model **m)
{
    struct np_trace_hooks hooks = { v, np_view_diag, on_progress };
    char *elf = NULL;
    if (asprintf(&elf, "elf=%s", v->elf) < 0) {
        fprintf(stderr, "nanoprof %s: out of memory\n", v->cmd);
        return -1;
    }
    const char *args[] = { elf, NULL };
    v->opt.source.args = args;
    v->opt.source.source = np_probe_qemu_log(v->path) ? "qemu-log" : "capture";
    int status = np_model_load(v->path, &v->opt, &hooks, m, &v->summary);
    v->opt.source.args = NULL;
    v->opt.source.source = NULL;
    free(elf);
    return status;
}

int np_view_load(struct np_view *v, struct np_model **m, int *rc)
{
    struct np_trace_hooks hooks = { v, np_view_diag, on_progress };
    int status;
    if (v->elf) {
        if ((status = load_capture(v, m)) < 0)
            return 1;
    } else {
        status = np_model_load(v->path, &v->opt, &hooks, m, &v->summary);
    }
    np_progress_done(&v->progress);
    if (!*m) {
        fprintf(stderr, "nanoprof %s: %s\n", v->cmd, v->summary.message);
        return 1;
    }
    if (status == NP_TRACE_EOPTION) { /* its line is out: a usage error */
        np_model_free(*m);
        *m = NULL;
        return 2;
    }
    if (v->min_duration_unit && np_model_time_unit(*m) != NP_UNIT_NS) {
        fprintf(stderr, "nanoprof %s: --min-duration: the times of this trace are %s, not ns: give a number of them\n",
                v->cmd, np_time_unit_name(np_model_time_unit(*m)));
        np_model_free(*m);
        *m = NULL;
        return 2;
    }
    /* a trace cut short is shown with its warning; other damage fails,
     * after showing whatever could be read */
    *rc = status > NP_TRACE_ETRUNC ? 1 : 0;
    if (!v->summary.files_read) { /* nothing readable at all (its line is out already) */
        np_model_free(*m);
        *m = NULL;
        return 1;
    }
    np_view_count_loss(v, *m);
    np_view_warn_loss(v);
    np_view_note_unmatched_exits(v, *m);
    np_view_warn_patterns(v, *m);
    return 0;
}

void np_view_no_progress(struct np_view *v)
{
    memset(&v->progress, 0, sizeof v->progress); /* never enabled */
    v->progress_ready = true;
}

void np_view_write_failed(struct np_view *v)
{
    if (!v->write_error)
        v->write_error = errno ? errno : EIO;
}

int np_view_write_status(const struct np_view *v, const char *what)
{
    if (!v->write_error)
        return -1;
    if (v->write_error == EPIPE)
        return 0;
    fprintf(stderr, "nanoprof %s: writing %s failed: %s\n", v->cmd, what, strerror(v->write_error));
    return 1;
}

/* ---- losses ------------------------------------------------------------------ */

void np_view_count_loss(struct np_view *v, const struct np_model *m)
{
    struct np_view_loss *l = &v->loss;
    size_t np, nt;
    const struct np_process *p = np_model_processes(m, &np);
    const struct np_thread *t = np_model_threads(m, &nt);
    memset(l, 0, sizeof *l);
    l->nthreads = nt;
    l->files = v->summary.files;
    l->files_cut = v->summary.files_unfinished;
    l->damaged = v->summary.chunks_damaged;
    l->damaged_bytes = v->summary.bytes_damaged;
    for (size_t i = 0; i < np; i++) {
        uint64_t in_threads = 0; /* LOST records of the process's threads */
        for (size_t k = 0; k < nt; k++) {
            if (t[k].process != i)
                continue;
            in_threads += t[k].lost;
            l->closed += t[k].closed_at_loss + t[k].closed_at_cut;
            l->too_deep += t[k].dropped;
            l->resynced += t[k].closed_at_resync;
            /* a process without END lost its threads' ends */
            if (t[k].lost || t[k].closed_at_loss || t[k].dropped || t[k].closed_at_resync || !p[i].complete) {
                if (l->threads < NP_VIEW_LOSS_TIDS)
                    l->tids[l->threads] = t[k].tid;
                l->threads++;
            }
        }
        /* END counts every thread's, unselected ones and those that left
         * no LOST record too: it stands when higher, without --tid */
        l->events += !v->opt.ntids && p[i].events_lost > in_threads ? p[i].events_lost : in_threads;
        l->blocks += p[i].blocks_lost;
    }
    l->any = l->events || l->closed || l->too_deep || l->blocks || l->files_cut || l->resynced || l->damaged;
}

static const char *plural(uint64_t n, const char *s)
{
    return n == 1 ? "" : s;
}

/* What was lost, its parts joined by ", ", into BUF at *LEN. */
static void loss_what(const struct np_view_loss *l, char *buf, size_t size, size_t *len)
{
    const char *sep = "";
#define ADD(...)                                                                          \
    do {                                                                                  \
        int k_ = *len < size ? snprintf(buf + *len, size - *len, __VA_ARGS__) : 0;       \
        *len += k_ > 0 ? (size_t)k_ : 0;                                                  \
        sep = ", ";                                                                       \
    } while (0)
    if (l->events)
        ADD("%s%" PRIu64 " event%s lost", sep, l->events, plural(l->events, "s"));
    if (l->damaged)
        ADD("%s%u damaged chunk%s skipped (%" PRIu64 " bytes)", sep, l->damaged, plural(l->damaged, "s"),
            l->damaged_bytes);
    if (l->files_cut)
        ADD("%s%u of %u trace file%s cut short", sep, l->files_cut, l->files, plural(l->files, "s"));
    if (l->too_deep)
        ADD("%s%" PRIu64 " call%s deeper than %u levels not counted", sep, l->too_deep, plural(l->too_deep, "s"),
            NP_MODEL_MAX_STACK);
    if (l->blocks)
        ADD("%s%" PRIu64 " block execution%s were not counted (the program's table was full: raise "
            "NANOPROF_BLOCKS)", sep, l->blocks, plural(l->blocks, "s"));
    if (l->resynced)
        ADD("%s%" PRIu64 " call%s closed by re-synchronisation (marked (?))", sep, l->resynced,
            plural(l->resynced, "s"));
#undef ADD
}

void np_view_note_unmatched_exits(struct np_view *v, const struct np_model *m)
{
    size_t nt, threads = 0;
    uint64_t n = 0;
    const struct np_thread *t = np_model_threads(m, &nt);
    for (size_t k = 0; k < nt; k++) {
        n += t[k].unmatched_exits;
        threads += t[k].unmatched_exits != 0;
    }
    if (!n)
        return;
    char line[256];
    snprintf(line, sizeof line,
             "%" PRIu64 " return%s without %s call in the trace, in %zu thread%s: %s began before the thread's "
             "recording (at a fork, a task's first switch, np_trace_init) and %s not counted",
             n, plural(n, "s"), n == 1 ? "its" : "their", threads, plural(threads, "s"), n == 1 ? "it" : "they",
             n == 1 ? "is" : "are");
    np_view_diag(v, NP_DIAG_NOTE, line);
}

void np_view_warn_loss(struct np_view *v)
{
    const struct np_view_loss *l = &v->loss;
    if (!l->any)
        return;
    char line[NP_VIEW_NOTE_MAX + 256];
    size_t len = 0;
    loss_what(l, line, sizeof line, &len);
    if (l->threads && len < sizeof line) {
        len += (size_t)snprintf(line + len, sizeof line - len, " in %zu of %zu thread%s (tid%s", l->threads,
                                l->nthreads, plural(l->nthreads, "s"), plural(l->threads, "s"));
        for (size_t i = 0; i < l->threads && i < NP_VIEW_LOSS_TIDS && len < sizeof line; i++)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%" PRIu32, i ? ", " : " ", l->tids[i]);
        if (len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s)",
                                    l->threads > NP_VIEW_LOSS_TIDS ? ", ..." : "");
    }
    if (l->closed && len < sizeof line)
        snprintf(line + len, sizeof line - len, "; calls around the losses are closed at the loss points");
    np_view_diag(v, NP_DIAG_WARNING, line);
}

const char *np_view_loss_note(const struct np_view *v, char *buf, size_t size)
{
    const struct np_view_loss *l = &v->loss;
    if (!l->any || !size)
        return NULL;
    size_t len = 0;
    buf[0] = '\0';
    loss_what(l, buf, size, &len);
    if (l->threads && len < size)
        len += (size_t)snprintf(buf + len, size - len, " in %zu thread%s", l->threads, plural(l->threads, "s"));
    /* calls closed by re-synchronisation lost nothing but their ends */
    bool lost = l->events || l->files_cut || l->too_deep || l->blocks || l->damaged;
    if (len < size)
        snprintf(buf + len, size - len, lost ? ": counts and times around the losses are incomplete"
                                             : ": the ends of those calls are not exact");
    return buf;
}

void np_view_print_loss(const struct np_view *v, FILE *out, const char *prefix)
{
    char note[NP_VIEW_NOTE_MAX];
    if (np_view_loss_note(v, note, sizeof note))
        fprintf(out, "%s%s\n", prefix, note);
}

void np_view_warn_patterns(struct np_view *v, const struct np_model *m)
{
    size_t n, nf;
    unsigned files;
    const struct np_pattern_use *uses = np_model_patterns(m, &n, &files);
    np_model_functions(m, &nf);
    np_progress_done(&v->progress);
    if (!v->write_error)
        v->unmatched = np_cli_say_unmatched(v->cmd, "warning: ", "the trace", uses, n, files, true, nf);
}

int np_view_status(const struct np_view *v, int rc)
{
    return !rc && v->strict && (v->loss.any || v->unmatched) ? NP_VIEW_EXIT_LOSS : rc;
}

const char *np_view_threads(const struct np_view *v, const struct np_model *m, char *buf, size_t size)
{
    size_t n, empty = 0;
    const struct np_thread *t = np_model_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        empty += !t[i].calls;
    const struct np_model_options *o = &v->opt;
    bool filtered = o->ninclude || o->nexclude || o->max_depth || o->min_duration_ns;
    int k = snprintf(buf, size, "%zu thread%s", n, n == 1 ? "" : "s");
    if (empty && k >= 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, " (%zu with no %s %s)", empty,
                 np_model_estimated(m) ? "samples" : "calls", filtered ? "kept" : "recorded");
    return buf;
}

void np_view_print_thread(FILE *out, const struct np_thread *t)
{
    fprintf(out, "thread %" PRIu32, t->tid);
    if (t->name) {
        fputs(" \"", out);
        np_text_field(out, t->name);
        putc('"', out);
    }
    fprintf(out, " (pid %" PRIu32 ")", t->pid);
}

void np_view_print_estimate(FILE *out, const struct np_model *m, const char *prefix)
{
    char label[NP_ESTIMATE_LABEL_MAX];
    if (np_model_estimated(m))
        fprintf(out, "%s%s\n", prefix, np_model_estimate_label(m, label, sizeof label));
}

const char *np_view_time_kind(const struct np_view *v, const struct np_model *m)
{
    if (np_model_estimated(m))
        return np_model_sampling(m)->cpu_time ? "CPU time (estimated)" : "wall time (estimated)";
    bool less = v->opt.exclude_switched;
    switch (np_model_time_unit(m)) {
    case NP_UNIT_CYCLES:
        return less ? "cycles less switched-out cycles" : "cycles";
    case NP_UNIT_INSNS:
        return "instructions"; /* they do not run while switched out */
    case NP_UNIT_NS:
        break;
    }
    if (v->opt.source.clock_hz > 0)
        return v->clock_kind[less];
    return less ? "wall time less switched-out time" : "wall time";
}

char *np_view_time(char *buf, size_t size, const struct np_model *m, uint64_t value)
{
    return np_format_time(buf, size, value, np_model_time_unit(m));
}

const char *np_view_resync_mark(uint64_t resynced)
{
    return resynced ? " (?)" : "";
}

const char *np_view_calls_heading(const struct np_model *m, const char *calls)
{
    return np_model_estimated(m) ? "Samples" : calls;
}

int np_view_flush(const struct np_view *v, FILE *out, const char *what)
{
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "nanoprof %s: writing %s failed\n", v->cmd, what);
        return 1;
    }
    return 0;
}

/* ---- output files ------------------------------------------------------------ */

static int output_error(const struct np_view *v, const char *path, int err)
{
    fprintf(stderr, "nanoprof %s: cannot write ", v->cmd);
    np_text_field(stderr, path);
    fprintf(stderr, ": %s\n", strerror(err));
    return 1;
}

int np_view_output_open(const struct np_view *v, struct np_view_output *o, const char *path)
{
    o->path = path;
    o->tmp = NULL;
    o->resolved = NULL;
    o->file = stdout;
    if (strcmp(path, "-") == 0)
        return 0;
    struct stat st, lst;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return output_error(v, path, EISDIR);
    /* a symbolic link: replace the file it names, not the link */
    o->resolved = realpath(path, NULL);
    bool dangling = !exists && lstat(path, &lst) == 0;
    if ((exists && !S_ISREG(st.st_mode)) || dangling) {
        /* a device or a pipe (/dev/stdout), or a link to no file yet:
         * written in place, never replaced */
        free(o->resolved);
        o->resolved = NULL;
        o->file = fopen(path, "w");
        return o->file ? 0 : output_error(v, path, errno);
    }
    const char *target = o->resolved ? o->resolved : path;
    if (asprintf(&o->tmp, "%s.XXXXXX", target) < 0) {
        o->tmp = NULL;
        free(o->resolved);
        return output_error(v, path, ENOMEM);
    }
    int fd = mkstemp(o->tmp);
    /* as open(2) would have made it, not mkstemp's 0600 */
    mode_t mask = umask(0);
    umask(mask);
    o->file = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "w") : NULL;
    if (!o->file) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        free(o->resolved);
        o->tmp = o->resolved = NULL;
        return output_error(v, path, err);
    }
    return 0;
}

int np_view_output_close(const struct np_view *v, struct np_view_output *o, bool ok)
{
    if (o->file == stdout)
        return np_view_flush(v, stdout, "the output") || !ok;
    int err = 0;
    errno = 0;
    if (fflush(o->file) != 0 || ferror(o->file))
        err = errno ? errno : EIO;
    if (fclose(o->file) != 0 && !err)
        err = errno;
    if (o->tmp) {
        if (ok && !err && rename(o->tmp, o->resolved ? o->resolved : o->path) != 0)
            err = errno;
        if (!ok || err)
            unlink(o->tmp);
    }
    free(o->tmp);
    free(o->resolved);
    o->tmp = o->resolved = NULL;
    if (ok && err)
        return output_error(v, o->path, err);
    return ok ? 0 : 1;
}

void np_view_free(struct np_view *v)
{
    np_model_options_free(&v->opt);
}
