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
#include "follow.h"
#include "options.h"
#include "trace_dir.h"
#include "analyze/containers.h"
#include "analyze/model.h"
#include "analyze/patterns.h"
#include "analyze/source.h"
#include "common/elf_symtab.h"
#include "common/name_match.h"
#include "common/parse_units.h"
#include "common/value_spec.h"
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
    "Runs PROG, built with -finstrument-functions, -pg or -pg -mfentry, or\n"
    "with patchable entries (-fpatchable-function-entry=5), with the nanoprof\n"
    "runtime preloaded, and records every call of every thread\n"
    "(and of forked children and exec'd programs) into a trace directory, one\n"
    "file per process\n"
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
    "  -F, --filter PATTERN  record only calls of functions whose name matches\n"
    "                        PATTERN, and the calls made inside them; repeatable\n"
    "                        or comma-separated                   [NANOPROF_FILTER]\n"
    "  -N, --notrace PATTERN do not record functions whose name matches PATTERN,\n"
    "                        nor the calls made inside them; repeatable or\n"
    "                        comma-separated                     [NANOPROF_NOTRACE]\n"
    "                        A PATTERN is a glob (luaH_*), or a regular expression\n"
    "                        (luaH_.*, ^lua[A-Z]+_) when it has syntax a glob has\n"
    "                        not; either matches the whole name (docs/recording.md)\n"
    "  -D, --depth N         record only calls nested at most N deep among the\n"
    "                        recorded calls (1 = outermost)         [NANOPROF_DEPTH]\n"
    "      --time-filter T   drop calls that last less than T: nanoseconds, or a\n"
    "                        number with ns, us, ms or s             [NANOPROF_MIN_NS]\n"
    "  -A, --argument SPEC   record the arguments of the functions SPEC names, in\n"
    "                        uftrace's syntax: FUNC@arg1,arg2/s,arg3/x32 (FUNC a\n"
    "                        pattern as for -F; formats i d u x o p c s, sizes 8\n"
    "                        16 32 64); repeatable; PROG built with -pg or\n"
    "                        patchable entries\n"
    "                                                                [NANOPROF_ARGS]\n"
    "  -R, --retval SPEC     record the return value of the functions SPEC names:\n"
    "                        FUNC@retval[/FORMAT]; repeatable       [NANOPROF_RETVAL]\n"
    "  -P, --patch PATTERN   PROG built with patchable entries: switch on the\n"
    "                        functions whose name matches PATTERN (as for -F)\n"
    "                        and no other; repeatable or comma-separated\n"
    "                        (default: every function)             [NANOPROF_PATCH]\n"
    "      --trace-off       start with them switched off: the program switches\n"
    "                        them (np_trace_on), or the signal does\n"
    "                                                          [NANOPROF_PATCH_OFF=1]\n"
    "      --trace-signal SIG  switch them on and off at each signal SIG (USR1,\n"
    "                        SIGUSR2, RTMIN+3, a number)     [NANOPROF_PATCH_SIGNAL]\n"
    "  -b, --buffer SIZE     bytes of each thread's buffer, with k, M or G; 4k to\n"
    "                        1G, default 1M (less each when many threads live)\n"
    "                                                              [NANOPROF_BUFFER]\n"
    "      --drop            when the writer falls behind, drop events (counted,\n"
    "                        and said in every view) rather than make the\n"
    "                        program's threads wait for it             [NANOPROF_DROP=1]\n"
    "      --strict          exit with status 3 when the trace lost anything\n"
    "                        (dropped events, a process that did not end\n"
    "                        normally) or a -F or -N pattern matched no function,\n"
    "                        and PROG's status was 0\n"
    "      --no-wait-daemons once PROG has ended, do not wait for the processes\n"
    "                        it left running (a daemon, a double fork's\n"
    "                        grandchild): say their pids and end\n"
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
    "  NANOPROF_PG_THUNKS=0  -pg on x86-64: every exit by the return-address\n"
    "                        trampoline, no call rewritten into a jump to a\n"
    "                        thunk (docs/instrumenting.md)\n"
    "  NANOPROF_DEBUG_DIR=DIR  where views look for separate debug files\n"
    "\n"
    "The closing line on stderr gives PROG's status, the trace's size, and\n"
    "what the trace lost, if anything. A process PROG leaves running is\n"
    "waited for (record is the reaper of orphaned descendants), unless\n"
    "--no-wait-daemons; each -F or -N pattern that matches no function of PROG\n"
    "or of the libraries it loaded is said in a line of its own.\n"
    "\n"
    "exit status: PROG's; 128+N when PROG was killed by signal N; 2 bad usage\n"
    "(options, or a bad NANOPROF_* variable in the environment); 127 PROG could\n"
    "not be run; 1 the trace directory or runtime is missing; 3 with --strict\n"
    "when the trace lost anything or a pattern matched no function, and PROG's\n"
    "status was 0.\n";

