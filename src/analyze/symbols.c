/* symbols.c - ELF symbol tables and DWARF lines (design in symbols.h).
 *
 * Names point into libelf's string tables (elf_strptr checks that each is
 * terminated inside its section), so each cached file keeps its Elf handle
 * and descriptor open until np_symbols_free. Files are opened with
 * O_NONBLOCK and must be regular: a trace naming a FIFO or a device cannot
 * make the analysis block.
 *
 * A stripped file (no .symtab, or no DWARF) is paired with its separate
 * debug file where one is installed (common/debug_file.h); its
 * .symtab and DWARF then stand in for the file's. */
#define _GNU_SOURCE
#include "symbols.h"
#include "containers.h"
#include "textfmt.h"
#include "common/debug_file.h"
#include "common/demangle.h"
#include "common/elf_symtab.h"
#include "common/trace_format.h"
#include <elf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

/* The address range of a compile unit: .debug_aranges is optional (Clang
 * leaves it out), so the units' own ranges are collected once per file. */
struct cu_range {
    uint64_t start, end;
    Dwarf_Die cu;
};

struct elf_file {
    char *path;
    bool usable;       /* opened and parsed */
    bool warned;       /* a build-id mismatch was reported */
    int fd;
    Elf *elf;
    Dwarf *dwarf;
    bool dwarf_tried;
    struct cu_range *cus; /* sorted by start */
    size_t ncus;
    uint8_t build_id[NP_BUILD_ID_MAX];
    size_t build_id_len;
    struct np_elf_funcs funcs; /* its functions, read as the runtime reads them */
    const char **names;        /* each one's name, terminated */
    void *image;       /* the vDSO: a copy of this process's */
    char **owned;      /* names made here (versions cut off) */
    size_t n_owned, cap_owned;
    /* its separate debug file, when it has one (-1 and NULL otherwise) */
    int dbg_fd;
    Elf *dbg_elf;
};

struct np_symbols {
    np_symbols_warn_fn warn;
    void *ctx;
    struct elf_file **files;
    size_t nfiles, cap;
    struct np_hmap by_path; /* hash of path -> index in files */
};

struct mapping {
    uint64_t start, end, bias;
    struct elf_file *file; /* NULL when unusable (the address is still in a module) */
    const char *path;      /* the file's cached path */
};

struct np_addrspace {
    struct np_symbols *s;
    struct mapping *maps;
    size_t n, cap;
    bool sorted;
};

static void warn(struct np_symbols *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct np_symbols *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (!s->warn)
        return;
    va_start(ap, fmt);
    s->warn(s->ctx, np_format_line(line, sizeof line, fmt, ap)); /* paths come from the trace */
    va_end(ap);
}

/* The index of the last of N sorted elements of STRIDE bytes at BASE whose
 * u64 at offset OFF is <= KEY, or -1. */
static ptrdiff_t last_at_most(const void *base, size_t n, size_t stride, size_t off, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t v;
        memcpy(&v, (const char *)base + mid * stride + off, sizeof v);
        if (v <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

/* ---- reading one ELF file ---------------------------------------------- */

/* Opens PATH (a regular file only: never blocks) as ELF into *FD and
 * *ELF, which the caller ends and closes even on failure (-1 and NULL
 * when not opened); fills EH. Returns NULL or why it cannot be read. */
static const char *open_elf(const char *path, int *fd, Elf **elf, GElf_Ehdr *eh)
{
    struct stat st;
    *elf = NULL;
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return strerror(errno);
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode))
        return "not a regular file";
    *elf = elf_begin(*fd, ELF_C_READ, NULL);
    if (!*elf || elf_kind(*elf) != ELF_K_ELF)
        return "not an ELF file";
    if (!gelf_getehdr(*elf, eh))
        return elf_errmsg(-1);
    return NULL;
}

/* Parses F->elf; returns NULL or why it cannot be used. */
static const char *parse_file(struct elf_file *f)
{
    bool symtab = false;
    f->build_id_len = np_elf_build_id(f->elf, f->build_id, sizeof f->build_id);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
        GElf_Shdr sh;
        symtab |= gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
    }
    /* stripped: the debug file's .symtab stands in for the file's (and its
     * DWARF, for lines) */
    if (!symtab || !np_elf_section(f->elf, ".debug_info"))
        f->dbg_elf = np_debug_file_open(f->elf, f->path, &f->dbg_fd);
    if (np_elf_funcs_read(f->elf, f->dbg_elf, &f->funcs) < 0 ||
        (f->funcs.n && !(f->names = malloc(f->funcs.n * sizeof *f->names))))
        return "out of memory";
    for (size_t i = 0; i < f->funcs.n; i++) {
        const struct np_elf_func *fn = &f->funcs.v[i];
        f->names[i] = fn->name;
        if (fn->name[fn->len]) { /* versioned: the name without its version */
            char *plain = strndup(fn->name, fn->len);
            if (!plain || NP_GROW(f->owned, f->cap_owned, f->n_owned + 1) < 0) {
                free(plain);
                return "out of memory";
            }
            f->names[i] = f->owned[f->n_owned++] = plain;
        }
    }
    f->usable = true;
    return NULL;
}

