/* test_target_ring.c - a RING chunk's words decoded into EVENTS chunks
 * (analyze/target_ring.c): each record kind, times from TIME words and
 * the low bits, and from the last time without TIME words, a switch and the SWITCH record of a thread coming back, a
 * far entry, times that never go back; and the payloads it refuses (an
 * unknown control word, FAR_HI alone, a length not whole words); a flight
 * recorder's words read from their first synchronisation; its checksum
 * finding any one bit changed. */
#include <stdio.h>
#include <string.h>
#include "analyze/target_ring.h"
#include "common/trace_format.h"

static int failures;
#define CHECK(c, ...)                                         \
    do {                                                      \
        if (!(c)) {                                           \
            failures++;                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);       \
            printf(__VA_ARGS__);                              \
            printf("\n");                                     \
        }                                                     \
    } while (0)

/* the decoded events as text, one chunk a line: "tid: kind@time[=arg] ..." */
static char out[4096];

static int emit(void *ctx, const uint8_t *c, size_t n)
{
    (void)ctx;
    const uint8_t *p = c + NP_TRACE_CHUNK_HEADER, *end = c + n;
    CHECK(np_get_u32(c) == NP_CHUNK_EVENTS && np_get_u32(c + 4) == n - NP_TRACE_CHUNK_HEADER,
          "an EVENTS chunk header");
    CHECK(np_trace_chunk_sum_ok(c, c + NP_TRACE_CHUNK_HEADER), "its checksum");
    uint32_t tid = np_get_u32(p), count = np_get_u32(p + 12);
    uint64_t t = np_get_u64(p + 4), addr = 0;
    size_t o = strlen(out);
    o += (size_t)snprintf(out + o, sizeof out - o, "%u:", tid);
    p += NP_TRACE_EVENTS_HEAD;
    static const char *const kinds[] = { "E", "X", "L", "S" };
    for (uint32_t i = 0; i < count; i++) {
        uint64_t v, a = 0;
        if (!np_get_varint(&p, end, &v))
            return 1;
        unsigned k = v & 7;
        t += v >> 3;
        if (k == NP_EV_ENTRY) {
            np_get_varint(&p, end, &a);
            addr += (uint64_t)np_unzigzag(a);
            a = addr;
        } else if (k != NP_EV_EXIT) {
            np_get_varint(&p, end, &a);
        }
        o += (size_t)snprintf(out + o, sizeof out - o, " %s@%llu", k < 4 ? kinds[k] : "?", (unsigned long long)t);
        if (k != NP_EV_EXIT)
            o += (size_t)snprintf(out + o, sizeof out - o, "=%llx", (unsigned long long)a);
    }
    CHECK(p == end, "the chunk holds its records only");
    snprintf(out + o, sizeof out - o, "\n");
    return 0;
}

/* decodes the payload of fields (BASE, TID, CLOCK) and N words W */
static uint32_t flags; /* the RING chunk's */

static int decode(uint32_t base, uint32_t tid, uint64_t clock, const uint32_t *w, size_t n, size_t cut,
                  const char **err)
{
    uint8_t p[NP_RING_HEAD + 64 * 4];
    np_put_u32(p, base);
    np_put_u32(p + 4, tid);
    np_put_u64(p + 8, clock);
    np_put_u32(p + 16, flags);
    for (size_t i = 0; i < n; i++)
        np_put_u32(p + NP_RING_HEAD + 4 * i, w[i]);
    struct np_ring_dec d = { 0 };
    out[0] = 0;
    int st = np_ring_decode(&d, p, NP_RING_HEAD + 4 * n - cut, emit, NULL, err);
    np_ring_dec_free(&d);
    return st;
}

#define ENTRY(fn, t) ((fn) | 1u | (uint32_t)(t) << NP_RING_FN_BITS)
#define EXIT(t) ((uint32_t)(t) << 2)

