/* gprof.c - the GNU profiler on a target (gprof.h): call arcs from -pg's
 * mcount, the interrupted PC sampled into a histogram of the code, and
 * both written to the host as gmon.out (common/gmon_format.h).
 *
 * Everything lives in the program's buffers: the state at the head of
 * the arc buffer, then the arc table (open addressing, linear probing, at
 * most NP_GPROF_PROBE_MAX slots looked at); the histogram's bins in the
 * other. The port gives the rest (port.h, "on a target"): mcount calls
 * count_arc with the caller's and the callee's addresses, the timer
 * interrupt calls sample with the PC it interrupted, the program's end
 * calls write_at_exit, and the host's files take the bytes.
 *
 * The file's integers are in the target's own byte order and its vma is
 * an address's size: the firmware's ELF is the target's, so both match. */
#include "hooks.h"
#include "report.h"
#include "../common/gmon_format.h"
#include "../port/port.h"
#include "nanoprof/nanoprof.h"
#include "nanoprof/gprof.h"
#include "np_config.h"

#if NP_PORT_HOSTED

int np_gprof_init(const np_gprof_config *config)
{
    (void)config;
    return np_error(NP_EINVAL, "np_gprof_init",
                    "for a target; on a host, `nanoprof record --sample` then `nanoprof dump --format=gmon`");
}

int np_gprof_write(const char *path)
{
    (void)path;
    return np_error(NP_EINVAL, "np_gprof_write",
                    "for a target; on a host, `nanoprof record --sample` then `nanoprof dump --format=gmon`");
}

#else

#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)

struct arc {
    uint32_t from, self, count; /* count 0: a free slot */
};

struct gprof {
    uint16_t *bins;
    uint32_t nbins;
    uintptr_t low, span;        /* the histogram covers [low, low + span) */
    uint32_t shift;             /* a bin covers 1 << shift bytes */
    uint32_t hz;
    uint32_t nslots;
    uint32_t lost_calls;        /* not counted: table full or count at its maximum */
    uint32_t lost_samples;      /* a bin at NP_GMON_BIN_MAX */
    uint32_t outside;           /* samples outside [low, low + span) */
    struct arc slots[];
};
_Static_assert(sizeof(struct gprof) <= NP_GPROF_STATE_SIZE, "NP_GPROF_STATE_SIZE too small");
_Static_assert(sizeof(struct arc) == NP_GPROF_ARC_SIZE, "NP_GPROF_ARC_SIZE is not an arc's size");

static struct gprof *g; /* NULL until np_gprof_init */

/* One call from FROM (in the caller) to SELF (in the callee), from mcount.
 * Interrupts masked: an interrupt handler built with -pg counts too. */
static void count_arc(uintptr_t from, uintptr_t self)
{
    struct gprof *p = g;
    uint32_t h = ((uint32_t)from ^ (uint32_t)self * 0x9e3779b1u) * 0x85ebca6bu;
    uint32_t i = ((h >> 16) * p->nslots) >> 16;
    np_port_crit m = np_port_crit_enter(0);
    for (unsigned probes = 0;; probes++) {
        struct arc *a = &p->slots[i];
        if (probes == NP_GPROF_PROBE_MAX) {
            p->lost_calls++;
            break;
        }
        if (!a->count) {
            *a = (struct arc){ (uint32_t)from, (uint32_t)self, 1 };
            break;
        }
        if (a->self == self && a->from == from) {
            if (a->count != NP_GMON_COUNT_MAX)
                a->count++;
            else
                p->lost_calls++;
            break;
        }
        if (++i == p->nslots)
            i = 0;
    }
    np_port_crit_exit(0, m);
}

/* One sample at PC, from the timer interrupt. */
static void sample(uintptr_t pc)
{
    struct gprof *p = g;
    uintptr_t off = pc - p->low;
    if (off >= p->span) {
        p->outside++;
        return;
    }
    uint16_t *b = &p->bins[off >> p->shift];
    if (*b != NP_GMON_BIN_MAX)
        (*b)++;
    else
        p->lost_samples++;
}

static void write_at_exit(void)
{
    np_port_pc_sample_stop();
    np_port_arcs_start(NULL);
    (void)np_gprof_write(NULL);
}

/* WHAT: an NP_MSG value */
static int fail(int status, const char *what)
{
    return np_error_msg(status, NP_MSG("np_gprof_init"), what);
}