/* Opens and parses F->path; returns NULL or why it cannot be used. */
static const char *load_file(struct elf_file *f)
{
    GElf_Ehdr eh;
    /* A trace recorded on another system (a board, qemu-user) names its
     * libraries as they were there: NANOPROF_SYSROOT, as gdb's sysroot, is
     * where this one keeps that system's files (a build-id that differs
     * from the recorded one is said, as for any file). */
    const char *root = getenv("NANOPROF_SYSROOT");
    if (root && *root && f->path[0] == '/') {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s%s", root, f->path);
        if (n > 0 && (size_t)n < sizeof path && !open_elf(path, &f->fd, &f->elf, &eh))
            return parse_file(f);
        if (f->elf)
            elf_end(f->elf);
        if (f->fd >= 0)
            close(f->fd);
        f->elf = NULL;
        f->fd = -1;
    }
    const char *why = open_elf(f->path, &f->fd, &f->elf, &eh);
    return why ? why : parse_file(f);
}

/* The kernel's vDSO has no file: this process's own stands in for the
 * recorded one, when their build-ids say they are the same (the trace was
 * recorded under this kernel). A copy of it, as libelf reads memory it
 * may write to. */
static const char *load_vdso(struct elf_file *f)
{
    const uint8_t *image = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!image)
        return "this system has no vDSO";
    GElf_Ehdr eh;
    memcpy(&eh, image, sizeof eh); /* the native class: checked by libelf below */
    size_t size = (size_t)eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
    if (eh.e_shoff == 0 || size > (1u << 20) || !(f->image = malloc(size)))
        return "cannot size the vDSO";
    memcpy(f->image, image, size);
    f->elf = elf_memory(f->image, size);
    if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh))
        return "not an ELF image";
    return parse_file(f);
}

static void free_file(struct elf_file *f)
{
    if (f->dwarf)
        dwarf_end(f->dwarf);
    if (f->dbg_elf)
        elf_end(f->dbg_elf);
    if (f->dbg_fd >= 0)
        close(f->dbg_fd);
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    np_elf_funcs_free(&f->funcs);
    free(f->names);
    for (size_t i = 0; i < f->n_owned; i++)
        free(f->owned[i]);
    free(f->owned);
    free(f->image);
    free(f->cus);
    free(f->path);
    free(f);
}

struct path_probe {
    struct np_symbols *s;
    const char *path;
};

static int same_path(void *ctx, uint64_t index)
{
    struct path_probe *p = ctx;
    return strcmp(p->s->files[index]->path, p->path) == 0;
}

/* The cache entry for PATH, loaded on first use; NULL when out of memory. */
static struct elf_file *file_for(struct np_symbols *s, const char *path)
{
    struct path_probe probe = { s, path };
    uint64_t key;
    int64_t i = np_hmap_find_by(&s->by_path, np_hash_bytes(path, strlen(path), 0), same_path, &probe, &key);
    if (i >= 0)
        return s->files[i];
    struct elf_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path)) || NP_GROW(s->files, s->cap, s->nfiles + 1) < 0 ||
        np_hmap_put(&s->by_path, key, s->nfiles) < 0) {
        if (f)
            free(f->path);
        free(f);
        return NULL;
    }
    f->fd = f->dbg_fd = -1;
    s->files[s->nfiles++] = f;
    /* pseudo-files and anonymous mappings have no file to read */
    const char *why = !strcmp(path, NP_TRACE_VDSO) ? load_vdso(f) : path[0] && path[0] != '[' ? load_file(f) : NULL;
    if (why)
        warn(s, "%s: cannot read symbols (%s): its functions are shown as addresses", path, why);
    return f;
}

/* ---- source lines -------------------------------------------------------- */

static int cu_cmp(const void *a, const void *b)
{
    const struct cu_range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Opens F's DWARF and collects its compile units' ranges. */
static void open_dwarf(struct elf_file *f)
{
    f->dwarf_tried = true;
    f->dwarf = dwarf_begin_elf(f->dbg_elf ? f->dbg_elf : f->elf, DWARF_C_READ, NULL);
    Dwarf_CU *unit = NULL;
    Dwarf_Die cu, sub;
    Dwarf_Half version;
    uint8_t type;
    size_t cap = 0;
    while (f->dwarf && dwarf_get_units(f->dwarf, unit, &unit, &version, &type, &cu, &sub) == 0) {
        if (type != DW_UT_compile && type != DW_UT_partial && type != DW_UT_skeleton)
            continue;
        Dwarf_Addr base, start, end;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cu, off, &base, &start, &end)) > 0) {
            if (start >= end || NP_GROW(f->cus, cap, f->ncus + 1) < 0)
                continue;
            f->cus[f->ncus++] = (struct cu_range){ start, end, cu };
        }
    }
    if (f->ncus > 1)
        qsort(f->cus, f->ncus, sizeof *f->cus, cu_cmp);
}

