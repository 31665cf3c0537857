/* modules.c - the one walk of the loaded modules (modules.h). */
#define _GNU_SOURCE
#include "modules.h"
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "../../common/trace_format.h"

/* The GNU build-id in a PT_NOTE segment, read from memory. */
static const uint8_t *build_id(const uint8_t *p, const uint8_t *e, size_t align, size_t *len)
{
    while (p + 12 <= e) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, p, 4);
        memcpy(&descsz, p + 4, 4);
        memcpy(&type, p + 8, 4);
        const uint8_t *name = p + 12;
        const uint8_t *desc = name + ((namesz + align - 1) & ~(align - 1));
        const uint8_t *next = desc + ((descsz + align - 1) & ~(align - 1));
        if (next > e || next <= p)
            break;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            *len = descsz;
            return desc;
        }
        p = next;
    }
    return NULL;
}

/* INFO's code range and build-id into M; 0 when it has no code. */
static int describe(const struct dl_phdr_info *info, struct np_posix_module *m)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    *m = (struct np_posix_module){ .bias = info->dlpi_addr, .info = info };
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (ph->p_vaddr < lo)
                lo = ph->p_vaddr;
            if (ph->p_vaddr + ph->p_memsz > hi)
                hi = ph->p_vaddr + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE && !m->build_id) {
            const uint8_t *p = (const uint8_t *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
            m->build_id = build_id(p, p + ph->p_memsz, ph->p_align >= 8 ? 8 : 4, &m->build_id_len);
        }
    }
    if (hi <= lo)
        return 0;
    m->start = m->bias + lo;
    m->end = m->bias + hi;
    return 1;
}

const char *np_posix_module_path(const struct np_posix_module *m, char *buf)
{
    const struct dl_phdr_info *info = m->info;
    const char *name = info->dlpi_name;
    if (info->dlpi_addr && info->dlpi_addr == (ElfW(Addr))getauxval(AT_SYSINFO_EHDR))
        return NP_TRACE_VDSO; /* the kernel's vDSO: no file, readers use their own (trace-format.md) */
    if (!name || !name[0]) { /* the executable */
        ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX - 1);
        buf[n > 0 ? n : 0] = 0;
        return buf;
    }
    if (name[0] != '/') /* dlopen'ed by a relative path */
        return realpath(name, buf);
    return name;
}

struct walk {
    int (*fn)(struct np_posix_module *m, void *ctx);
    void *ctx;
    unsigned long long *adds;
    int first, rc;
};

static int walk_one(struct dl_phdr_info *info, size_t size, void *data)
{
    struct walk *w = data;
    if (w->first) {
        w->first = 0;
        if (w->adds && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
            if (info->dlpi_adds == *w->adds)
                return 1; /* nothing loaded since the last look */
            *w->adds = info->dlpi_adds;
        }
    }
    struct np_posix_module m;
    if (!describe(info, &m))
        return 0;
    return w->rc = w->fn(&m, w->ctx);
}

int np_posix_modules(int (*fn)(struct np_posix_module *m, void *ctx), void *ctx, unsigned long long *adds)
{
    struct walk w = { fn, ctx, adds, 1, 0 };
    dl_iterate_phdr(walk_one, &w);
    return w.rc;
}

struct find {
    uintptr_t addr;
    struct np_posix_module *out;
    char *buf;
    const char *path;
};

static int holds(struct np_posix_module *m, void *ctx)
{
    struct find *f = ctx;
    if (f->addr < m->start || f->addr >= m->end)
        return 0;
    *f->out = *m;
    f->path = np_posix_module_path(m, f->buf);
    return 1;
}

int np_posix_module_of(uintptr_t addr, struct np_posix_module *m, char *buf)
{
    struct find f = { addr, m, buf, NULL };
    if (!np_posix_modules(holds, &f, NULL) || !f.path)
        return 0;
    if (f.path != buf) {
        strncpy(buf, f.path, PATH_MAX - 1);
        buf[PATH_MAX - 1] = 0;
    }
    return 1;
}
