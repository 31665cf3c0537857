/* test_emu_semihost.c - semihosting (src/emu/semihost.c) on a memory
 * image: which traps it serves, every operation's result, errno and side
 * effects on the console and on files, and the bad pointers that stop a
 * run with a one-line error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cpu.h"
#include "semihost.h"

#define RAM 0x00001000u      /* 64 KiB */
#define SMALL 0x00100000u    /* 256 bytes, alone: strings that run off its end */
#define BLOCK (RAM + 0x100)  /* parameter blocks */
#define TEXT (RAM + 0x200)   /* strings */
#define BUF (RAM + 0x2000)   /* buffers */
#define NOWHERE 0x40000000u  /* outside every region */

static uint8_t ram[0x10000], small[0x100];
static struct np_cpu cpu;
static struct np_semihost sh;
static char dir[512];
static int in_fd, out_fd, err_fd;

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static int open_in_dir(const char *name, int flags)
{
    char p[600];
    path_in_dir(p, sizeof p, name);
    int fd = open(p, flags | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    return fd;
}

static void start(const char *const *argv, int argc, bool real_time)
{
    memset(ram, 0, sizeof ram);
    memset(small, 0, sizeof small);
    struct np_mem_region mem[] = { { RAM, sizeof ram, ram }, { SMALL, sizeof small, small } };
    assert_int_equal(np_cpu_init(&cpu, NP_CPU_ARM946ES, mem, 2, NULL, NULL), 0);
    struct np_semihost_options o;
    np_semihost_options_init(&o);
    o.argv = argv;
    o.argc = argc;
    o.heap_base = 0x20000, o.heap_limit = 0x80000, o.stack_base = 0x100000, o.stack_limit = 0x80000;
    o.clock_hz = 1000000;
    o.real_time = real_time;
    o.fd_in = in_fd, o.fd_out = out_fd, o.fd_err = err_fd;
    assert_int_equal(np_semihost_init(&sh, &o), 0);
}

/* Ends the run and starts another with these options. */
static void restart(const char *const *argv, int argc, bool real_time)
{
    np_semihost_free(&sh);
    np_cpu_free(&cpu);
    start(argv, argc, real_time);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/semihost.XXXXXX", SEMIHOST_TMP);
    assert_non_null(mkdtemp(dir));
    in_fd = open_in_dir("in", O_RDWR | O_CREAT | O_TRUNC);
    assert_int_equal(write(in_fd, "line one\nxyz", 12), 12);
    assert_int_equal(lseek(in_fd, 0, SEEK_SET), 0);
    out_fd = open_in_dir("out", O_RDWR | O_CREAT | O_TRUNC);
    err_fd = open_in_dir("err", O_RDWR | O_CREAT | O_TRUNC);
    static const char *const argv[] = { "fw.elf", "a", "b c" };
    start(argv, 3, false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    np_semihost_free(&sh);
    np_cpu_free(&cpu);
    close(in_fd), close(out_fd), close(err_fd);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* ---- guest memory and calls ---- */

static void put(uint32_t addr, const void *p, size_t n)
{
    uint8_t *m = np_cpu_mem(&cpu, addr, (uint32_t)n);
    assert_non_null(m);
    memcpy(m, p, n);
}

static void put_word(uint32_t addr, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    put(addr, b, 4);
}

static uint32_t word_at(uint32_t addr)
{
    const uint8_t *m = np_cpu_mem(&cpu, addr, 4);
    assert_non_null(m);
    return (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
}

/* Puts the string S at ADDR (with its NUL); its length. */
static uint32_t put_str(uint32_t addr, const char *s)
{
    put(addr, s, strlen(s) + 1);
    return (uint32_t)strlen(s);
}

/* Serves OP with r1 = PARAM through the ARM trap; the new r0. */
static uint32_t call(uint32_t op, uint32_t param)
{
    cpu.r[0] = op;
    cpu.r[1] = param;
    assert_int_equal(np_semihost_svc(&sh, &cpu, NP_SEMIHOST_SVC_ARM), 1);
    return cpu.r[0];
}

/* Serves OP with its N-word parameter block at BLOCK. */
static uint32_t call_block(uint32_t op, unsigned n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n; i++)
        put_word(BLOCK + 4 * i, va_arg(ap, uint32_t));
    va_end(ap);
    return call(op, BLOCK);
}

static uint32_t sys_errno(void)
{
    return call(NP_SYS_ERRNO, 0);
}

static uint32_t open_name(const char *name, uint32_t mode)
{
    uint32_t len = put_str(TEXT, name);
    return call_block(NP_SYS_OPEN, 3, TEXT, mode, len);
}

static uint32_t open_file(const char *name, uint32_t mode)
{
    char p[600];
    path_in_dir(p, sizeof p, name);
    return open_name(p, mode);
}

/* The whole of the host file FD holds, as a string. */
static const char *contents(int fd)
{
    static char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    assert_true(n >= 0);
    buf[n] = 0;
    return buf;
}

static const char *file_contents(const char *name)
{
    int fd = open_in_dir(name, O_RDONLY);
    const char *s = contents(fd);
    close(fd);
    return s;
}

static bool exists(const char *name)
{
    char p[600];
    path_in_dir(p, sizeof p, name);
    return access(p, F_OK) == 0;
}

/* The call stopped the run with exactly the error MSG, leaving r0. */
static void expect_failure(uint32_t op, uint32_t param, const char *msg)
{
    cpu.halt = false;
    cpu.r[0] = op;
    cpu.r[1] = param;
    assert_int_equal(np_semihost_svc(&sh, &cpu, NP_SEMIHOST_SVC_ARM), 1);
    assert_true(sh.failed);
    assert_true(cpu.halt);
    assert_false(sh.exited);
    assert_string_equal(sh.error, msg);
    assert_int_equal(cpu.r[0], op);
    sh.failed = false;
    sh.error[0] = 0;
}

/* ---- the traps ---- */

static void traps(void **state)
{
    (void)state;
    cpu.r[0] = NP_SYS_ERRNO;
    /* ARM state: svc 0x123456 only */
    assert_int_equal(np_semihost_svc(&sh, &cpu, 0xab), 0);
    assert_int_equal(cpu.r[0], NP_SYS_ERRNO);
    assert_int_equal(np_semihost_svc(&sh, &cpu, 1), 0);
    assert_int_equal(np_semihost_svc(&sh, &cpu, NP_SEMIHOST_SVC_ARM), 1);
    assert_int_equal(cpu.r[0], 0);
    /* Thumb state: svc 0xab only */
    np_cpu_set_pc(&cpu, RAM | 1);
    cpu.r[0] = NP_SYS_TICKFREQ;
    assert_int_equal(np_semihost_svc(&sh, &cpu, 1), 0);
    assert_int_equal(cpu.r[0], NP_SYS_TICKFREQ);
    assert_int_equal(np_semihost_svc(&sh, &cpu, NP_SEMIHOST_SVC_THUMB), 1);
    assert_int_equal(cpu.r[0], 1000000);
    /* bkpt 0xab in either state */
    cpu.r[0] = NP_SYS_TICKFREQ;
    assert_int_equal(np_semihost_bkpt(&sh, &cpu, 0x12), 0);
    assert_int_equal(cpu.r[0], NP_SYS_TICKFREQ);
    assert_int_equal(np_semihost_bkpt(&sh, &cpu, NP_SEMIHOST_BKPT), 1);
    assert_int_equal(cpu.r[0], 1000000);
    np_cpu_set_pc(&cpu, RAM);
    cpu.r[0] = NP_SYS_TICKFREQ;
    assert_int_equal(np_semihost_bkpt(&sh, &cpu, NP_SEMIHOST_BKPT), 1);
    assert_int_equal(cpu.r[0], 1000000);
    assert_false(cpu.halt);
    assert_false(sh.failed);
    assert_false(sh.exited);
}

/* ---- the console ---- */

static void console_tt(void **state)
{
    (void)state;
    uint32_t h[12];
    for (uint32_t mode = 0; mode < 12; mode++) {
        h[mode] = open_name(":tt", mode);
        assert_int_equal(h[mode], mode + 1); /* handles count from 1 */
    }
    assert_string_equal(file_contents("out"), "");
    put(BUF, "to out", 6);
    for (uint32_t mode = 4; mode < 8; mode++)
        assert_int_equal(call_block(NP_SYS_WRITE, 3, h[mode], BUF, 6), 0);
    put(BUF, "to err", 6);
    for (uint32_t mode = 8; mode < 12; mode++)
        assert_int_equal(call_block(NP_SYS_WRITE, 3, h[mode], BUF, 6), 0);
    assert_string_equal(contents(out_fd), "to outto outto outto out");
    assert_string_equal(contents(err_fd), "to errto errto errto err");
    /* stdin: one read each time; nothing written to it */
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h[0], BUF, 6), 6);
    assert_int_equal(sys_errno(), EBADF);
    memset(ram + (BUF - RAM), '.', 16);
    assert_int_equal(call_block(NP_SYS_READ, 3, h[1], BUF, 4), 0);
    assert_memory_equal(ram + (BUF - RAM), "line....", 8);
    assert_int_equal(call_block(NP_SYS_READ, 3, h[2], BUF + 4, 100), 100 - 8);
    assert_memory_equal(ram + (BUF - RAM), "line one\nxyz", 12);
    assert_int_equal(call_block(NP_SYS_READ, 3, h[3], BUF, 10), 10); /* the end */
    /* nothing read from stdout */
    assert_int_equal(call_block(NP_SYS_READ, 3, h[4], BUF, 3), 3);
    assert_int_equal(sys_errno(), EBADF);
    /* a terminal of no length that cannot seek, whatever the fds are */
    for (uint32_t mode = 0; mode < 12; mode += 4) {
        assert_int_equal(call_block(NP_SYS_ISTTY, 1, h[mode]), 1);
        assert_int_equal(call_block(NP_SYS_FLEN, 1, h[mode]), 0);
        assert_int_equal(call_block(NP_SYS_SEEK, 2, h[mode], 0), 0xffffffffu);
        assert_int_equal(sys_errno(), ESPIPE);
    }
    /* closing a console handle frees it, not our fds */
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h[5]), 0);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h[5]), 0xffffffffu);
    assert_int_equal(sys_errno(), EBADF);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h[5], BUF, 6), 6);
    assert_int_equal(open_name(":tt", 5), h[5]); /* the lowest free handle */
    put(BUF, "to", 2);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h[5], BUF, 2), 0);
    assert_string_equal(contents(out_fd), "to outto outto outto outto");
    assert_true(fcntl(out_fd, F_GETFD) >= 0);
    assert_false(sh.failed);
}

