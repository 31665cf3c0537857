/* trace_format.h - constants and codecs of the trace format
 * (docs/trace-format.md), shared by the runtime's encoder
 * (runtime/trace_encode.c), the analysis side's writer and the reader, so
 * that all speak exactly the same bytes: integers, varints, the file and
 * chunk headers with their checksums, an EVENTS chunk's fixed fields, one
 * record, and the checks of a chunk header that every walker of a file
 * makes.
 * Header-only and freestanding: a target's runtime includes it too.
 *
 * Writers write version 2: every chunk header carries a CRC-32C of the
 * header's type and length and of the payload (np_trace_chunk_seal, once
 * the payload is complete). Readers read versions 1 (no checksums: its
 * chunk headers are 8 bytes) and 2. A build for fuzzing
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) takes every checksum as good,
 * so that the fuzzer reaches the decoders behind them. */
#ifndef NP_TRACE_FORMAT_H
#define NP_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include "crc32c.h"

#define NP_TRACE_MAGIC "NPTRACE\0"
#define NP_TRACE_MAGIC_LEN 8
#define NP_TRACE_VERSION 2          /* the version written */
#define NP_TRACE_VERSION_V1 1       /* the oldest read: chunks without checksums */
#define NP_TRACE_HEADER_SIZE 16
#define NP_TRACE_HEADER_SUMMED 12   /* the file header's bytes its checksum covers */
/* The checksum of version 2's file header: every writer's first 12 bytes
 * are the same ("NPTRACE\0", 2, 16), so it is a constant
 * (tests/test_crc32c.c checks it). */
#define NP_TRACE_HEADER_CRC 0xd0ddb374u
#define NP_TRACE_CHUNK_HEADER 12    /* a chunk header as written: type, length, checksum */
#define NP_TRACE_CHUNK_HEADER_V1 8  /* version 1's: type, length */
#define NP_TRACE_CHUNK_SUMMED 8     /* the header's bytes its checksum covers, before the payload */
#define NP_TRACE_CHUNK_MAX (64u << 20)
#define NP_TRACE_DEFAULT_PATH "nanoprof.data"
#define NP_TRACE_FILE_SUFFIX ".npt"

#define NP_CHUNK_RING_TYPE 11 /* NP_CHUNK_RING, for np_trace_chunk_sum */
enum np_chunk_type {
    NP_CHUNK_INFO = 1,
    NP_CHUNK_MODULE = 2,
    NP_CHUNK_THREAD = 3,
    NP_CHUNK_EVENTS = 4,
    NP_CHUNK_END = 5,
    NP_CHUNK_NAME = 6,
    NP_CHUNK_BLOCKS = 7,
    NP_CHUNK_SAMPLING = 8,
    NP_CHUNK_UNITS = 9,
    NP_CHUNK_REPORT = 10,
    NP_CHUNK_RING = NP_CHUNK_RING_TYPE
};
#define NP_CHUNK_TYPE_LAST NP_CHUNK_RING /* types 1 to this are known */
#define NP_TRACE_NAME_MAX 255 /* bytes of a NAME chunk's name */
/* BLOCKS: u64 lost, u32 n, then n entries of u64 address, u64 count */
#define NP_TRACE_BLOCKS_HEADER 12
#define NP_TRACE_BLOCK_ENTRY 16
/* REPORT: u16 record type, then its values, u64 each (report_format.h) */
#define NP_TRACE_REPORT_TYPE 2
#define NP_TRACE_REPORT_VALUE 8

enum np_event_kind {
    NP_EV_ENTRY = 0,
    NP_EV_EXIT = 1,
    NP_EV_LOST = 2,
    NP_EV_SWITCH = 3,
    NP_EV_SAMPLE = 4,
    NP_EV_RESYNC = 5,
    NP_EV_COUNT = 6,
    NP_EV_VALUES = 7,
    NP_EV_KIND_BITS = 3
};

/* VALUES (event kind 7): varint again << 5 | n << 1 | retval, then n
 * values, each a varint index (the argument's number from 1; 0 the return
 * value), a u8 format, and the value: a zigzag varint for NP_VAL_INT and
 * NP_VAL_AUTO, a varint length and that many bytes for NP_VAL_STR, a
 * varint for the others. The arguments of the innermost open call, after its ENTRY; or
 * (retval) its return value, before its EXIT. AGAIN: the indexes and
 * formats are those of the chunk's previous VALUES record of the same
 * retval, which had n values and no string; each value is the zigzag
 * varint of its difference from that record's (the same arguments of
 * call after call, in a few bytes). */
