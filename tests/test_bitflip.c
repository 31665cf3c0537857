/* test_bitflip.c - one flipped bit never changes a profile unsaid.
 *
 *   test_bitflip all FILE             every bit of FILE, in turn, each read
 *                                     into a model
 *   test_bitflip random N SEED FILE   N bits of FILE picked at random (SEED),
 *                                     each read into a digest (below)
 *   test_bitflip flip BIT FILE        flips that one bit of FILE, in place
 *
 * FILE is one trace file. For each flip, the file (with that one bit
 * flipped) is read into a model as `nanoprof report` reads it, and what
 * the views print of it is rendered: the processes, threads and
 * functions with their counts and times, and the folded stacks (`dump
 * --format=folded`). The rule, as `nanoprof report --strict` would
 * enforce it: either the rendering is the undamaged one and the exit
 * status 0 with nothing said, or the status is not 0 (1: the reader's
 * error; 3: something lost, a damaged chunk skipped) and a line naming
 * the file said what. Never a changed rendering with status 0. Every line
 * said is one line naming the file.
 *
 * In-process, many flips a second: the ELF files' symbols are read once
 * (one np_symbols for every load), as the command reads them each time.
 * The random flips of a large trace go faster still: what the reader
 * delivers, every event, name and count, is summed into a digest, which
 * is the same exactly when the input of the model is (a stricter "same
 * profile"), and the status follows the same rule from what was
 * delivered. test_bitflip.sh runs it on recorded programs, and the real
 * commands on some of the flips. Prints how the flips fell; exit 1 on any
 * breach. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "analyze/export.h"
#include "analyze/model.h"
#include "analyze/symbols.h"
#include "analyze/trace_read.h"

struct said {
    const char *file;
    unsigned lines, bad_lines;
    char first[NP_TRACE_MSG_MAX];
};

static void on_diag(void *ctx, enum np_diag_level level, const char *line)
{
    struct said *s = ctx;
    if (level == NP_DIAG_NOTE)
        return;
    if (!s->lines++)
        snprintf(s->first, sizeof s->first, "%s", line);
    if (strchr(line, '\n') || !strstr(line, s->file))
        s->bad_lines++;
}

static void on_symbols(void *ctx, const char *line)
{
    (void)ctx, (void)line; /* a damaged path's ELF that cannot be read: the reader said the damage */
}

/* What the views print of M, as text (to free). */
static char *render(const struct np_model *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "process %" PRIu32 " %" PRIu32 " %s %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %s", p[i].pid,
                p[i].ppid, p[i].clock ? p[i].clock : "", p[i].complete, p[i].events_lost, p[i].start_ns,
                p[i].end_ns, p[i].file ? "" : "?");
        for (unsigned a = 0; a < p[i].argc; a++)
            fprintf(f, " %s", p[i].argv[a]);
        fputc('\n', f);
    }
    const struct np_thread *t = np_model_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "thread %" PRIu32 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                t[i].tid, t[i].name ? t[i].name : "", t[i].calls, t[i].total_ns, t[i].switched_ns, t[i].lost,
                t[i].first_ns, t[i].last_ns);
    const struct np_function *fn = np_model_functions(m, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "function %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", fn[i].name,
                fn[i].calls, fn[i].total_ns, fn[i].self_ns, fn[i].calls ? fn[i].min_ns : 0, fn[i].max_ns);
    struct np_export_options o = { .value = NP_EXPORT_SELF_NS };
    np_export_folded(m, &o, f);
    fclose(f);
    return text;
}

/* The exit status `nanoprof report --strict` would give M read with SUM:
 * 1 for damage the reader refused, 3 for anything lost (np_view_count_loss's
 * rule), else 0. */
static int status_of(const struct np_model *m, const struct np_trace_summary *sum)
{
    if (sum->status > NP_TRACE_ETRUNC || !sum->files_read)
        return 1;
    bool lost = sum->chunks_damaged || sum->files_unfinished;
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    for (size_t i = 0; i < n; i++)
        lost |= p[i].events_lost || p[i].blocks_lost;
    const struct np_thread *t = np_model_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        lost |= t[i].lost || t[i].closed_at_loss || t[i].closed_at_cut || t[i].dropped || t[i].closed_at_resync;
    return lost ? 3 : 0;
}

struct run {
    char *text;
    int status;
    struct said said;
};

/* ---- the events' digest ------------------------------------------------------- */

struct digest {
    uint64_t h;
    bool lost;   /* a LOST event, or END's count */
};

