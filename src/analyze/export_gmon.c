/* export_gmon.c - the profile as a gmon.out file, which GNU gprof reads
 * with the program's executable (`gprof PROG gmon.out`).
 *
 * The file (glibc's <sys/gmon_out.h>, gprof's gmon_io.c, hist.c,
 * call_graph.c and basic_blocks.c) is a 20-byte header, "gmon", u32
 * version 1 and 12 zero bytes, then records, each a one-byte tag:
 *
 *   0 TIME_HIST  vma low_pc, vma high_pc, u32 hist_size, u32 prof_rate,
 *                char dimen[15] "seconds", char dimen_abbrev 's', then
 *                hist_size u16 bins, bin i counting the samples in
 *                [low_pc + i*B, low_pc + (i+1)*B), B = (high-low)/size
 *   1 CG_ARC     vma from_pc, vma self_pc, u32 count
 *   2 BB_COUNT   u32 n, then n times vma address, vma count (gmon_bb.h)
 *
 * vma is the ELF class's address size; every integer is in the ELF's byte
 * order. Addresses are the executable's ELF addresses (for a PIE too: the
 * model's are, whatever the load address was).
 *
 * gprof reads one executable's symbols, so the file holds one program:
 * the executable among the trace's modules (ET_EXEC, or ET_DYN marked
 * DF_1_PIE) with the most calls, samples and block executions. What lies
 * in other modules (shared libraries, another program exec'd) is left
 * out, with one warning per kind. The histogram spans the program's
 * .text section; its bins count the sampled periods (each 1/prof_rate s
 * of CPU) and saturate at 65535. gprof computes a bin's width in 2-byte
 * units as a floating-point ratio, so the range is widened to whole
 * buckets of B bytes, B a power of two: the ratio is then exact. Arcs
 * come from the model's exact call counts; from_pc is the caller's own
 * ELF address (gprof maps it to the function holding it), self_pc the
 * callee's, sorted by both; calls from a thread's root have no caller and are left out
 * (gprof shows the function as <spontaneous>). gprof needs a histogram
 * for its flat profile, so one is written even without samples. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "export.h"
#include "gmon_bb.h"
#include "textfmt.h"
#include "../common/gmon_format.h"

/* The default bucket: 4 bytes as glibc's (HISTFRACTION 2 of its 2-byte
 * counters), doubled until the histogram has at most this many bins. */
#define GMON_DEFAULT_BUCKET 4
#define GMON_MAX_DEFAULT_BINS (1u << 20)
/* A rate for a histogram without samples (every bin 0): any will do. */
#define GMON_RATE_UNSAMPLED 100

struct gmon {
    FILE *out;
    const struct np_export_options *o;
    const char *program;     /* its path, as the model's functions name it */
    struct np_elf_text elf;
};

static void say(const struct np_export_options *o, enum np_diag_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const struct np_export_options *o, enum np_diag_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (!o->diag)
        return;
    va_start(ap, fmt);
    o->diag(o->diag_ctx, level, np_format_line(line, sizeof line, fmt, ap)); /* paths come from the trace */
    va_end(ap);
}

/* ---- writing, in the ELF's byte order ------------------------------------- */

static void put_uint(const struct gmon *g, uint64_t v, unsigned bytes)
{
    uint8_t b[8];
    for (unsigned i = 0; i < bytes; i++)
        b[g->elf.big_endian ? bytes - 1 - i : i] = (uint8_t)(v >> (8 * i));
    fwrite(b, 1, bytes, g->out);
}

static void put_vma(const struct gmon *g, uint64_t v)
{
    put_uint(g, v, g->elf.addr_bytes);
}

static void put_u32(const struct gmon *g, uint64_t v)
{
    put_uint(g, v, 4);
}

/* ---- which program ----------------------------------------------------------- */

struct module_weight {
    const char *path;
    uint64_t weight;         /* calls, samples and block executions in it */
};

/* Adds W to MODULE's entry of *MW (*N entries, room for CAP). */
static void add_weight(struct module_weight *mw, size_t *n, size_t cap, const char *module, uint64_t w)
{
    if (!module)
        return;
    for (size_t i = 0; i < *n; i++)
        if (mw[i].path == module || strcmp(mw[i].path, module) == 0) {
            mw[i].weight += w;
            return;
        }
    if (*n < cap)
        mw[(*n)++] = (struct module_weight){ module, w };
}