#define NP_VALUES_AGAIN 32 /* in the head varint */
enum np_value_format {
    NP_VAL_INT = 0,  /* signed decimal ("i", "d") */
    NP_VAL_UINT = 1, /* unsigned decimal ("u") */
    NP_VAL_HEX = 2,  /* "x" */
    NP_VAL_OCT = 3,  /* "o" */
    NP_VAL_PTR = 4,  /* an address ("p") */
    NP_VAL_CHAR = 5, /* "c" */
    NP_VAL_STR = 6,  /* the bytes of a C string ("s"), cut to NP_VALUE_STR_MAX */
    NP_VAL_AUTO = 7, /* no format given: as uftrace shows it (np_value_auto_hex) */
    NP_VAL_FORMATS
};
/* Whether FORMAT's values are signed (a zigzag varint in VALUES). */
static inline int np_value_signed(unsigned format) { return format == NP_VAL_INT || format == NP_VAL_AUTO; }

/* Whether a value of NP_VAL_AUTO, V, shows in hex: outside -100000 to
 * 100000, but for a negative 32-bit int in a 64-bit register (0xffff0001
 * to 0xffffffff), which shows as that int: uftrace's rule for an argument
 * with no format, so that replay's lines read as uftrace replay's. */
static inline int np_value_auto_hex(uint64_t v)
{
    int64_t s = (int64_t)v;
    return (s > 100000 || s < -100000) && !(v > 0xffff0000u && v <= 0xffffffffu);
}
#define NP_VALUES_MAX 8       /* values in one VALUES record */
#define NP_VALUE_STR_MAX 64   /* bytes of a string argument kept */

/* UNITS chunk: string time unit, string count unit (docs/trace-format.md). */
#define NP_TRACE_UNIT_MAX 32 /* bytes of a unit's name a reader keeps */

/* SAMPLING chunk: u64 tick, u32 hz, u8 unwinder, u32 flags, u64
 * period_ns, u16 max_frames. A SAMPLE event holds 1 to
 * NP_SAMPLE_MAX_FRAMES frames. */
#define NP_SAMPLING_PAYLOAD 27
#define NP_SAMPLE_MAX_FRAMES 256
/* The longest build-id a MODULE chunk holds (a longer one is left out). */
#define NP_BUILD_ID_MAX 256
/* The MODULE path of the kernel's vDSO, which has no file. */
#define NP_TRACE_VDSO "[vdso]"
enum np_unwinder {
    NP_UNWIND_PC = 0,     /* the interrupted PC only */
    NP_UNWIND_FP = 1,     /* PC, then return addresses along the frame-pointer chain */
    NP_UNWIND_DWARF = 2   /* PC, then return addresses found from the DWARF call-frame information */
};
enum np_sampling_flags {
    NP_SAMPLING_CPU_TIME = 1u << 0,    /* periods are of the thread's CPU time */
    NP_SAMPLING_RETURN_ADDRS = 1u << 1 /* frames after the first are return addresses */
};

enum np_compression {
    NP_COMPRESS_NONE = 0,
    NP_COMPRESS_ZSTD = 1
};

/* ---- little-endian integers -------------------------------------------- */

static inline void np_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void np_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void np_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t np_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t np_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t np_get_u64(const uint8_t *p)
{
    return (uint64_t)np_get_u32(p) | (uint64_t)np_get_u32(p + 4) << 32;
}

/* ---- varints ------------------------------------------------------------ */

#define NP_VARINT_MAX 10

static inline size_t np_put_varint_loop(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Writes V as unsigned LEB128 at P; returns the bytes written. The one-
 * and two-byte ones (nearly every delta) inline, without the loop. */
static inline __attribute__((always_inline)) size_t np_put_varint(uint8_t *p, uint64_t v)
{
    if (v < 0x80) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return 2;
    }
    return np_put_varint_loop(p, v);
}

/* The same with no loop for V below 2^56, the bytes spread by shifts and
 * stored as one word: P must have 8 bytes to write whatever V needs. For
 * values a hook read from registers (pointers: seven bytes), whose loop's
 * end the CPU cannot predict. */