int main(void)
{
    const char *err = "";
    /* thread 1 from clock 0x5000: f (0x1234) calls g (0x2000); a TIME word
     * (0x6000); switch to 2 at 0x6010, its call of h far away (0x20000100,
     * a function in RAM); back to 1 at 0x6020: 1's SWITCH 0x10 later; an
     * exit whose low bits are below the last time's keeps that time; 2
     * again at 0x6030, out 0x10 */
    const uint32_t w[] = {
        ENTRY(0x1234, 0x005), ENTRY(0x2000, 0x010), EXIT(0x5020),
        NP_RING_CTL(NP_RING_TIME, 6), EXIT(0x6008),
        NP_RING_CTL(NP_RING_THREAD, 2 | 0x010 << 12),
        NP_RING_CTL(NP_RING_FAR_LO, 0x000100), NP_RING_CTL(NP_RING_FAR_HI, 0x20 | 0x012 << 8), EXIT(0x6018),
        NP_RING_CTL(NP_RING_LOST, 3),
        NP_RING_CTL(NP_RING_THREAD, 1 | 0x020 << 12), EXIT(0x601f),
        NP_RING_CTL(NP_RING_THREAD, 2 | 0x030 << 12),
    };
    CHECK(decode(0x00000000, 1, 0x5000, w, sizeof w / 4, 0, &err) == 0, "decodes: %s", err);
    const char *want = "1: E@20485=1234 E@20496=2000 X@20512 X@24584\n"
                       "2: E@24594=20000100 X@24600 L@24600=3\n"
                       "1: S@24608=10 X@24608\n"
                       "2: S@24624=10\n";
    CHECK(strcmp(out, want) == 0, "events:\n%swant:\n%s", out, want);
    /* the window's base above 1 MiB: an entry's high bits are its */
    const uint32_t w2[] = { ENTRY(0x0abc, 1) };
    CHECK(decode(0x08100000, 1, 0, w2, 1, 0, &err) == 0 && strcmp(out, "1: E@1=8100abc\n") == 0, "base: %s", out);
    /* no TIME word: an entry's low bits below the last time's are the next
     * 4096 cycles' (0x5ff0, then 0x6010); an exit's 30 bits take it far
     * (0x16020), and the entry after it is read from there */
    const uint32_t w4[] = { ENTRY(0x100, 0xff0), ENTRY(0x200, 0x010), EXIT(0x16020), ENTRY(0x300, 0x030) };
    CHECK(decode(0, 1, 0x5000, w4, 4, 0, &err) == 0 &&
              strcmp(out, "1: E@24560=100 E@24592=200 X@90144 E@90160=300\n") == 0, "inferred: %s", out);
    /* TIME_HI: the clock's bits 36 and up */
    const uint32_t w3[] = { NP_RING_CTL(NP_RING_TIME_HI, 1), NP_RING_CTL(NP_RING_TIME, 0), EXIT(7) };
    CHECK(decode(0, 1, 0, w3, 3, 0, &err) == 0 && strcmp(out, "1: X@68719476743\n") == 0, "TIME_HI: %s", out);
    /* refused, each with its phrase */
    const uint32_t bad1[] = { EXIT(1), NP_RING_CTL(63, 0) };
    CHECK(decode(0, 1, 0, bad1, 2, 0, &err) == -1 && strstr(err, "unknown kind"), "unknown kind: %s", err);
    const uint32_t bad2[] = { NP_RING_CTL(NP_RING_FAR_HI, 0) };
    CHECK(decode(0, 1, 0, bad2, 1, 0, &err) == -1 && strstr(err, "FAR_HI"), "FAR_HI alone: %s", err);
    CHECK(decode(0, 1, 0, w2, 1, 1, &err) == -1 && strstr(err, "whole words"), "cut word: %s", err);
    /* a flight recorder's words (FLIGHT): from the first TIME_HI, TIME,
     * THREAD run on (an exit, a TIME without TIME_HI and an entry before it
     * skipped), its clock and thread from it; PAD words skipped */
    flags = NP_RING_FLIGHT;
    const uint32_t wf[] = { EXIT(0x003), NP_RING_CTL(NP_RING_TIME, 9), ENTRY(0x100, 0x004),
                            NP_RING_CTL(NP_RING_TIME_HI, 1), NP_RING_CTL(NP_RING_TIME, 2),
                            NP_RING_CTL(NP_RING_THREAD, 4 | 0x010 << 12), EXIT(0x2020), NP_RING_CTL(NP_RING_PAD, 0),
                            ENTRY(0x200, 0x030) };
    CHECK(decode(0, 0, 0, wf, 9, 0, &err) == 0 &&
              strcmp(out, "4: X@68719484960 E@68719484976=200\n") == 0, "flight: %s", out);
    flags = 0;

    /* a RING chunk's checksum (its words summed, np_ring_words_sum): any
     * one bit of 64 words changed is found, and two words swapped */
    static uint8_t c[NP_TRACE_CHUNK_HEADER + NP_RING_HEAD + 64 * 4];
    uint32_t len = NP_RING_HEAD + 64 * 4;
    for (uint32_t i = 0; i < len; i++)
        c[NP_TRACE_CHUNK_HEADER + i] = (uint8_t)(i * 37 + 11);
    np_trace_chunk_header(c, NP_CHUNK_RING, len);
    np_trace_chunk_seal(c);
    CHECK(np_trace_chunk_sum_ok(c, c + NP_TRACE_CHUNK_HEADER), "a RING chunk's checksum holds");
    /* the sum by hand: words 1, 2, 0x80000000 give ((1 <<< 1) + 2) <<< 1
     * + 0x80000000, <<< a rotation left */
    uint8_t ws[12] = { 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x80 }, sum[4];
    np_ring_words_sum(ws, 3, sum);
    CHECK(np_get_u32(sum) == 0x80000008u, "the words' sum: 0x%08x", (unsigned)np_get_u32(sum));
    unsigned missed = 0;
    for (uint32_t bit = 0; bit < len * 8; bit++) {
        c[NP_TRACE_CHUNK_HEADER + bit / 8] ^= (uint8_t)(1u << bit % 8);
        missed += np_trace_chunk_sum_ok(c, c + NP_TRACE_CHUNK_HEADER) != 0;
        c[NP_TRACE_CHUNK_HEADER + bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    CHECK(missed == 0, "%u of %u single-bit changes not found", missed, len * 8);
    uint8_t *w0 = c + NP_TRACE_CHUNK_HEADER + NP_RING_HEAD, t[4];
    memcpy(t, w0, 4), memcpy(w0, w0 + 4, 4), memcpy(w0 + 4, t, 4);
    CHECK(!np_trace_chunk_sum_ok(c, c + NP_TRACE_CHUNK_HEADER), "two words swapped not found");
    if (!failures)
        printf("ok: RING words decode to the exact events; bad payloads refused; damage found\n");
    return failures != 0;
}