static int by_weight(const void *a, const void *b)
{
    const struct module_weight *x = a, *y = b;
    return (x->weight < y->weight) - (x->weight > y->weight);
}

/* Picks the program into G: the heaviest module that is an executable.
 * 0, NP_EXPORT_ENOMEM, or NP_EXPORT_FAILED with the reason said. */
static int pick_program(struct gmon *g, const struct np_model *m)
{
    size_t nf, nb, npcs;
    const struct np_function *fns = np_model_functions(m, &nf);
    const struct np_block *blocks = np_model_blocks(m, &nb);
    const struct np_sample_pc *pcs = np_model_sample_pcs(m, &npcs);
    size_t cap = nf + npcs + 1, n = 0;
    struct module_weight *mw = malloc(cap * sizeof *mw);
    if (!mw)
        return NP_EXPORT_ENOMEM;
    for (size_t i = 0; i < nf; i++)
        add_weight(mw, &n, cap, fns[i].module, fns[i].calls);
    for (size_t i = 0; i < nb; i++)
        add_weight(mw, &n, cap, fns[blocks[i].function].module, blocks[i].count);
    for (size_t i = 0; i < npcs; i++)
        add_weight(mw, &n, cap, pcs[i].module, pcs[i].periods);
    qsort(mw, n, sizeof *mw, by_weight);
    size_t programs = 0;
    const char *why = NULL, *why_path = NULL;
    for (size_t i = 0; i < n; i++) {
        struct np_elf_text elf;
        const char *err = np_elf_text(mw[i].path, &elf);
        if (err && !why) {
            why = err;
            why_path = mw[i].path;
        }
        if (err || !elf.executable)
            continue;
        if (programs++ == 0) {
            g->program = mw[i].path;
            g->elf = elf;
        }
    }
    int rc = 0;
    if (!programs) {
        if (why)
            say(g->o, NP_DIAG_ERROR, "gmon: no program among the trace's modules (%s: %s)", why_path, why);
        else
            say(g->o, NP_DIAG_ERROR, "%s", "gmon: no program among the trace's modules");
        rc = NP_EXPORT_FAILED;
    } else if (programs > 1) {
        say(g->o, NP_DIAG_WARNING, "gmon: the trace holds %zu programs; writing only %s's (gprof reads one)",
            programs, g->program);
    }
    free(mw);
    return rc;
}

static bool in_program(const struct gmon *g, const char *module)
{
    return module && (module == g->program || strcmp(module, g->program) == 0);
}

/* ---- records ------------------------------------------------------------------ */

static uint64_t default_bucket(uint64_t text)
{
    uint64_t b = GMON_DEFAULT_BUCKET;
    while (text / b >= GMON_MAX_DEFAULT_BINS)
        b *= 2;
    return b;
}

/* The histogram over the program's .text: the periods sampled there. */
/* An emulated run has no samples but every function's exact self time,
 * in cycles or instructions (or in time from cycles at a clock rate):
 * the histogram then holds those, each function's at its first bin, in
 * counts of a power of ten of the unit that keep the largest under 65536;
 * the dimension names the unit ("Mcycles"), the rate the counts per unit.
 * Other traces without samples keep an empty histogram (their times are
 * wall time, not the program's CPU time). */
