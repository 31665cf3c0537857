/* semihost.c - ARM semihosting served on the host (design in semihost.h).
 *
 * Each operation reads its parameter block through np_cpu_mem, which
 * checks the guest's address and length; any miss ends the run with an
 * error naming the call and what was outside memory. Host calls that
 * fail return -1 (or what the operation returns on error) and leave the
 * host's errno for SYS_ERRNO, as qemu does. */
#define _GNU_SOURCE
#include "semihost.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What an operation returns when it fails (-1 as an unsigned word). */
#define FAILED 0xffffffffu
/* What qemu leaves in r0 after the calls that return nothing. */
#define NO_RESULT 0xdeadbeefu
/* Paths longer than this are refused with ENAMETOOLONG. */
#define PATH_MAX_GUEST 4096

/* ":semihosting-features": the magic "SHFB" and the feature byte
 * (SH_EXT_EXIT_EXTENDED | SH_EXT_STDOUT_STDERR). newlib reads it to learn
 * that stdout and stderr are separate and that exit codes reach the
 * host. */
static const uint8_t features_file[] = { 'S', 'H', 'F', 'B', 0x03 };

/* Host open flags for the twelve fopen-like modes (r, rb, r+, r+b, w, wb,
 * w+, w+b, a, ab, a+, a+b): the binary ones are the same. */
static const int open_flags[12] = {
    O_RDONLY, O_RDONLY, O_RDWR, O_RDWR,
    O_WRONLY | O_CREAT | O_TRUNC, O_WRONLY | O_CREAT | O_TRUNC,
    O_RDWR | O_CREAT | O_TRUNC, O_RDWR | O_CREAT | O_TRUNC,
    O_WRONLY | O_CREAT | O_APPEND, O_WRONLY | O_CREAT | O_APPEND,
    O_RDWR | O_CREAT | O_APPEND, O_RDWR | O_CREAT | O_APPEND,
};

/* One call being served. */
struct call {
    struct np_semihost *sh;
    struct np_cpu *cpu;
    const char *name;   /* "SYS_WRITE" */
    uint32_t param;     /* r1 */
    bool bad;           /* a check failed: sh->error says which */
};

const char *np_semihost_op_name(uint32_t op)
{
    switch (op) {
    case NP_SYS_OPEN: return "SYS_OPEN";
    case NP_SYS_CLOSE: return "SYS_CLOSE";
    case NP_SYS_WRITEC: return "SYS_WRITEC";
    case NP_SYS_WRITE0: return "SYS_WRITE0";
    case NP_SYS_WRITE: return "SYS_WRITE";
    case NP_SYS_READ: return "SYS_READ";
    case NP_SYS_READC: return "SYS_READC";
    case NP_SYS_ISERROR: return "SYS_ISERROR";
    case NP_SYS_ISTTY: return "SYS_ISTTY";
    case NP_SYS_SEEK: return "SYS_SEEK";
    case NP_SYS_FLEN: return "SYS_FLEN";
    case NP_SYS_TMPNAM: return "SYS_TMPNAM";
    case NP_SYS_REMOVE: return "SYS_REMOVE";
    case NP_SYS_RENAME: return "SYS_RENAME";
    case NP_SYS_CLOCK: return "SYS_CLOCK";
    case NP_SYS_TIME: return "SYS_TIME";
    case NP_SYS_SYSTEM: return "SYS_SYSTEM";
    case NP_SYS_ERRNO: return "SYS_ERRNO";
    case NP_SYS_GET_CMDLINE: return "SYS_GET_CMDLINE";
    case NP_SYS_HEAPINFO: return "SYS_HEAPINFO";
    case NP_SYS_EXIT: return "SYS_EXIT";
    case NP_SYS_EXIT_EXTENDED: return "SYS_EXIT_EXTENDED";
    case NP_SYS_ELAPSED: return "SYS_ELAPSED";
    case NP_SYS_TICKFREQ: return "SYS_TICKFREQ";
    default: return NULL;
    }
}