static void mix(struct digest *d, uint64_t v)
{
    d->h = (d->h ^ v) * 0x100000001b3ull;
    d->h ^= d->h >> 29;
}

static void mix_text(struct digest *d, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mix(d, ((const uint8_t *)p)[i]);
    mix(d, n);
}

static int d_begin(void *ctx, const struct np_trace_process *p)
{
    struct digest *d = ctx;
    mix(d, 1), mix(d, p->pid), mix(d, p->ppid), mix(d, p->start_ns), mix(d, p->end_ns), mix(d, p->has_end);
    mix(d, p->events_lost), mix(d, p->time_unit), mix_text(d, p->clock, strlen(p->clock));
    for (unsigned i = 0; i < p->argc; i++)
        mix_text(d, p->argv[i], strlen(p->argv[i]));
    d->lost |= p->events_lost != 0;
    return 0;
}

static int d_module(void *ctx, const struct np_trace_module *m)
{
    struct digest *d = ctx;
    mix(d, 2), mix(d, m->bias), mix(d, m->start), mix(d, m->end), mix_text(d, m->build_id, m->build_id_len);
    mix_text(d, m->path, strlen(m->path));
    return 0;
}

static int d_thread(void *ctx, uint32_t tid, const char *name)
{
    struct digest *d = ctx;
    mix(d, 3), mix(d, tid), mix_text(d, name, strlen(name));
    return 0;
}

static int d_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct digest *d = ctx;
    for (size_t i = 0; i < n; i++) {
        mix(d, tid), mix(d, ev[i].kind), mix(d, ev[i].time_ns), mix(d, ev[i].arg);
        d->lost |= ev[i].kind == NP_EVENT_LOST;
    }
    *done = n;
    return 0;
}

static int d_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n, uint64_t periods,
                    uint64_t skipped)
{
    struct digest *d = ctx;
    mix(d, 4), mix(d, tid), mix(d, time_ns), mix(d, periods), mix(d, skipped);
    for (unsigned i = 0; i < n; i++)
        mix(d, frames[i]);
    return 0;
}

static int d_sampling(void *ctx, const struct np_trace_sampling *s)
{
    struct digest *d = ctx;
    mix(d, 5), mix(d, s->time_ns), mix(d, s->hz), mix(d, s->unwinder), mix(d, s->flags), mix(d, s->period_ns);
    mix(d, s->max_frames);
    return 0;
}

static int d_name(void *ctx, uint64_t address, const char *name)
{
    struct digest *d = ctx;
    mix(d, 6), mix(d, address), mix_text(d, name, strlen(name));
    return 0;
}

static int d_blocks(void *ctx, const struct np_trace_block *b, size_t n, uint64_t lost)
{
    struct digest *d = ctx;
    mix(d, 7), mix(d, lost);
    for (size_t i = 0; i < n; i++)
        mix(d, b[i].address), mix(d, b[i].count);
    d->lost |= lost != 0;
    return 0;
}

static int d_end(void *ctx)
{
    mix(ctx, 8);
    return 0;
}

/* PATH read into a digest of what the reader delivers (R->text: it in
 * hex); the status as status_of gives it. */
static void read_digest(const char *path, struct run *r)
{
    memset(&r->said, 0, sizeof r->said);
    r->said.file = path;
    struct digest d = { 0xcbf29ce484222325ull, false };
    struct np_event_sink sink = { .ctx = &d, .begin = d_begin, .module = d_module, .thread = d_thread,
                                  .events = d_events, .sample = d_sample, .sampling = d_sampling,
                                  .name = d_name, .blocks = d_blocks, .end = d_end };
    struct np_trace_hooks hooks = { &r->said, on_diag, NULL };
    struct np_trace_summary sum;
    np_trace_read_with(path, NULL, &sink, &hooks, &sum);
    if (asprintf(&r->text, "%016" PRIx64, d.h) < 0)
        abort();
    r->status = sum.status > NP_TRACE_ETRUNC || !sum.files_read         ? 1
                : d.lost || sum.chunks_damaged || sum.files_unfinished ? 3
                                                                        : 0;
}

/* ---- the model ----------------------------------------------------------------- */