static inline __attribute__((always_inline)) size_t np_put_varint_wide(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && __SIZEOF_POINTER__ == 8
    /* (64-bit CPUs: elsewhere the count of leading zeros may be a call into
     * libgcc, which a freestanding target does not link) */
    if (v < 0x80) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (!(v >> 56)) {
        unsigned n = (unsigned)(64 - __builtin_clzll(v | 1) + 6) / 7; /* 1 to 8 */
        uint64_t x = (v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000) | (v << 3 & 0x7f000000) |
                     (v << 4 & 0x7f00000000) | (v << 5 & 0x7f0000000000) | (v << 6 & 0x7f000000000000) |
                     (v << 7 & 0x7f00000000000000);
        x |= 0x0080808080808080ull >> (8 * (8 - n));
        __builtin_memcpy(p, &x, 8);
        return n;
    }
#endif
    return np_put_varint(p, v);
}

/* Reads an unsigned LEB128 from [*P, END); returns 0 when it is cut short
 * or longer than 10 bytes (corrupt), 1 otherwise. */
static inline int np_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift == 63 && b > 1)
            return 0;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

static inline uint64_t np_zigzag(int64_t x) { return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63); }
static inline int64_t np_unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* ---- headers ---------------------------------------------------------------- */

/* The file header, NP_TRACE_HEADER_SIZE bytes at P: the magic, the
 * version, the header's size, the checksum of the 12 bytes before it. */
static inline void np_trace_file_header(uint8_t *p)
{
    for (int i = 0; i < NP_TRACE_MAGIC_LEN; i++)
        p[i] = (uint8_t)NP_TRACE_MAGIC[i];
    np_put_u16(p + 8, NP_TRACE_VERSION);
    np_put_u16(p + 10, NP_TRACE_HEADER_SIZE);
    np_put_u32(p + 12, NP_TRACE_HEADER_CRC);
}

/* The bytes of a chunk header in a file of VERSION (1 or later). */
static inline unsigned np_trace_chunk_header_size(unsigned version)
{
    return version <= NP_TRACE_VERSION_V1 ? NP_TRACE_CHUNK_HEADER_V1 : NP_TRACE_CHUNK_HEADER;
}

/* A chunk header at P: TYPE, then the LEN bytes of payload that follow;
 * its checksum is np_trace_chunk_seal's, once the payload is there. */
static inline void np_trace_chunk_header(uint8_t *p, uint32_t type, uint32_t len)
{
    np_put_u32(p, type);
    np_put_u32(p + 4, len);
    np_put_u32(p + 8, 0);
}

#define NP_RING_HEAD 20       /* a RING chunk's fields before its words */

/* A RING chunk's words (N whole ones at P, any alignment) summed into
 * OUT (4 bytes, little-endian): the sum, rotated left a bit before each
 * word is added. A target drains thousands of words at a time, where
 * CRC-32C (a table of 16) costs about 10 instructions a byte and this
 * one a word (Thumb-2's ADD with a rotated operand). Each step is a
 * bijection of the sum and of the word, so a change within one word is
 * always found, and the rotation orders the words. */
static inline void np_ring_words_sum(const uint8_t *p, uint32_t n, uint8_t out[4])
{
    uint32_t a = 0;
    for (; n; n--, p += 4)
        a = (a << 1 | a >> 31) + np_get_u32(p);
    np_put_u32(out, a);
}

/* A port's own np_ring_words_sum for aligned words may stand in where
 * chunks are sealed on a target (trace_seal.c): a drain sums each word. */
#ifndef NP_RING_WORDS_SUM
#define NP_RING_WORDS_SUM np_ring_words_sum
#endif

/* The checksum of the chunk whose header is H and whose LEN bytes of
 * payload are at PAYLOAD: CRC-32C over the header's type and length,
 * then the payload; for a RING chunk, over its fields and then its
 * words' sum (np_ring_words_sum). */
