/* zstd_mt.c - zstd's library (fetched by bench/fetch_sources.sh)
 * compressing with 2 worker threads, as `zstd -T2` does, then
 * decompressing and checking: what `make bench` records to count lost
 * calls (bench/record_loss.sh). The input is MiB mebibytes of text-like
 * data. Prints "zstd -T2: IN -> OUT bytes". */
#define ZSTD_STATIC_LINKING_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zstd.h"

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 16, n = mib << 20;
    static const char *const words[] = { "profile", "sample", "call", "return", "thread", "buffer",
                                         "writer", "trace", "event", "stack", "frame", "time" };
    char *in = malloc(n), *back = malloc(n);
    if (!in || !back)
        return 1;
    unsigned seed = 7;
    for (size_t i = 0; i < n;) {
        seed = seed * 1103515245u + 12345u;
        const char *w = words[(seed >> 16) % 12];
        size_t l = strlen(w);
        for (size_t k = 0; k < l && i < n; k++)
            in[i++] = w[k];
        if (i < n)
            in[i++] = (seed >> 8) % 7 ? ' ' : '\n';
    }
    size_t cap = ZSTD_compressBound(n);
    char *out = malloc(cap);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!out || !c || ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, 2)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)))
        return 1;
    size_t z = ZSTD_compress2(c, out, cap, in, n);
    if (ZSTD_isError(z)) {
        fprintf(stderr, "zstd_mt: %s\n", ZSTD_getErrorName(z));
        return 1;
    }
    size_t d = ZSTD_decompress(back, n, out, z);
    if (ZSTD_isError(d) || d != n || memcmp(in, back, n)) {
        fprintf(stderr, "zstd_mt: the round trip differs\n");
        return 1;
    }
    printf("zstd -T2: %zu -> %zu bytes\n", n, z);
    ZSTD_freeCCtx(c);
    free(in);
    free(back);
    free(out);
    return 0;
}
