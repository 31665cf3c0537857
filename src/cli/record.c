/* record.c - `nanoprof record`: runs a program with the runtime preloaded
 * and the recorder turned on (NANOPROF_RECORD), waits for it, and reports
 * the trace and the program's exit status (docs/recording.md). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <gelf.h>
#include "cli.h"
#include "trace_dir.h"
#include "analyze/containers.h"
#include "analyze/source.h"
#include "common/parse_units.h"
#include "common/trace_format.h"
#include "nanoprof/sample.h"

extern char **environ;

#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)
#define NP_SAMPLE_HZ_DEFAULT_STR NP_STR(NP_SAMPLE_HZ_DEFAULT)

#ifndef NP_LIBDIR_REL
#define NP_LIBDIR_REL "../lib"
#endif

static const char usage_text[] =
    "usage: nanoprof record [options] [--] PROG [ARGS...]\n"
    "\n"
    "Runs PROG, built with -finstrument-functions, with the nanoprof runtime\n"
    "preloaded, and records every call of every thread (and of forked children\n"
    "and exec'd programs) into a trace directory, one file per process\n"
    "(docs/trace-format.md); with --sample, samples of every thread's stack\n"
    "too. A program linked with libnanoprof records the same way when\n"
    "NANOPROF_RECORD=DIR is in its environment; built with\n"
    "-fsanitize-coverage=trace-pc, its basic-block counts go into the trace too\n"
    "(docs/blocks.md).\n"
    "\n"
    "options (each sets the environment variable in brackets, which PROG's\n"
    "runtime reads; without the option, a value already in the environment is\n"
    "used):\n"
    "  -o, --output PATH     the trace directory (default nanoprof.data); an\n"
    "                        existing one is renamed PATH.old     [NANOPROF_RECORD]\n"
    "  -F, --filter GLOB     record only calls of functions whose name matches\n"
    "                        GLOB, and the calls made inside them; repeatable or\n"
    "                        comma-separated                      [NANOPROF_FILTER]\n"
    "  -N, --notrace GLOB    do not record functions whose name matches GLOB, nor\n"
    "                        the calls made inside them; repeatable or\n"
    "                        comma-separated                     [NANOPROF_NOTRACE]\n"
    "  -D, --depth N         record only calls nested at most N deep among the\n"
    "                        recorded calls (1 = outermost)         [NANOPROF_DEPTH]\n"
    "      --time-filter T   drop calls that last less than T: nanoseconds, or a\n"
    "                        number with ns, us, ms or s             [NANOPROF_MIN_NS]\n"
    "  -b, --buffer SIZE     bytes of each thread's buffer, with k, M or G; 4k to\n"
    "                        1G, default 1M (less each when many threads live)\n"
    "                                                              [NANOPROF_BUFFER]\n"
    "      --drop            when the writer falls behind, drop events (counted,\n"
    "                        and said in every view) rather than make the\n"
    "                        program's threads wait for it             [NANOPROF_DROP=1]\n"
    "      --strict          exit with status 3 when the trace lost anything\n"
    "                        (dropped events, a process that did not end\n"
    "                        normally) and PROG's status was 0\n"
    "      --sample[=HZ]     also sample every thread's stack HZ times per second\n"
    "                        of its CPU time (1 to 100000, default 997); PROG\n"
    "                        then needs no instrumentation (docs/sampling.md)\n"
    "                                                              [NANOPROF_SAMPLE]\n"
    "      --unwind HOW      how a sample finds its callers: fp, along the frame\n"
    "                        pointers (default: cheapest, needs code built with\n"
    "                        -fno-omit-frame-pointer), or dwarf, from the call-\n"
    "                        frame information (libunwind: any code, costs\n"
    "                        more)                                 [NANOPROF_UNWIND]\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Nothing is lost by default: a thread whose buffer is full while the\n"
    "writer is behind waits for it. Tuning, in the environment only:\n"
    "  NANOPROF_QUEUE=N      full buffers that may wait for the writer before\n"
    "                        threads wait or drop (1 to 2048; default: 64 MiB\n"
    "                        of buffers, at least 2, at most 64)\n"
    "  NANOPROF_LIB=PATH     the libnanoprof.so to preload; by default the one\n"
    "                        next to this command (build tree) or in ../lib*\n"
    "                        (installed)\n"
    "  NANOPROF_CLOCK=monotonic  record CLOCK_MONOTONIC times rather than the\n"
    "                        CPU counter (no switched-out time) (docs/cost.md)\n"
    "  NANOPROF_BLOCKS=N     slots of the basic-block table (docs/blocks.md)\n"
    "  NANOPROF_DEBUG_DIR=DIR  where views look for separate debug files\n"
    "\n"
    "The closing line on stderr gives PROG's status, the trace's size, and\n"
    "what the trace lost, if anything.\n"
    "\n"
    "exit status: PROG's; 128+N when PROG was killed by signal N; 2 bad usage\n"
    "(options, or a bad NANOPROF_* variable in the environment); 127 PROG could\n"
    "not be run; 1 the trace directory or runtime is missing; 3 with --strict\n"
    "when the trace lost anything and PROG's status was 0.\n";

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fputs("nanoprof record: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs(" (see nanoprof record --help)\n", stderr);
    return 2;
}

/* The checks below are the runtime's (record.c), so that a bad value is
 * refused here, before the program runs. */