/* The compile unit holding VADDR in F, or NULL. */
static Dwarf_Die *cu_of(struct elf_file *f, uint64_t vaddr)
{
    if (!f->dwarf_tried)
        open_dwarf(f);
    ptrdiff_t c = last_at_most(f->cus, f->ncus, sizeof *f->cus, offsetof(struct cu_range, start), vaddr);
    return c < 0 || vaddr >= f->cus[c].end ? NULL : &f->cus[c].cu;
}

/* The line table's line for VADDR in CU (0 when none), its file in *FILE. */
static unsigned line_at(Dwarf_Die *cu, uint64_t vaddr, const char **file)
{
    Dwarf_Line *l = dwarf_getsrc_die(cu, vaddr);
    int line = 0;
    const char *src;
    if (!l || dwarf_lineno(l, &line) != 0 || line <= 0 || !(src = dwarf_linesrc(l, NULL, NULL)))
        return 0;
    *file = src;
    return (unsigned)line;
}

static void source_line(struct elf_file *f, uint64_t vaddr, struct np_symbol *out)
{
    Dwarf_Die *unit = cu_of(f, vaddr);
    if (!unit)
        return;
    Dwarf_Die cu = *unit;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(&cu, vaddr, &scopes);
    for (int i = 0; i < n; i++) {
        int line = 0;
        if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
            continue;
        const char *file = dwarf_decl_file(&scopes[i]);
        if (file && dwarf_decl_line(&scopes[i], &line) == 0 && line > 0) {
            out->file = file;
            out->line = (unsigned)line;
        }
        break;
    }
    free(scopes);
    if (!out->file)
        out->line = line_at(&cu, vaddr, &out->file);
}

/* ---- the cache and address spaces ----------------------------------------- */

struct np_symbols *np_symbols_new(np_symbols_warn_fn warn_fn, void *ctx)
{
    struct np_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    elf_version(EV_CURRENT);
    s->warn = warn_fn;
    s->ctx = ctx;
    np_hmap_init(&s->by_path);
    return s;
}

void np_symbols_free(struct np_symbols *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++)
        free_file(s->files[i]);
    free(s->files);
    np_hmap_free(&s->by_path);
    free(s);
}

struct np_addrspace *np_addrspace_new(struct np_symbols *s)
{
    struct np_addrspace *a = calloc(1, sizeof *a);
    if (a)
        a->s = s;
    return a;
}

void np_addrspace_free(struct np_addrspace *a)
{
    if (!a)
        return;
    free(a->maps);
    free(a);
}

static bool same_build_id(const struct elf_file *f, const struct np_trace_module *m)
{
    return f->build_id_len == m->build_id_len && !memcmp(f->build_id, m->build_id, m->build_id_len);
}

int np_addrspace_map(struct np_addrspace *a, const struct np_trace_module *m)
{
    struct elf_file *f = file_for(a->s, m->path);
    if (!f || NP_GROW(a->maps, a->cap, a->n + 1) < 0)
        return -1;
    bool usable = f->usable;
    if (usable && m->build_id_len && !same_build_id(f, m)) {
        usable = false;
        if (!f->warned)
            warn(a->s, "%s: %s: its functions are shown as addresses", f->path,
                 f->image ? "recorded under another kernel" : "build-id differs from the recorded one (rebuilt since?)");
        f->warned = true;
    }
    a->maps[a->n++] = (struct mapping){ m->start, m->end, m->bias, usable ? f : NULL, f->path };
    a->sorted = false;
    return 0;
}

static int map_cmp(const void *x, const void *y)
{
    const struct mapping *a = x, *b = y;
    return (a->start > b->start) - (a->start < b->start);
}

static ptrdiff_t find_map(struct np_addrspace *a, uint64_t addr)
{
    if (!a->sorted) {
        if (a->n > 1)
            qsort(a->maps, a->n, sizeof *a->maps, map_cmp);
        a->sorted = true;
    }
    ptrdiff_t i = last_at_most(a->maps, a->n, sizeof *a->maps, offsetof(struct mapping, start), addr);
    return i >= 0 && addr < a->maps[i].end ? i : -1;
}

/* The mapping holding ADDR, or NULL; *VADDR is ADDR as an ELF address of
 * its file (ADDR itself outside every mapping). */
