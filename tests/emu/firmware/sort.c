/* sort.c - qsort with a comparison through a pointer, then a check: calls
 * through registers, the C library's code (lockstep firmware). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1500

struct item {
    int32_t key;
    uint16_t tag;
};

static int cmp_int(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (int)x->tag - (int)y->tag;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(a, b);
}

int main(void)
{
    int32_t *v = malloc(N * sizeof *v);
    struct item *it = malloc(N * sizeof *it);
    uint32_t x = 2024, sum = 0;
    for (int i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (int32_t)x >> 3;
        it[i].key = (int32_t)(x >> 24) - 128;
        it[i].tag = (uint16_t)i;
    }
    qsort(v, N, sizeof *v, cmp_int);
    qsort(it, N, sizeof *it, cmp_item);
    int ok = 1;
    for (int i = 1; i < N; i++) {
        ok &= v[i - 1] <= v[i];
        ok &= cmp_item(&it[i - 1], &it[i]) < 0;
    }
    for (int i = 0; i < N; i++)
        sum = sum * 31 + (uint32_t)v[i] + it[i].tag;
    printf("sorted: %s, min %ld, max %ld, median %ld, checksum %08lx\n", ok ? "yes" : "NO", (long)v[0],
           (long)v[N - 1], (long)v[N / 2], (unsigned long)sum);
    char words[][8] = {"pear", "apple", "fig", "kiwi", "banana", "cherry", "date", "lime"};
    qsort(words, 8, sizeof words[0], cmp_word);
    for (int i = 0; i < 8; i++)
        printf("%s%c", words[i], i == 7 ? '\n' : ' ');
    free(it);
    free(v);
    return 0;
}