static inline uint32_t np_trace_chunk_sum(const uint8_t *h, const void *payload, uint32_t len)
{
    uint32_t crc = np_crc32c_update(NP_CRC32C_INIT, h, NP_TRACE_CHUNK_SUMMED);
    if (np_get_u32(h) == NP_CHUNK_RING_TYPE && len >= NP_RING_HEAD && len % 4 == 0) {
        uint8_t sum[4];
        NP_RING_WORDS_SUM((const uint8_t *)payload + NP_RING_HEAD, (len - NP_RING_HEAD) / 4, sum);
        crc = np_crc32c_update(crc, payload, NP_RING_HEAD);
        return np_crc32c_update(crc, sum, sizeof sum) ^ NP_CRC32C_XOROUT;
    }
    return np_crc32c_update(crc, payload, len) ^ NP_CRC32C_XOROUT;
}

/* Fills in the checksum of the chunk at P (its header, then its payload,
 * complete). */
static inline void np_trace_chunk_seal(uint8_t *p)
{
    np_put_u32(p + 8, np_trace_chunk_sum(p, p + NP_TRACE_CHUNK_HEADER, np_get_u32(p + 4)));
}

/* Whether the version 2 chunk with header H and its payload at PAYLOAD
 * (the length H says) is as written. */
static inline int np_trace_chunk_sum_ok(const uint8_t *h, const void *payload)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    (void)h, (void)payload;
    return 1;
#else
    return np_trace_chunk_sum(h, payload, np_get_u32(h + 4)) == np_get_u32(h + 8);
#endif
}

/* Whether the file header P (version 2 or later) is as written. */
static inline int np_trace_header_sum_ok(const uint8_t *p)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    (void)p;
    return 1;
#else
    return np_crc32c(p, NP_TRACE_HEADER_SUMMED) == np_get_u32(p + NP_TRACE_HEADER_SUMMED);
#endif
}

/* The name of a known chunk TYPE ("EVENTS"), NULL for another. */
static inline const char *np_trace_chunk_name(uint32_t type)
{
    static const char *const names[] = { "INFO", "MODULE", "THREAD", "EVENTS", "END",
                                         "NAME", "BLOCKS", "SAMPLING", "UNITS", "REPORT", "RING" };
    return type >= NP_CHUNK_INFO && type <= NP_CHUNK_TYPE_LAST ? names[type - NP_CHUNK_INFO] : 0;
}

/* How a chunk header read LEFT bytes before the end of its file stands.
 * Every walker of a file's chunks decides with this, so that all agree
 * on where a file is cut or corrupt. */
enum np_chunk_check {
    NP_CHUNK_WHOLE = 0,     /* its payload is all there */
    NP_CHUNK_CUT_HEADER,    /* fewer bytes left than a chunk header */
    NP_CHUNK_TOO_LONG,      /* it claims more than NP_TRACE_CHUNK_MAX bytes */
    NP_CHUNK_CUT,           /* the file ends inside its payload */
    NP_CHUNK_DAMAGED        /* whole, but its checksum fails (np_trace_chunk_at) */
};

/* Checks the chunk whose header H (HSIZE bytes: np_trace_chunk_header_size,
 * NULL when fewer are left) starts LEFT bytes before the end of the file;
 * fills *TYPE and *LEN from H when there is one. The checksum is not
 * checked: the payload is not at hand. */
static inline enum np_chunk_check np_trace_chunk_check(const uint8_t *h, unsigned hsize, uint64_t left,
                                                       uint32_t *type, uint32_t *len)
{
    if (!h || left < hsize)
        return NP_CHUNK_CUT_HEADER;
    *type = np_get_u32(h);
    *len = np_get_u32(h + 4);
    if (*len > NP_TRACE_CHUNK_MAX)
        return NP_CHUNK_TOO_LONG;
    if (*len > left - hsize)
        return NP_CHUNK_CUT;
    return NP_CHUNK_WHOLE;
}

/* np_trace_chunk_check for a chunk whose bytes are all at P (LEFT of
 * them to the end of the file, or of the capture), in a file of VERSION:
 * a whole chunk of version 2 or later is NP_CHUNK_DAMAGED when its
 * checksum fails. */
static inline enum np_chunk_check np_trace_chunk_at(const uint8_t *p, uint64_t left, unsigned version,
                                                    uint32_t *type, uint32_t *len)
{
    unsigned hsize = np_trace_chunk_header_size(version);
    enum np_chunk_check c = np_trace_chunk_check(p, hsize, left, type, len);
    if (c == NP_CHUNK_WHOLE && version > NP_TRACE_VERSION_V1 && !np_trace_chunk_sum_ok(p, p + hsize))
        return NP_CHUNK_DAMAGED;
    return c;
}

