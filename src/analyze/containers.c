/* containers.c - hash map and growable arrays (design in containers.h). */
#include "containers.h"
#include <stdlib.h>
#include <string.h>

#define HMAP_MIN_CAP 16

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

void np_hmap_init(struct np_hmap *m)
{
    memset(m, 0, sizeof *m);
}

void np_hmap_free(struct np_hmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    np_hmap_init(m);
}

void np_hmap_clear(struct np_hmap *m)
{
    if (m->used)
        memset(m->used, 0, m->cap);
    m->len = 0;
}

/* The slot holding KEY, or the empty slot where it would go. */
static size_t slot_of(const struct np_hmap *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)mix(key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint64_t *np_hmap_find(const struct np_hmap *m, uint64_t key)
{
    if (!m->len)
        return NULL;
    size_t i = slot_of(m, key);
    return m->used[i] ? &m->vals[i] : NULL;
}

static int rehash(struct np_hmap *m, size_t cap)
{
    struct np_hmap n = { 0 };
    n.keys = malloc(cap * sizeof *n.keys);
    n.vals = malloc(cap * sizeof *n.vals);
    n.used = calloc(cap, 1);
    if (!n.keys || !n.vals || !n.used) {
        np_hmap_free(&n);
        return -1;
    }
    n.cap = cap;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i]) {
            size_t j = slot_of(&n, m->keys[i]);
            n.used[j] = 1;
            n.keys[j] = m->keys[i];
            n.vals[j] = m->vals[i];
        }
    n.len = m->len;
    np_hmap_free(m);
    *m = n;
    return 0;
}

int np_hmap_put(struct np_hmap *m, uint64_t key, uint64_t val)
{
    if ((m->len + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : HMAP_MIN_CAP;
        if (cap < m->cap || cap > SIZE_MAX / sizeof(uint64_t) || rehash(m, cap) < 0)
            return -1;
    }
    size_t i = slot_of(m, key);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
    return 0;
}

void np_hmap_del(struct np_hmap *m, uint64_t key)
{
    if (!m->len)
        return;
    size_t mask = m->cap - 1;
    size_t i = slot_of(m, key);
    if (!m->used[i])
        return;
    /* backward shift: move later members of the chain into the hole when
     * their home slot does not lie (cyclically) between the hole and them */
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = (size_t)mix(m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->used[i] = 0;
    m->len--;
}

uint64_t np_hmap_next_key(uint64_t key)
{
    return mix(key + 0x9e3779b97f4a7c15ull);
}

int64_t np_hmap_find_by(const struct np_hmap *m, uint64_t hash, int (*eq)(void *ctx, uint64_t index), void *ctx,
                        uint64_t *free_key)
{
    for (uint64_t key = hash;; key = np_hmap_next_key(key)) {
        const uint64_t *v = np_hmap_find(m, key);
        if (!v) {
            *free_key = key;
            return -1;
        }
        if (eq(ctx, *v))
            return (int64_t)*v;
    }
}

uint64_t np_hash_bytes(const void *bytes, size_t len, uint64_t seed)
{
    const uint8_t *p = bytes;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return mix(h);
}

int np_grow(void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / size)
        return -1;
    void *p = realloc(*array, n * size);
    if (!p)
        return -1;
    *array = p;
    *cap = n;
    return 0;
}

char *np_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}