const char *np_semihost_reason_name(uint32_t reason)
{
    static const char *const hardware[] = {
        "ADP_Stopped_BranchThroughZero", "ADP_Stopped_UndefinedInstr",
        "ADP_Stopped_SoftwareInterrupt", "ADP_Stopped_PrefetchAbort",
        "ADP_Stopped_DataAbort", "ADP_Stopped_AddressException",
        "ADP_Stopped_IRQ", "ADP_Stopped_FIQ",
    };
    static const char *const software[] = {
        "ADP_Stopped_BreakPoint", "ADP_Stopped_WatchPoint",
        "ADP_Stopped_StepComplete", "ADP_Stopped_RunTimeErrorUnknown",
        "ADP_Stopped_InternalError", "ADP_Stopped_UserInterruption",
        "ADP_Stopped_ApplicationExit", "ADP_Stopped_StackOverflow",
        "ADP_Stopped_DivisionByZero", "ADP_Stopped_OSSpecific",
    };
    if (reason >= 0x20000 && reason < 0x20000 + sizeof hardware / sizeof *hardware)
        return hardware[reason - 0x20000];
    if (reason >= 0x20020 && reason < 0x20020 + sizeof software / sizeof *software)
        return software[reason - 0x20020];
    return NULL;
}

void np_semihost_options_init(struct np_semihost_options *o)
{
    memset(o, 0, sizeof *o);
    o->clock_hz = 100000000;
    o->fd_in = 0;
    o->fd_out = 1;
    o->fd_err = 2;
}

int np_semihost_init(struct np_semihost *sh, const struct np_semihost_options *o)
{
    memset(sh, 0, sizeof *sh);
    if (!o->clock_hz)
        return -1;
    sh->opt = *o;
    sh->opt.argv = NULL;
    sh->opt.argc = 0;
    size_t len = 0;
    for (int i = 0; i < o->argc; i++)
        len += strlen(o->argv[i]) + 1;
    sh->cmdline = malloc(len + 1);
    if (!sh->cmdline)
        return -1;
    char *p = sh->cmdline;
    for (int i = 0; i < o->argc; i++) {
        size_t n = strlen(o->argv[i]);
        if (i)
            *p++ = ' ';
        memcpy(p, o->argv[i], n);
        p += n;
    }
    *p = 0;
    sh->cmdline_len = (uint32_t)(p - sh->cmdline);
    return 0;
}

void np_semihost_free(struct np_semihost *sh)
{
    for (unsigned i = 0; i < NP_SEMIHOST_MAX_HANDLES; i++)
        if (sh->handles[i].kind == NP_SH_FILE)
            close(sh->handles[i].fd);
    memset(sh->handles, 0, sizeof sh->handles);
    free(sh->cmdline);
    sh->cmdline = NULL;
}

/* ---- guest memory, checked ---- */

static void fail(struct call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct call *c, const char *fmt, ...)
{
    if (c->bad)
        return;
    c->bad = true;
    int n = snprintf(c->sh->error, sizeof c->sh->error, "semihosting %s: ", c->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->sh->error + n, sizeof c->sh->error - (size_t)n, fmt, ap);
    va_end(ap);
}

/* LEN bytes of guest memory at ADDR (WHAT names them in the error), or
 * NULL after failing the call. LEN 0 needs no memory. */
