/* source_emu.c - the emulator as a source of events (source_emu.h): its
 * settings parsed; the firmware run by the emulator's driver
 * (emu/driver.h) with the call tracker, whose calls are told to the sink
 * and the trace writer (calls_out.h), its functions named from the ELF's
 * symbols and, with --rtos, its threads from the kernel's. */
#define _GNU_SOURCE
#include "source_emu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/board.h"
#include "symbols.h"
#include "calls_out.h"
#include "sinks.h"
#include "trace_write.h"
#include "rtos.h"
#include "common/parse_units.h"


static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_u64(const char *name, const char *v, uint64_t max, uint64_t *out, char *err, size_t size)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (!*v || *end || errno || x > max || *v == '-')
        return fail(err, size, "bad %s '%s': a number from 0 to %" PRIu64 " is needed", name, v, max);
    *out = x;
    return 0;
}

int np_emu_config_set(struct np_emu_config *c, const char *setting, char *err, size_t errsize)
{
    const char *eq = strchr(setting, '=');
    if (!eq)
        return fail(err, errsize, "bad emulator setting '%s': NAME=VALUE is needed", setting);
    size_t n = (size_t)(eq - setting);
    const char *v = eq + 1;
    uint64_t x;
#define IS(name) (n == sizeof(name) - 1 && memcmp(setting, name, n) == 0)
    if (IS("cpu")) {
        int m = np_cpu_model_parse(v);
        if (m < 0)
            return fail(err, errsize, "unknown CPU '%s': arm7tdmi, arm946e-s, cortex-m0, cortex-m3, cortex-m4 "
                        "or cortex-m33", v);
        c->model = (enum np_cpu_model)m;
        c->model_given = true;
    } else if (IS("board")) {
        const struct np_board *b = np_board_find(v);
        if (strcmp(v, "generic") != 0 && !b)
            return fail(err, errsize, "unknown board '%s': %s or generic", v, np_board_names());
        c->board = b ? b->name : NULL; /* the table's: the setting's text is not kept */
    } else if (IS("max-insns")) {
        if (parse_u64("instruction limit", v, UINT64_MAX, &x, err, errsize) || !x)
            return x ? -1 : fail(err, errsize, "bad instruction limit '%s': at least 1", v);
        c->max_insns = x;
    } else if (IS("irq-every")) {
        if (parse_u64("IRQ period", v, UINT64_MAX, &c->irq_every, err, errsize))
            return -1;
    } else if (IS("thread-switch")) {
        c->thread_switch = *v ? v : NULL;
    } else if (IS("rtos")) {
        if (*v && !np_rtos_known(v))
            return fail(err, errsize, "unknown RTOS '%s': %s", v, NP_RTOS_NAMES);
        c->rtos = *v ? "freertos" : NULL; /* the table's: the setting's text is not kept */
    } else if (IS("n-wait") || IS("s-wait")) {
        if (parse_u64("wait states", v, 1000, &x, err, errsize))
            return -1;
        *(IS("n-wait") ? &c->timing.n_wait : &c->timing.s_wait) = (unsigned)x;
    } else if (IS("ram")) {
        uint64_t bytes = np_parse_size(v);
        if (bytes < 4096 || bytes > (1ull << 31))
            return fail(err, errsize, "bad RAM size '%s': 4k to 2G (k, M or G)", v);
        c->ram_size = (uint32_t)bytes;
    } else if (IS("map")) {
        char *comma;
        errno = 0;
        unsigned long long base = strtoull(v, &comma, 0), size;
        if (errno || comma == v || *comma != ',' || base > UINT32_MAX)
            return fail(err, errsize, "bad --map '%s': ADDR,SIZE (e.g. 0x40000000,4k)", v);
        size = np_parse_size(comma + 1);
        if (!size || size > (1ull << 31) || base + size > (1ull << 32))
            return fail(err, errsize, "bad --map '%s': a size of 1 to 2G within the 4 GiB address space", v);
        if (c->nmap == NP_EMU_MAX_MAPS)
            return fail(err, errsize, "more than %d --map regions", NP_EMU_MAX_MAPS);
        c->map[c->nmap].base = (uint32_t)base;
        c->map[c->nmap].size = (uint32_t)size;
        c->nmap++;
    } else if (IS("clock")) {
        if (parse_u64("clock", v, UINT64_MAX, &c->clock_hz, err, errsize) || !c->clock_hz)
            return c->clock_hz ? -1 : fail(err, errsize, "bad clock '%s': at least 1 Hz", v);
    } else if (IS("real-time")) {
        c->real_time = strcmp(v, "0") != 0;
    } else if (IS("save")) {
        c->save = v;
    } else if (IS("args") || IS("retval")) {
        if (c->nvalue_specs == NP_EMU_MAX_VALUE_SPECS)
            return fail(err, errsize, "more than %d --args and --retval specs", NP_EMU_MAX_VALUE_SPECS);
        c->value_retval[c->nvalue_specs] = IS("retval");
        c->value_spec[c->nvalue_specs++] = v; /* (the caller's text) */
    } else if (IS("console")) {
        if (strcmp(v, "stdout") == 0)
            c->fd_out = 1;
        else if (strcmp(v, "stderr") == 0)
            c->fd_out = 2;
        else
            return fail(err, errsize, "bad console '%s': stdout or stderr", v);
    } else {
        return fail(err, errsize, "unknown emulator setting '%.*s'", (int)n, setting);
    }
#undef IS
    return 0;
}