int np_gprof_init(const np_gprof_config *c)
{
    if (g)
        return fail(NP_EALREADY, NP_MSG("already running"));
    if (!c || !c->arcs || !c->hist || ((uintptr_t)c->arcs & 3) || ((uintptr_t)c->hist & 1))
        return fail(NP_EINVAL, NP_MSG("NULL or misaligned (arcs: 4 bytes, hist: 2)"));
    if (!c->hz || c->hz > NP_GPROF_HZ_MAX)
        return fail(NP_EINVAL, NP_MSG("hz: 1 to " NP_STR(NP_GPROF_HZ_MAX)));
    if (c->arcs_size < NP_GPROF_ARCS_SIZE(1))
        return fail(NP_ESMALL, NP_MSG("arcs_size under NP_GPROF_ARCS_SIZE(1)"));
    uintptr_t start = (uintptr_t)c->text_start, end = (uintptr_t)c->text_end;
    if ((!start && !end && !np_port_text(&start, &end)) || end <= start)
        return fail(NP_EINVAL, NP_MSG("no text range (text_start, text_end)"));
    /* the narrowest bins, a power of two of bytes, that the buffer holds:
     * gprof's bin width is then exact */
    uint32_t shift = 1, nbins;
    uintptr_t low, high;
    for (;; shift++) {
        uintptr_t b = (uintptr_t)1 << shift;
        low = start & ~(b - 1);
        high = (end - 1) | (b - 1);
        nbins = (uint32_t)((high - low) >> shift) + 1;
        if (nbins <= c->hist_size / 2)
            break;
        if (b == NP_GPROF_BUCKET_MAX) {
            NP_REPORT(NP_REP_GPROF_HIST_SMALL, (uint64_t)nbins * 2);
            return NP_ESMALL;
        }
    }
    struct gprof *p = c->arcs;
    size_t nslots = (c->arcs_size - NP_GPROF_STATE_SIZE) / NP_GPROF_ARC_SIZE;
    *p = (struct gprof){ .bins = c->hist, .nbins = nbins, .low = low, .span = high - low + 1, .shift = shift,
                         .hz = c->hz, .nslots = nslots < NP_GPROF_ARCS_MAX ? (uint32_t)nslots : NP_GPROF_ARCS_MAX };
    __builtin_memset(p->slots, 0, p->nslots * sizeof *p->slots);
    __builtin_memset(p->bins, 0, nbins * sizeof *p->bins);
    g = p;
    const char *why = NP_MSG("");
    if (!np_port_pc_sample_start(c->hz, sample, &why)) {
        g = NULL;
        return fail(NP_EINVAL, why); /* (the port's: an NP_MSG value) */
    }
    np_port_arcs_start(count_arc);
    np_port_at_exit(write_at_exit);
    return NP_OK;
}

/* ---- the file ------------------------------------------------------------- */

/* The file's header and the histogram record's tag; then its addresses,
 * its size and rate, and its dimension. */
struct head {
    char magic[NP_GMON_MAGIC_LEN];
    uint32_t version;
    uint8_t spare[NP_GMON_HEADER_SIZE - NP_GMON_MAGIC_LEN - 4];
    uint8_t tag;
};
static const struct head head = { NP_GMON_MAGIC, NP_GMON_VERSION, { 0 }, NP_GMON_TAG_TIME_HIST };
static const char dimension[NP_GMON_DIMEN_LEN + 1] = "seconds\0\0\0\0\0\0\0\0s";

struct __attribute__((packed)) arc_record {
    uint8_t tag;
    uintptr_t from, self;
    uint32_t count;
};

/* A count of what the file misses, when there is any. */
static void say_lost(unsigned type, uint32_t n)
{
    if (n)
        NP_REPORT(type, n);
}

int np_gprof_write(const char *path)
{
    struct gprof *p = g;
    if (!p)
        return np_error(NP_ENOTINIT, "np_gprof_write", "np_gprof_init first");
    long h = np_port_host_open(path ? path : NP_GPROF_FILE);
    int failed = h < 0;
    if (!failed) {
        uintptr_t range[2] = { p->low, p->low + p->span }; /* high: one past the last bin */
        uint32_t size_rate[2] = { p->nbins, p->hz };
        failed = np_port_host_write(h, &head, NP_GMON_HEADER_SIZE + 1) ||
                 np_port_host_write(h, range, sizeof range) || np_port_host_write(h, size_rate, sizeof size_rate) ||
                 np_port_host_write(h, dimension, sizeof dimension) ||
                 np_port_host_write(h, p->bins, (size_t)p->nbins * 2);
        struct arc_record r[NP_GPROF_WRITE_ARCS];
        unsigned n = 0;
        for (uint32_t i = 0; i < p->nslots && !failed; i++) {
            struct arc a = p->slots[i]; /* a copy: the program may be calling */
            if (!a.count)
                continue;
            r[n++] = (struct arc_record){ NP_GMON_TAG_CG_ARC, a.from, a.self, a.count };
            if (n == NP_GPROF_WRITE_ARCS) {
                failed = np_port_host_write(h, r, sizeof r);
                n = 0;
            }
        }
        if (n && !failed)
            failed = np_port_host_write(h, r, n * sizeof *r);
        np_port_host_close(h);
    }
    if (failed)
        return np_error(NP_EINVAL, "np_gprof_write", "the host refused the file (no semihosting?)");
    say_lost(NP_REP_GPROF_OUTSIDE, p->outside);
    say_lost(NP_REP_GPROF_ARCS_LOST, p->lost_calls);
    say_lost(NP_REP_GPROF_SAMPLES_LOST, p->lost_samples);
    return p->lost_calls || p->lost_samples ? NP_EFULL : NP_OK;
}

#endif