static int valid_size(const char *s)
{
    uint64_t v = np_parse_size(s);
    return v >= 4096 && v <= (1ull << 30);
}

static int valid_time(const char *s)
{
    return np_parse_ns(s) >= 0;
}

static int valid_range(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long d = strtol(s, &end, 10);
    return !errno && end != s && !*end && d >= lo && d <= hi;
}

static int valid_depth(const char *s)
{
    return valid_range(s, 1, 65535);
}

static int valid_queue(const char *s)
{
    return valid_range(s, 1, 2048);
}

static int valid_flag(const char *s)
{
    return !strcmp(s, "0") || !strcmp(s, "1");
}

static int valid_hz(const char *s)
{
    return np_parse_hz(s) != 0;
}

static int valid_unwind(const char *s)
{
    return !strcmp(s, "fp") || !strcmp(s, "dwarf");
}

/* Appends S to the comma-separated list *L. */
static int add_list(char **l, const char *s)
{
    size_t n = *l ? strlen(*l) : 0;
    char *p = realloc(*l, n + strlen(s) + 2);
    if (!p)
        return 0;
    if (n)
        p[n++] = ',';
    strcpy(p + n, s);
    *l = p;
    return 1;
}

static int find_lib(char *out, size_t size)
{
    const char *env = getenv("NANOPROF_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) {
            fprintf(stderr, "nanoprof record: NANOPROF_LIB=%s: %s\n", env, strerror(errno));
            return 0;
        }
        snprintf(out, size, "%s", env);
        return 1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fputs("nanoprof record: cannot find this command's directory: set NANOPROF_LIB\n", stderr);
        return 0;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    static const char libdir[] = "/" NP_LIBDIR_REL; /* one string, not joined in the array */
    static const char *const where[] = { "", libdir, "/../lib", "/../lib64" };
    static const char *const names[] = { "libnanoprof.so.0", "libnanoprof.so" };
    for (size_t i = 0; i < sizeof where / sizeof *where; i++)
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            char cand[PATH_MAX + 64];
            snprintf(cand, sizeof cand, "%s%s/%s", exe, where[i], names[k]);
            char real[PATH_MAX];
            if (access(cand, R_OK) == 0 && realpath(cand, real)) {
                snprintf(out, size, "%s", real);
                return 1;
            }
        }
    fprintf(stderr, "nanoprof record: libnanoprof.so not found next to %s or in %s/%s: set NANOPROF_LIB\n",
            exe, exe, NP_LIBDIR_REL);
    return 0;
}

/* What the trace directory holds, from its chunks' headers and END
 * chunks: cheap, so that a trace that lost nothing is not read again.
 * The chunks are walked as the reader walks them (np_trace_chunk_check):
 * a chunk the file ends inside, or one that claims too much, ends the
 * walk, and is neither data nor an END; an END whose checksum fails is
 * none (the reader then says what is damaged). */