static void load(struct np_symbols *syms, const char *path, struct run *r)
{
    memset(&r->said, 0, sizeof r->said);
    r->said.file = path;
    struct np_model *m = np_model_new(NULL, syms);
    if (!m)
        abort();
    struct np_event_sink sink = np_model_sink(m);
    struct np_trace_hooks hooks = { &r->said, on_diag, NULL };
    struct np_trace_summary sum;
    np_trace_read_with(path, NULL, &sink, &hooks, &sum);
    if (np_model_finish(m))
        abort();
    r->text = render(m);
    r->status = status_of(m, &sum);
    np_model_free(m);
}

static uint64_t rng; /* splitmix64: the same flips for the same seed everywhere */
static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* test_bitflip flip BIT FILE: flips that bit of FILE in place (the
 * shell test's, for the commands themselves). */
static int flip_one(const char *bit_text, const char *path)
{
    uint64_t bit = strtoull(bit_text, NULL, 10);
    int fd = open(path, O_RDWR);
    uint8_t byte;
    if (fd < 0 || pread(fd, &byte, 1, (off_t)(bit / 8)) != 1) {
        perror(path);
        return 1;
    }
    byte ^= (uint8_t)(1u << (bit % 8));
    int rc = pwrite(fd, &byte, 1, (off_t)(bit / 8)) == 1 ? 0 : 1;
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "flip"))
        return flip_one(argv[2], argv[3]);
    bool all = argc == 3 && !strcmp(argv[1], "all");
    if (!all && !(argc == 5 && !strcmp(argv[1], "random"))) {
        fputs("usage: test_bitflip all FILE | test_bitflip random N SEED FILE | test_bitflip flip BIT FILE\n",
              stderr);
        return 2;
    }
    const char *path = argv[argc - 1];
    int fd = open(path, O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(path);
        return 1;
    }
    uint64_t bits = 8 * (uint64_t)st.st_size, flips = all ? bits : strtoull(argv[2], NULL, 10);
    if (!all) {
        rng = strtoull(argv[3], NULL, 10);
        printf("seed %s\n", argv[3]);
    }
    struct np_symbols *syms = np_symbols_new(on_symbols, NULL);
    struct run good;
    if (all)
        load(syms, path, &good);
    else
        read_digest(path, &good);
    if (good.status || good.said.lines) {
        fprintf(stderr, "test_bitflip: %s: the undamaged trace reads with status %d: %s\n", path, good.status,
                good.said.first);
        return 1;
    }
    uint64_t same = 0, errors = 0, lost = 0, breaches = 0, unsaid = 0;
    for (uint64_t k = 0; k < flips; k++) {
        uint64_t bit = all ? k : next_random() % bits;
        off_t at = (off_t)(bit / 8);
        uint8_t byte, flipped;
        if (pread(fd, &byte, 1, at) != 1)
            return 1;
        flipped = (uint8_t)(byte ^ (1u << (bit % 8)));
        if (pwrite(fd, &flipped, 1, at) != 1)
            return 1;
        struct run r;
        if (all)
            load(syms, path, &r);
        else
            read_digest(path, &r);
        if (pwrite(fd, &byte, 1, at) != 1)
            return 1;
        bool changed = strcmp(r.text, good.text) != 0;
        const char *why = NULL;
        if (changed && r.status == 0)
            why = "the profile changed, exit status 0";
        else if (r.status && !r.said.lines)
            why = "exit status not 0, nothing said";
        else if (r.said.bad_lines)
            why = "a line said is not one line naming the file";
        if (why) {
            if (breaches++ < 10)
                printf("FAIL: byte %lld bit %u: %s (status %d; said: %s)\n", (long long)at, (unsigned)(bit % 8), why,
                       r.status, r.said.lines ? r.said.first : "nothing");
        }
        same += !changed && !r.status;
        errors += r.status == 1;
        lost += r.status == 3;
        /* every byte of a version 2 trace is under a checksum: a flip
         * that is not even said is a region left unchecked */
        if (!r.said.lines && unsaid++ < 10)
            printf("note: byte %lld bit %u: nothing said (%s profile)\n", (long long)at, (unsigned)(bit % 8),
                   changed ? "a changed" : "the same");
        free(r.text);
    }
    printf("%s: %" PRIu64 " bits of %" PRIu64 " flipped: %" PRIu64 " read as damage skipped (exit 3), %" PRIu64
           " refused (exit 1), %" PRIu64 " the same profile (exit 0), %" PRIu64 " not said; %" PRIu64
           " breaches\n",
           path, flips, bits, lost, errors, same, unsaid, breaches);
    free(good.text);
    np_symbols_free(syms);
    close(fd);
    return breaches || unsaid ? 1 : 0;
}