/* Whether a version 2 chunk may start at H (NP_TRACE_CHUNK_HEADER bytes,
 * LEFT to the end of the file): a known type and a length the bytes left
 * hold. Where a walker resynchronises after damage, a place where this
 * holds and the checksum too. */
static inline int np_trace_chunk_plausible(const uint8_t *h, uint64_t left)
{
    uint32_t type, len;
    return np_trace_chunk_check(h, NP_TRACE_CHUNK_HEADER, left, &type, &len) == NP_CHUNK_WHOLE &&
           np_trace_chunk_name(type);
}

/* ---- RING ------------------------------------------------------------------- */

/* A RING chunk: a target's raw call records, as its hooks wrote them into
 * RAM (nanoprof/trace.h, np_trace_init_ring), which the host decodes into
 * EVENTS (analyze/target_ring.c). Its payload: u32 base (the code window's
 * start: an entry keeps its function's low NP_RING_FN_BITS bits), u32 tid
 * (the thread running at the first word), u64 clock (the reader's time
 * before the first word: the clock's bits 12 and up then, its low
 * NP_RING_TIME_BITS bits zero), u32 flags (NP_RING_FLIGHT or 0), then little-endian u32 words,
 * each a record:
 *   bit 0 = 1       ENTRY: bits 0..19 the function's address less base's
 *                   high bits (a Thumb address is odd), bits 20..31 the
 *                   clock's low 12 bits
 *   bits 1..0 = 00  EXIT: bits 2..31 the clock's low 30 bits
 *   bits 1..0 = 10  a control word: bits 2..7 its kind (NP_RING_*), bits
 *                   8..31 its 24-bit value
 * Every word stands alone, so the records can be found from any 4-byte
 * boundary. */
#define NP_RING_FN_BITS 20
#define NP_RING_FN_MASK ((1u << NP_RING_FN_BITS) - 1)
#define NP_RING_TIME_BITS 12
#define NP_RING_TIME_MASK ((1u << NP_RING_TIME_BITS) - 1)
enum np_ring_ctl {
    NP_RING_TIME = 1,    /* the clock's bits 12..35 from here on */
    NP_RING_TIME_HI = 2, /* the clock's bits 36..59 (before a TIME word) */
    NP_RING_THREAD = 3,  /* a switch to thread (bits 0..11) at the clock's low
                            12 bits (bits 12..23) */
    NP_RING_LOST = 4,    /* that many events lost here */
    NP_RING_FAR_LO = 5,  /* an entry's address bits 0..23 (a name's, or a
                            function beyond the window), for FAR_HI */
    NP_RING_FAR_HI = 6,  /* its bits 24..31 (bits 0..7) and the clock's low
                            12 bits (bits 8..19): the entry */
    NP_RING_PAD = 7      /* nothing: a flight recorder's lap ends here */
};
/* RING flags: the words are a flight recorder's, its newest ones read from
 * RAM (np_trace_init_flight): tid and clock are unknown, and the records
 * count from the first TIME_HI, TIME, THREAD run on, which the target
 * writes at every change of the clock's bits 12 and up and at the start
 * of each lap. */
#define NP_RING_FLIGHT 1u

/* ---- the flight recorder's control block, in the target's RAM ---------------- */

/* At the start of np_trace_init_flight's buffer, found in a RAM image by
 * its id (written last), as OpenOCD finds RTT's: all u32, addresses in
 * the target's address space. The image holds the chunks (header, INFO,
 * MODULE, THREAD, END: META_LEN bytes at META), the ring's NWORDS words at
 * WORDS, and, at POS_AT, the hooks' pointer to the next word to write;
 * LAPS counts the ring's wraps (0: the words from WORDS to it are all
 * there is); DROPPED counts chunks the META room had no room for. */