static void console_calls(void **state)
{
    (void)state;
    put(BUF, "Ab", 2);
    assert_int_equal(call(NP_SYS_WRITEC, BUF), 0xdeadbeefu);
    assert_int_equal(call(NP_SYS_WRITEC, BUF + 1), 0xdeadbeefu);
    put_str(TEXT, "hello\n");
    assert_int_equal(call(NP_SYS_WRITE0, TEXT), 0xdeadbeefu);
    put_str(TEXT, "");
    assert_int_equal(call(NP_SYS_WRITE0, TEXT), 0xdeadbeefu);
    /* a string that ends on a region's last byte */
    small[sizeof small - 2] = '!';
    assert_int_equal(call(NP_SYS_WRITE0, SMALL + sizeof small - 2), 0xdeadbeefu);
    /* the debug channel: stderr, as in qemu */
    assert_string_equal(contents(err_fd), "Abhello\n!");
    assert_string_equal(contents(out_fd), "");
    /* SYS_READC: a byte at a time, -1 at the end */
    const char *want = "line one\nxyz";
    for (const char *p = want; *p; p++)
        assert_int_equal(call(NP_SYS_READC, 0), (uint8_t)*p);
    assert_int_equal(call(NP_SYS_READC, 0), 0xffffffffu);
    assert_false(sh.failed);
}

