/* follow.c - following the processes a recorded program leaves running
 * (follow.h). Linux: the subreaper attribute and /proc. */
#define _GNU_SOURCE
#include "follow.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

int np_follow_start(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* Reaps the children that ended; false when none is left at all. */
static int reap(void)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        ;
    return !(p < 0 && errno == ECHILD);
}

struct proc {
    pid_t pid, ppid;
};

static int by_pid(const void *a, const void *b)
{
    const struct proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every process of the system that has not ended (zombies left out),
 * with its parent, sorted by pid, into *OUT; how many. */
static size_t processes(struct proc **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* ended meanwhile */
        size_t len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = 0;
        /* "pid (comm) S ppid ...": the name may hold spaces and ')' */
        char *close = strrchr(line, ')'), state;
        int ppid;
        if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2 || state == 'Z' || state == 'X')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 512;
            struct proc *p = realloc(*out, cap * sizeof *p);
            if (!p)
                break;
            *out = p;
        }
        (*out)[n++] = (struct proc){ (pid_t)atoi(de->d_name), (pid_t)ppid };
    }
    if (d)
        closedir(d);
    if (n > 1)
        qsort(*out, n, sizeof **out, by_pid);
    return n;
}

static int is_in(const pid_t *set, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == pid)
            return 1;
    return 0;
}

size_t np_follow_running(pid_t *pids, size_t max)
{
    /* A subreaper without children has no descendant left: an orphan
     * comes to the nearest subreaper above it, which would be this
     * process or a descendant still running. Reading /proc is for when
     * some are left (a few ms where processes are many). */
    if (!reap())
        return 0;
    struct proc *all;
    size_t n = processes(&all), found = 0;
    pid_t *mine = malloc((n + 1) * sizeof *mine);
    if (!mine) {
        free(all);
        return 0;
    }
    /* the descendants: generation after generation, until none is added */
    size_t k = 0;
    mine[k++] = getpid();
    for (size_t added = 1; added;) {
        added = 0;
        for (size_t i = 0; i < n; i++)
            if (all[i].pid && is_in(mine, k, all[i].ppid) && !is_in(mine, k, all[i].pid)) {
                mine[k++] = all[i].pid;
                added++;
            }
    }
    for (size_t i = 0; i < n; i++)
        if (is_in(mine + 1, k - 1, all[i].pid)) {
            if (found < max)
                pids[found] = all[i].pid;
            found++;
        }
    free(mine);
    free(all);
    return found;
}

static volatile sig_atomic_t interrupted, to_pass;
static const int caught[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };
#define NCAUGHT (sizeof caught / sizeof caught[0])
static struct sigaction before_act[NCAUGHT];
static sigset_t before_mask;
static int catching;

static void on_signal(int sig)
{
    if (sig == SIGINT)
        interrupted = 1;
    else if (sig != SIGCHLD)
        to_pass = sig;
}

void np_follow_catch(void)
{
    if (catching)
        return;
    struct sigaction sa;
    sigset_t block;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaddset(&block, caught[i]);
    /* blocked but in sigsuspend: no signal falls between a check and the wait */
    sigprocmask(SIG_BLOCK, &block, &before_mask);
    interrupted = to_pass = 0;
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaction(caught[i], &sa, &before_act[i]);
    catching = 1;
}

int np_follow_wait(int pass)
{
    np_follow_catch();
    if (pass && !to_pass)
        to_pass = pass;
    int rc = 0, st;
    for (;;) {
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            ;
        if (p < 0 && errno == ECHILD)
            break;
        if (interrupted) {
            rc = 1;
            break;
        }
        if (to_pass) {
            pid_t pids[256];
            size_t n = np_follow_running(pids, 256);
            for (size_t i = 0; i < n && i < 256; i++)
                kill(pids[i], to_pass);
            to_pass = 0;
        }
        sigset_t wait_set = before_mask;
        for (size_t i = 0; i < NCAUGHT; i++)
            sigdelset(&wait_set, caught[i]);
        sigsuspend(&wait_set);
    }
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaction(caught[i], &before_act[i], NULL);
    sigprocmask(SIG_SETMASK, &before_mask, NULL);
    catching = 0;
    return rc;
}
