/* record_exec.c - exec ends the recorded image: the trace is flushed and
 * ended (END) first, and the new image, which loads the runtime again,
 * starts its own file, <pid>.<n>.npt (record_write.c never reuses a name).
 * When the exec fails, recording goes on in a new file.
 *
 * These stand in front of the C library's functions (the runtime's
 * definitions come first: preloaded, or linked into the program) and call
 * the next definition (dlsym RTLD_NEXT); a fully static program has none,
 * and there the system call is made directly. A vfork child shares its
 * parent's memory: the flush is skipped there (record.c checks the pid).
 * Not covered: exec calls made inside the C library (posix_spawn, system,
 * popen), whose children start their own files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "../../runtime/hooks.h"
#include "record.h"

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

static int after(int r)
{
    int e = errno;
    np_rec_exec_failed();
    errno = e;
    return r;
}

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)dlsym(RTLD_NEXT, "execve");
    return f ? f(path, argv, envp) : (int)syscall(SYS_execve, path, argv, envp);
}

/* execvpe for a program without a C library to call: the PATH search. */
static int search_path(const char *file, char *const argv[], char *const envp[])
{
    if (!*file) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/'))
        return do_execve(file, argv, envp);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    int err = ENOENT;
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char full[PATH_MAX];
        if (n + 1 + strlen(file) < sizeof full) {
            memcpy(full, n ? p : ".", n ? n : 1);
            size_t m = n ? n : 1;
            full[m] = '/';
            strcpy(full + m + 1, file);
            do_execve(full, argv, envp);
            if (errno != ENOENT && errno != ENOTDIR)
                err = errno;
        }
        if (!e)
            break;
        p = e;
    }
    errno = err;
    return -1;
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
    typedef int (*fn)(const char *, char *const[], char *const[]);
    fn f = (fn)dlsym(RTLD_NEXT, "execvpe");
    return f ? f(file, argv, envp) : search_path(file, argv, envp);
}

NP_HOOK int execve(const char *path, char *const argv[], char *const envp[])
{
    np_rec_before_exec();
    return after(do_execve(path, argv, envp));
}

NP_HOOK int execv(const char *path, char *const argv[])
{
    np_rec_before_exec();
    return after(do_execve(path, argv, environ));
}

NP_HOOK int execvpe(const char *file, char *const argv[], char *const envp[])
{
    np_rec_before_exec();
    return after(do_execvpe(file, argv, envp));
}

NP_HOOK int fexecve(int fd, char *const argv[], char *const envp[])
{
    typedef int (*fn)(int, char *const[], char *const[]);
    fn f = (fn)dlsym(RTLD_NEXT, "fexecve");
    np_rec_before_exec();
    return after(f ? f(fd, argv, envp) : (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

NP_HOOK int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    typedef int (*fn)(int, const char *, char *const[], char *const[], int);
    fn f = (fn)dlsym(RTLD_NEXT, "execveat");
    np_rec_before_exec();
    return after(f ? f(dirfd, path, argv, envp, flags) : (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags));
}

NP_HOOK int execvp(const char *file, char *const argv[])
{
    np_rec_before_exec();
    execv_fn f = (execv_fn)dlsym(RTLD_NEXT, "execvp");
    return after(f ? f(file, argv) : search_path(file, argv, environ));
}

/* The list forms: the arguments into an array, then the forms above. */
#define LIST_ARGS(first, ap, argv)                              \
    do {                                                        \
        va_list cp;                                             \
        va_copy(cp, ap);                                        \
        size_t n = 1;                                           \
        while (va_arg(cp, char *))                              \
            n++;                                                \
        va_end(cp);                                             \
        argv = alloca((n + 1) * sizeof *argv);                  \
        argv[0] = (char *)(first);                              \
        for (size_t i = 1; i < n; i++)                          \
            argv[i] = va_arg(ap, char *);                       \
        (void)va_arg(ap, char *); /* the NULL */                \
        argv[n] = NULL;                                         \
    } while (0)

NP_HOOK int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv;
    va_start(ap, arg);
    LIST_ARGS(arg, ap, argv);
    va_end(ap);
    return execv(path, argv);
}

NP_HOOK int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    char **argv;
    va_start(ap, arg);
    LIST_ARGS(arg, ap, argv);
    va_end(ap);
    return execvp(file, argv);
}

NP_HOOK int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv, **envp = NULL;
    va_start(ap, arg);
    LIST_ARGS(arg, ap, argv);
    envp = va_arg(ap, char **);
    va_end(ap);
    return execve(path, argv, envp);
}