/* ":semihosting-features": what newlib reads to learn SYS_EXIT_EXTENDED and
 * separate stdout/stderr are there. */
static void features(void **state)
{
    (void)state;
    uint32_t h = open_name(":semihosting-features", 0);
    assert_int_equal(h, 1);
    assert_int_equal(call_block(NP_SYS_FLEN, 1, h), 5);
    assert_int_equal(call_block(NP_SYS_ISTTY, 1, h), 0);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 4), 0);
    assert_memory_equal(ram + (BUF - RAM), "SHFB", 4);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 4), 3);
    assert_int_equal(ram[BUF - RAM], 0x03);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 4), 4);
    assert_int_equal(call_block(NP_SYS_SEEK, 2, h, 2), 0);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 2), 0);
    assert_memory_equal(ram + (BUF - RAM), "FB", 2);
    assert_int_equal(call_block(NP_SYS_SEEK, 2, h, 6), 0xffffffffu);
    assert_int_equal(sys_errno(), EINVAL);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h, BUF, 2), 2);
    assert_int_equal(sys_errno(), EBADF);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);
    assert_int_equal(open_name(":semihosting-features", 1), 1);
    assert_int_equal(open_name(":semihosting-features", 4), 0xffffffffu);
    assert_int_equal(sys_errno(), EACCES);
}