static uint8_t *guest(struct call *c, const char *what, uint32_t addr, uint32_t len)
{
    static uint8_t none;
    if (c->bad)
        return NULL;
    if (!len)
        return &none;
    uint8_t *p = np_cpu_mem(c->cpu, addr, len);
    if (!p)
        fail(c, "%s 0x%08x+%u is outside memory", what, addr, len);
    return p;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* The N words of the parameter block into W; false after failing. */
static bool block(struct call *c, uint32_t *w, unsigned n)
{
    const uint8_t *p = guest(c, "parameter block", c->param, 4 * n);
    if (!p)
        return false;
    for (unsigned i = 0; i < n; i++)
        w[i] = get32(p + 4 * i);
    return true;
}

/* Writes the word V at ADDR of guest memory (WHAT names it). */
static bool store32(struct call *c, const char *what, uint32_t addr, uint32_t v)
{
    uint8_t *p = guest(c, what, addr, 4);
    if (!p)
        return false;
    put32(p, v);
    np_cpu_wrote(c->cpu, addr, 4);
    return true;
}

/* The NUL-terminated string at ADDR, within one region: its length in
 * *LEN. NULL after failing. */
static const char *guest_string(struct call *c, const char *what, uint32_t addr, uint32_t *len)
{
    if (c->bad)
        return NULL;
    for (unsigned i = 0; i < c->cpu->nmem; i++) {
        const struct np_mem_region *m = &c->cpu->mem[i];
        if (addr - m->base >= m->size)
            continue;
        uint32_t avail = m->size - (addr - m->base);
        const uint8_t *s = np_cpu_mem(c->cpu, addr, avail);
        const uint8_t *nul = s ? memchr(s, 0, avail) : NULL;
        if (!nul)
            break;
        *len = (uint32_t)(nul - s);
        return (const char *)s;
    }
    fail(c, "%s at 0x%08x runs outside memory", what, addr);
    return NULL;
}

/* A path of LEN bytes at ADDR as a host string in BUF (PATH_MAX_GUEST + 1
 * bytes); false after failing the call, or with *ERR set when too long. */
static bool guest_path(struct call *c, const char *what, uint32_t addr, uint32_t len, char *buf, int *err)
{
    *err = 0;
    if (len > PATH_MAX_GUEST) {
        *err = ENAMETOOLONG;
        return true;
    }
    const uint8_t *p = guest(c, what, addr, len);
    if (!p)
        return false;
    memcpy(buf, p, len);
    buf[len] = 0;
    return true;
}

/* ---- handles ---- */

static struct np_semihost_handle *handle(struct np_semihost *sh, uint32_t h)
{
    if (h < 1 || h > NP_SEMIHOST_MAX_HANDLES || sh->handles[h - 1].kind == NP_SH_FREE)
        return NULL;
    return &sh->handles[h - 1];
}

/* A free handle number (from 1), or 0 when the table is full. */
static uint32_t new_handle(struct np_semihost *sh, uint8_t kind, int fd)
{
    for (uint32_t i = 0; i < NP_SEMIHOST_MAX_HANDLES; i++)
        if (sh->handles[i].kind == NP_SH_FREE) {
            sh->handles[i] = (struct np_semihost_handle){ .kind = kind, .fd = fd };
            return i + 1;
        }
    return 0;
}

static bool is_console(const struct np_semihost_handle *h)
{
    return h->kind == NP_SH_CONSOLE_IN || h->kind == NP_SH_CONSOLE_OUT || h->kind == NP_SH_CONSOLE_ERR;
}

static int console_fd(struct np_semihost *sh, const struct np_semihost_handle *h)
{
    switch (h->kind) {
    case NP_SH_CONSOLE_IN: return sh->opt.fd_in;
    case NP_SH_CONSOLE_OUT: return sh->opt.fd_out;
    case NP_SH_CONSOLE_ERR: return sh->opt.fd_err;
    default: return h->fd;
    }
}

/* Sets the guest's errno and returns the failure word. */
static uint32_t set_errno(struct np_semihost *sh, int err)
{
    sh->guest_errno = (uint32_t)err;
    return FAILED;
}

/* Writes all of P[0..N-1] to FD; the bytes written (fewer on error, with
 * errno). */
static uint32_t write_all(int fd, const uint8_t *p, uint32_t n)
{
    uint32_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (uint32_t)w;
    }
    return done;
}

/* ---- the operations: each returns r0's new value ---- */

static uint32_t sys_open(struct call *c)
{
    uint32_t w[3];
    char path[PATH_MAX_GUEST + 1];
    int err;
    if (!block(c, w, 3) || !guest_path(c, "file name", w[0], w[2], path, &err))
        return FAILED;
    if (err)
        return set_errno(c->sh, err);
    uint32_t mode = w[1];
    if (mode >= 12)
        return set_errno(c->sh, EINVAL);
    uint32_t h;
    if (w[2] == 3 && !memcmp(path, ":tt", 3)) {
        /* read modes: stdin; write modes: stdout; append modes: stderr
         * (the SH_EXT_STDOUT_STDERR extension) */
        h = new_handle(c->sh, mode < 4 ? NP_SH_CONSOLE_IN : mode < 8 ? NP_SH_CONSOLE_OUT : NP_SH_CONSOLE_ERR, -1);
    } else if (!strcmp(path, ":semihosting-features")) {
        if (mode > 1)
            return set_errno(c->sh, EACCES);
        h = new_handle(c->sh, NP_SH_FEATURES, -1);
    } else {
        int fd = open(path, open_flags[mode] | O_CLOEXEC, 0644);
        if (fd < 0)
            return set_errno(c->sh, errno);
        h = new_handle(c->sh, NP_SH_FILE, fd);
        if (!h)
            close(fd);
    }
    return h ? h : set_errno(c->sh, EMFILE);
}

