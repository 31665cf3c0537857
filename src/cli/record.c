/* record.c - `nanoprof record`: runs a program with the runtime preloaded
 * and the recorder turned on (NANOPROF_RECORD), waits for it, and reports
 * the trace and the program's exit status (docs/recording.md). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cli.h"
#include "common/parse_units.h"
#include "common/trace_format.h"
#include "nanoprof/sample.h"

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
    "                        1G, default 1M                        [NANOPROF_BUFFER]\n"
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
    "The runtime is found next to this command (build tree) or in ../lib*\n"
    "(installed); NANOPROF_LIB=PATH names another libnanoprof.so.\n"
    "\n"
    "exit status: PROG's; 128+N when PROG was killed by signal N; 2 bad usage;\n"
    "127 PROG could not be run; 1 the trace directory or runtime is missing.\n";

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

static int valid_depth(const char *s)
{
    char *end;
    errno = 0;
    long d = strtol(s, &end, 10);
    return !errno && end != s && !*end && d >= 1 && d <= 65535;
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

static int only_traces(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int ok = 1;
    while ((de = readdir(d)) && ok) {
        size_t l = strlen(de->d_name);
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            !(l > 4 && strcmp(de->d_name + l - 4, NP_TRACE_FILE_SUFFIX) == 0))
            ok = 0;
    }
    closedir(d);
    return ok;
}

static int remove_traces(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char p[PATH_MAX + 256];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(dir);
}

/* A fresh, empty trace directory at OUT; an existing one (holding only
 * trace files) is kept as OUT.old. */
static int prepare_dir(const char *out, char *abs, size_t size)
{
    struct stat st;
    if (stat(out, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "nanoprof record: %s exists and is not a directory\n", out);
            return 0;
        }
        if (!only_traces(out)) {
            fprintf(stderr, "nanoprof record: %s holds files other than traces: not replaced\n", out);
            return 0;
        }
        char old[PATH_MAX];
        snprintf(old, sizeof old, "%s.old", out);
        if (stat(old, &st) == 0 && (!S_ISDIR(st.st_mode) || !only_traces(old) || remove_traces(old) < 0)) {
            fprintf(stderr, "nanoprof record: cannot replace %s\n", old);
            return 0;
        }
        if (rename(out, old) < 0) {
            fprintf(stderr, "nanoprof record: cannot rename %s to %s: %s\n", out, old, strerror(errno));
            return 0;
        }
    }
    if (mkdir(out, 0755) < 0) {
        fprintf(stderr, "nanoprof record: cannot create %s: %s\n", out, strerror(errno));
        return 0;
    }
    if (!realpath(out, abs)) {
        fprintf(stderr, "nanoprof record: %s: %s\n", out, strerror(errno));
        return 0;
    }
    (void)size;
    return 1;
}

/* Files, bytes and EVENTS chunks in the trace directory. */
/* Files, bytes, and chunks that hold something recorded (events or block
 * counts) in the trace directory DIR. */
static void summarise(const char *dir, int *files, long long *bytes, long long *data)
{
    *files = 0;
    *bytes = *data = 0;
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
        (*files)++;
        uint8_t h[NP_TRACE_CHUNK_HEADER];
        long off = NP_TRACE_HEADER_SIZE;
        while (fseek(f, off, SEEK_SET) == 0 && fread(h, 1, sizeof h, f) == sizeof h) {
            if (np_get_u32(h) == NP_CHUNK_EVENTS || np_get_u32(h) == NP_CHUNK_BLOCKS)
                (*data)++;
            off += NP_TRACE_CHUNK_HEADER + (long)np_get_u32(h + 4);
        }
        fseek(f, 0, SEEK_END);
        *bytes += ftell(f);
        fclose(f);
    }
    closedir(d);
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
    int i = 1;
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
            if (strcmp(val, "fp") != 0 && strcmp(val, "dwarf") != 0)
                return usage_error("--unwind: '%s' is not fp or dwarf%s", val, "");
            unwind = val;
            break;
        default:
            return usage_error("unknown option '%s'%s", a, "");
        }
    }
    if (i >= argc)
        return usage_error("no program to run%s%s", "", "");

    char lib[PATH_MAX], dir[PATH_MAX];
    if (!find_lib(lib, sizeof lib) || !prepare_dir(out, dir, sizeof dir))
        return 1;

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        perror("nanoprof record: pipe");
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("nanoprof record: fork");
        return 1;
    }
    if (pid == 0) {
        close(pfd[0]);
        const char *pre = getenv("LD_PRELOAD");
        char *ld = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
        if (ld) {
            strcpy(ld, lib);
            if (pre && *pre) {
                strcat(ld, ":");
                strcat(ld, pre);
            }
            setenv("LD_PRELOAD", ld, 1);
        }
        setenv("NANOPROF_RECORD", dir, 1);
        if (filter)
            setenv("NANOPROF_FILTER", filter, 1);
        if (notrace)
            setenv("NANOPROF_NOTRACE", notrace, 1);
        if (depth)
            setenv("NANOPROF_DEPTH", depth, 1);
        if (tfilter)
            setenv("NANOPROF_MIN_NS", tfilter, 1);
        if (buffer)
            setenv("NANOPROF_BUFFER", buffer, 1);
        if (sample)
            setenv("NANOPROF_SAMPLE", sample, 1);
        if (unwind)
            setenv("NANOPROF_UNWIND", unwind, 1);
        execvp(argv[i], argv + i);
        int e = errno;
        if (write(pfd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    child_pid = pid;
    close(pfd[1]);
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

    int e = 0;
    ssize_t got;
    while ((got = read(pfd[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    free(filter);
    free(notrace);
    if (got == (ssize_t)sizeof e) {
        fprintf(stderr, "nanoprof record: cannot run '%s': %s\n", argv[i], strerror(e));
        rmdir(dir);
        return 127;
    }

    int files;
    long long bytes, data;
    summarise(dir, &files, &bytes, &data);
    int rc;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "nanoprof record: %s killed by signal %d (%s)", argv[i], sig, strsignal(sig));
        rc = 128 + sig;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        fprintf(stderr, "nanoprof record: %s exited with status %d", argv[i], rc);
    }
    fprintf(stderr, "; trace in %s: %d file%s, %lld bytes\n", out, files, files == 1 ? "" : "s", bytes);
    if (!data)
        fprintf(stderr, "nanoprof record: nothing was recorded: is %s built with -finstrument-functions "
                "or -fsanitize-coverage=trace-pc?\n",
                argv[i]);
    return rc;
}