/* ---- files ---- */

static void files(void **state)
{
    (void)state;
    uint32_t h = open_file("f", 4); /* "w" */
    assert_int_equal(h, 1);
    put(BUF, "hello world", 11);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h, BUF, 11), 0);
    assert_int_equal(call_block(NP_SYS_ISTTY, 1, h), 0);
    assert_int_equal(call_block(NP_SYS_FLEN, 1, h), 11);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 1), 1); /* write only */
    assert_int_equal(sys_errno(), EBADF);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);
    assert_string_equal(file_contents("f"), "hello world");

    h = open_file("f", 1); /* "rb" */
    assert_int_equal(call_block(NP_SYS_FLEN, 1, h), 11);
    memset(ram + (BUF - RAM), 0, 32);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 5), 0);
    assert_string_equal((char *)ram + (BUF - RAM), "hello");
    assert_int_equal(call_block(NP_SYS_SEEK, 2, h, 6), 0);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF + 8, 10), 5); /* 5 not read */
    assert_string_equal((char *)ram + (BUF - RAM) + 8, "world");
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 10), 10);    /* at the end */
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h, BUF, 3), 3);     /* read only */
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);

    /* "a": appends; "r+": reads and writes in place; "w+": truncates */
    h = open_file("f", 8);
    put(BUF, "!!", 2);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h, BUF, 2), 0);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);
    assert_string_equal(file_contents("f"), "hello world!!");
    h = open_file("f", 2);
    assert_int_equal(call_block(NP_SYS_SEEK, 2, h, 6), 0);
    put(BUF, "WO", 2);
    assert_int_equal(call_block(NP_SYS_WRITE, 3, h, BUF, 2), 0);
    assert_int_equal(call_block(NP_SYS_SEEK, 2, h, 0), 0);
    assert_int_equal(call_block(NP_SYS_READ, 3, h, BUF, 3), 0);
    assert_memory_equal(ram + (BUF - RAM), "hel", 3);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);
    assert_string_equal(file_contents("f"), "hello WOrld!!");
    h = open_file("f", 7);
    assert_int_equal(call_block(NP_SYS_FLEN, 1, h), 0);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, h), 0);

    /* missing files, bad modes, bad handles */
    assert_int_equal(open_file("missing", 0), 0xffffffffu);
    assert_int_equal(sys_errno(), ENOENT);
    assert_int_equal(open_file("f", 12), 0xffffffffu);
    assert_int_equal(sys_errno(), EINVAL);
    for (uint32_t bad = 0; bad < 3; bad++) {
        uint32_t hb = bad == 0 ? 0 : bad == 1 ? 7 : NP_SEMIHOST_MAX_HANDLES + 1;
        assert_int_equal(call_block(NP_SYS_CLOSE, 1, hb), 0xffffffffu);
        assert_int_equal(call_block(NP_SYS_ISTTY, 1, hb), 0xffffffffu);
        assert_int_equal(call_block(NP_SYS_FLEN, 1, hb), 0xffffffffu);
        assert_int_equal(call_block(NP_SYS_SEEK, 2, hb, 0), 0xffffffffu);
        assert_int_equal(call_block(NP_SYS_WRITE, 3, hb, BUF, 4), 4);
        assert_int_equal(call_block(NP_SYS_READ, 3, hb, BUF, 4), 4);
        assert_int_equal(sys_errno(), EBADF);
    }
    assert_false(sh.failed);
}