static uint32_t sys_close(struct call *c)
{
    uint32_t w[1];
    if (!block(c, w, 1))
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h)
        return set_errno(c->sh, EBADF);
    int r = h->kind == NP_SH_FILE ? close(h->fd) : 0;
    int err = errno;
    *h = (struct np_semihost_handle){ .kind = NP_SH_FREE };
    return r ? set_errno(c->sh, err) : 0;
}

/* SYS_WRITEC and SYS_WRITE0 write to the debug channel, which qemu-arm
 * (and qemu-system-arm without a chardev) sends to stderr: so do we. */
static uint32_t sys_writec(struct call *c)
{
    const uint8_t *p = guest(c, "character", c->param, 1);
    if (p)
        write_all(c->sh->opt.fd_err, p, 1);
    return NO_RESULT;
}

static uint32_t sys_write0(struct call *c)
{
    uint32_t len;
    const char *s = guest_string(c, "string", c->param, &len);
    if (s)
        write_all(c->sh->opt.fd_err, (const uint8_t *)s, len);
    return NO_RESULT;
}

/* SYS_WRITE and SYS_READ return the number of bytes NOT transferred. */
static uint32_t sys_write(struct call *c)
{
    uint32_t w[3];
    if (!block(c, w, 3))
        return FAILED;
    const uint8_t *p = guest(c, "buffer", w[1], w[2]);
    if (!p)
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h || h->kind == NP_SH_CONSOLE_IN || h->kind == NP_SH_FEATURES) {
        set_errno(c->sh, EBADF);
        return w[2];
    }
    uint32_t done = write_all(console_fd(c->sh, h), p, w[2]);
    if (done < w[2])
        c->sh->guest_errno = (uint32_t)errno;
    return w[2] - done;
}

static uint32_t sys_read(struct call *c)
{
    uint32_t w[3];
    if (!block(c, w, 3))
        return FAILED;
    uint8_t *p = guest(c, "buffer", w[1], w[2]);
    if (!p)
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h || h->kind == NP_SH_CONSOLE_OUT || h->kind == NP_SH_CONSOLE_ERR) {
        set_errno(c->sh, EBADF);
        return w[2];
    }
    uint32_t done = 0;
    if (h->kind == NP_SH_FEATURES) {
        uint32_t left = h->pos < sizeof features_file ? (uint32_t)sizeof features_file - h->pos : 0;
        done = w[2] < left ? w[2] : left;
        memcpy(p, features_file + h->pos, done);
        h->pos += done;
    } else {
        /* the console: one read, as a terminal gives a line at a time;
         * a file: until LEN bytes or its end */
        int fd = console_fd(c->sh, h);
        while (done < w[2]) {
            ssize_t r = read(fd, p + done, w[2] - done);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                c->sh->guest_errno = (uint32_t)errno;
            if (r <= 0)
                break;
            done += (uint32_t)r;
            if (is_console(h))
                break;
        }
    }
    if (done)
        np_cpu_wrote(c->cpu, w[1], done);
    return w[2] - done;
}

static uint32_t sys_readc(struct call *c)
{
    uint8_t ch;
    ssize_t r;
    do
        r = read(c->sh->opt.fd_in, &ch, 1);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return set_errno(c->sh, errno);
    return r == 1 ? ch : FAILED; /* -1 at the end of the input */
}

static uint32_t sys_iserror(struct call *c)
{
    uint32_t w[1];
    if (!block(c, w, 1))
        return FAILED;
    return (int32_t)w[0] < 0;
}

static uint32_t sys_istty(struct call *c)
{
    uint32_t w[1];
    if (!block(c, w, 1))
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h)
        return set_errno(c->sh, EBADF);
    if (is_console(h))
        return 1;
    if (h->kind == NP_SH_FEATURES)
        return 0;
    if (isatty(h->fd))
        return 1;
    if (errno != ENOTTY && errno != EINVAL)
        return set_errno(c->sh, errno);
    return 0;
}