#define NP_FLIGHT_ID "NANOPROF FLIGHT"
#define NP_FLIGHT_ID_LEN 16
enum np_flight_field {
    NP_FLIGHT_VERSION = 16, /* 1 */
    NP_FLIGHT_SELF = 20,    /* the block's own address: the image's base */
    NP_FLIGHT_META = 24,
    NP_FLIGHT_META_CAP = 28,
    NP_FLIGHT_META_LEN = 32,
    NP_FLIGHT_WORDS = 36,
    NP_FLIGHT_NWORDS = 40,
    NP_FLIGHT_POS_AT = 44,
    NP_FLIGHT_BASE = 48,    /* the RING chunk's base */
    NP_FLIGHT_LAPS = 52,
    NP_FLIGHT_DROPPED = 56,
    NP_FLIGHT_BLOCK = 64    /* its bytes */
};
#define NP_RING_CTL(kind, v) ((uint32_t)(v) << 8 | (uint32_t)(kind) << 2 | 2u)

/* The clock's low bits word W says, at *LOW, and how many: NP_RING_EXIT_BITS
 * for an EXIT, NP_RING_TIME_BITS for an ENTRY, a THREAD or a FAR_HI; 0 for
 * a word without a time. A reader takes a word's time as the first at or
 * after the last time it knew whose low bits these are; the target writes
 * a TIME word before a word that would be read at another time. */
#define NP_RING_EXIT_BITS 30
static inline unsigned np_ring_word_time(uint32_t w, uint32_t *low)
{
    if (w & 1) {
        *low = w >> NP_RING_FN_BITS;
        return NP_RING_TIME_BITS;
    }
    if (!(w & 2)) {
        *low = w >> 2;
        return NP_RING_EXIT_BITS;
    }
    if ((w >> 2 & 63) == NP_RING_THREAD) {
        *low = w >> 20;
        return NP_RING_TIME_BITS;
    }
    if ((w >> 2 & 63) == NP_RING_FAR_HI) {
        *low = w >> 16 & NP_RING_TIME_MASK;
        return NP_RING_TIME_BITS;
    }
    return 0;
}

/* The time after LAST whose low BITS bits are LOW's. An EXIT's below LAST
 * by less than half its span is LAST: times never go back. */
static inline uint64_t np_ring_time_after(uint64_t last, uint32_t low, unsigned bits)
{
    uint64_t d = (low - last) & ((1ull << bits) - 1);
    return bits == NP_RING_EXIT_BITS && d >> (bits - 1) ? last : last + d;
}

/* ---- EVENTS ------------------------------------------------------------------ */

/* An EVENTS chunk's fixed fields after its header: u32 tid, u64 base tick,
 * u32 event count, u8 compression, u32 decoded length. */
#define NP_TRACE_EVENTS_HEAD 21
#define NP_TRACE_EVENTS_PREFIX (NP_TRACE_CHUNK_HEADER + NP_TRACE_EVENTS_HEAD)

/* The chunk header and fixed fields of an EVENTS chunk at P, whose stream
 * decodes to DECODED bytes and takes PAYLOAD bytes (compressed or not);
 * np_trace_chunk_seal once the stream follows them. */
static inline void np_trace_events_prefix(uint8_t *p, uint32_t tid, uint64_t base, uint32_t count,
                                          unsigned compression, uint32_t decoded, uint32_t payload)
{
    np_trace_chunk_header(p, NP_CHUNK_EVENTS, NP_TRACE_EVENTS_HEAD + payload);
    p += NP_TRACE_CHUNK_HEADER;
    np_put_u32(p, tid);
    np_put_u64(p + 4, base);
    np_put_u32(p + 12, count);
    p[16] = (uint8_t)compression;
    np_put_u32(p + 17, decoded);
}

/* One record at O: DT ticks since the previous record of the chunk and
 * KIND, then its argument (ENTRY: ARG less *PREV_ADDR, which becomes ARG;
 * EXIT: none). Returns the bytes written, at most 2 * NP_VARINT_MAX. A
 * SAMPLE has fields of its own (the runtime's encoder writes them).
 * SMALL (a constant): every varint by its loop, in less code, for a
 * target whose ROM counts more than its cycles. */
static inline __attribute__((always_inline)) size_t np_trace_put_record_as(int small, uint8_t *o, uint64_t dt,
                                                                           unsigned kind, uint64_t arg,
                                                                           uint64_t *prev_addr)
{
#define NP_PUT_VARINT(p, v) (small ? np_put_varint_loop(p, v) : np_put_varint(p, v))
    size_t n = NP_PUT_VARINT(o, dt << NP_EV_KIND_BITS | kind);
    uint64_t v = arg;
    if (kind == NP_EV_ENTRY) {
        v = np_zigzag((int64_t)(arg - *prev_addr));
        *prev_addr = arg;
    }
    if (kind != NP_EV_EXIT)
        n += NP_PUT_VARINT(o + n, v);
#undef NP_PUT_VARINT
    return n;
}

