/* elf_symtab.c - an ELF file's functions (rules in elf_symtab.h). */
#define _GNU_SOURCE
#include "elf_symtab.h"
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "../port/posix/lazy.h" /* libnanoprof.so: libelf loaded when first used */

#define THUMB_BIT 1u

/* An ARM mapping symbol (kept while reading only): code ($a, $t, $x)
 * or data ($d) from its address on. */
#define RANK_MAP_CODE 32u
#define RANK_MAP_DATA 64u
#define IS_MAP(rank) ((rank) >= RANK_MAP_CODE)

/* By address; at one address the mapping symbols first, then by rank. */
static int func_cmp(const void *a, const void *b)
{
    const struct np_elf_func *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (IS_MAP(x->rank) != IS_MAP(y->rank))
        return IS_MAP(x->rank) ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static unsigned bind_rank(unsigned bind)
{
    return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* A section's addresses, and whether it holds code. */
struct span {
    uint64_t start, end;
    bool exec;
};

/* The sections of ELF, by index (0 the null section), into *OUT (NULL
 * when there are none); their count, or -1 when out of memory. */
static ptrdiff_t read_spans(Elf *elf, struct span **out)
{
    size_t n = 1;
    *out = NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));)
        n++;
    struct span *v = calloc(n, sizeof *v);
    if (!v)
        return -1;
    size_t i = 1; /* elf_nextscn goes by index from 1 */
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) && i < n; i++) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh))
            v[i] = (struct span){ sh.sh_addr, sh.sh_addr + sh.sh_size, (sh.sh_flags & SHF_EXECINSTR) != 0 };
    }
    *out = v;
    return (ptrdiff_t)n;
}

enum kind { NOT_A_FUNCTION, FUNCTION, LABEL, MAP_CODE, MAP_DATA };

/* What symbol S is: a function (its type); a label of code: a global or
 * weak symbol without a type in a section of code, as hand-written
 * assembly defines them (its size is its section's rest in *BOUND); an
 * ARM mapping symbol ($a, $t, $x and $d, or "$d.1": local, without a
 * type); or none of them. */
static enum kind kind_of(const GElf_Sym *s, const char *name, const struct span *spans, size_t nspans,
                         uint64_t *bound)
{
    unsigned type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
    if (type == STT_FUNC || type == STT_GNU_IFUNC)
        return FUNCTION;
    if (type == STT_NOTYPE && bind == STB_LOCAL && name[0] == '$' && name[1] && strchr("atxd", name[1]) &&
        (!name[2] || name[2] == '.'))
        return name[1] == 'd' ? MAP_DATA : MAP_CODE;
    if (type != STT_NOTYPE || (bind != STB_GLOBAL && bind != STB_WEAK) || name[0] == '$' ||
        s->st_shndx >= nspans || !spans[s->st_shndx].exec || s->st_value < spans[s->st_shndx].start ||
        s->st_value >= spans[s->st_shndx].end)
        return NOT_A_FUNCTION;
    *bound = s->st_size ? s->st_size : spans[s->st_shndx].end - s->st_value;
    return LABEL;
}

/* Adds the functions of symbol table SCN of ELF to OUT (room for *CAP);
 * TABLE_RANK 0 for a .symtab, 1 for .dynsym. -1 when out of memory. */
static int add_table(struct np_elf_funcs *out, size_t *cap, Elf *elf, Elf_Scn *scn, unsigned table_rank, bool thumb,
                     const struct span *spans, size_t nspans)
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
        if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) || s.st_shndx == SHN_UNDEF ||
            !s.st_value)
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
        uint64_t size = s.st_size;
        enum kind kind;
        if (!name || !*name || *name == '@' || !(kind = kind_of(&s, name, spans, nspans, &size)))
            continue;
        static const uint32_t kind_rank[] = { 0, 0, NP_ELF_RANK_LABEL, RANK_MAP_CODE, RANK_MAP_DATA };
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
            .size = size,
            .name = name,
            .len = (uint32_t)(len < UINT32_MAX ? len : UINT32_MAX),
            .rank = kind_rank[kind] + table_rank * 8 +
                    bind_rank(GELF_ST_BIND(s.st_info)) * 2 + (name[len] != 0),
        };
    }
    return 0;
}

/* Adds every table of TYPE in ELF; sets *FOUND when there is one. */
static int add_tables(struct np_elf_funcs *out, size_t *cap, Elf *elf, unsigned type, unsigned rank, bool thumb,
                      bool *found)
{
    struct span *spans = NULL;
    ptrdiff_t nspans = 0;
    int rc = 0;
    for (Elf_Scn *scn = NULL; !rc && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
            continue;
        *found = true;
        if (!spans && (nspans = read_spans(elf, &spans)) < 0)
            rc = -1;
        else
            rc = add_table(out, cap, elf, scn, rank, thumb, spans, (size_t)nspans);
    }
    free(spans);
    return rc;
}

/* Keeps one function per address (the best ranked), and the labels that
 * are code (no mapping symbol says data) and that no sized function
 * holds, each up to the next function or data at most. */
static void one_per_address(struct np_elf_funcs *out)
{
    size_t n = 0;
    uint64_t held = 0; /* the end of the sized functions so far */
    bool data = false; /* the last mapping symbol's */
    for (size_t i = 0; i < out->n; i++) {
        const struct np_elf_func *f = &out->v[i];
        struct np_elf_func *last = n ? &out->v[n - 1] : NULL;
        if (IS_MAP(f->rank)) {
            data = f->rank & RANK_MAP_DATA;
            if (data && last && (last->rank & NP_ELF_RANK_LABEL) && last->size > f->addr - last->addr)
                last->size = f->addr - last->addr;
            continue;
        }
        if (last && last->addr == f->addr)
            continue;
        bool label = f->rank & NP_ELF_RANK_LABEL;
        if (label && (data || f->addr < held))
            continue; /* constants, or a label of a function's code */
        if (!label && f->addr + f->size > held)
            held = f->addr + f->size;
        if (last && (last->rank & NP_ELF_RANK_LABEL) && last->size > f->addr - last->addr)
            last->size = f->addr - last->addr;
        out->v[n++] = *f;
    }
    out->n = n;
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
    one_per_address(out);
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

size_t np_elf_patchable_lists(Elf *elf, GElf_Shdr *out, size_t max)
{
    size_t shstr, n = 0;
    if (elf_getshdrstrndx(elf, &shstr) != 0)
        return 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstr, sh.sh_name)) ||
            (strcmp(name, "__patchable_function_entries") && strcmp(name, "__mcount_loc")))
            continue;
        if (n < max)
            out[n] = sh;
        n++;
    }
    return n;
}
