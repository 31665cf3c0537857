/* elf_symtab.c - an ELF file's functions (rules in elf_symtab.h). */
#define _GNU_SOURCE
#include "elf_symtab.h"
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "../port/posix/lazy.h" /* libnanoprof.so: libelf loaded when first used */

#define THUMB_BIT 1u

static int func_cmp(const void *a, const void *b)
{
    const struct np_elf_func *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static unsigned bind_rank(unsigned bind)
{
    return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* Adds the functions of symbol table SCN of ELF to OUT (room for *CAP);
 * TABLE_RANK 0 for a .symtab, 1 for .dynsym. -1 when out of memory. */
static int add_table(struct np_elf_funcs *out, size_t *cap, Elf *elf, Elf_Scn *scn, unsigned table_rank, bool thumb)
{
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
        return 0;
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < count; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s))
            break;
        unsigned type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value)
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
        if (!name || !*name || *name == '@')
            continue;
        size_t len = strcspn(name, "@");
        if (out->n == *cap) {
            size_t n = *cap ? 2 * *cap : 256;
            struct np_elf_func *v = realloc(out->v, n * sizeof *v);
            if (!v)
                return -1;
            out->v = v;
            *cap = n;
        }
        out->v[out->n++] = (struct np_elf_func){
            .addr = thumb ? s.st_value & ~(uint64_t)THUMB_BIT : s.st_value,
            .size = s.st_size,
            .name = name,
            .len = (uint32_t)(len < UINT32_MAX ? len : UINT32_MAX),
            .rank = table_rank * 8 + bind_rank(GELF_ST_BIND(s.st_info)) * 2 + (name[len] != 0),
        };
    }
    return 0;
}

/* Adds every table of TYPE in ELF; sets *FOUND when there is one. */
static int add_tables(struct np_elf_funcs *out, size_t *cap, Elf *elf, unsigned type, unsigned rank, bool thumb,
                      bool *found)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
            continue;
        *found = true;
        if (add_table(out, cap, elf, scn, rank, thumb) < 0)
            return -1;
    }
    return 0;
}

int np_elf_funcs_read(Elf *elf, Elf *debug, struct np_elf_funcs *out)
{
    GElf_Ehdr eh;
    size_t cap = 0;
    bool symtab = false, dynsym = false, dbg = false;
    *out = (struct np_elf_funcs){ 0 };
    bool thumb = gelf_getehdr(elf, &eh) && eh.e_machine == EM_ARM;
    if (add_tables(out, &cap, elf, SHT_SYMTAB, 0, thumb, &symtab) < 0 ||
        add_tables(out, &cap, elf, SHT_DYNSYM, 1, thumb, &dynsym) < 0 ||
        (!symtab && debug && add_tables(out, &cap, debug, SHT_SYMTAB, 0, thumb, &dbg) < 0)) {
        np_elf_funcs_free(out);
        return -1;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, func_cmp);
    size_t n = 0; /* one function per address: the best ranked */
    for (size_t i = 0; i < out->n; i++)
        if (!n || out->v[n - 1].addr != out->v[i].addr)
            out->v[n++] = out->v[i];
    out->n = n;
    return 0;
}

void np_elf_funcs_free(struct np_elf_funcs *f)
{
    free(f->v);
    *f = (struct np_elf_funcs){ 0 };
}

ptrdiff_t np_elf_funcs_find(const struct np_elf_funcs *f, uint64_t addr)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) { /* the first function starting after ADDR */
        size_t mid = lo + (hi - lo) / 2;
        if (f->v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct np_elf_func *s = &f->v[lo - 1];
    return addr == s->addr || addr - s->addr < s->size ? (ptrdiff_t)lo - 1 : -1;
}