/* ---- the adapter -------------------------------------------------------------------- */

/* A function's name as the views give it (a C++ one demangled), for the
 * driver's lines. */
static const char *display_name(void *ctx, uint32_t addr, char *buf, size_t size)
{
    struct np_symbol sym;
    char *full = NULL, *short_name = NULL;
    np_addrspace_lookup(ctx, addr, &sym);
    if (!sym.name)
        return NULL;
    bool cxx = np_demangle(sym.name, &full, &short_name) > 0;
    snprintf(buf, size, "%s", cxx ? short_name : sym.name);
    free(full);
    free(short_name);
    return buf;
}

static int refusal_status(enum np_emu_refusal why)
{
    return why == NP_EMU_BAD_OPTION ? NP_TRACE_EOPTION : why == NP_EMU_NO_MEMORY ? NP_TRACE_ENOMEM
                                                                                 : NP_TRACE_ENOTTRACE;
}

int np_emu_run(const char *elf, const struct np_emu_config *cfg, enum np_metric metric, double clock_hz,
               const struct np_event_sink *sink, const struct np_trace_hooks *hooks, struct np_trace_summary *summary,
               struct np_emu_result *r)
{
    struct np_emu_config defaults;
    if (!cfg) {
        np_emu_config_init(&defaults);
        cfg = &defaults;
    }
    struct np_trace_summary local;
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    memset(r, 0, sizeof *r);
    summary->files = summary->files_read = 1;
    if (metric == NP_METRIC_COUNT && clock_hz > 0) {
        snprintf(summary->message, sizeof summary->message,
                 "a clock rate turns the clock's cycles into time, not the second counter (instructions)");
        if (hooks && hooks->diag)
            hooks->diag(hooks->ctx, NP_DIAG_ERROR, summary->message);
        return summary->status = NP_TRACE_EOPTION;
    }
    struct np_emu *emu;
    char err[NP_TRACE_MSG_MAX];
    enum np_emu_refusal why = np_emu_load(&emu, elf, cfg, err, sizeof err);
    if (why != NP_EMU_READY) {
        snprintf(summary->message, sizeof summary->message, "%s", err);
        return summary->status = refusal_status(why);
    }
    const struct np_image *img = np_emu_image(emu);
    struct np_cpu *cpu = np_emu_cpu(emu);
    int status = NP_TRACE_OK;
    struct np_rtos *rtos = NULL;
    struct np_calltrack *trk = NULL;
    /* --rtos: the kernel's structures found before the first instruction */
    if (cfg->rtos && !(rtos = np_rtos_open(cfg->rtos, elf, err, sizeof err))) {
        snprintf(summary->message, sizeof summary->message, "%s", err);
        np_emu_free(emu);
        return summary->status = NP_TRACE_EOPTION;
    }
    char *path = realpath(elf, NULL);
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_addrspace *as = syms ? np_addrspace_new(syms) : NULL;
    struct np_trace_module mod = { 0, img->text_lo, img->text_hi, img->build_id, img->build_id_len, path ? path : elf };
    /* the calls in cycles and instructions: to the sink in its metric, and
     * as they are to the trace file (-o) */
    struct np_calls_metric view = { sink, metric, clock_hz > 0 ? 1e9 / clock_hz : 0 };
    struct np_event_sink view_sink = np_calls_metric_sink(&view), file_sink, both;
    struct np_trace_write_sink *ws = cfg->save ? np_trace_write_sink_new(cfg->save, NULL, NULL) : NULL;
    if (ws)
        file_sink = np_trace_write_sink(ws);
    struct np_sink_tee tee = { ws ? &file_sink : NULL, sink ? &view_sink : NULL };
    both = np_sink_tee(&tee);
    struct np_calls_out out = { .sink = &both, .insns_now = &cpu->insns };
    if (!as || np_addrspace_map(as, &mod) != 0 || (cfg->save && !ws)) {
        status = NP_TRACE_ENOMEM;
        goto out;
    }