static inline __attribute__((always_inline)) size_t np_trace_put_record(uint8_t *o, uint64_t dt, unsigned kind,
                                                                        uint64_t arg, uint64_t *prev_addr)
{
    return np_trace_put_record_as(0, o, dt, kind, arg, prev_addr);
}
#define NP_TRACE_RECORD_MAX (2 * NP_VARINT_MAX)


/* A value of a VALUES record as a writer has it. */
struct np_value_out {
    uint8_t index, format;
    uint16_t len;         /* NP_VAL_STR: bytes at BYTES (at most NP_VALUE_STR_MAX) */
    uint64_t v;
    const uint8_t *bytes;
};
/* The most bytes np_trace_put_values writes. */
#define NP_TRACE_VALUES_RECORD_MAX (2 * NP_VARINT_MAX + NP_VALUES_MAX * (2 + 2 * NP_VARINT_MAX + NP_VALUE_STR_MAX))

/* A VALUES record's start at O, DT ticks after the previous record: N
 * values (at most NP_VALUES_MAX) follow, a return value when RETVAL. */
static inline __attribute__((always_inline)) size_t np_trace_put_values_head(uint8_t *o, uint64_t dt, int retval,
                                                                             unsigned n)
{
    size_t k = np_put_varint(o, dt << NP_EV_KIND_BITS | NP_EV_VALUES);
    return k + np_put_varint(o + k, (uint64_t)n << 1 | (retval != 0));
}

/* The same for a VALUES record AGAIN: N differences follow, each written
 * by np_trace_put_value_again. */
static inline __attribute__((always_inline)) size_t np_trace_put_values_again(uint8_t *o, uint64_t dt, int retval,
                                                                              unsigned n)
{
    return np_trace_put_values_head(o, dt, retval, n | NP_VALUES_AGAIN >> 1);
}

/* A value V of a VALUES record AGAIN whose earlier record had PREV there:
 * O has room for NP_VARINT_MAX bytes. Returns its bytes. */
static inline __attribute__((always_inline)) size_t np_trace_put_value_again(uint8_t *o, uint64_t v, uint64_t prev)
{
    return np_put_varint_wide(o, np_zigzag((int64_t)(v - prev)));
}

/* One value of a VALUES record at O, an integer or a pointer (any format
 * but NP_VAL_STR): O has room for the most it takes (2 + 2 *
 * NP_VARINT_MAX bytes). Returns its bytes. */
static inline __attribute__((always_inline)) size_t np_trace_put_value_int(uint8_t *o, unsigned index,
                                                                           unsigned format, uint64_t v)
{
    size_t k = np_put_varint(o, index);
    o[k++] = (uint8_t)format;
    return k + np_put_varint_wide(o + k, np_value_signed(format) ? np_zigzag((int64_t)v) : v);
}

/* A VALUES record at O, DT ticks after the previous record: N values (at
 * most NP_VALUES_MAX) of V, a return value when RETVAL. Returns its bytes. */
static inline size_t np_trace_put_values(uint8_t *o, uint64_t dt, int retval, const struct np_value_out *v, unsigned n)
{
    if (n > NP_VALUES_MAX)
        n = NP_VALUES_MAX;
    size_t k = np_trace_put_values_head(o, dt, retval, n);
    for (unsigned i = 0; i < n; i++) {
        if (v[i].format == NP_VAL_STR) {
            k += np_put_varint(o + k, v[i].index);
            o[k++] = v[i].format;
            size_t len = v[i].len < NP_VALUE_STR_MAX ? v[i].len : NP_VALUE_STR_MAX;
            k += np_put_varint(o + k, len);
            for (size_t b = 0; b < len; b++)
                o[k++] = v[i].bytes[b];
        } else {
            k += np_trace_put_value_int(o + k, v[i].index, v[i].format, v[i].v);
        }
    }
    return k;
}
/* The most bytes np_trace_put_values_head and N np_trace_put_value_int write. */
#define NP_TRACE_INT_VALUES_RECORD_MAX(n) (2 * NP_VARINT_MAX + (n) * (2 + 2 * NP_VARINT_MAX))

#endif
