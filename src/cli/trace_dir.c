/* trace_dir.c - the trace directory a command writes into (record, emu):
 * created fresh, an existing one kept as PATH.old. */
#define _GNU_SOURCE
#include "trace_dir.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/trace_format.h"

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
int np_trace_dir_prepare(const char *cmd, const char *out, char *abs, size_t size)
{
    struct stat st;
    if (stat(out, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "nanoprof %s: %s exists and is not a directory\n", cmd, out);
            return 0;
        }
        if (!only_traces(out)) {
            fprintf(stderr, "nanoprof %s: %s holds files other than traces: not replaced\n", cmd, out);
            return 0;
        }
        char old[PATH_MAX];
        snprintf(old, sizeof old, "%s.old", out);
        if (stat(old, &st) == 0 && (!S_ISDIR(st.st_mode) || !only_traces(old) || remove_traces(old) < 0)) {
            fprintf(stderr, "nanoprof %s: cannot replace %s\n", cmd, old);
            return 0;
        }
        if (rename(out, old) < 0) {
            fprintf(stderr, "nanoprof %s: cannot rename %s to %s: %s\n", cmd, out, old, strerror(errno));
            return 0;
        }
    }
    if (mkdir(out, 0755) < 0) {
        fprintf(stderr, "nanoprof %s: cannot create %s: %s\n", cmd, out, strerror(errno));
        return 0;
    }
    if (size < PATH_MAX || !realpath(out, abs)) {
        fprintf(stderr, "nanoprof %s: %s: %s\n", cmd, out, strerror(errno));
        return 0;
    }
    return 1;
}