static void remove_rename(void **state)
{
    (void)state;
    close(open_in_dir("old", O_WRONLY | O_CREAT));
    char from[600], to[600];
    path_in_dir(from, sizeof from, "old");
    path_in_dir(to, sizeof to, "new");
    uint32_t lf = put_str(TEXT, from), lt = put_str(TEXT + 1024, to);
    assert_int_equal(call_block(NP_SYS_RENAME, 4, TEXT, lf, TEXT + 1024, lt), 0);
    assert_false(exists("old"));
    assert_true(exists("new"));
    assert_int_equal(call_block(NP_SYS_RENAME, 4, TEXT, lf, TEXT + 1024, lt), 0xffffffffu);
    assert_int_equal(sys_errno(), ENOENT);
    assert_int_equal(call_block(NP_SYS_REMOVE, 2, TEXT + 1024, lt), 0);
    assert_false(exists("new"));
    assert_int_equal(call_block(NP_SYS_REMOVE, 2, TEXT + 1024, lt), 0xffffffffu);
    assert_int_equal(sys_errno(), ENOENT);
    /* the length counts, not the NUL: "new" names "ne" when 1 byte short */
    close(open_in_dir("ne", O_WRONLY | O_CREAT));
    assert_int_equal(call_block(NP_SYS_REMOVE, 2, TEXT + 1024, lt - 1), 0);
    assert_false(exists("ne"));
    /* too long for a path */
    assert_int_equal(call_block(NP_SYS_REMOVE, 2, TEXT, 5000), 0xffffffffu);
    assert_int_equal(sys_errno(), ENAMETOOLONG);
    assert_false(sh.failed);
}

/* The table is ours: full at NP_SEMIHOST_MAX_HANDLES, and what the guest
 * left open is closed at the end. */
static void handle_table(void **state)
{
    (void)state;
    int fds[NP_SEMIHOST_MAX_HANDLES];
    for (uint32_t i = 0; i < NP_SEMIHOST_MAX_HANDLES; i++) {
        assert_int_equal(open_file("f", 4), i + 1);
        fds[i] = sh.handles[i].fd;
        assert_true(fds[i] > 2);
    }
    assert_int_equal(open_file("f", 4), 0xffffffffu);
    assert_int_equal(sys_errno(), EMFILE);
    assert_int_equal(open_name(":tt", 4), 0xffffffffu);
    assert_int_equal(sys_errno(), EMFILE);
    assert_int_equal(call_block(NP_SYS_CLOSE, 1, 9), 0);
    assert_int_equal(open_name(":tt", 4), 9);
    np_semihost_free(&sh);
    for (uint32_t i = 0; i < NP_SEMIHOST_MAX_HANDLES; i++)
        assert_int_equal(fcntl(fds[i], F_GETFD), -1);
    assert_true(fcntl(out_fd, F_GETFD) >= 0);
    restart(NULL, 0, false);
}

/* ---- the rest ---- */

static void iserror_errno(void **state)
{
    (void)state;
    assert_int_equal(call_block(NP_SYS_ISERROR, 1, 0xffffffffu), 1);
    assert_int_equal(call_block(NP_SYS_ISERROR, 1, 0x80000000u), 1);
    assert_int_equal(call_block(NP_SYS_ISERROR, 1, 0), 0);
    assert_int_equal(call_block(NP_SYS_ISERROR, 1, 5), 0);
    assert_int_equal(sys_errno(), 0);
    assert_int_equal(open_file("missing", 0), 0xffffffffu);
    assert_int_equal(sys_errno(), ENOENT);
    assert_int_equal(sys_errno(), ENOENT); /* stays until the next error */
}