static void exact_histogram(const struct gmon *g, const struct np_model *m, uint16_t *bins, uint64_t low,
                            uint64_t bucket, char dimension[NP_GMON_DIMEN_LEN], char *abbrev, uint32_t *rate)
{
    size_t np, nf;
    const struct np_process *procs = np_model_processes(m, &np);
    enum np_time_unit unit = np_model_time_unit(m);
    if (unit == NP_UNIT_NS && !(np && procs[0].clock && strcmp(procs[0].clock, "cycles") == 0))
        return;
    const struct np_function *fns = np_model_functions(m, &nf);
    uint64_t most = 0;
    for (size_t i = 0; i < nf; i++)
        if (fns[i].calls && in_program(g, fns[i].module) && fns[i].self_ns > most)
            most = fns[i].self_ns;
    /* the units a count stands for: 10^k (at most 10^9, beyond which the
     * bins saturate and say so) */
    uint64_t per = 1;
    while (most / per > NP_GMON_BIN_MAX && per < 1000000000)
        per *= 10;
    /* the dimension: seconds for ns; else the unit times the smallest
     * 10^(3j) at least PER, so that the rate, counts per dimension unit,
     * is a whole number */
    static const char *const prefix[] = { "", "k", "M", "G" };
    uint64_t scale = 1;
    unsigned j = 0;
    memset(dimension, 0, NP_GMON_DIMEN_LEN);
    if (unit == NP_UNIT_NS) {
        scale = 1000000000;
        memcpy(dimension, "seconds", 7);
        *abbrev = 's';
    } else {
        while (scale < per)
            scale *= 1000, j++;
        snprintf(dimension, NP_GMON_DIMEN_LEN, "%s%s", prefix[j], unit == NP_UNIT_CYCLES ? "cycles" : "instructions");
        *abbrev = unit == NP_UNIT_CYCLES ? 'c' : 'i';
    }
    *rate = (uint32_t)(scale / per);
    unsigned saturated = 0;
    for (size_t i = 0; i < nf; i++) {
        const struct np_function *f = &fns[i];
        if (!f->calls || !in_program(g, f->module) || f->address < g->elf.start || f->address >= g->elf.end)
            continue;
        uint16_t *bin = &bins[(f->address - low) / bucket];
        uint64_t v = *bin + (f->self_ns + per / 2) / per;
        saturated += v > NP_GMON_BIN_MAX;
        *bin = (uint16_t)(v > NP_GMON_BIN_MAX ? NP_GMON_BIN_MAX : v);
    }
    if (saturated)
        say(g->o, NP_DIAG_WARNING, "gmon: the self time of %u functions cut to %u x %" PRIu64 " %s a bin", saturated,
            NP_GMON_BIN_MAX, per, unit == NP_UNIT_NS ? "ns" : unit == NP_UNIT_CYCLES ? "cycles" : "instructions");
}

static int write_histogram(const struct gmon *g, const struct np_model *m)
{
    size_t npcs;
    const struct np_sample_pc *pcs = np_model_sample_pcs(m, &npcs);
    const struct np_model_sampling *sampling = np_model_sampling(m);
    uint64_t bucket = g->o->bucket ? g->o->bucket : default_bucket(g->elf.end - g->elf.start);
    uint64_t low = g->elf.start & ~(bucket - 1);
    uint64_t high = (g->elf.end + bucket - 1) & ~(bucket - 1);
    uint64_t nbins = (high - low) / bucket;
    uint16_t *bins = calloc(nbins, sizeof *bins);
    if (!bins)
        return NP_EXPORT_ENOMEM;
    uint64_t outside = 0, total = 0, saturated = 0;
    for (size_t i = 0; i < npcs; i++) {
        const struct np_sample_pc *pc = &pcs[i];
        total += pc->periods;
        if (!in_program(g, pc->module) || pc->address < g->elf.start || pc->address >= g->elf.end) {
            outside += pc->periods;
            continue;
        }
        uint16_t *bin = &bins[(pc->address - low) / bucket];
        if (pc->periods > (uint64_t)(NP_GMON_BIN_MAX - *bin)) {
            saturated += *bin + pc->periods - NP_GMON_BIN_MAX;
            *bin = NP_GMON_BIN_MAX;
        } else {
            *bin += (uint16_t)pc->periods;
        }
    }
    char dimension[NP_GMON_DIMEN_LEN] = "seconds", abbrev = 's';
    uint32_t rate = sampling->hz ? sampling->hz : GMON_RATE_UNSAMPLED;
    if (!npcs)
        exact_histogram(g, m, bins, low, bucket, dimension, &abbrev, &rate);
    putc(NP_GMON_TAG_TIME_HIST, g->out);
    put_vma(g, low);
    put_vma(g, high);
    put_u32(g, nbins);
    put_u32(g, rate);
    fwrite(dimension, 1, sizeof dimension, g->out);
    putc(abbrev, g->out);
    for (uint64_t i = 0; i < nbins; i++)
        put_uint(g, bins[i], 2);
    free(bins);
    if (outside)
        say(g->o, NP_DIAG_WARNING, "gmon: sampled periods outside the .text of %s left out: %" PRIu64 " of %" PRIu64,
            g->program, outside, total);
    if (saturated)
        say(g->o, NP_DIAG_WARNING,
            "gmon: %" PRIu64 " sampled periods lost: histogram bins hold at most %u (gprof's are 16-bit)", saturated,
            NP_GMON_BIN_MAX);
    return 0;
}

struct gmon_arc {
    uint64_t from, self, count;
};

static int arc_cmp(const void *a, const void *b)
{
    const struct gmon_arc *x = a, *y = b;
    if (x->from != y->from)
        return (x->from > y->from) - (x->from < y->from);
    return (x->self > y->self) - (x->self < y->self);
}

