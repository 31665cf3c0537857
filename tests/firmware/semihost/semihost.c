/* semihost.c - a newlib (rdimon) program that goes through the
 * semihosting calls its C library makes: console output (stdout and
 * stderr), the command line, files (fopen, fwrite, fread, fseek, ftell,
 * _rename, remove, errno), a busy heap (SYS_HEAPINFO sets its limit),
 * isatty, clock and time, optionally stdin, and its exit code.
 *
 *   semihost DIR CODE [stdin|abort]
 *
 * DIR: a directory for its files (left empty); CODE: the exit code;
 * "stdin": echoes its input lines; "abort": ends by abort() instead.
 * Its stdout is the same under qemu-arm and `nanoprof emu` (neither DIR
 * nor times are printed): expected/semihost.out for "DIR 0", with the
 * lines of stdin and the exit code the only differences. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* newlib's rename() links and unlinks, which rdimon cannot; its own
 * _rename is SYS_RENAME. */
int _rename(const char *from, const char *to);

static char path_a[512], path_b[512];

static int check(int ok, const char *what)
{
    printf("%s %s\n", what, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

static int files(void)
{
    int bad = 0;
    FILE *f = fopen(path_a, "w");
    bad |= check(f != NULL, "fopen w");
    if (!f)
        return bad;
    bad |= check(isatty(fileno(f)) == 0, "isatty file");
    fprintf(f, "first line\n");
    unsigned char block[4096];
    for (unsigned i = 0; i < sizeof block; i++)
        block[i] = (unsigned char)(i * 7 + 3);
    bad |= check(fwrite(block, 1, sizeof block, f) == sizeof block, "fwrite");
    bad |= check(fclose(f) == 0, "fclose");

    f = fopen(path_a, "a");
    fputs("appended\n", f);
    fclose(f);

    f = fopen(path_a, "rb");
    bad |= check(f != NULL, "fopen r");
    if (!f)
        return bad;
    char line[64];
    bad |= check(fgets(line, sizeof line, f) && !strcmp(line, "first line\n"), "fgets");
    bad |= check(fseek(f, 0, SEEK_END) == 0, "fseek end");
    long size = ftell(f);
    printf("size %ld\n", size);
    bad |= check(fseek(f, 100, SEEK_SET) == 0, "fseek 100");
    unsigned char got[8];
    bad |= check(fread(got, 1, sizeof got, f) == sizeof got, "fread");
    printf("bytes at 100:");
    for (unsigned i = 0; i < sizeof got; i++)
        printf(" %02x", got[i]);
    printf("\nftell %ld\n", ftell(f));
    bad |= check(fseek(f, -9, SEEK_END) == 0 && fgets(line, sizeof line, f) && !strcmp(line, "appended\n"),
                 "tail");
    bad |= check(fread(got, 1, 1, f) == 0 && feof(f), "eof");
    fclose(f);

    bad |= check(_rename(path_a, path_b) == 0, "rename");
    errno = 0;
    f = fopen(path_a, "r");
    bad |= check(f == NULL && errno == ENOENT, "fopen renamed away");
    printf("errno %d: %s\n", errno, strerror(errno));
    bad |= check(remove(path_b) == 0, "remove");
    bad |= check(remove(path_b) != 0, "remove again");
    return bad;
}

/* Many blocks of many sizes, some freed and reallocated: about 600 KiB at
 * the peak. */
static int heap(void)
{
    enum { N = 1500 };
    static unsigned char *blocks[N];
    static unsigned sizes[N];
    unsigned sum = 0;
    for (unsigned i = 0; i < N; i++) {
        sizes[i] = (i * 37) % 700 + 1;
        blocks[i] = malloc(sizes[i]);
        if (!blocks[i])
            return check(0, "malloc");
        memset(blocks[i], (int)(i & 0xff), sizes[i]);
    }
    for (unsigned i = 0; i < N; i += 2) {
        free(blocks[i]);
        sizes[i] = (i * 13) % 300 + 1;
        blocks[i] = malloc(sizes[i]);
        if (!blocks[i])
            return check(0, "malloc again");
        memset(blocks[i], (int)(i & 0xff), sizes[i]);
    }
    for (unsigned i = 1; i < N; i += 3) {
        unsigned char *p = realloc(blocks[i], sizes[i] * 2);
        if (!p)
            return check(0, "realloc");
        memset(p + sizes[i], (int)(i & 0xff), sizes[i]);
        blocks[i] = p;
        sizes[i] *= 2;
    }
    for (unsigned i = 0; i < N; i++) {
        for (unsigned j = 0; j < sizes[i]; j++)
            sum += blocks[i][j];
        free(blocks[i]);
    }
    printf("heap sum %u\n", sum);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: semihost DIR CODE [stdin|abort]\n");
        return 2;
    }
    printf("argc %d\n", argc);
    for (int i = 2; i < argc; i++)
        printf("argv[%d] %s\n", i, argv[i]);
    snprintf(path_a, sizeof path_a, "%s/semihost_a.txt", argv[1]);
    snprintf(path_b, sizeof path_b, "%s/semihost_b.txt", argv[1]);

    int bad = files();
    bad |= heap();
    clock_t c0 = clock();
    volatile unsigned spin = 0;
    for (unsigned i = 0; i < 100000; i++)
        spin += i;
    bad |= check(c0 != (clock_t)-1 && clock() >= c0, "clock");
    bad |= check(time(NULL) > 1500000000, "time");
    fprintf(stderr, "to stderr\n");

    if (argc > 3 && !strcmp(argv[3], "stdin")) {
        char line[128];
        while (fgets(line, sizeof line, stdin))
            printf("stdin: %s", line);
    }
    fflush(stdout);
    if (bad)
        return 100;
    if (argc > 3 && !strcmp(argv[3], "abort"))
        abort();
    return atoi(argv[2]);
}