static const struct mapping *mapping_of(struct np_addrspace *a, uint64_t addr, uint64_t *vaddr)
{
    ptrdiff_t m = find_map(a, addr);
    *vaddr = m < 0 ? addr : addr - a->maps[m].bias;
    return m < 0 ? NULL : &a->maps[m];
}

void np_addrspace_lookup(struct np_addrspace *a, uint64_t addr, struct np_symbol *out)
{
    memset(out, 0, sizeof *out);
    const struct mapping *map = mapping_of(a, addr, &out->elf_addr);
    if (!map)
        return;
    out->module = map->path;
    if (!map->file)
        return;
    ptrdiff_t i = np_elf_funcs_find(&map->file->funcs, out->elf_addr);
    if (i < 0)
        return;
    out->name = map->file->names[i];
    out->elf_addr = map->file->funcs.v[i].addr;
    source_line(map->file, out->elf_addr, out);
}

/* The C++ library's demangler (libstdc++'s, linked in: the analysis
 * library links it). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

int np_demangle(const char *name, char **full, char **short_name)
{
    int status = 0;
    *full = *short_name = NULL;
    if (!np_is_mangled(name))
        return 0;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (!d)
        return status == -1 ? -1 : 0; /* -1: out of memory; -2: not a name it knows */
    size_t size = strlen(d) + 1;
    char *s = malloc(size);
    if (!s) {
        free(d);
        return -1;
    }
    np_demangled_short(d, s, size);
    *full = d;
    *short_name = s;
    return 1;
}

/* Whether the function called RAW is the one NAME names: RAW itself, or
 * its demangled signature or short name. */
static bool is_named(const char *raw, const char *name)
{
    char *full, *short_name;
    if (strcmp(raw, name) == 0)
        return true;
    bool same = np_demangle(raw, &full, &short_name) > 0 && (!strcmp(full, name) || !strcmp(short_name, name));
    free(full);
    free(short_name);
    return same;
}

uint64_t np_addrspace_address_of(struct np_addrspace *a, const char *name)
{
    for (size_t m = 0; m < a->n; m++) {
        const struct elf_file *f = a->maps[m].file;
        for (size_t i = 0; f && i < f->funcs.n; i++)
            if (is_named(f->names[i], name))
                return f->funcs.v[i].addr + a->maps[m].bias;
    }
    return 0;
}

const char *np_addrspace_module(struct np_addrspace *a, uint64_t addr, uint64_t *elf_addr)
{
    const struct mapping *map = mapping_of(a, addr, elf_addr);
    return map ? map->path : NULL;
}

void np_addrspace_line(struct np_addrspace *a, uint64_t addr, struct np_source_line *out)
{
    memset(out, 0, sizeof *out);
    const struct mapping *map = mapping_of(a, addr, &out->elf_addr);
    Dwarf_Die *cu = map && map->file ? cu_of(map->file, out->elf_addr) : NULL;
    if (cu)
        out->line = line_at(cu, out->elf_addr, &out->file);
}

unsigned np_symbols_each_function(struct np_symbols *s, void (*each)(void *ctx, const char *name), void *ctx)
{
    unsigned files = 0;
    for (size_t k = 0; k < s->nfiles; k++) {
        const struct elf_file *f = s->files[k];
        if (!f->usable)
            continue;
        files++;
        for (size_t i = 0; i < f->funcs.n; i++)
            each(ctx, f->names[i]);
    }
    return files;
}

/* ---- the text section, for gmon.out --------------------------------------- */

/* Whether the dynamic section of ELF marks a position-independent
 * executable (DF_1_PIE in DT_FLAGS_1). */
static bool has_pie_flag(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Dyn dyn;
            if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
                return true;
        }
    }
    return false;
}

const char *np_elf_text(const char *path, struct np_elf_text *out)
{
    int fd;
    Elf *elf;
    GElf_Ehdr eh;
    elf_version(EV_CURRENT);
    memset(out, 0, sizeof *out);
    const char *why = open_elf(path, &fd, &elf, &eh);
    size_t shstrndx;
    if (!why && elf_getshdrstrndx(elf, &shstrndx) != 0)
        why = elf_errmsg(-1);
    for (Elf_Scn *scn = NULL; !why && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
            strcmp(name, ".text") == 0) {
            out->start = sh.sh_addr;
            out->end = sh.sh_addr + sh.sh_size;
        }
    }
    if (!why && out->end <= out->start)
        why = "no .text section";
    if (!why) {
        out->addr_bytes = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
        out->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
        out->pie = eh.e_type == ET_DYN && has_pie_flag(elf);
        out->executable = eh.e_type == ET_EXEC || out->pie;
    }
    if (elf)
        elf_end(elf);
    if (fd >= 0)
        close(fd);
    return why;
}