struct trace_sum {
    int files;
    long long bytes;
    long long data;       /* chunks with something recorded (events, block counts) */
    int unfinished;       /* files without END: the process did not end normally */
    uint64_t lost;        /* events lost, by the END chunks */
};

static void summarise(const char *dir, struct trace_sum *t)
{
    memset(t, 0, sizeof *t);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (!(l > 4 && strcmp(de->d_name + l - 4, NP_TRACE_FILE_SUFFIX) == 0))
            continue;
        char p[PATH_MAX + 256];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        FILE *f = fopen(p, "rb");
        if (!f)
            continue;
        t->files++;
        uint8_t h[NP_TRACE_HEADER_SIZE], end[24];
        int has_end = 0;
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        /* the header says where the chunks start and how long their
         * headers are (the reader checks the rest) */
        uint64_t off = NP_TRACE_HEADER_SIZE;
        unsigned version = NP_TRACE_VERSION;
        if (size >= NP_TRACE_HEADER_SIZE && fseek(f, 0, SEEK_SET) == 0 && fread(h, 1, sizeof h, f) == sizeof h) {
            version = np_get_u16(h + 8);
            if (np_get_u16(h + 10) > NP_TRACE_HEADER_SIZE)
                off = np_get_u16(h + 10);
        }
        unsigned hsize = np_trace_chunk_header_size(version);
        while (size > 0 && off < (uint64_t)size) {
            uint64_t left = (uint64_t)size - off;
            uint32_t type = 0, len = 0;
            int have = left >= hsize && fseek(f, (long)off, SEEK_SET) == 0 && fread(h, 1, hsize, f) == hsize;
            if (np_trace_chunk_check(have ? h : NULL, hsize, left, &type, &len) != NP_CHUNK_WHOLE)
                break;
            if (type == NP_CHUNK_EVENTS || type == NP_CHUNK_BLOCKS)
                t->data++;
            if (type == NP_CHUNK_END && len == sizeof end && fread(end, 1, sizeof end, f) == sizeof end &&
                (version == NP_TRACE_VERSION_V1 || np_trace_chunk_sum_ok(h, end))) {
                has_end = 1;
                t->lost += np_get_u64(end + 8);
            }
            off += hsize + (uint64_t)len;
        }
        t->unfinished += !has_end;
        t->bytes += size > 0 ? size : 0;
        fclose(f);
    }
    closedir(d);
}

/* Events lost per thread, read from the events themselves (only when the
 * END chunks or their absence say something was lost). */
struct loss_count {
    uint64_t events;      /* LOST events' total */
    struct np_hmap tids;  /* tid -> 1 once the thread lost events, else 0 */
    size_t hit_threads;
};

/* Notes thread TID, and that it lost N events; NP_TRACE_ENOMEM or 0. */
static int loss_note(struct loss_count *c, uint32_t tid, uint64_t n)
{
    uint64_t *hit = np_hmap_find(&c->tids, tid);
    bool first_loss = n && !(hit && *hit);
    if ((!hit || first_loss) && np_hmap_put(&c->tids, tid, n != 0 || (hit && *hit)))
        return NP_TRACE_ENOMEM;
    c->events += n;
    c->hit_threads += first_loss;
    return 0;
}

static int loss_lost(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t n)
{
    (void)time_ns;
    return loss_note(ctx, tid, n);
}

static int loss_events(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    size_t i = 0;
    int rc = loss_note(ctx, tid, 0);
    while (!rc && i < n) {
        if (ev[i].kind == NP_EVENT_LOST)
            rc = loss_note(ctx, tid, ev[i].arg);
        if (!rc)
            i++;
    }
    if (rc)
        *done = i;
    return rc;
}

static int loss_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                       uint64_t periods, uint64_t skipped)
{
    (void)time_ns, (void)frames, (void)n, (void)periods, (void)skipped;
    return loss_note(ctx, tid, 0);
}