static void time_is_emulated(void **state)
{
    (void)state;
    assert_int_equal(call(NP_SYS_CLOCK, 0), 0);
    assert_int_equal(call(NP_SYS_TIME, 0), NP_SEMIHOST_TIME_BASE);
    cpu.cycles = 2599999; /* 2.599999 s at 1 MHz */
    assert_int_equal(call(NP_SYS_CLOCK, 0), 259);
    assert_int_equal(call(NP_SYS_TIME, 0), NP_SEMIHOST_TIME_BASE + 2);
    assert_int_equal(call(NP_SYS_TICKFREQ, 0), 1000000);
    put_word(BUF, 0x11111111), put_word(BUF + 4, 0x22222222);
    assert_int_equal(call(NP_SYS_ELAPSED, BUF), 0);
    assert_int_equal(word_at(BUF), 2599999);
    assert_int_equal(word_at(BUF + 4), 0);
    /* counts too big for cycles * 100 in 64 bits */
    cpu.cycles = UINT64_C(1) << 60;
    assert_int_equal(call(NP_SYS_CLOCK, 0), (uint32_t)((UINT64_C(1) << 60) / 10000));
    assert_int_equal(call(NP_SYS_ELAPSED, BUF), 0);
    assert_int_equal(word_at(BUF), 0);
    assert_int_equal(word_at(BUF + 4), 1u << 28);
    /* the real time, when asked for */
    restart(NULL, 0, true);
    uint32_t before = (uint32_t)time(NULL);
    uint32_t t = call(NP_SYS_TIME, 0);
    assert_true(t >= before && t <= (uint32_t)time(NULL));
}

static void cmdline(void **state)
{
    (void)state;
    static const char want[] = "fw.elf a b c";
    memset(ram + (BUF - RAM), 'x', 64);
    assert_int_equal(call_block(NP_SYS_GET_CMDLINE, 2, BUF, sizeof want), 0);
    assert_string_equal((char *)ram + (BUF - RAM), want);
    assert_int_equal(word_at(BLOCK + 4), sizeof want - 1);
    assert_int_equal(word_at(BLOCK), BUF);
    /* one byte short */
    assert_int_equal(call_block(NP_SYS_GET_CMDLINE, 2, BUF, sizeof want - 1), 0xffffffffu);
    assert_int_equal(sys_errno(), E2BIG);
    assert_int_equal(word_at(BLOCK + 4), sizeof want - 1);
    /* no arguments: an empty line */
    restart(NULL, 0, false);
    ram[BUF - RAM] = 'x';
    assert_int_equal(call_block(NP_SYS_GET_CMDLINE, 2, BUF, 255), 0);
    assert_int_equal(ram[BUF - RAM], 0);
    assert_int_equal(word_at(BLOCK + 4), 0);
}

static void heapinfo(void **state)
{
    (void)state;
    put_word(BLOCK, BUF); /* r1 -> the block's address */
    assert_int_equal(call(NP_SYS_HEAPINFO, BLOCK), 0);
    assert_int_equal(word_at(BUF), 0x20000);
    assert_int_equal(word_at(BUF + 4), 0x80000);
    assert_int_equal(word_at(BUF + 8), 0x100000);
    assert_int_equal(word_at(BUF + 12), 0x80000);
    assert_int_equal(word_at(BLOCK), BUF);
}

static void expect_exit(bool abnormal, int code, uint32_t reason, uint32_t subcode)
{
    assert_true(cpu.halt);
    assert_true(sh.exited);
    assert_false(sh.failed);
    assert_int_equal(sh.abnormal, abnormal);
    assert_int_equal(sh.exit_code, code);
    assert_int_equal(sh.exit_reason, reason);
    assert_int_equal(sh.exit_subcode, subcode);
    cpu.halt = false;
    sh.exited = false;
}

