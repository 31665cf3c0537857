/* source.c - the table of sources (source.h): one line per source, and
 * what every source shares (status texts, unit names). */
#define _GNU_SOURCE
#include "source.h"
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/trace_format.h"
#include "trace_read.h"
#include "source_emu.h"
#include "source_capture.h"
#include "source_qemu_log.h"

const struct np_source np_sources[] = {
    { "emu", "ARM firmware (a 32-bit ELF) run in the emulator (docs/emulator.md)", np_probe_arm_elf,
      np_source_emu_read },
    { "trace", "a trace directory or .npt file (nanoprof record)", np_probe_trace, np_trace_read_with },
    { "capture", "a Cortex-M firmware's captured output holding its trace (elf=FILE names it)", NULL,
      np_source_capture_read },
    { "qemu-log", "qemu-system-arm's log of the blocks a firmware ran, -d exec,nochain (elf=FILE names it)",
      np_probe_qemu_log, np_source_qemu_log_read },
    { NULL, NULL, NULL, NULL },
};

const struct np_source *np_source_find(const char *name)
{
    for (const struct np_source *s = np_sources; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

const struct np_source *np_source_for(const char *path)
{
    for (const struct np_source *s = np_sources; s->name; s++)
        if (s->probe && s->probe(path))
            return s;
    return np_source_find("trace");
}

int np_source_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                   const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    const struct np_source *s = o && o->source ? np_source_find(o->source) : np_source_for(path);
    if (!s) {
        struct np_trace_summary local;
        if (!summary)
            summary = &local;
        memset(summary, 0, sizeof *summary);
        snprintf(summary->message, sizeof summary->message, "%s: no source called '%s'", path, o->source);
        if (hooks && hooks->diag)
            hooks->diag(hooks->ctx, NP_DIAG_ERROR, summary->message);
        summary->status = NP_TRACE_EOPTION;
        return summary->status;
    }
    return s->read(path, o, sink, hooks, summary);
}

/* ---- probes ------------------------------------------------------------------ */

/* The first N bytes of PATH (a regular file) into BUF; false when it is
 * shorter or cannot be read. */
static bool file_starts(const char *path, void *buf, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < n)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    ssize_t got = pread(fd, buf, n, 0);
    close(fd);
    return got == (ssize_t)n;
}

bool np_probe_trace(const char *path)
{
    struct stat st;
    char magic[NP_TRACE_MAGIC_LEN];
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return true;
    return file_starts(path, magic, sizeof magic) && memcmp(magic, NP_TRACE_MAGIC, sizeof magic) == 0;
}

bool np_probe_arm_elf(const char *path)
{
    Elf32_Ehdr eh;
    if (!file_starts(path, &eh, sizeof eh))
        return false;
    /* e_machine is in the file's byte order: little-endian here, as the
     * emulator runs */
    const uint8_t *machine = (const uint8_t *)&eh.e_machine;
    return memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS32 &&
           eh.e_ident[EI_DATA] == ELFDATA2LSB && (machine[0] | machine[1] << 8) == EM_ARM;
}

/* ---- shared texts -------------------------------------------------------------- */

const char *np_trace_strerror(int status)
{
    switch (status) {
    case NP_TRACE_OK: return "no error";
    case NP_TRACE_ETRUNC: return "truncated";
    case NP_TRACE_ECORRUPT: return "corrupt";
    case NP_TRACE_EVERSION: return "unknown version";
    case NP_TRACE_ENOTTRACE: return "not a trace";
    case NP_TRACE_EEMPTY: return "no trace files";
    case NP_TRACE_ENOENT: return "cannot open";
    case NP_TRACE_EIO: return "read error";
    case NP_TRACE_ENOMEM: return "out of memory";
    case NP_TRACE_ESTOP: return "stopped by the consumer";
    case NP_TRACE_EOPTION: return "option not applicable";
    }
    return "unknown status";
}

static const char *const unit_names[] = { [NP_UNIT_NS] = "ns", [NP_UNIT_CYCLES] = "cycles",
                                          [NP_UNIT_INSNS] = "instructions" };

const char *np_time_unit_name(enum np_time_unit u)
{
    return (unsigned)u < sizeof unit_names / sizeof *unit_names ? unit_names[u] : "?";
}

bool np_time_unit_parse(const char *name, enum np_time_unit *out)
{
    for (unsigned u = 0; u < sizeof unit_names / sizeof *unit_names; u++)
        if (strcmp(name, unit_names[u]) == 0) {
            *out = (enum np_time_unit)u;
            return true;
        }
    return false;
}
