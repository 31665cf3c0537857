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

/* Room in OUT (*CAP entries) for one more function: its place, or NULL
 * when out of memory. */
static struct np_elf_func *func_room(struct np_elf_funcs *out, size_t *cap)
{
    if (out->n == *cap) {
        size_t n = *cap ? 2 * *cap : 256;
        struct np_elf_func *v = realloc(out->v, n * sizeof *v);
        if (!v)
            return NULL;
        out->v = v;
        *cap = n;
    }
    return &out->v[out->n];
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
        struct np_elf_func *f = func_room(out, cap);
        if (!f)
            return -1;
        out->n++;
        *f = (struct np_elf_func){
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

/* ---- PLT stubs ------------------------------------------------------------ */

/* Below every symbol at the same address (their ranks end at 13), above a
 * label. */
#define RANK_PLT 14u

struct slot {
    uint64_t at; /* the GOT slot a relocation fills */
    const char *name;
};

static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* The GOT slots ELF's RELA relocations fill with a named symbol's
 * address, sorted, into *OUT; their count, or -1 when out of memory. */
static ptrdiff_t read_slots(Elf *elf, struct slot **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh, symsh;
        Elf_Scn *symscn;
        Elf_Data *data, *syms;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
            !(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
            !(data = elf_getdata(scn, NULL)) || !(syms = elf_getdata(symscn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Rela r;
            GElf_Sym sym;
            const char *name;
            if (!gelf_getrela(data, (int)i, &r))
                break;
            if (!GELF_R_SYM(r.r_info) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
                !(name = elf_strptr(elf, symsh.sh_link, sym.st_name)) || !*name)
                continue;
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                struct slot *v = realloc(*out, c * sizeof *v);
                if (!v) {
                    free(*out);
                    *out = NULL;
                    return -1;
                }
                *out = v;
                cap = c;
            }
            (*out)[n++] = (struct slot){ r.r_offset, name };
        }
    }
    if (n > 1)
        qsort(*out, n, sizeof **out, slot_cmp);
    return (ptrdiff_t)n;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The GOT slot the stub at P (ADDR, N bytes) jumps through, or 0.
 * x86-64: jmp *disp32(%rip), its opcode ff 25 anywhere in the stub (after
 * endbr64, a bnd prefix, or none). AArch64: adrp x16, then ldr x17,
 * [x16, #imm] (after bti c, or none). */
static uint64_t stub_slot(unsigned machine, const uint8_t *p, uint64_t addr, size_t n)
{
    if (machine == EM_X86_64) {
        for (size_t k = 0; k + 6 <= n; k++)
            if (p[k] == 0xff && p[k + 1] == 0x25)
                return addr + k + 6 + (uint64_t)(int64_t)(int32_t)le32(p + k + 2);
    } else if (machine == EM_AARCH64) {
        for (size_t k = 0; k + 8 <= n; k += 4) {
            uint32_t adrp = le32(p + k), ldr = le32(p + k + 4);
            if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
                continue;
            int64_t imm = (int64_t)(((adrp >> 5 & 0x7ffffu) << 2 | (adrp >> 29 & 3u)) << 12);
            if (imm & ((int64_t)1 << 32))
                imm -= (int64_t)1 << 33; /* 21 bits, signed, of 4 KiB pages */
            return ((addr + k) & ~(uint64_t)0xfff) + (uint64_t)imm + ((ldr >> 10 & 0xfffu) << 3);
        }
    }
    return 0;
}

/* Adds NAME@plt for each stub of ELF's PLT sections whose slot a
 * relocation names. -1 when out of memory. */
static int add_plt(struct np_elf_funcs *out, size_t *cap, Elf *elf, unsigned machine)
{
    size_t shstr, cap_owned = out->nowned;
    struct slot *slots = NULL;
    ptrdiff_t nslots = -2; /* (read when there is a PLT) */
    int rc = 0;
    if ((machine != EM_X86_64 && machine != EM_AARCH64) || elf_getshdrstrndx(elf, &shstr) != 0)
        return 0;
    for (Elf_Scn *scn = NULL; !rc && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *sname;
        Elf_Data *data;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
            !(sname = elf_strptr(elf, shstr, sh.sh_name)) ||
            (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") && strcmp(sname, ".plt.got")) ||
            !(data = elf_getdata(scn, NULL)) || !data->d_buf || data->d_size < sh.sh_size)
            continue;
        if (nslots == -2 && (nslots = read_slots(elf, &slots)) < 0)
            return -1;
        /* a stub's size: the section's entries (AArch64 gives none: 16) */
        size_t es = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
        for (size_t off = 0; !rc && off + es <= sh.sh_size; off += es) {
            uint64_t at = stub_slot(machine, (const uint8_t *)data->d_buf + off, sh.sh_addr + off, es);
            struct slot key = { at, NULL }, *s = NULL;
            if (at)
                s = bsearch(&key, slots, (size_t)nslots, sizeof *slots, slot_cmp);
            if (!s)
                continue;
            if (out->nowned == cap_owned) {
                size_t c = cap_owned ? 2 * cap_owned : 64;
                char **owned = realloc(out->owned, c * sizeof *owned);
                if (!owned) {
                    rc = -1;
                    break;
                }
                out->owned = owned;
                cap_owned = c;
            }
            size_t len = strcspn(s->name, "@");
            char *name = malloc(len + 5);
            struct np_elf_func *f = func_room(out, cap);
            if (!name || !f) {
                free(name);
                rc = -1;
                break;
            }
            out->owned[out->nowned++] = name;
            memcpy(name, s->name, len);
            memcpy(name + len, "@plt", 5);
            out->n++;
            *f = (struct np_elf_func){ sh.sh_addr + off, es, name, (uint32_t)(len + 4), RANK_PLT };
        }
    }
    free(slots);
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
    bool ok = gelf_getehdr(elf, &eh) != NULL, thumb = ok && eh.e_machine == EM_ARM;
    if (add_tables(out, &cap, elf, SHT_SYMTAB, 0, thumb, &symtab) < 0 ||
        add_tables(out, &cap, elf, SHT_DYNSYM, 1, thumb, &dynsym) < 0 ||
        (!symtab && debug && add_tables(out, &cap, debug, SHT_SYMTAB, 0, thumb, &dbg) < 0) ||
        (ok && add_plt(out, &cap, elf, eh.e_machine) < 0)) {
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
    for (size_t i = 0; i < f->nowned; i++)
        free(f->owned[i]);
    free(f->owned);
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
