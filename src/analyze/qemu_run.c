/* qemu_run.c - a firmware run in qemu-system-arm, its log read from a
 * FIFO as QEMU writes it (qemu_run.h). */
#define _GNU_SOURCE
#include "qemu_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int fail(struct np_trace_summary *s, int status, const char *msg, const char *what)
{
    snprintf(s->message, sizeof s->message, "%s%s%s", msg, what ? ": " : "", what ? what : "");
    s->status = status;
    return status;
}

/* QEMU's -semihosting-config with the firmware's command line: its
 * arguments' commas doubled, as QEMU's option syntax has it. */
static char *semihosting_config(const struct np_qemu_run *r)
{
    size_t n = 64 + 2 * strlen(r->elf);
    for (int i = 0; i < r->nargs; i++)
        n += 6 + 2 * strlen(r->args[i]);
    char *s = malloc(n), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "enable=on,target=native,chardev=con");
    for (int i = -1; i < r->nargs; i++) {
        const char *a = i < 0 ? r->elf : r->args[i];
        p += sprintf(p, ",arg=");
        for (; *a; a++) {
            if (*a == ',')
                *p++ = ',';
            *p++ = *a;
        }
    }
    *p = 0;
    return s;
}

/* Waits until QEMU opens the FIFO FD (data comes) or ends; true when it
 * opened it. */
static bool wait_writer(int fd, pid_t pid, int *wstatus, bool *reaped)
{
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        int n = poll(&p, 1, 100);
        if (n > 0 && (p.revents & POLLIN))
            return true;
        if (waitpid(pid, wstatus, WNOHANG) == pid) {
            *reaped = true;
            /* it may have written all and gone */
            n = poll(&p, 1, 0);
            return n > 0 && (p.revents & POLLIN);
        }
        if (n > 0) { /* no writer yet: poll does not wait then */
            struct timespec ts = { 0, 10000000 };
            nanosleep(&ts, NULL);
        }
    }
}

int np_qemu_run(const struct np_qemu_run *r, const struct np_event_sink *sink, struct np_trace_summary *summary,
                struct np_qemu_log_stats *stats, int *exit_code)
{
    memset(summary, 0, sizeof *summary);
    memset(stats, 0, sizeof *stats);
    *exit_code = -1;
    const char *qemu = getenv("QEMU_SYSTEM_ARM");
    if (!qemu || !*qemu)
        qemu = NP_QEMU_DEFAULT;
    char dir[] = "/tmp/nanoprof-qemu.XXXXXX", fifo[sizeof dir + 8];
    if (!mkdtemp(dir))
        return fail(summary, NP_TRACE_EIO, "cannot make a directory for QEMU's log", strerror(errno));
    snprintf(fifo, sizeof fifo, "%s/log", dir);
    int status = NP_TRACE_OK, wstatus = -1; /* (-1: no status, QEMU not reaped) */
    bool reaped = false, killed = false;
    char *sh = NULL;
    if (mkfifo(fifo, 0600) != 0) {
        status = fail(summary, NP_TRACE_EIO, "cannot make a FIFO for QEMU's log", strerror(errno));
        goto out_dir;
    }
    int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    sh = semihosting_config(r);
    if (fd < 0 || !sh) {
        status = fail(summary, fd < 0 ? NP_TRACE_EIO : NP_TRACE_ENOMEM, "cannot read QEMU's log",
                      fd < 0 ? strerror(errno) : NULL);
        goto out_fifo;
    }
    /* the UART and semihosting's console share stdio (QEMU writes the
     * latter to stderr when it has no chardev) */
    const char *argv[] = { qemu, "-M", r->board, "-nographic", "-monitor", "none", "-chardev",
                           "stdio,id=con,mux=on", "-serial", "chardev:con", "-semihosting-config", sh,
                           "-icount", "shift=0", "-kernel", r->elf,
                           "-d", "exec,cpu,nochain", "-D", fifo, NULL };
    pid_t pid;
    int e = posix_spawnp(&pid, qemu, NULL, NULL, (char *const *)argv, environ);
    if (e) {
        status = fail(summary, NP_TRACE_EIO, qemu, e == ENOENT ? "not found (Debian: apt-get install qemu-system-arm)"
                                                              : strerror(e));
        close(fd);
        goto out_fifo;
    }
    if (!wait_writer(fd, pid, &wstatus, &reaped)) {
        close(fd);
        if (!reaped)
            waitpid(pid, &wstatus, 0);
        status = fail(summary, NP_TRACE_ENOTTRACE, "QEMU ran no instruction of the firmware (its error is above)",
                      NULL);
        goto out_fifo;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        kill(pid, SIGTERM);
        status = fail(summary, NP_TRACE_ENOMEM, "out of memory", NULL);
    } else {
        status = np_qemu_log_read_stream(f, "QEMU's log", r->elf, false, r->max_insns, NP_METRIC_TIME, sink,
                                         summary, stats);
        /* read no further (a sink that stopped, a bad ELF, a handler
         * looping for good, the limit): QEMU would run on */
        if (((status != NP_TRACE_OK && status != NP_TRACE_ETRUNC) || stats->halted || stats->limited) && !reaped) {
            kill(pid, SIGTERM);
            killed = true;
        }
        fclose(f);
    }
    if (!reaped)
        waitpid(pid, &wstatus, 0);
    if (WIFSIGNALED(wstatus) && !killed) {
        /* QEMU's own end (a lockup: a fault in a fault handler aborts it) */
        char ended[NP_TRACE_MSG_MAX];
        snprintf(ended, sizeof ended, "%.100s ended by signal %d (%.40s), its message above; %.300s", qemu, WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)), stats->ending[0] ? stats->ending : "its log ends there");
        snprintf(summary->message, sizeof summary->message, "%s", ended);
        if (status == NP_TRACE_OK)
            status = NP_TRACE_ETRUNC;
    }
out_fifo:
    if (WIFEXITED(wstatus))
        *exit_code = WEXITSTATUS(wstatus);
    unlink(fifo);
out_dir:
    rmdir(dir);
    free(sh);
    return status;
}