/* The loss part of the closing line ("" when nothing was lost). */
static void describe_loss(const char *dir, const struct trace_sum *t, char *out, size_t size)
{
    out[0] = 0;
    if (!t->lost && !t->unfinished)
        return;
    struct loss_count c = { 0 };
    np_hmap_init(&c.tids);
    struct np_event_sink sink = { .ctx = &c, .lost = loss_lost, .events = loss_events, .sample = loss_sample };
    struct np_trace_summary sum;
    np_source_read(dir, NULL, &sink, NULL, &sum);
    size_t n = 0;
    if (c.events || t->lost)
        n += (size_t)snprintf(out + n, size - n, "; LOST %" PRIu64 " events in %zu of %zu thread%s",
                              c.events > t->lost ? c.events : t->lost, c.hit_threads, c.tids.len,
                              c.tids.len == 1 ? "" : "s");
    if (t->unfinished && n < size)
        n += (size_t)snprintf(out + n, size - n, "; %d file%s cut short (the process did not end normally)",
                              t->unfinished, t->unfinished == 1 ? "" : "s");
    if (sum.status > NP_TRACE_ETRUNC && n < size)
        snprintf(out + n, size - n, "; the trace is damaged: %s", sum.message);
    np_hmap_free(&c.tids);
}

/* PROG as exec would find it: PATH searched when it has no '/'. */
static int find_prog(const char *prog, char *out, size_t size)
{
    if (strchr(prog, '/'))
        return snprintf(out, size, "%s", prog) < (int)size;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (snprintf(out, size, "%.*s%s%s", (int)len, p, len ? "/" : "", prog) < (int)size &&
            access(out, X_OK) == 0)
            return 1;
        if (!e)
            return 0;
        p = e;
    }
}

/* What PROG's ELF file says about why nothing was recorded. */
enum prog_kind { PROG_UNKNOWN, PROG_STATIC, PROG_PLAIN, PROG_HOOKED };

static enum prog_kind examine_prog(const char *prog)
{
    char path[PATH_MAX];
    if (!find_prog(prog, path, sizeof path))
        return PROG_UNKNOWN;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return PROG_UNKNOWN;
    enum prog_kind kind = PROG_UNKNOWN;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t nph;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
        int interp = 0;
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
                interp = 1;
        }
        kind = interp ? PROG_PLAIN : PROG_STATIC;
        for (Elf_Scn *scn = NULL; interp && (scn = elf_nextscn(elf, scn));) {
            GElf_Shdr sh;
            Elf_Data *data;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(data = elf_getdata(scn, NULL)) ||
                !sh.sh_entsize)
                continue;
            for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                GElf_Sym sym;
                const char *name;
                if (gelf_getsym(data, (int)i, &sym) && (name = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
                    (!strcmp(name, "__cyg_profile_func_enter") || !strcmp(name, "__sanitizer_cov_trace_pc")))
                    kind = PROG_HOOKED;
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return kind;
}

/* Says why a run left nothing in the trace, as well as it can tell. */
static void explain_nothing(const char *prog, int status, int signaled, int sampled, const struct trace_sum *t)
{
    const char *why;
    char buf[256];
    enum prog_kind kind = examine_prog(prog);
    if (!signaled && status == 127 && !t->files) {
        why = "it exited with status 127 before any recorded code ran (a command it runs was not found?)";
    } else if (t->unfinished) {
        why = "it was killed before its threads' buffers reached the file (SIGKILL cannot be caught; "
              "other signals end the trace properly)";
    } else if (kind == PROG_STATIC) {
        why = "it is statically linked, so the runtime cannot be preloaded: link it with libnanoprof.a "
              "and run it with NANOPROF_RECORD=DIR (docs/recording.md)";
    } else if (sampled && t->files) {
        why = "no sample was taken (it ran for less than one sampling period of CPU time?)";
    } else if (kind == PROG_PLAIN && !sampled) {
        snprintf(buf, sizeof buf,
                 "it is not built with -finstrument-functions or -fsanitize-coverage=trace-pc: rebuild it, "
                 "or sample it (nanoprof record --sample -- %s)", prog);
        why = buf;
    } else if (kind == PROG_HOOKED) {
        why = "it is instrumented, but no instrumented code ran in a recorded process "
              "(does it exec another program, or clear LD_PRELOAD?)";
    } else {
        why = "no recorded process ran instrumented code";
    }
    fprintf(stderr, "nanoprof record: nothing was recorded from %s: %s\n", prog, why);
}