    /* --args, --retval: the registers as the tracker sees them */
    struct np_calls_values values;
    bool with_values = cfg->nvalue_specs > 0;
    if (with_values) {
        if (np_calls_values_init(&values, cfg->value_spec, cfg->value_retval, cfg->nvalue_specs, syms, as, cpu->r,
                                 err, sizeof err)) {
            np_calls_values_free(&values);
            snprintf(summary->message, sizeof summary->message, "%s", err);
            status = NP_TRACE_EOPTION;
            goto out;
        }
        out.values = &values;
    }
    /* the process, as a trace of it would begin */
    const char *self[1] = { elf };
    const char *const *argv = cfg->argv && cfg->argc > 0 ? cfg->argv : self;
    struct np_trace_process proc = { 0 };
    proc.file = elf;
    proc.pid = 1;
    proc.ns_per_tick = proc.info_ns_per_tick = 1.0;
    proc.clock = "cycles";
    proc.time_unit = NP_UNIT_CYCLES;
    proc.counted = true;
    proc.count_unit = NP_UNIT_INSNS;
    proc.argc = (unsigned)(cfg->argv && cfg->argc > 0 ? cfg->argc : 1);
    proc.argv = argv;
    proc.has_end = true; /* at the last event: END says it (end_ns 0) */
    if (np_calls_out_sink_rc(&out, both.begin(both.ctx, &proc)) ||
        np_calls_out_sink_rc(&out, both.module(both.ctx, &mod)))
        goto told;

    struct np_calltrack_out hooks_out = np_calls_out_hooks(&out);
    struct np_calltrack_funcs funcs = np_calls_funcs(as);
    if (rtos) {
        funcs.thread_name = np_rtos_thread_name;
        funcs.thread_ctx = rtos;
    }
    struct np_calltrack_options topt = { 0 };
    topt.keep_args = with_values;
    if (cfg->thread_switch && !(topt.switch_fn = (uint32_t)np_addrspace_address_of(as, cfg->thread_switch))) {
        snprintf(r->error, sizeof r->error, "no function %s in %s (--thread-switch)", cfg->thread_switch, elf);
        r->failed = true;
        r->model = cpu->model;
        goto told;
    }
    if (!(trk = np_calltrack_new(&hooks_out, &funcs, &topt))) {
        status = NP_TRACE_ENOMEM;
        goto told;
    }
    if (with_values)
        values.trk = trk;
    struct np_emu_names names = { as, display_name };
    np_emu_go(emu, trk, &names, r);
    np_calltrack_finish(trk, cpu);
    r->calls = *np_calltrack_stats(trk);
    if (out.sink_rc) { /* the run stopped for the sinks: said by the status */
        r->failed = false;
        r->error[0] = 0;
    }
told:
    status = np_calls_out_end(&out, status);
out:
    if (out.values)
        np_calls_values_free(out.values);
    if (ws) {
        char werr[NP_TRACE_MSG_MAX];
        if (np_trace_write_sink_close(ws, werr, sizeof werr) && (status == NP_TRACE_OK || status == NP_TRACE_EIO)) {
            snprintf(summary->message, sizeof summary->message, "%s", werr);
            status = NP_TRACE_EIO;
        }
    }
    np_calltrack_free(trk);
    np_addrspace_free(as);
    np_symbols_free(syms);
    free(path);
    np_rtos_free(rtos);
    np_emu_free(emu);
    summary->status = status;
    (void)hooks;
    return status;
}

int np_source_emu_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    struct np_emu_config c;
    np_emu_config_init(&c);
    /* a view reading firmware keeps its own output clean */
    c.fd_out = 2;
    char err[256];
    const char *args[64];
    int nargs = 0;
    args[nargs++] = path;
    if (o && o->args)
        for (const char *const *a = o->args; *a; a++) {
            if (strncmp(*a, "arg=", 4) == 0) {
                if (nargs < 63)
                    args[nargs++] = *a + 4;
            } else if (np_emu_config_set(&c, *a, err, sizeof err) != 0) {
                memset(summary, 0, sizeof *summary);
                snprintf(summary->message, sizeof summary->message, "%s", err);
                summary->status = NP_TRACE_EOPTION;
                return summary->status;
            }
        }
    args[nargs] = NULL;
    c.argv = args;
    c.argc = nargs;
    struct np_emu_result r;
    int rc = np_emu_run(path, &c, o ? o->metric : NP_METRIC_TIME, o ? o->clock_hz : 0, sink, hooks, summary, &r);
    if (rc == NP_TRACE_OK && r.failed && hooks && hooks->diag) {
        char line[NP_TRACE_MSG_MAX];
        snprintf(line, sizeof line, "%.200s: %.280s (the profile stops there)", path, r.error);
        hooks->diag(hooks->ctx, NP_DIAG_WARNING, line);
    }
    return rc;
}