/* The exact calls between functions of the program, by caller and callee
 * address (none when the model was estimated from samples: its arcs then
 * count samples, not calls). */
static int write_arcs(const struct gmon *g, const struct np_model *m)
{
    if (np_model_estimated(m))
        return 0;
    size_t na, n = 0;
    const struct np_arc *arcs = np_model_arcs(m, &na);
    const struct np_function *fns = np_model_functions(m, &(size_t){ 0 });
    struct gmon_arc *kept = malloc((na ? na : 1) * sizeof *kept);
    if (!kept)
        return NP_EXPORT_ENOMEM;
    uint64_t out_arcs = 0, out_calls = 0, saturated = 0;
    for (size_t i = 0; i < na; i++) {
        const struct np_arc *a = &arcs[i];
        if (a->caller == NP_NONE || !a->calls)
            continue;
        const struct np_function *from = &fns[a->caller], *to = &fns[a->callee];
        if (!in_program(g, from->module) || !in_program(g, to->module)) {
            out_arcs++;
            out_calls += a->calls;
            continue;
        }
        saturated += a->calls > UINT32_MAX;
        kept[n++] = (struct gmon_arc){ from->address, to->address, a->calls > UINT32_MAX ? UINT32_MAX : a->calls };
    }
    qsort(kept, n, sizeof *kept, arc_cmp);
    for (size_t i = 0; i < n; i++) {
        putc(NP_GMON_TAG_CG_ARC, g->out);
        put_vma(g, kept[i].from);
        put_vma(g, kept[i].self);
        put_u32(g, kept[i].count);
    }
    free(kept);
    if (out_arcs)
        say(g->o, NP_DIAG_WARNING,
            "gmon: call arcs from or to functions outside %s left out: %" PRIu64 " (%" PRIu64 " calls)", g->program,
            out_arcs, out_calls);
    if (saturated)
        say(g->o, NP_DIAG_WARNING, "gmon: %" PRIu64 " call arcs over %" PRIu32 " calls written as %" PRIu32,
            saturated, UINT32_MAX, UINT32_MAX);
    return 0;
}

/* The blocks of the program, if any: one BB_COUNT record. */
static int write_blocks(const struct gmon *g, const struct np_model *m)
{
    struct np_gmon_bb *bb;
    size_t n, all;
    np_model_blocks(m, &all);
    if (np_gmon_bb_counts(m, g->program, &bb, &n))
        return NP_EXPORT_ENOMEM;
    if (n) {
        putc(NP_GMON_TAG_BB_COUNT, g->out);
        put_u32(g, n);
        for (size_t i = 0; i < n; i++) {
            put_vma(g, bb[i].address);
            put_vma(g, bb[i].count);
        }
    }
    if (n < all)
        say(g->o, NP_DIAG_WARNING, "gmon: basic blocks outside %s left out: %zu of %zu", g->program, all - n, all);
    free(bb);
    return 0;
}

/* Whether the model holds anything a gmon.out can: calls, samples, blocks. */
static bool has_profile(const struct np_model *m)
{
    size_t nf, nb, npcs;
    const struct np_function *fns = np_model_functions(m, &nf);
    np_model_blocks(m, &nb);
    np_model_sample_pcs(m, &npcs);
    if (npcs)
        return true;
    for (size_t i = 0; i < nf; i++)
        if (fns[i].calls)
            return true;
    return nb > 0;
}

int np_export_gmon(const struct np_model *m, const struct np_export_options *o, FILE *out)
{
    struct gmon g = { .out = out, .o = o };
    if (!has_profile(m)) {
        say(o, NP_DIAG_ERROR, "%s", "gmon: the trace has no samples, calls nor basic-block counts");
        return NP_EXPORT_FAILED;
    }
    int rc = pick_program(&g, m);
    if (rc)
        return rc;
    static const uint8_t spare[NP_GMON_HEADER_SIZE - NP_GMON_MAGIC_LEN - 4];
    fwrite(NP_GMON_MAGIC, 1, NP_GMON_MAGIC_LEN, out);
    put_u32(&g, NP_GMON_VERSION);
    fwrite(spare, 1, sizeof spare, out);
    if ((rc = write_histogram(&g, m)))
        return rc;
    if ((rc = write_arcs(&g, m)))
        return rc;
    return write_blocks(&g, m);
}