/* The NANOPROF_* variables already in the environment that the runtime
 * would refuse (it would then run PROG without recording): refused here,
 * before PROG runs. Options given replace them, so they are checked
 * after the options. */
static int check_env(void)
{
    static const struct {
        const char *name;
        int (*valid)(const char *);
        const char *what;
    } vars[] = {
        { "NANOPROF_BUFFER", valid_size, "a size from 4k to 1G" },
        { "NANOPROF_DEPTH", valid_depth, "a depth from 1 to 65535" },
        { "NANOPROF_MIN_NS", valid_time, "a duration (ns, or a number with ns, us, ms, s)" },
        { "NANOPROF_QUEUE", valid_queue, "a number of buffers from 1 to 2048" },
        { "NANOPROF_DROP", valid_flag, "0 or 1" },
        { "NANOPROF_SAMPLE", valid_hz, "a rate from 1 to 100000 (Hz)" },
        { "NANOPROF_UNWIND", valid_unwind, "fp or dwarf" },
    };
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *v = getenv(vars[k].name);
        if (v && *v && !vars[k].valid(v)) {
            fprintf(stderr, "nanoprof record: %s=%s in the environment is not %s\n", vars[k].name, v,
                    vars[k].what);
            return 0;
        }
    }
    return 1;
}

static pid_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