#define usage_error(...) np_cli_usage_error("record", __VA_ARGS__)

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
    int running;          /* files without END of a process left running (not unfinished) */
    uint64_t lost;        /* events lost, by the END chunks */
};

/* Whether the trace file NAME (<pid>[.<n>].npt) is a process's of LEFT. */
static bool written_by(const char *name, const pid_t *left, size_t nleft)
{
    long pid = strtol(name, NULL, 10);
    for (size_t i = 0; i < nleft; i++)
        if (left[i] == pid)
            return true;
    return false;
}

static void summarise(const char *dir, struct trace_sum *t, const pid_t *left, size_t nleft)
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
        if (!has_end && written_by(de->d_name, left, nleft))
            t->running++;
        else
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

/* Whether ELF's dynamic symbols name one of NAMES (NULL-terminated): the
 * hooks it calls, which the preloaded runtime defines. */
static bool imports(Elf *elf, const char *const *names)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        Elf_Data *data;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(data = elf_getdata(scn, NULL)) ||
            !sh.sh_entsize)
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *name;
            if (gelf_getsym(data, (int)i, &sym) && (name = elf_strptr(elf, sh.sh_link, sym.st_name)))
                for (const char *const *n = names; *n; n++)
                    if (!strcmp(name, *n))
                        return true;
        }
    }
    return false;
}

static const char *const hook_names[] = { "__cyg_profile_func_enter", "__sanitizer_cov_trace_pc", "mcount",
                                          "_mcount", "__gnu_mcount_nc", "__fentry__", NULL };
/* -pg's hooks: x86-64's, AArch64's, 32-bit ARM's */
static const char *const pg_names[] = { "mcount", "__fentry__", "_mcount", "__gnu_mcount_nc", NULL };
#define imports_pg(elf) imports(elf, pg_names)

/* Whether the ELF lists patchable entries. */
#define has_patchable(elf) (np_elf_patchable_lists(elf, NULL, 0) > 0)

/* What PROG's ELF file says about why nothing was recorded. */
enum prog_kind { PROG_UNKNOWN, PROG_STATIC, PROG_PLAIN, PROG_HOOKED, PROG_PATCHABLE };

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
        if (interp && imports(elf, hook_names))
            kind = PROG_HOOKED;
        else if (interp && has_patchable(elf))
            kind = PROG_PATCHABLE;
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return kind;
}

/* Says why a run left nothing in the trace, as well as it can tell.
 * FILTERS: the filters that can drop every call ("-F 'main'"), or "". */
