/* record_run.h - running tests/programs/rec_prog.c under the recorder and
 * reading what it printed and recorded (test_record.c, test_record_cli.c). */
#ifndef NP_RECORD_RUN_H
#define NP_RECORD_RUN_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record_decode.h"
#include "sanitizer.h"

struct run {
    char dir[256];       /* the trace directory */
    char out[300];       /* the program's stdout */
    char err[300];       /* its stderr */
    int status;          /* from waitpid */
    char files[8][256];  /* the .npt files, sorted */
    int nfiles;
    struct dec_file dec[8];
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A fresh directory for one run: DIR (the trace, not made: the runtime or
 * the CLI makes it) and the output files beside it. */
static void run_init(struct run *r, const char *name)
{
    memset(r, 0, sizeof *r);
    char base[200];
    snprintf(base, sizeof base, "%s/rec_%s_%d", RECORD_TMP, name, (int)getpid());
    nftw(base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    mkdir(base, 0755);
    snprintf(r->dir, sizeof r->dir, "%s/trace", base);
    snprintf(r->out, sizeof r->out, "%s/stdout", base);
    snprintf(r->err, sizeof r->err, "%s/stderr", base);
}

static void run_cleanup(struct run *r)
{
    char base[256];
    snprintf(base, sizeof base, "%s", r->dir);
    char *slash = strrchr(base, '/');
    if (slash)
        *slash = 0;
    nftw(base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Runs ARGS with ENV ("NAME=value" strings, NULL-terminated) added and
 * NANOPROF_RECORD=r->dir when RECORD; stdout and stderr to files. Then
 * lists and decodes the trace files. */
static void run_prog(struct run *r, char *const args[], const char *const env[], int record)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (record)
            setenv("NANOPROF_RECORD", r->dir, 1);
        /* TSan builds: no 1 s pause at exit for the writer thread */
        setenv("TSAN_OPTIONS", "atexit_sleep_ms=0", 0);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        int fd = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        int fe = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fe, 2);
        execv(args[0], args);
        _exit(126);
    }
    while (waitpid(pid, &r->status, 0) < 0)
        ;
    r->nfiles = dec_list(r->dir, r->files, 8);
    for (int i = 0; i < r->nfiles; i++)
        dec_file(r->files[i], &r->dec[i]);
}

/* The address the program printed for NAME in its image TAG ("main"). */
static inline uint64_t addr_of(const struct run *r, const char *tag, const char *name)
{
    FILE *f = fopen(r->out, "r");
    char line[512], t[64], n[64];
    unsigned long long a;
    uint64_t found = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "addr %63s %63s %llx", t, n, &a) == 3 && !strcmp(t, tag) && !strcmp(n, name))
            found = a;
    if (f)
        fclose(f);
    return found;
}

/* Lines of a text file (the stderr of a run). */
static inline int count_lines(const char *path, char *first, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    if (first && size)
        first[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (n == 0 && first) {
            size_t len = strlen(line);
            if (len >= size)
                len = size - 1;
            memcpy(first, line, len);
            first[len] = 0;
        }
        n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* The thread of file F that made N entries of ADDR (0 when none). */
static inline uint32_t tid_with(const struct dec_file *f, uint64_t addr, uint64_t n)
{
    for (int i = 0; i < f->nthreads; i++)
        if (dec_count(f, f->threads[i].tid, addr, 0) == n)
            return f->threads[i].tid;
    return 0;
}

static inline long long dir_bytes(const struct run *r)
{
    long long n = 0;
    for (int i = 0; i < r->nfiles; i++)
        n += (long long)r->dec[i].bytes;
    return n;
}

#endif