static void exits(void **state)
{
    (void)state;
    /* SYS_EXIT: the reason in r1; no code but 0 and 1 */
    call(NP_SYS_EXIT, NP_ADP_STOPPED_APPLICATION_EXIT);
    expect_exit(false, 0, NP_ADP_STOPPED_APPLICATION_EXIT, 0);
    call(NP_SYS_EXIT, NP_ADP_STOPPED_RUNTIME_ERROR);
    expect_exit(true, 1, NP_ADP_STOPPED_RUNTIME_ERROR, 0);
    /* SYS_EXIT_EXTENDED: the code of an application exit is its own */
    call_block(NP_SYS_EXIT_EXTENDED, 2, NP_ADP_STOPPED_APPLICATION_EXIT, 3);
    expect_exit(false, 3, NP_ADP_STOPPED_APPLICATION_EXIT, 3);
    call_block(NP_SYS_EXIT_EXTENDED, 2, NP_ADP_STOPPED_APPLICATION_EXIT, 0);
    expect_exit(false, 0, NP_ADP_STOPPED_APPLICATION_EXIT, 0);
    call_block(NP_SYS_EXIT_EXTENDED, 2, NP_ADP_STOPPED_APPLICATION_EXIT, 258);
    expect_exit(false, 258, NP_ADP_STOPPED_APPLICATION_EXIT, 258);
    call_block(NP_SYS_EXIT_EXTENDED, 2, NP_ADP_STOPPED_RUNTIME_ERROR, 6);
    expect_exit(true, 1, NP_ADP_STOPPED_RUNTIME_ERROR, 6);
    call_block(NP_SYS_EXIT_EXTENDED, 2, 0x20001, 0);
    expect_exit(true, 1, 0x20001, 0);
    assert_string_equal(np_semihost_reason_name(0x20001), "ADP_Stopped_UndefinedInstr");
    assert_string_equal(np_semihost_reason_name(NP_ADP_STOPPED_RUNTIME_ERROR), "ADP_Stopped_RunTimeErrorUnknown");
    assert_string_equal(np_semihost_reason_name(0x20029), "ADP_Stopped_OSSpecific");
    assert_null(np_semihost_reason_name(0x20008));
    assert_null(np_semihost_reason_name(0x2002a));
}