static void explain_nothing(const char *prog, int status, int signaled, int sampled, const char *filters,
                            const struct trace_sum *t)
{
    const char *why;
    char buf[1024];
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
                 "it is not built with -finstrument-functions, -pg or -fsanitize-coverage=trace-pc: rebuild it, "
                 "or sample it (nanoprof record --sample -- %s)", prog);
        why = buf;
    } else if (t->files && filters[0]) {
        /* a file opens at the first instrumented call a process makes */
        snprintf(buf, sizeof buf, "it ran instrumented code, but no call passed the filter%s %s",
                 strchr(filters, ',') ? "s" : "", filters);
        why = buf;
    } else if (kind == PROG_PATCHABLE) {
        why = "its patchable entries were not switched on while it ran (--trace-off, and no np_trace_on or "
              "signal?), or could not be (said above)";
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
        { "NANOPROF_PG_THUNKS", valid_flag, "0 or 1" },
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

/* Adds the comma-separated patterns of LIST to O as OPT, as the runtime
 * reads NANOPROF_FILTER: 0, or -1 with why in ERR. */
static int add_patterns(struct np_model_options *o, enum np_model_opt opt, const char *list, char *err,
                        size_t size)
{
    char *copy = strdup(list);
    int rc = copy ? 0 : -1;
    if (!copy)
        snprintf(err, size, "out of memory");
    for (char *save = NULL, *p = copy ? strtok_r(copy, ",", &save) : NULL; p && !rc; p = strtok_r(NULL, ",", &save))
        rc = np_model_option(o, opt, p, err, size);
    free(copy);
    return rc;
}

/* What the options set. */
struct record_cmd {
    const char *out, *depth, *tfilter, *buffer, *sample, *unwind;
    char *filter, *notrace;           /* -F and -N, comma-separated, for the environment */
    char *args, *retvals;             /* -A and -R, ';'-separated, for the environment */
    char *patch;                      /* -P, comma-separated */
    const char *trace_signal;         /* --trace-signal, as a number */
    bool trace_off;
    bool patchable;                   /* PROG has patchable entries */
    struct np_model_options patterns; /* the patterns in force (options, else the environment) */
    bool drop, strict, no_wait;
};

enum { OPT_TIME_FILTER = NP_CLI_OWN, OPT_DROP, OPT_STRICT, OPT_SAMPLE, OPT_UNWIND, OPT_NO_WAIT, OPT_TRACE_OFF,
       OPT_TRACE_SIGNAL };

static const struct np_cli_option options[] = {
    { "output", 'o', NP_CLI_VALUE, 'o' },
    NP_CLI_FILTER_OPTIONS,
    { "depth", 'D', NP_CLI_VALUE, 'D' },
    { "time-filter", 0, NP_CLI_VALUE, OPT_TIME_FILTER },
    { "argument", 'A', NP_CLI_VALUE, 'A' },
    { "retval", 'R', NP_CLI_VALUE, 'R' },
    { "patch", 'P', NP_CLI_VALUE, 'P' },
    { "trace-off", 0, NP_CLI_NO_VALUE, OPT_TRACE_OFF },
    { "trace-signal", 0, NP_CLI_VALUE, OPT_TRACE_SIGNAL },
    { "buffer", 'b', NP_CLI_VALUE, 'b' },
    { "drop", 0, NP_CLI_NO_VALUE, OPT_DROP },
    { "strict", 0, NP_CLI_NO_VALUE, OPT_STRICT },
    { "sample", 0, NP_CLI_OPTIONAL_VALUE, OPT_SAMPLE }, /* only --sample=HZ gives a rate */
    { "unwind", 0, NP_CLI_VALUE, OPT_UNWIND },
    { "no-wait-daemons", 0, NP_CLI_NO_VALUE, OPT_NO_WAIT },
    { NULL, 0, 0, 0 },
};

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

/* A signal by name (USR1, SIGUSR1, RTMIN+3) or number; 0 when it is
 * none, or one that cannot be caught or that the runtime or the program's
 * faults need. */
static int signal_number(const char *s)
{
    static const struct {
        const char *name;
        int sig;
    } names[] = { { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
                  { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
                  { "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
                  { "TTOU", SIGTTOU }, { "URG", SIGURG }, { "WINCH", SIGWINCH }, { "IO", SIGIO } };
    char *end;
    if (!strncmp(s, "SIG", 3))
        s += 3;
    long n = strtol(s, &end, 10);
    if (end == s) {
        n = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (!strcmp(s, names[i].name))
                n = names[i].sig;
        int rtmin = !strncmp(s, "RTMIN", 5), rtmax = !strncmp(s, "RTMAX", 5);
        if (rtmin || rtmax) {
            const char *rest = s + 5;
            long k = 0;
            if (*rest && (*rest != (rtmin ? '+' : '-') || (k = strtol(rest + 1, &end, 10), end == rest + 1 || *end)))
                return 0;
            n = rtmin ? SIGRTMIN + k : SIGRTMAX - k;
        }
    } else if (*end) {
        n = 0;
    }
    if (n <= 0 || n > SIGRTMAX || n == SIGKILL || n == SIGSTOP || n == SIGTRAP || n == SIGSEGV || n == SIGBUS ||
        n == SIGILL || n == SIGFPE || (n > SIGSYS && n < SIGRTMIN))
        return 0;
    return (int)n;
}

static int option(void *ctx, int id, const char *val)
{
    struct record_cmd *r = ctx;
    char err[320];
    switch (id) {
    case 'o':
        if (!*val)
            return usage_error("-o: empty path");
        r->out = val;
        return 0;
    case 'F':
    case 'N':
        if (!*val || !add_list(id == 'F' ? &r->filter : &r->notrace, val))
            return usage_error("-%c: bad pattern '%s'", id, val);
        if (add_patterns(&r->patterns, id == 'F' ? NP_MODEL_OPT_INCLUDE : NP_MODEL_OPT_EXCLUDE, val, err, sizeof err))
            return usage_error("%s", err);
        return 0;
    case 'A':
    case 'R': {
        struct np_value_spec spec;
        char **list = id == 'A' ? &r->args : &r->retvals;
        if (np_value_spec_parse(val, id == 'R', &spec, err, sizeof err) < 0)
            return usage_error("-%c: %s", id, err);
        size_t old = *list ? strlen(*list) : 0;
        char *grown = realloc(*list, old + strlen(val) + 2);
        if (!grown)
            return usage_error("out of memory");
        sprintf(grown + old, "%s%s", old ? ";" : "", val);
        *list = grown;
        return 0;
    }
    case 'P': {
        /* comma-separated, as -F: each piece a pattern */
        char *copy = strdup(val), *save = NULL;
        int bad = !copy || !*val, n = 0;
        for (char *p = copy ? strtok_r(copy, ",", &save) : NULL; p && !bad; p = strtok_r(NULL, ",", &save), n++) {
            struct np_name_pattern pat;
            bad = np_name_pattern_init(&pat, p, err, sizeof err) < 0;
            np_name_pattern_free(&pat);
        }
        free(copy);
        if (bad || !n || !add_list(&r->patch, val))
            return usage_error("-P: %s", bad && *val ? err : "empty pattern");
        return 0;
    }
    case OPT_TRACE_OFF:
        r->trace_off = true;
        return 0;
    case OPT_TRACE_SIGNAL: {
        static char num[16];
        int sig = signal_number(val);
        if (sig <= 0)
            return usage_error("--trace-signal: '%s' is not a signal that can be caught", val);
        snprintf(num, sizeof num, "%d", sig);
        r->trace_signal = num;
        return 0;
    }
    case 'D':
        if (!valid_depth(val))
            return usage_error("-D: '%s' is not a depth from 1 to 65535", val);
        r->depth = val;
        return 0;
    case OPT_TIME_FILTER:
        if (!valid_time(val))
            return usage_error("--time-filter: '%s' is not a duration (ns, or a number with ns, us, ms, s)", val);
        r->tfilter = val;
        return 0;
    case 'b':
        if (!valid_size(val))
            return usage_error("-b: '%s' is not a size from 4k to 1G", val);
        r->buffer = val;
        return 0;
    case OPT_UNWIND:
        if (!valid_unwind(val))
            return usage_error("--unwind: '%s' is not fp or dwarf", val);
        r->unwind = val;
        return 0;
    case OPT_SAMPLE:
        r->sample = val ? val : NP_SAMPLE_HZ_DEFAULT_STR;
        if (!np_parse_hz(r->sample))
            return usage_error("--sample: '%s' is not a rate from 1 to 100000 (Hz)", r->sample);
        return 0;
    case OPT_DROP:
        r->drop = true;
        return 0;
    case OPT_STRICT:
        r->strict = true;
        return 0;
    case OPT_NO_WAIT:
        r->no_wait = true;
        return 0;
    }
    return 2;
}

/* The patterns of the environment, when no option gave them: refused
 * here as the runtime would refuse them. 0, or 2 after saying so. */
static int env_patterns(struct record_cmd *r)
{
    static const struct {
        const char *name;
        enum np_model_opt opt;
    } vars[] = { { "NANOPROF_FILTER", NP_MODEL_OPT_INCLUDE }, { "NANOPROF_NOTRACE", NP_MODEL_OPT_EXCLUDE } };
    for (size_t k = 0; k < 2; k++) {
        const char *v = getenv(vars[k].name);
        char err[320];
        if ((k ? r->notrace : r->filter) || !v || !*v)
            continue;
        if (add_patterns(&r->patterns, vars[k].opt, v, err, sizeof err)) {
            fprintf(stderr, "nanoprof record: %s=%s in the environment: %s\n", vars[k].name, v, err);
            return 2;
        }
    }
    return 0;
}

/* The filters in force that can keep every call out, for the line that
 * says nothing was recorded: "-F 'a', -N 'b', --time-filter 1ms". */
static void describe_filters(const struct record_cmd *r, char *buf, size_t size)
{
    const struct np_model_options *o = &r->patterns;
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < o->ninclude + o->nexclude && n < size; i++) {
        bool ex = i >= o->ninclude;
        n += (size_t)snprintf(buf + n, size - n, "%s-%c '%s'", n ? ", " : "", ex ? 'N' : 'F',
                              ex ? o->exclude[i - o->ninclude] : o->include[i]);
    }
    const char *t = getenv("NANOPROF_MIN_NS");
    if (t && *t && n < size)
        snprintf(buf + n, size - n, "%s--time-filter %s", n ? ", " : "", t);
}

/* Says each -F or -N pattern that matches no function of PROG or of the
 * libraries it loaded (the trace's ELF files); returns how many. */
static size_t check_patterns(const struct record_cmd *r, const char *dir, const char *prog)
{
    const struct np_model_options *o = &r->patterns;
    size_t n = o->ninclude + o->nexclude;
    struct np_pattern_use *uses = n ? calloc(n, sizeof *uses) : NULL;
    if (!uses)
        return 0;
    unsigned files = 0;
    np_patterns_in_trace(dir, o->include, o->ninclude, o->exclude, o->nexclude, uses, &files);
    char what[PATH_MAX + 64];
    snprintf(what, sizeof what, "%s or the libraries it loaded", prog);
    size_t said = np_cli_say_unmatched("record", "", what, uses, n, files, false, 0);
    free(uses);
    return said;
}

static pid_t child_pid;
static volatile sig_atomic_t forwarded; /* the last signal passed on to PROG */

static void forward(int sig)
{
    forwarded = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

#define LEFT_MAX 16 /* processes left running named by pid */

/* Runs ARGV[0] as R says, waits for it and for what it leaves running,
 * and reports. */
static int run(struct record_cmd *r, char **argv)
{
    /* what the options set is checked already */
    if (r->buffer)
        setenv("NANOPROF_BUFFER", r->buffer, 1);
    if (r->depth)
        setenv("NANOPROF_DEPTH", r->depth, 1);
    if (r->tfilter)
        setenv("NANOPROF_MIN_NS", r->tfilter, 1);
    if (r->sample)
        setenv("NANOPROF_SAMPLE", r->sample, 1);
    if (r->unwind)
        setenv("NANOPROF_UNWIND", r->unwind, 1);
    if (r->drop)
        setenv("NANOPROF_DROP", "1", 1);
    if (!check_env() || env_patterns(r))
        return 2;
    const char *env_sample = getenv("NANOPROF_SAMPLE");
    int sampled = env_sample && *env_sample;

    char lib[PATH_MAX], dir[PATH_MAX];
    if (!find_lib(lib, sizeof lib) || !np_trace_dir_prepare("record", r->out, dir, sizeof dir))
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
    if (r->filter)
        setenv("NANOPROF_FILTER", r->filter, 1);
    if (r->notrace)
        setenv("NANOPROF_NOTRACE", r->notrace, 1);
    if (r->args)
        setenv("NANOPROF_ARGS", r->args, 1);
    if (r->retvals)
        setenv("NANOPROF_RETVAL", r->retvals, 1);
    /* patchable entries: every function unless -P chose (or the
     * environment did) */
    if (r->patch)
        setenv("NANOPROF_PATCH", r->patch, 1);
    else if (r->patchable)
        setenv("NANOPROF_PATCH", "*", 0);
    if (r->trace_off)
        setenv("NANOPROF_PATCH_OFF", "1", 1);
    if (r->trace_signal)
        setenv("NANOPROF_PATCH_SIGNAL", r->trace_signal, 1);
    /* a process whose parent ends before it is re-parented to this one,
     * which follows it until it ends (follow.h) */
    bool following = np_follow_start() == 0;
    fflush(NULL);
    /* the signals this process handles while PROG runs held from before
     * PROG starts until their handlers are in place: a SIGTERM as PROG
     * starts goes to PROG, not to this process alone */
    sigset_t held, before;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGQUIT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    sigprocmask(SIG_BLOCK, &held, &before);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &before); /* PROG's mask: this process's own */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    /* posix_spawn, not fork: no copy of this process's page tables (it
     * reports a failed exec itself) */
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (e) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        fprintf(stderr, "nanoprof record: cannot run '%s': %s\n", argv[0], strerror(e));
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
    sigprocmask(SIG_SETMASK, &before, NULL);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    /* the processes it left running: followed until they end (^C stops
     * that), or left so */
    pid_t left[LEFT_MAX];
    size_t nleft = following ? np_follow_running(left, LEFT_MAX) : 0;
    if (nleft && !r->no_wait) {
        np_follow_catch(); /* ^C from the line below on stops the waiting */
        char pids[LEFT_MAX * 12];
        size_t k = 0;
        for (size_t j = 0; j < nleft && j < LEFT_MAX; j++)
            k += (size_t)snprintf(pids + k, sizeof pids - k, "%s%d", j ? ", " : "", (int)left[j]);
        fprintf(stderr, "nanoprof record: %s ended; waiting for the %zu process%s it left running (pid%s %s%s; "
                        "^C or --no-wait-daemons not to wait)\n",
                argv[0], nleft, nleft == 1 ? "" : "es", nleft == 1 ? "" : "s", pids, nleft > LEFT_MAX ? ", ..." : "");
        /* a SIGTERM or SIGHUP that ended PROG goes to them too */
        nleft = np_follow_wait(forwarded) ? np_follow_running(left, LEFT_MAX) : 0;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);

    struct trace_sum t;
    summarise(dir, &t, left, nleft < LEFT_MAX ? nleft : LEFT_MAX);
    int rc;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "nanoprof record: %s killed by signal %d (%s)", argv[0], sig, strsignal(sig));
        rc = 128 + sig;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        fprintf(stderr, "nanoprof record: %s exited with status %d", argv[0], rc);
    }
    char loss[600], running[200] = "";
    describe_loss(dir, &t, loss, sizeof loss);
    if (nleft) {
        size_t k = (size_t)snprintf(running, sizeof running, "; left running: pid%s", nleft == 1 ? "" : "s");
        for (size_t j = 0; j < nleft && j < LEFT_MAX && k < sizeof running; j++)
            k += (size_t)snprintf(running + k, sizeof running - k, "%s%d", j ? ", " : " ", (int)left[j]);
        if (k < sizeof running)
            k += (size_t)snprintf(running + k, sizeof running - k, "%s", nleft > LEFT_MAX ? ", ..." : "");
        if (t.running && k < sizeof running)
            snprintf(running + k, sizeof running - k, " (%d file%s still being written)", t.running,
                     t.running == 1 ? "" : "s");
    }
    fprintf(stderr, "; trace in %s: %d file%s, %lld bytes%s%s\n", r->out, t.files, t.files == 1 ? "" : "s",
            t.bytes, loss, running);
    size_t unmatched = check_patterns(r, dir, argv[0]);
    if (!t.data) {
        char filters[1024];
        describe_filters(r, filters, sizeof filters);
        explain_nothing(argv[0], rc, WIFSIGNALED(status), sampled, filters, &t);
    }
    if (r->strict && (loss[0] || unmatched) && rc == 0)
        rc = 3;
    return rc;
}

/* Whether PATTERN matches a function of PROG (its symbol table, as -F's
 * patterns are looked for); 0, or 2 after one line naming OPT and ITEM. */
static int check_names(struct np_symbols *syms, const char *opt, const char *item, const char *pattern,
                       const char *path)
{
    struct np_name_pattern pat;
    struct np_pattern_use use = { .text = pattern };
    unsigned files;
    char err[320];
    int rc = 0;
    if (np_name_pattern_init(&pat, pattern, err, sizeof err) < 0) {
        fprintf(stderr, "nanoprof record: %s '%s': %s\n", opt, item, err);
        rc = 2;
    } else if (np_patterns_in_files(syms, &pat, &use, 1, &files), !use.in_files) {
        /* uftrace looks for its regular expressions anywhere in a name
         * (its `-P .`: every function); here a pattern is the whole name */
        fprintf(stderr, "nanoprof record: %s '%s': '%s' matches no function of %s%s\n", opt, item, pattern, path,
                strchr(pattern, '.') ? " (a pattern matches whole names: every function is '*', uftrace's '.' "
                                       "is '.*' here)"
                                     : "");
        rc = 2;
    }
    np_name_pattern_free(&pat);
    return rc;
}

/* What PROG's ELF file says of its hooks: patchable entries (noted in R),
 * which -P, --trace-off and --trace-signal need; -pg's or patchable
 * entries, whose hooks see the argument registers, which -A and -R need;
 * and whether every -A, -R and -P pattern names a function of PROG. 0, or
 * 2 after one line. */
static int check_prog(struct record_cmd *r, const char *prog)
{
    char path[PATH_MAX];
    if (!find_prog(prog, path, sizeof path))
        return 0; /* said when it does not run */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool is_elf = elf && elf_kind(elf) == ELF_K_ELF, pg = is_elf && imports_pg(elf);
    GElf_Ehdr eh;
    bool has_eh = is_elf && gelf_getehdr(elf, &eh);
    bool a64 = has_eh && eh.e_machine == EM_AARCH64, arm32 = has_eh && eh.e_machine == EM_ARM;
    r->patchable = is_elf && has_patchable(elf);
    if (elf)
        elf_end(elf);
    close(fd);
    const char *patch_opt = r->patch ? "-P" : r->trace_off ? "--trace-off" : "--trace-signal";
    if (is_elf && !r->patchable && (r->patch || r->trace_off || r->trace_signal)) {
        fprintf(stderr, "nanoprof record: %s: %s has no patchable entries: build it with "
                        "-fpatchable-function-entry=5\n", patch_opt, path);
        return 2;
    }
    if (a64 && pg && r->args) {
        fprintf(stderr, "nanoprof record: -A: %s is built with -pg for AArch64, whose hook (_mcount) runs after the "
                        "prologue, with x0 overwritten: it sees no arguments (-R sees return values)\n", path);
        return 2;
    }
    if (is_elf && !pg && !r->patchable && (r->args || r->retvals)) {
        fprintf(stderr,
                "nanoprof record: -%c: %s is not built with -pg (or -pg -mfentry) or patchable entries, whose hooks "
                "see the argument registers: rebuild it so\n",
                r->args ? 'A' : 'R', path);
        return 2;
    }
    if (!r->args && !r->retvals && !r->patch)
        return 0;
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_addrspace *as = syms ? np_addrspace_new(syms) : NULL;
    const struct np_trace_module mod = { .path = path };
    int rc = 0;
    if (!as || np_addrspace_map(as, &mod)) {
        fputs("nanoprof record: out of memory\n", stderr);
        rc = 1;
    }
    for (int k = 0; k < 3 && !rc; k++) {
        char *list = k == 2 ? r->patch : k ? r->retvals : r->args, *save = NULL;
        char *copy = list ? strdup(list) : NULL;
        for (char *p = copy ? strtok_r(copy, k == 2 ? "," : ";", &save) : NULL; p && !rc;
             p = strtok_r(NULL, k == 2 ? "," : ";", &save)) {
            struct np_value_spec spec;
            char err[320];
            if (k == 2) {
                rc = check_names(syms, "-P", p, p, path);
            } else {
                (void)np_value_spec_parse(p, k, &spec, err, sizeof err); /* (checked with the options) */
                for (unsigned i = 0; i < spec.n && !rc; i++)
                    if (arm32 && pg && spec.item[i].index > 4) {
                        fprintf(stderr, "nanoprof record: -A '%s': %s is built for 32-bit ARM, which passes "
                                        "arguments past the fourth on the stack: arg1 to arg4 only\n", p, path);
                        rc = 2;
                    }
                if (!rc)
                    rc = check_names(syms, k ? "-R" : "-A", p, spec.func, path);
            }
        }
        free(copy);
    }
    np_addrspace_free(as);
    np_symbols_free(syms);
    return rc;
}

int np_cmd_record(int argc, char **argv)
{
    struct record_cmd r = { .out = getenv("NANOPROF_RECORD") };
    if (!r.out || !*r.out)
        r.out = NP_TRACE_DEFAULT_PATH;
    /* options end at PROG: what follows is its own */
    struct np_cli cli = { "record", options, NP_CLI_UNTIL_ARGUMENT, usage, option, NULL };
    int first, rc = np_cli_parse(&cli, &r, argc, argv, &first);
    if (rc == NP_CLI_HELP)
        rc = 0;
    else if (!rc && first >= argc)
        rc = usage_error("no program to run");
    else if (!rc)
        rc = check_prog(&r, argv[first]);
    if (!rc && first < argc)
        rc = run(&r, argv + first);
    free(r.filter);
    free(r.notrace);
    free(r.args);
    free(r.retvals);
    free(r.patch);
    np_model_options_free(&r.patterns);
    return rc;
}