int np_cmd_record(int argc, char **argv)
{
    const char *out = getenv("NANOPROF_RECORD");
    const char *depth = NULL, *tfilter = NULL, *buffer = NULL, *sample = NULL, *unwind = NULL;
    char *filter = NULL, *notrace = NULL;
    int i = 1, drop = 0, strict = 0;
    if (!out || !*out)
        out = NP_TRACE_DEFAULT_PATH;
    for (; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "--drop") == 0 || strcmp(a, "--strict") == 0) {
            *(a[2] == 'd' ? &drop : &strict) = 1;
            continue;
        }
        /* its value is optional, so only --sample=HZ gives one */
        if (strcmp(a, "--sample") == 0 || strncmp(a, "--sample=", 9) == 0) {
            sample = a[8] ? a + 9 : NP_SAMPLE_HZ_DEFAULT_STR;
            if (!np_parse_hz(sample))
                return usage_error("--sample: '%s' is not a rate from 1 to 100000 (Hz)%s", sample, "");
            continue;
        }
        static const struct {
            const char *s, *l;
        } opts[] = { { "-o", "--output" }, { "-F", "--filter" }, { "-N", "--notrace" },
                     { "-D", "--depth" }, { NULL, "--time-filter" }, { "-b", "--buffer" },
                     { NULL, "--unwind" } };
        int which = -1;
        for (int k = 0; k < 7 && which < 0; k++) {
            size_t ll = strlen(opts[k].l);
            if (strcmp(a, opts[k].l) == 0 || (opts[k].s && strcmp(a, opts[k].s) == 0)) {
                which = k;
                if (i + 1 >= argc)
                    return usage_error("option %s needs a value%s", a, "");
                val = argv[++i];
            } else if (strncmp(a, opts[k].l, ll) == 0 && a[ll] == '=') {
                which = k;
                val = a + ll + 1;
            } else if (opts[k].s && strncmp(a, opts[k].s, 2) == 0 && a[2]) {
                which = k;
                val = a + 2;
            }
        }
        switch (which) {
        case 0:
            if (!*val)
                return usage_error("-o: empty path%s%s", "", "");
            out = val;
            break;
        case 1:
            if (!*val || !add_list(&filter, val))
                return usage_error("-F: bad pattern '%s'%s", val, "");
            break;
        case 2:
            if (!*val || !add_list(&notrace, val))
                return usage_error("-N: bad pattern '%s'%s", val, "");
            break;
        case 3:
            if (!valid_depth(val))
                return usage_error("-D: '%s' is not a depth from 1 to 65535%s", val, "");
            depth = val;
            break;
        case 4:
            if (!valid_time(val))
                return usage_error("--time-filter: '%s' is not a duration (ns, or a number with ns, us, ms, s)%s",
                                   val, "");
            tfilter = val;
            break;
        case 5:
            if (!valid_size(val))
                return usage_error("-b: '%s' is not a size from 4k to 1G%s", val, "");
            buffer = val;
            break;
        case 6:
            if (!valid_unwind(val))
                return usage_error("--unwind: '%s' is not fp or dwarf%s", val, "");
            unwind = val;
            break;
        default:
            return usage_error("unknown option '%s'%s", a, "");
        }
    }
    if (i >= argc)
        return usage_error("no program to run%s%s", "", "");
    /* what the options set is checked already */
    if (buffer)
        setenv("NANOPROF_BUFFER", buffer, 1);
    if (depth)
        setenv("NANOPROF_DEPTH", depth, 1);
    if (tfilter)
        setenv("NANOPROF_MIN_NS", tfilter, 1);
    if (sample)
        setenv("NANOPROF_SAMPLE", sample, 1);
    if (unwind)
        setenv("NANOPROF_UNWIND", unwind, 1);
    if (drop)
        setenv("NANOPROF_DROP", "1", 1);
    if (!check_env())
        return 2;
    const char *env_sample = getenv("NANOPROF_SAMPLE");
    int sampled = env_sample && *env_sample;

    char lib[PATH_MAX], dir[PATH_MAX];
    if (!find_lib(lib, sizeof lib) || !np_trace_dir_prepare("record", out, dir, sizeof dir))
        return 1;

    /* the program's environment: this process's, which it no longer needs */
    const char *pre = getenv("LD_PRELOAD");
    char *ld = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
    if (!ld) {
        fputs("nanoprof record: out of memory\n", stderr);
        return 1;
    }
    strcpy(ld, lib);
    if (pre && *pre) {
        strcat(ld, ":");
        strcat(ld, pre);
    }
    setenv("LD_PRELOAD", ld, 1);
    free(ld);
    setenv("NANOPROF_RECORD", dir, 1);
    if (filter)
        setenv("NANOPROF_FILTER", filter, 1);
    if (notrace)
        setenv("NANOPROF_NOTRACE", notrace, 1);
    fflush(NULL);
    /* posix_spawn, not fork: no copy of this process's page tables (it
     * reports a failed exec itself) */
    pid_t pid;
    int e = posix_spawnp(&pid, argv[i], NULL, NULL, argv + i, environ);
    if (e) {
        free(filter);
        free(notrace);
        fprintf(stderr, "nanoprof record: cannot run '%s': %s\n", argv[i], strerror(e));
        rmdir(dir);
        return 127;
    }
    child_pid = pid;
    /* like system(): the terminal's ^C and ^\ are the program's to handle */
    struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    memset(&fwd, 0, sizeof fwd);
    fwd.sa_handler = forward;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    free(filter);
    free(notrace);

    struct trace_sum t;
    summarise(dir, &t);
    int rc;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "nanoprof record: %s killed by signal %d (%s)", argv[i], sig, strsignal(sig));
        rc = 128 + sig;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        fprintf(stderr, "nanoprof record: %s exited with status %d", argv[i], rc);
    }
    char loss[600];
    describe_loss(dir, &t, loss, sizeof loss);
    fprintf(stderr, "; trace in %s: %d file%s, %lld bytes%s\n", out, t.files, t.files == 1 ? "" : "s", t.bytes,
            loss);
    if (!t.data)
        explain_nothing(argv[i], rc, WIFSIGNALED(status), sampled, &t);
    if (strict && loss[0] && rc == 0)
        rc = 3;
    return rc;
}
