/* containers.h - the two containers the analysis code is built on: a hash
 * map from u64 to u64 and a growable array.
 *
 * Design. The analysis keys almost everything by small integers: a
 * run-time address, (parent node, function), (caller, callee), (process,
 * tid). One open-addressing table with linear probing and backward-shift
 * deletion serves them all: keys and values side by side in two arrays, a
 * byte per slot for "used", no tombstones (deleting keeps probe chains
 * short, which the model needs for its per-thread "activations open" map
 * that grows and shrinks with every call). Keys are mixed with the
 * splitmix64 finaliser, so sequential addresses spread out. The table
 * doubles at 50% load. Callers that key by a string hash the string and,
 * on a mismatch, probe on with np_hmap_next_key(): correct even when
 * hostile input makes 64-bit hashes collide.
 *
 * Growable arrays are plain (pointer, length, capacity) triples grown by
 * np_grow(), which checks every size computation for overflow and fails
 * with -1 instead of aborting: on hostile input an allocation failure is an
 * error code, not a crash. */
#ifndef NP_ANALYZE_CONTAINERS_H
#define NP_ANALYZE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

struct np_hmap {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap; /* a power of two, or 0 before the first insertion */
    size_t len;
};

void np_hmap_init(struct np_hmap *m);
void np_hmap_free(struct np_hmap *m);
void np_hmap_clear(struct np_hmap *m);
/* The value stored for KEY, or NULL. The pointer is valid until the next
 * insertion or deletion. */
uint64_t *np_hmap_find(const struct np_hmap *m, uint64_t key);
/* Sets KEY to VAL (insert or overwrite); returns 0, or -1 out of memory. */
int np_hmap_put(struct np_hmap *m, uint64_t key, uint64_t val);
/* Removes KEY if present. */
void np_hmap_del(struct np_hmap *m, uint64_t key);
/* The key to try after KEY when a string-keyed caller finds another
 * string under it (a different, well-mixed key). */
uint64_t np_hmap_next_key(uint64_t key);
/* String-keyed lookup: M maps keys derived from HASH to indices into the
 * caller's array; EQ(CTX, index) says whether that element is the one
 * sought. Returns the index, or -1 with *FREE_KEY set to the key under
 * which to insert it. */
int64_t np_hmap_find_by(const struct np_hmap *m, uint64_t hash, int (*eq)(void *ctx, uint64_t index), void *ctx,
                        uint64_t *free_key);
/* A 64-bit hash of LEN bytes (FNV-1a, then mixed). */
uint64_t np_hash_bytes(const void *bytes, size_t len, uint64_t seed);

/* Makes room for NEED elements of SIZE bytes in *ARRAY (capacity *CAP,
 * grown geometrically); returns 0, or -1 when out of memory or the size
 * overflows (the array is then unchanged). */
int np_grow(void **array, size_t *cap, size_t need, size_t size);
#define NP_GROW(array, cap, need) np_grow((void **)&(array), &(cap), (need), sizeof *(array))

/* strdup that accepts NULL (gives NULL) */
char *np_strdup(const char *s);

#endif
