/* wordfreq.c - a realistic C workload: the word-frequency report of a text.
 *
 * It tokenizes about 1 MB of generated prose, lower-cases each word, counts
 * the words in an open-addressing hash table (strings in an arena, table
 * grown by rehashing), sorts the distinct words by count with qsort, and
 * folds the sorted report into a CRC-32. Plain application code: many small
 * functions of ordinary granularity, none marked inline or noinline, so the
 * compiler makes its usual decisions at -O2 (functions it inlines still
 * call the hooks, as -finstrument-functions specifies). The qsort
 * comparator is called from libc, as callbacks are in real programs.
 *
 * The text is generated once, outside the timed region, from a fixed seed:
 * every variant and every run does exactly the same work. */
#define WORK_NAME "wordfreq"
#include "harness.h"
#include <malloc.h>

#define TEXT_TOKENS 150000
#define VOCAB 30000
#define MAX_WORD 48

/* ---- input, made by work_setup (not instrumented, not timed) ---------- */

static char *text;
static size_t text_len;

static uint32_t rng_state = 12345u;

BENCH_NOPROF static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

BENCH_NOPROF static void work_setup(void)
{
#ifdef M_MMAP_THRESHOLD
    /* Keep freed memory in the heap, so that every run reuses the pages of
     * the one before instead of faulting in fresh ones: page faults are
     * noise here, not the cost of a hook. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
    static const char *syl[] = {
        "ka", "lo", "mi", "ne", "ru", "sta", "ter", "vin", "qua", "dor", "el", "an",
        "pri", "mo", "ust", "ol", "ve", "ti", "bra", "chen", "do", "gu", "ix", "or",
    };
    static char vocab[VOCAB][MAX_WORD];
    for (int i = 0; i < VOCAB; i++) {
        int n = 1 + (int)(rng() % 4);
        vocab[i][0] = 0;
        for (int k = 0; k < n; k++)
            strcat(vocab[i], syl[rng() % (sizeof syl / sizeof syl[0])]);
    }
    text = malloc((size_t)TEXT_TOKENS * (MAX_WORD + 3));
    if (!text)
        exit(1);
    size_t p = 0;
    int sentence = 1;
    for (int t = 0; t < TEXT_TOKENS; t++) {
        /* Zipf-like: small indices (common words) far more often */
        double u = (double)(rng() & 0xffff) / 65536.0;
        const char *w = vocab[(int)(VOCAB * u * u * u)];
        size_t n = strlen(w);
        memcpy(text + p, w, n);
        if (sentence && text[p] >= 'a' && text[p] <= 'z')
            text[p] = (char)(text[p] - 'a' + 'A');
        p += n;
        uint32_t r = rng() % 32;
        sentence = 0;
        if (r == 0) {
            memcpy(text + p, ".\n", 2), p += 2;
            sentence = 1;
        } else if (r < 3) {
            memcpy(text + p, ". ", 2), p += 2;
            sentence = 1;
        } else if (r < 6) {
            memcpy(text + p, ", ", 2), p += 2;
        } else if (r == 6) {
            memcpy(text + p, " - ", 3), p += 3;
        } else {
            text[p++] = ' ';
        }
    }
    text_len = p;
}

/* ---- the timed work ----------------------------------------------------- */

struct cursor {
    const unsigned char *p, *end;
};

/* One word: lower-cased into w, with its length and hash. */
struct token {
    char w[MAX_WORD];
    size_t len;
    uint32_t hash;
    int ends_sentence;
};

struct entry {
    const char *word;
    uint32_t len;
    uint32_t hash;
    uint32_t count;
    uint32_t first;     /* token index of the first occurrence */
};

struct block {
    struct block *next;
    char data[];
};

struct table {
    struct entry *slots;
    size_t cap, used;
    struct block *blocks; /* the arena: the newest block first */
    size_t arena_used, arena_cap;
};

static struct table tab;
static struct entry *sorted;
static uint32_t crc_table[256];

/* character classes, filled by classes_init: 0 separator, 1 lower-case
 * letter or apostrophe, 2 upper-case letter, 3 sentence end */
static unsigned char char_class[256];

static void classes_init(void)
{
    for (int c = 0; c < 256; c++)
        char_class[c] = (c >= 'a' && c <= 'z') || c == '\'' ? 1
                      : (c >= 'A' && c <= 'Z') ? 2
                      : (c == '.' || c == '!' || c == '?') ? 3 : 0;
}

/* The next word: skips separators, copies the word lower-cased (cut at
 * MAX_WORD - 1 bytes) and hashes it (FNV-1a) in the same pass. */