/* SYS_SEEK: to an absolute position; 0 on success. */
static uint32_t sys_seek(struct call *c)
{
    uint32_t w[2];
    if (!block(c, w, 2))
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h)
        return set_errno(c->sh, EBADF);
    if (is_console(h))
        return set_errno(c->sh, ESPIPE);
    if (h->kind == NP_SH_FEATURES) {
        if (w[1] > sizeof features_file)
            return set_errno(c->sh, EINVAL);
        h->pos = w[1];
        return 0;
    }
    return lseek(h->fd, (off_t)w[1], SEEK_SET) < 0 ? set_errno(c->sh, errno) : 0;
}

static uint32_t sys_flen(struct call *c)
{
    uint32_t w[1];
    if (!block(c, w, 1))
        return FAILED;
    struct np_semihost_handle *h = handle(c->sh, w[0]);
    if (!h)
        return set_errno(c->sh, EBADF);
    if (is_console(h))
        return 0;
    if (h->kind == NP_SH_FEATURES)
        return sizeof features_file;
    struct stat st;
    if (fstat(h->fd, &st) < 0)
        return set_errno(c->sh, errno);
    if (st.st_size > INT32_MAX)
        return set_errno(c->sh, EOVERFLOW);
    return (uint32_t)st.st_size;
}

static uint32_t sys_remove(struct call *c)
{
    uint32_t w[2];
    char path[PATH_MAX_GUEST + 1];
    int err;
    if (!block(c, w, 2) || !guest_path(c, "file name", w[0], w[1], path, &err))
        return FAILED;
    if (err)
        return set_errno(c->sh, err);
    return unlink(path) < 0 ? set_errno(c->sh, errno) : 0;
}

static uint32_t sys_rename(struct call *c)
{
    uint32_t w[4];
    char from[PATH_MAX_GUEST + 1], to[PATH_MAX_GUEST + 1];
    int err, err2;
    if (!block(c, w, 4) || !guest_path(c, "old name", w[0], w[1], from, &err) ||
        !guest_path(c, "new name", w[2], w[3], to, &err2))
        return FAILED;
    if (err || err2)
        return set_errno(c->sh, err ? err : err2);
    return rename(from, to) < 0 ? set_errno(c->sh, errno) : 0;
}

/* Centiseconds of emulated time, in steps that do not overflow. */
static uint32_t sys_clock(struct call *c)
{
    uint64_t hz = c->sh->opt.clock_hz, cy = c->cpu->cycles;
    return (uint32_t)(cy / hz * 100 + cy % hz * 100 / hz);
}

static uint32_t sys_time(struct call *c)
{
    if (c->sh->opt.real_time) {
        time_t t = time(NULL);
        return t == (time_t)-1 ? set_errno(c->sh, errno) : (uint32_t)t;
    }
    return NP_SEMIHOST_TIME_BASE + (uint32_t)(c->cpu->cycles / c->sh->opt.clock_hz);
}

static uint32_t sys_get_cmdline(struct call *c)
{
    uint32_t w[2];
    if (!block(c, w, 2))
        return FAILED;
    uint32_t need = c->sh->cmdline_len + 1;
    if (need > w[1])
        return set_errno(c->sh, E2BIG);
    uint8_t *p = guest(c, "buffer", w[0], need);
    if (!p || !store32(c, "parameter block", c->param + 4, need - 1))
        return FAILED;
    memcpy(p, c->sh->cmdline, need);
    np_cpu_wrote(c->cpu, w[0], need);
    return 0;
}

/* SYS_HEAPINFO: r1 points at the address of a four-word block. */
static uint32_t sys_heapinfo(struct call *c)
{
    uint32_t w[1];
    if (!block(c, w, 1))
        return FAILED;
    const struct np_semihost_options *o = &c->sh->opt;
    uint8_t *p = guest(c, "result block", w[0], 16);
    if (!p)
        return FAILED;
    put32(p, o->heap_base);
    put32(p + 4, o->heap_limit);
    put32(p + 8, o->stack_base);
    put32(p + 12, o->stack_limit);
    np_cpu_wrote(c->cpu, w[0], 16);
    return 0;
}

