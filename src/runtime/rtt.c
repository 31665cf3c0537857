/* rtt.c - the output writer as SEGGER RTT's RAM ring (nanoprof/rtt.h): a
 * control block a debug probe finds by its ID, one up-buffer the firmware
 * writes at WrOff and the host reads at RdOff. Portable C, no C library:
 * the ordering the protocol needs (the bytes before WrOff moves; RdOff read
 * before the bytes it frees are overwritten; the ID after every field) is
 * release stores and acquire loads, which GCC emits with DMB on ARM.
 * Nothing is masked while the writer waits for the host (NP_RTT_BLOCK): the
 * clock's interrupt and an RTOS's switch go on; a write from an interrupt
 * into a write under way is dropped and counted instead.
 *
 * The layout is SEGGER's, as OpenOCD's reader parses it (src/target/rtt.c,
 * src/rtt/rtt.h): it searches RAM for the ID, reads MaxNumUpBuffers and
 * MaxNumDownBuffers after the 16 bytes of ID (RTT_CB_SIZE 24), then up-buffer
 * i at 24 + 24 * i (RTT_CHANNEL_SIZE_32; 32 with 64-bit pointers) with sName,
 * pBuffer, SizeOfBuffer, WrOff, RdOff, Flags at 0, 4, 8, 12, 16, 20 (0, 8, 16,
 * 20, 24, 28), skips a buffer of size under 2, and writes RdOff back after
 * reading. probe-rs and pyOCD read SEGGER's layout too (checked here
 * against OpenOCD's source only); probe-rs takes the block from the symbol
 * _SEGGER_RTT when the ELF has it: that is its name. No
 * down-buffer (MaxNumDownBuffers 0): the firmware reads nothing from the
 * host, and the block stays 48 bytes. */
#include "hooks.h"
#include "output.h"
#include "nanoprof/nanoprof.h"
#include "nanoprof/rtt.h"

struct np_rtt_buffer {
    const char *name;  /* sName */
    char *buf;         /* pBuffer */
    unsigned size;     /* SizeOfBuffer */
    unsigned wr;       /* WrOff: the firmware's, the next byte it writes */
    unsigned rd;       /* RdOff: the host's, the next byte it reads */
    unsigned flags;    /* Flags: the mode */
};

struct np_rtt_control {
    char id[16];       /* acID: "SEGGER RTT", written last */
    int max_up;        /* MaxNumUpBuffers */
    int max_down;      /* MaxNumDownBuffers */
    struct np_rtt_buffer up[1];
};

_Static_assert(__builtin_offsetof(struct np_rtt_control, up) == 24, "RTT_CB_SIZE");
_Static_assert(sizeof(void *) != 4 || sizeof(struct np_rtt_buffer) == 24, "RTT_CHANNEL_SIZE_32");
_Static_assert(sizeof(void *) != 8 || sizeof(struct np_rtt_buffer) == 32, "RTT_CHANNEL_SIZE_64");
_Static_assert(__builtin_offsetof(struct np_rtt_buffer, wr) == 2 * sizeof(void *) + 4, "WrOff");
_Static_assert(__builtin_offsetof(struct np_rtt_buffer, flags) == 2 * sizeof(void *) + 12, "Flags");

/* The name a probe looks for (probe-rs, J-Link) when it has the ELF. */
struct np_rtt_control np_rtt_control __asm__("_SEGGER_RTT");

static uint32_t busy;    /* 1 while a write runs */
static uint32_t dropped; /* bytes */

/* Bytes free in UP for a read offset RD: one byte stays empty, so that
 * WrOff == RdOff means empty. An RdOff out of the ring (a host's mistake)
 * frees nothing. */
static unsigned room(const struct np_rtt_buffer *up, unsigned rd)
{
    if (rd >= up->size)
        return 0;
    return (rd > up->wr ? rd - up->wr : up->size - up->wr + rd) - 1;
}

static void drop(size_t len)
{
    __atomic_fetch_add(&dropped, (uint32_t)len, __ATOMIC_RELAXED);
    np_output_failed();
}

/* N bytes (N at most room()) at WrOff, wrapping at the end; WrOff moves
 * after them (a release store: DMB, then the store). */
static void put(struct np_rtt_buffer *up, const char *bytes, unsigned n)
{
    unsigned wr = up->wr, first = up->size - wr < n ? up->size - wr : n;
    __builtin_memcpy(up->buf + wr, bytes, first);
    __builtin_memcpy(up->buf, bytes + first, n - first);
    wr += n;
    if (wr >= up->size)
        wr -= up->size;
    __atomic_store_n(&up->wr, wr, __ATOMIC_RELEASE);
}

void np_rtt_write(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    struct np_rtt_buffer *up = &np_rtt_control.up[0];
    if (!len)
        return;
    if (!up->size || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
        drop(len);
        return;
    }
    if (up->flags == NP_RTT_SKIP) {
        /* whole or not at all: a chunk cut short is damage to the reader */
        if (len <= room(up, __atomic_load_n(&up->rd, __ATOMIC_ACQUIRE)))
            put(up, bytes, (unsigned)len);
        else
            drop(len);
    } else {
        while (len) {
            unsigned n = room(up, __atomic_load_n(&up->rd, __ATOMIC_ACQUIRE));
            if (n > len)
                n = (unsigned)len;
            if (n) {
                put(up, bytes, n);
                bytes += n;
                len -= n;
            }
        }
    }
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

int np_rtt_init(void *buf, size_t size, enum np_rtt_mode mode)
{
    static const char id_reversed[] = "TTR REGGES"; /* "SEGGER RTT" nowhere else in RAM */
    struct np_rtt_control *cb = &np_rtt_control;
    if (!buf || (mode != NP_RTT_SKIP && mode != NP_RTT_BLOCK))
        return np_error(NP_EINVAL, "np_rtt_init", "the buffer is NULL or the mode neither NP_RTT_SKIP nor NP_RTT_BLOCK");
    if (size < NP_RTT_BUFFER_MIN)
        return np_error(NP_ESMALL, "np_rtt_init", "the buffer is under NP_RTT_BUFFER_MIN (16) bytes");
    if (size > 0x7fffffffu) /* SizeOfBuffer is 32 bits */
        return np_error(NP_EINVAL, "np_rtt_init", "the buffer is over 2 GiB");
    if (cb->up[0].size)
        return np_error(NP_EALREADY, "np_rtt_init", "the RTT ring is set already");
    cb->max_up = 1;
    cb->max_down = 0;
    cb->up[0] = (struct np_rtt_buffer){
        .name = "nanoprof", .buf = (char *)buf, .size = (unsigned)size, .flags = (unsigned)mode
    };
    for (unsigned i = 0; i < sizeof id_reversed - 2; i++) /* "EGGER RTT" */
        cb->id[sizeof id_reversed - 2 - i] = id_reversed[i];
    /* every field, then the ID's first byte: a host matches it whole only now */
    __atomic_store_n(&cb->id[0], id_reversed[sizeof id_reversed - 2], __ATOMIC_RELEASE);
    np_output_set(np_rtt_write, 0);
    return NP_OK;
}

size_t np_rtt_pending(void)
{
    const struct np_rtt_buffer *up = &np_rtt_control.up[0];
    unsigned rd = __atomic_load_n(&up->rd, __ATOMIC_ACQUIRE), wr = up->wr;
    if (!up->size || rd >= up->size)
        return 0;
    return wr >= rd ? wr - rd : up->size - rd + wr;
}

uint32_t np_rtt_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}
