/* fuzz_replay.c - runs a fuzz target over files and directories of inputs
 * once each (no fuzzing): the corpus as a regression test, with any
 * compiler. Usage: fuzz_replay PATH... */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *data = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len == cap && !(data = realloc(data, cap = cap ? 2 * cap : 4096))) {
            fclose(f);
            return 1;
        }
        n = fread(data + len, 1, cap - len, f);
        len += n;
    } while (n);
    fclose(f);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    printf("ok %s (%zu bytes)\n", path, len);
    return 0;
}

int main(int argc, char **argv)
{
    int errors = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            errors += run_file(argv[i]);
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        char path[4096];
        while (d && (e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                errors += run_file(path);
                runs++;
            }
        if (d)
            closedir(d);
    }
    printf("%d inputs\n", runs);
    return errors || !runs;
}