static void stop(struct call *c, uint32_t reason, uint32_t subcode, bool extended)
{
    struct np_semihost *sh = c->sh;
    sh->exited = true;
    sh->exit_reason = reason;
    sh->exit_subcode = subcode;
    sh->abnormal = reason != NP_ADP_STOPPED_APPLICATION_EXIT;
    sh->exit_code = sh->abnormal ? 1 : extended ? (int)subcode : 0;
}

static uint32_t sys_exit(struct call *c)
{
    /* AArch32: r1 is the reason itself, not a block */
    stop(c, c->param, 0, false);
    return 0;
}

static uint32_t sys_exit_extended(struct call *c)
{
    uint32_t w[2];
    if (!block(c, w, 2))
        return FAILED;
    stop(c, w[0], w[1], true);
    return 0;
}

/* SYS_ELAPSED: the cycles, as a 64-bit count at r1 (low word first). */
static uint32_t sys_elapsed(struct call *c)
{
    uint64_t cy = c->cpu->cycles;
    uint8_t *p = guest(c, "result block", c->param, 8);
    if (!p)
        return FAILED;
    put32(p, (uint32_t)cy);
    put32(p + 4, (uint32_t)(cy >> 32));
    np_cpu_wrote(c->cpu, c->param, 8);
    return 0;
}

void np_semihost_call(struct np_semihost *sh, struct np_cpu *cpu)
{
    uint32_t op = cpu->r[0];
    struct call c = { .sh = sh, .cpu = cpu, .name = np_semihost_op_name(op), .param = cpu->r[1] };
    uint32_t ret;
    switch (op) {
    case NP_SYS_OPEN: ret = sys_open(&c); break;
    case NP_SYS_CLOSE: ret = sys_close(&c); break;
    case NP_SYS_WRITEC: ret = sys_writec(&c); break;
    case NP_SYS_WRITE0: ret = sys_write0(&c); break;
    case NP_SYS_WRITE: ret = sys_write(&c); break;
    case NP_SYS_READ: ret = sys_read(&c); break;
    case NP_SYS_READC: ret = sys_readc(&c); break;
    case NP_SYS_ISERROR: ret = sys_iserror(&c); break;
    case NP_SYS_ISTTY: ret = sys_istty(&c); break;
    case NP_SYS_SEEK: ret = sys_seek(&c); break;
    case NP_SYS_FLEN: ret = sys_flen(&c); break;
    case NP_SYS_REMOVE: ret = sys_remove(&c); break;
    case NP_SYS_RENAME: ret = sys_rename(&c); break;
    case NP_SYS_CLOCK: ret = sys_clock(&c); break;
    case NP_SYS_TIME: ret = sys_time(&c); break;
    case NP_SYS_ERRNO: ret = sh->guest_errno; break;
    case NP_SYS_GET_CMDLINE: ret = sys_get_cmdline(&c); break;
    case NP_SYS_HEAPINFO: ret = sys_heapinfo(&c); break;
    case NP_SYS_EXIT: ret = sys_exit(&c); break;
    case NP_SYS_EXIT_EXTENDED: ret = sys_exit_extended(&c); break;
    case NP_SYS_ELAPSED: ret = sys_elapsed(&c); break;
    case NP_SYS_TICKFREQ: ret = (uint32_t)sh->opt.clock_hz; break;
    default:
        /* host commands and temporary names have no deterministic answer */
        c.bad = true;
        if (c.name)
            snprintf(sh->error, sizeof sh->error, "semihosting %s (0x%02x) is not supported", c.name, op);
        else
            snprintf(sh->error, sizeof sh->error, "semihosting operation 0x%x is unknown", op);
        ret = FAILED;
        break;
    }
    if (c.bad)
        sh->failed = true;
    else
        cpu->r[0] = ret;
    if (sh->failed || sh->exited)
        np_cpu_halt(cpu);
}

int np_semihost_svc(struct np_semihost *sh, struct np_cpu *cpu, uint32_t imm)
{
    bool thumb = cpu->cpsr & NP_CPSR_T;
    if (imm != (thumb ? NP_SEMIHOST_SVC_THUMB : NP_SEMIHOST_SVC_ARM))
        return 0;
    np_semihost_call(sh, cpu);
    return 1;
}

int np_semihost_bkpt(struct np_semihost *sh, struct np_cpu *cpu, uint32_t imm)
{
    if (imm != NP_SEMIHOST_BKPT)
        return 0;
    np_semihost_call(sh, cpu);
    return 1;
}
