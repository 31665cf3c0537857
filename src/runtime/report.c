/* report.c - the runtime's reports (report.h): on a target built for
 * records, each goes out as a REPORT chunk, after the stream's opening,
 * and the host formats it with the firmware's ELF; elsewhere it is
 * formatted here, by the formatter the host uses, naming what the port
 * can name. */
#include "report.h"
#include "output.h"
#include "thread.h"
#include "../port/port.h"
#include "../common/trace_format.h"

#if !NP_PORT_HOSTED /* a target: its output is a stream of chunks */

/* The build-id of the firmware, from its .note.gnu.build-id note, which
 * the boards' linker scripts keep between these symbols (weak: a script
 * without them gives an empty build-id). */
extern const uint32_t __np_build_id_start[] __attribute__((weak));
extern const uint32_t __np_build_id_end[] __attribute__((weak));

const uint8_t *np_build_id(size_t *len)
{
    /* the note, 4-byte aligned, its words in the target's byte order: u32
     * namesz (4), u32 descsz, u32 type, "GNU\0", the build-id (descsz
     * bytes) */
    const uint32_t *w = __np_build_id_start;
    size_t n = 0;
    if (w && __np_build_id_end - w >= 4 && w[0] == 4) {
        n = w[1];
        if (n > 4 * (size_t)(__np_build_id_end - w) - 16)
            n = 0;
    }
    *len = n;
    return (const uint8_t *)(w + 4);
}

/* The checksum's register after N bytes at P: out of line, its loop
 * once in the firmware. */
static __attribute__((noinline)) uint32_t crc_of(uint32_t crc, const void *p, size_t n)
{
    return np_crc32c_update(crc, p, n);
}

uint8_t *np_chunk_field(uint8_t *p, uint64_t v, unsigned n)
{
    while (n--) {
        *p++ = (uint8_t)v;
        v >>= 8;
    }
    return p;
}
#define field np_chunk_field

void np_chunk_send(uint8_t *buf, uint32_t type, const uint8_t *end, void (*write)(const char *, size_t))
{
    size_t n = (size_t)(end - buf);
    np_trace_chunk_header(buf, type, (uint32_t)(n - NP_TRACE_CHUNK_HEADER));
    uint32_t crc = crc_of(NP_CRC32C_INIT, buf, NP_TRACE_CHUNK_SUMMED);
    np_put_u32(buf + 8, crc_of(crc, buf + NP_TRACE_CHUNK_HEADER, n - NP_TRACE_CHUNK_HEADER) ^ NP_CRC32C_XOROUT);
    write((const char *)buf, n);
}

/* The file header and INFO, constant bytes, their checksums too: no pid,
 * no ppid, ns_per_tick 1.0, start tick 0 (times count from the clock's
 * start), no wall-clock time, the clock "cycles" (a target's ticks: the
 * reader shows them as they are, or as time given the clock's rate), no
 * command line. Every import of a target's capture reads them. */
#define CRC_BYTES(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)
#define INFO_CRC 0xcd618205u
static const uint8_t head_info[] = {
    'N', 'P', 'T', 'R', 'A', 'C', 'E', 0, NP_TRACE_VERSION, 0, NP_TRACE_HEADER_SIZE, 0, /* header */
    CRC_BYTES(NP_TRACE_HEADER_CRC),                  /* the header's checksum */
    NP_CHUNK_INFO, 0, 0, 0, 42, 0, 0, 0, CRC_BYTES(INFO_CRC), /* INFO, 42 bytes, its checksum */
    0, 0, 0, 0, 0, 0, 0, 0,                          /* pid, ppid */
    0, 0, 0, 0, 0, 0, 0xf0, 0x3f,                    /* ns_per_tick: 1.0 */
    0, 0, 0, 0, 0, 0, 0, 0,                          /* start tick */
    0, 0, 0, 0, 0, 0, 0, 0,                          /* start time */
    6, 0, 'c', 'y', 'c', 'l', 'e', 's', 0, 0         /* clock, argc */
};
_Static_assert(sizeof head_info == NP_TRACE_HEADER_SIZE + NP_TRACE_CHUNK_HEADER + 42, "INFO's 42 bytes");

/* The longest build-id sent (SHA-256's); a longer one is sent empty. */
#define BUILD_ID_MAX 32

void np_stream_open(int fresh)
{
    if ((np_output_opened || np_output_tracing) && !fresh)
        return;
    np_output_opened = 1;
    np_stream_opening(np_write);
}

void np_stream_opening(void (*write)(const char *, size_t))
{
    write((const char *)head_info, sizeof head_info);
    /* MODULE: bias 0, start 0, end (the firmware is one module: every
     * address is its own), the build-id, an empty path; sent in pieces,
     * the build-id from where it is (nothing copied, no memcpy linked) */
    size_t id_len;
    const uint8_t *id = np_build_id(&id_len);
    if (id_len > BUILD_ID_MAX)
        id_len = 0;
    uint8_t head[NP_TRACE_CHUNK_HEADER + 26], path[2] = { 0, 0 };
    uint8_t *p = field(field(head + NP_TRACE_CHUNK_HEADER, 0, 16), (uint64_t)1 << NP_ADDR_BITS, 8);
    field(p, id_len, 2);
    np_trace_chunk_header(head, NP_CHUNK_MODULE, (uint32_t)(26 + id_len + 2));
    uint32_t crc = crc_of(NP_CRC32C_INIT, head, NP_TRACE_CHUNK_SUMMED);
    crc = crc_of(crc, head + NP_TRACE_CHUNK_HEADER, 26);
    crc = crc_of(crc_of(crc, id, id_len), path, 2) ^ NP_CRC32C_XOROUT;
    np_put_u32(head + 8, crc);
    write((const char *)head, sizeof head);
    if (id_len)
        write((const char *)id, id_len);
    write((const char *)path, 2);
}

#endif

#if NP_REPORT_RECORDS

void np_report(unsigned type, const uint64_t *v, unsigned n)
{
    np_stream_open(0);
    uint8_t buf[NP_TRACE_CHUNK_HEADER + 2 + 8 * NP_REPORT_VALUES_MAX];
    uint8_t *p = field(buf + NP_TRACE_CHUNK_HEADER, type, 2);
    for (unsigned i = 0; i < n && i < NP_REPORT_VALUES_MAX; i++)
        p = field(p, v[i], 8);
    np_chunk_send(buf, NP_CHUNK_REPORT, p, np_write);
}

#else /* formatted here */

#include "../common/report_text.h"

static int function(void *ctx, uint64_t addr, char *buf, size_t len, uint64_t *offset)
{
    (void)ctx;
    if (!np_port_symbolize_at((const void *)(uintptr_t)addr, buf, len, offset))
        return 0;
    np_port_display_name(buf, len); /* as the views name it */
    return 1;
}

/* The runtime's messages and the program's strings are in memory. */
static const char *string(void *ctx, uint64_t addr, int msg, char *buf, size_t len)
{
    (void)ctx, (void)msg, (void)buf, (void)len;
    return (const char *)(uintptr_t)addr;
}

static void emit(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    np_write(line, len);
}

void np_report(unsigned type, const uint64_t *v, unsigned n)
{
    static const struct np_report_names names = { 0, function, string };
    (void)np_report_text(type, v, n, &names, emit, 0);
}

#endif