static int next_token(struct cursor *c, struct token *t)
{
    const unsigned char *p = c->p, *end = c->end;
    while (p < end && (char_class[*p] == 0 || char_class[*p] == 3))
        p++;
    if (p == end)
        return 0;
    uint32_t h = 2166136261u;
    size_t n = 0;
    for (; p < end && (char_class[*p] == 1 || char_class[*p] == 2); p++) {
        unsigned char ch = *p;
        if (char_class[ch] == 2)
            ch = (unsigned char)(ch - 'A' + 'a');
        if (n < MAX_WORD - 1) {
            t->w[n++] = (char)ch;
            h = (h ^ ch) * 16777619u;
        }
    }
    t->w[n] = 0;
    t->len = n;
    t->hash = h;
    t->ends_sentence = p < end && char_class[*p] == 3;
    c->p = p;
    return 1;
}

static int key_equal(const struct entry *e, const char *w, size_t n, uint32_t h)
{
    return e->hash == h && e->len == n && memcmp(e->word, w, n) == 0;
}

static char *arena_copy(struct table *tb, const char *w, size_t n)
{
    if (!tb->blocks || tb->arena_used + n + 1 > tb->arena_cap) {
        size_t cap = tb->arena_cap ? 2 * tb->arena_cap : 4096;
        struct block *b = malloc(sizeof *b + cap);
        if (!b)
            exit(1);
        b->next = tb->blocks;
        tb->blocks = b;
        tb->arena_cap = cap;
        tb->arena_used = 0;
    }
    char *dst = tb->blocks->data + tb->arena_used;
    memcpy(dst, w, n + 1);
    tb->arena_used += n + 1;
    return dst;
}

static struct entry *slot_for(struct entry *slots, size_t cap, uint32_t h)
{
    return &slots[h & (cap - 1)];
}

static void table_grow(struct table *tb)
{
    size_t ncap = tb->cap ? 2 * tb->cap : 256;
    struct entry *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        exit(1);
    for (size_t i = 0; i < tb->cap; i++) {
        struct entry *e = &tb->slots[i];
        if (!e->word)
            continue;
        struct entry *d = slot_for(ns, ncap, e->hash);
        while (d->word)
            d = d + 1 == ns + ncap ? ns : d + 1;
        *d = *e;
    }
    free(tb->slots);
    tb->slots = ns;
    tb->cap = ncap;
}

static struct entry *table_find_or_add(struct table *tb, const char *w, size_t n, uint32_t h,
                                       uint32_t index)
{
    if (2 * (tb->used + 1) > tb->cap)
        table_grow(tb);
    struct entry *e = slot_for(tb->slots, tb->cap, h);
    for (;;) {
        if (!e->word)
            break;
        if (key_equal(e, w, n, h))
            return e;
        e = e + 1 == tb->slots + tb->cap ? tb->slots : e + 1;
    }
    e->word = arena_copy(tb, w, n);
    e->len = (uint32_t)n;
    e->hash = h;
    e->count = 0;
    e->first = index;
    tb->used++;
    return e;
}

static void table_reset(struct table *tb)
{
    free(tb->slots);
    tb->slots = NULL;
    tb->cap = tb->used = 0;
    while (tb->blocks) {
        struct block *next = tb->blocks->next;
        free(tb->blocks);
        tb->blocks = next;
    }
    tb->arena_used = tb->arena_cap = 0;
}

static size_t count_words(struct table *tb, const char *s, size_t len, size_t *sentences)
{
    struct cursor c = { (const unsigned char *)s, (const unsigned char *)s + len };
    struct token t;
    size_t tokens = 0;

    while (next_token(&c, &t)) {
        struct entry *e = table_find_or_add(tb, t.w, t.len, t.hash, (uint32_t)tokens);
        e->count++;
        *sentences += (size_t)t.ends_sentence;
        tokens++;
    }
    return tokens;
}

static int compare_entries(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static size_t collect(const struct table *tb, struct entry *out)
{
    size_t n = 0;
    for (size_t i = 0; i < tb->cap; i++)
        if (tb->slots[i].word)
            out[n++] = tb->slots[i];
    return n;
}

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc_bytes(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc_entry(uint32_t crc, const struct entry *e)
{
    crc = crc_bytes(crc, e->word, e->len);
    return crc_bytes(crc, &e->count, sizeof e->count);
}

static uint32_t report_crc(const struct entry *v, size_t n)
{
    uint32_t crc = 0;
    for (size_t i = 0; i < n; i++)
        crc = crc_entry(crc, &v[i]);
    return crc;
}

BENCH_NOPROF static uint64_t work_run(void)
{
    size_t sentences = 0;

    table_reset(&tab);
    crc_init();
    classes_init();
    size_t tokens = count_words(&tab, text, text_len, &sentences);
    free(sorted);
    sorted = malloc(tab.used * sizeof *sorted);
    if (!sorted)
        exit(1);
    size_t n = collect(&tab, sorted);
    qsort(sorted, n, sizeof *sorted, compare_entries);
    uint32_t crc = report_crc(sorted, n);
    return (uint64_t)crc << 32 ^ (uint64_t)tokens << 12 ^ (uint64_t)n ^ (uint64_t)sentences << 40;
}