/* Every pointer outside memory stops the run, naming the call. */
static void bad_pointers(void **state)
{
    (void)state;
    uint32_t out = open_name(":tt", 4), in = open_name(":tt", 0);
    static const struct {
        uint32_t op;
        const char *msg;
    } blocks[] = {
        { NP_SYS_OPEN, "semihosting SYS_OPEN: parameter block 0x40000000+12 is outside memory" },
        { NP_SYS_CLOSE, "semihosting SYS_CLOSE: parameter block 0x40000000+4 is outside memory" },
        { NP_SYS_WRITE, "semihosting SYS_WRITE: parameter block 0x40000000+12 is outside memory" },
        { NP_SYS_READ, "semihosting SYS_READ: parameter block 0x40000000+12 is outside memory" },
        { NP_SYS_ISERROR, "semihosting SYS_ISERROR: parameter block 0x40000000+4 is outside memory" },
        { NP_SYS_ISTTY, "semihosting SYS_ISTTY: parameter block 0x40000000+4 is outside memory" },
        { NP_SYS_SEEK, "semihosting SYS_SEEK: parameter block 0x40000000+8 is outside memory" },
        { NP_SYS_FLEN, "semihosting SYS_FLEN: parameter block 0x40000000+4 is outside memory" },
        { NP_SYS_REMOVE, "semihosting SYS_REMOVE: parameter block 0x40000000+8 is outside memory" },
        { NP_SYS_RENAME, "semihosting SYS_RENAME: parameter block 0x40000000+16 is outside memory" },
        { NP_SYS_GET_CMDLINE, "semihosting SYS_GET_CMDLINE: parameter block 0x40000000+8 is outside memory" },
        { NP_SYS_HEAPINFO, "semihosting SYS_HEAPINFO: parameter block 0x40000000+4 is outside memory" },
        { NP_SYS_EXIT_EXTENDED, "semihosting SYS_EXIT_EXTENDED: parameter block 0x40000000+8 is outside memory" },
        { NP_SYS_ELAPSED, "semihosting SYS_ELAPSED: result block 0x40000000+8 is outside memory" },
        { NP_SYS_WRITEC, "semihosting SYS_WRITEC: character 0x40000000+1 is outside memory" },
        { NP_SYS_WRITE0, "semihosting SYS_WRITE0: string at 0x40000000 runs outside memory" },
    };
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++)
        expect_failure(blocks[i].op, NOWHERE, blocks[i].msg);
    /* a block that starts inside a region and ends past it */
    expect_failure(NP_SYS_WRITE, SMALL + sizeof small - 8,
                   "semihosting SYS_WRITE: parameter block 0x001000f8+12 is outside memory");

    /* buffers and names the blocks point at */
    put_word(BLOCK, out), put_word(BLOCK + 4, NOWHERE), put_word(BLOCK + 8, 12);
    expect_failure(NP_SYS_WRITE, BLOCK, "semihosting SYS_WRITE: buffer 0x40000000+12 is outside memory");
    put_word(BLOCK, in), put_word(BLOCK + 4, SMALL + 0xf0), put_word(BLOCK + 8, 0x20);
    expect_failure(NP_SYS_READ, BLOCK, "semihosting SYS_READ: buffer 0x001000f0+32 is outside memory");
    put_word(BLOCK, NOWHERE), put_word(BLOCK + 4, 0), put_word(BLOCK + 8, 3);
    expect_failure(NP_SYS_OPEN, BLOCK, "semihosting SYS_OPEN: file name 0x40000000+3 is outside memory");
    put_word(BLOCK, NOWHERE), put_word(BLOCK + 4, 5);
    expect_failure(NP_SYS_REMOVE, BLOCK, "semihosting SYS_REMOVE: file name 0x40000000+5 is outside memory");
    put_word(BLOCK, TEXT), put_word(BLOCK + 4, 3), put_word(BLOCK + 8, NOWHERE), put_word(BLOCK + 12, 3);
    expect_failure(NP_SYS_RENAME, BLOCK, "semihosting SYS_RENAME: new name 0x40000000+3 is outside memory");
    put_word(BLOCK, NOWHERE), put_word(BLOCK + 4, 255);
    expect_failure(NP_SYS_GET_CMDLINE, BLOCK, "semihosting SYS_GET_CMDLINE: buffer 0x40000000+13 is outside memory");
    put_word(BLOCK, NOWHERE);
    expect_failure(NP_SYS_HEAPINFO, BLOCK, "semihosting SYS_HEAPINFO: result block 0x40000000+16 is outside memory");
    /* a string with no NUL before its region ends */
    memset(small, 'z', sizeof small);
    expect_failure(NP_SYS_WRITE0, SMALL + 0x80, "semihosting SYS_WRITE0: string at 0x00100080 runs outside memory");
    assert_string_equal(contents(out_fd), "");
    assert_string_equal(contents(err_fd), "");

    /* operations not served */
    expect_failure(NP_SYS_SYSTEM, BLOCK, "semihosting SYS_SYSTEM (0x12) is not supported");
    expect_failure(NP_SYS_TMPNAM, BLOCK, "semihosting SYS_TMPNAM (0x0d) is not supported");
    expect_failure(0x99, BLOCK, "semihosting operation 0x99 is unknown");

    /* a zero-length transfer needs no buffer */
    put_word(BLOCK, out), put_word(BLOCK + 4, NOWHERE), put_word(BLOCK + 8, 0);
    assert_int_equal(call(NP_SYS_WRITE, BLOCK), 0);
    assert_false(sh.failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(traps, setup, teardown),
        cmocka_unit_test_setup_teardown(console_tt, setup, teardown),
        cmocka_unit_test_setup_teardown(console_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(features, setup, teardown),
        cmocka_unit_test_setup_teardown(files, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(handle_table, setup, teardown),
        cmocka_unit_test_setup_teardown(iserror_errno, setup, teardown),
        cmocka_unit_test_setup_teardown(time_is_emulated, setup, teardown),
        cmocka_unit_test_setup_teardown(cmdline, setup, teardown),
        cmocka_unit_test_setup_teardown(heapinfo, setup, teardown),
        cmocka_unit_test_setup_teardown(exits, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_pointers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
