/* image.c - loads a firmware ELF for the interpreter with libelf (design
 * in image.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "image.h"
#include "common/trace_format.h" /* np_get_u32, np_get_varint (ULEB128) */

#define PAGE 4096u
#define MAX_RANGES 64

struct range {
    uint64_t lo, hi;           /* [lo, hi) */
    const uint8_t *bytes;      /* file bytes at lo, or NULL */
    uint64_t nbytes;
};

static int fail(char *err, size_t errsize, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errsize)
        vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_386: return "an x86";
    case EM_X86_64: return "an x86-64";
    case EM_AARCH64: return "an AArch64";
    case EM_MIPS: return "a MIPS";
    case EM_PPC: return "a PowerPC";
    case EM_PPC64: return "a PowerPC64";
    case EM_SPARC: return "a SPARC";
#ifdef EM_RISCV
    case EM_RISCV: return "a RISC-V";
#endif
    default: return "a";
    }
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool in_memory(const struct np_image *img, uint64_t addr)
{
    for (unsigned i = 0; i < img->nmem; i++)
        if (addr >= img->mem[i].base && addr < (uint64_t)img->mem[i].base + img->mem[i].size)
            return true;
    return false;
}

/* The symbols the image's layout looks at. */
struct syms {
    bool have_stack, have_end;
    uint32_t stack, end;
    int stack_rank, end_rank;  /* the names' indexes found so far */
};

int np_image_each_symbol(Elf *elf, int (*each)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            const char *name;
            if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
                !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
                continue;
            int rc = each(ctx, name, &sym);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* A symbol of the stack's top or the data's end, the first of each list
 * found kept (an earlier name wins over a later one) */
static int stack_or_end(void *ctx, const char *name, const GElf_Sym *sym)
{
    static const char *const stack_names[] = { "__stack", "_stack", "__StackTop", "_estack", "__stack_top" };
    static const char *const end_names[] = { "end", "_end", "__end__" };
    struct syms *s = ctx;
    for (int k = 0; k < 5; k++)
        if (k < s->stack_rank && !strcmp(name, stack_names[k])) {
            s->stack_rank = k;
            s->stack = (uint32_t)sym->st_value;
            s->have_stack = true;
        }
    for (int k = 0; k < 3; k++)
        if (k < s->end_rank && !strcmp(name, end_names[k])) {
            s->end_rank = k;
            s->end = (uint32_t)sym->st_value;
            s->have_end = true;
        }
    return 0;
}

static void find_symbols(Elf *elf, struct syms *s)
{
    s->stack_rank = s->end_rank = 99;
    np_image_each_symbol(elf, stack_or_end, s);
}

static void find_build_id(Elf *elf, struct np_image *img)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz <= NP_IMAGE_BUILD_ID_MAX) {
                memcpy(img->build_id, (const char *)d->d_buf + desc_off, nh.n_descsz);
                img->build_id_len = nh.n_descsz;
                return;
            }
        }
    }
}

/* Past the NUL-terminated string at *P (END at most). */
static void skip_ntbs(const uint8_t **p, const uint8_t *end)
{
    while (*p < end && *(*p)++)
        ;
}

/* The file-wide build attributes of the ARM ABI's "aeabi" section
 * (SHT_ARM_ATTRIBUTES, .ARM.attributes): Tag_CPU_arch (6),
 * Tag_CPU_arch_profile (7), Tag_FP_arch (10) and Tag_ABI_HardFP_use (27).
 * Its layout: 'A', then sections of a u32
 * length (itself included), a vendor name and sub-sections of a ULEB tag
 * (1: the whole file), a u32 length and attributes, each a ULEB tag and a
 * ULEB or string value (tags 4, 5 and 67, and odd tags above 32:
 * strings; 32: a ULEB and a string). */
static void find_cpu_arch(Elf *elf, struct np_image *img)
{
    img->cpu_arch = -1;
    img->cpu_profile = 0;
    img->fp_arch = -1;
    img->fp_use = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_ARM_ATTRIBUTES || !(d = elf_rawdata(scn, NULL)) ||
            d->d_size < 1 || ((const uint8_t *)d->d_buf)[0] != 'A')
            continue;
        const uint8_t *p = (const uint8_t *)d->d_buf + 1, *end = (const uint8_t *)d->d_buf + d->d_size;
        while (end - p >= 4) {
            uint32_t len = np_get_u32(p);
            if (len < 4 || len > (size_t)(end - p))
                return;
            const uint8_t *sec = p + 4, *sec_end = p + len;
            p = sec_end;
            if ((size_t)(sec_end - sec) < 6 || memcmp(sec, "aeabi", 6) != 0)
                continue;
            sec += 6;
            while (sec_end - sec >= 5) {
                const uint8_t *sub = sec;
                uint64_t tag;
                if (!np_get_varint(&sub, sec_end, &tag) || sec_end - sub < 4)
                    return;
                uint32_t slen = np_get_u32(sub);
                if (slen < 5 || slen > (size_t)(sec_end - sec))
                    return;
                const uint8_t *a = sub + 4, *a_end = sec + slen;
                sec = a_end;
                if (tag != 1) /* a section's or a symbol's: not the file's */
                    continue;
                while (a < a_end) {
                    uint64_t t, v;
                    if (!np_get_varint(&a, a_end, &t))
                        return;
                    if (t == 4 || t == 5 || t == 67 || (t > 32 && (t & 1))) {
                        skip_ntbs(&a, a_end);
                    } else if (t == 32) {
                        if (!np_get_varint(&a, a_end, &v))
                            return;
                        skip_ntbs(&a, a_end);
                    } else {
                        if (!np_get_varint(&a, a_end, &v))
                            return;
                        if (t == 6)
                            img->cpu_arch = v < 256 ? (int)v : -1;
                        else if (t == 7)
                            img->cpu_profile = v < 128 ? (char)v : 0;
                        else if (t == 10)
                            img->fp_arch = v < 256 ? (int)v : -1;
                        else if (t == 27)
                            img->fp_use = v < 256 ? (int)v : 0;
                    }
                }
            }
        }
    }
}

const char *np_image_arch_name(int arch, char profile)
{
    static const char *const names[] = { "pre-ARMv4", "ARMv4", "ARMv4T", "ARMv5T", "ARMv5TE", "ARMv5TEJ",
                                         "ARMv6", "ARMv6KZ", "ARMv6T2", "ARMv6K", "ARMv7", "ARMv6-M",
                                         "ARMv6S-M", "ARMv7E-M", "ARMv8-A", "ARMv8-R", "ARMv8-M baseline",
                                         "ARMv8-M mainline", "ARMv8.1-A", "ARMv8.2-A", "ARMv8.3-A",
                                         "ARMv8.1-M mainline", "ARMv9-A" };
    if (arch == 10 && profile == 'M')
        return "ARMv7-M";
    if (arch == 10 && (profile == 'A' || profile == 'R'))
        return profile == 'A' ? "ARMv7-A" : "ARMv7-R";
    return arch >= 0 && (size_t)arch < sizeof names / sizeof names[0] ? names[arch] : "a later ARM architecture";
}

bool np_image_fp_double(const struct np_image *img)
{
    return img->fp_arch > 0 && img->fp_use != 1;
}

bool np_image_is_m_profile(int arch, char profile)
{
    return profile == 'M' || arch == 11 || arch == 12 || arch == 13 || arch == 16 || arch == 17 || arch == 21;
}

static int load(Elf *elf, const struct np_image_options *o, struct np_image *img, char *err, size_t errsize)
{
    if (elf_kind(elf) != ELF_K_ELF)
        return fail(err, errsize, "not an ELF file");
    size_t fsize;
    const char *ident = elf_getident(elf, NULL);
    const uint8_t *file = (const uint8_t *)elf_rawfile(elf, &fsize);
    if (!ident || !file)
        return fail(err, errsize, "not an ELF file");
    if (ident[EI_CLASS] == ELFCLASS64)
        return fail(err, errsize, "a 64-bit ELF: not 32-bit ARM firmware");
    GElf_Ehdr eh;
    if (ident[EI_CLASS] != ELFCLASS32 || !gelf_getehdr(elf, &eh))
        return fail(err, errsize, "not an ELF file");
    if (ident[EI_DATA] != ELFDATA2LSB)
        return fail(err, errsize, "a big-endian ELF: not little-endian ARM firmware");
    if (eh.e_machine != EM_ARM)
        return fail(err, errsize, "%s ELF (machine %u): not ARM firmware", machine_name(eh.e_machine),
                    (unsigned)eh.e_machine);
    size_t nph;
    if (elf_getphdrnum(elf, &nph))
        return fail(err, errsize, "a broken ELF: %s", elf_errmsg(-1));

    struct range r[MAX_RANGES];
    unsigned nr = 0;
    uint64_t top = 0;
    img->text_lo = UINT32_MAX;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
            continue;
        if (ph.p_filesz > ph.p_memsz || ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
            return fail(err, errsize, "a broken ELF: segment %zu lies outside the file", i);
        uint64_t addrs[2] = { ph.p_paddr, ph.p_vaddr };
        for (int k = 0; k < 2; k++) {
            if (k == 1 && ph.p_vaddr == ph.p_paddr)
                break;
            if (addrs[k] + ph.p_memsz > (1ull << 32))
                return fail(err, errsize, "a broken ELF: segment %zu ends past 4 GiB", i);
            if (nr == MAX_RANGES)
                return fail(err, errsize, "too many loadable segments");
            r[nr++] = (struct range){ addrs[k], addrs[k] + ph.p_memsz, file + ph.p_offset, ph.p_filesz };
            if (addrs[k] + ph.p_memsz > top)
                top = addrs[k] + ph.p_memsz;
        }
        if (ph.p_flags & PF_X) {
            if (ph.p_vaddr < img->text_lo)
                img->text_lo = (uint32_t)ph.p_vaddr;
            if (ph.p_vaddr + ph.p_memsz > img->text_hi)
                img->text_hi = (uint32_t)(ph.p_vaddr + ph.p_memsz);
        }
    }
    if (!nr)
        return fail(err, errsize, "no loadable segment");
    if (img->text_lo == UINT32_MAX)
        img->text_lo = 0;

    /* the RAM region */
    uint64_t ram_size = o && o->ram_size ? o->ram_size : NP_IMAGE_DEFAULT_RAM;
    uint64_t ram_base = o && o->ram_base ? o->ram_base : (top + 15) & ~15ull;
    if (ram_base + ram_size > (1ull << 32))
        return fail(err, errsize, "no room for %llu bytes of RAM at 0x%llx", (unsigned long long)ram_size,
                    (unsigned long long)ram_base);
    img->ram_base = (uint32_t)ram_base;
    img->ram_size = (uint32_t)ram_size;
    r[nr++] = (struct range){ ram_base, ram_base + ram_size, NULL, 0 };

    /* merge the ranges whose pages touch */
    qsort(r, nr, sizeof r[0], cmp_range);
    uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
    unsigned nm = 0;
    for (unsigned i = 0; i < nr; i++) {
        if (nm && r[i].lo <= ((hi[nm - 1] + PAGE - 1) & ~(uint64_t)(PAGE - 1))) {
            if (r[i].hi > hi[nm - 1])
                hi[nm - 1] = r[i].hi;
            continue;
        }
        lo[nm] = r[i].lo;
        hi[nm] = r[i].hi;
        nm++;
    }
    if (nm > NP_CPU_MAX_REGIONS)
        return fail(err, errsize, "%u separate memory regions: at most %d", nm, NP_CPU_MAX_REGIONS);
    for (unsigned i = 0; i < nm; i++)
        if (hi[i] - lo[i] > UINT32_MAX) /* 4 GiB from 0: no region's 32-bit size says it */
            return fail(err, errsize, "a broken ELF: its segments and RAM fill the whole 4 GiB address space");
    for (unsigned i = 0; i < nm; i++) {
        uint8_t *data = calloc(1, hi[i] - lo[i]);
        if (!data) {
            np_image_free(img);
            return fail(err, errsize, "out of memory for %llu bytes at 0x%llx",
                        (unsigned long long)(hi[i] - lo[i]), (unsigned long long)lo[i]);
        }
        img->mem[i] = (struct np_mem_region){ (uint32_t)lo[i], (uint32_t)(hi[i] - lo[i]), data };
        img->nmem++;
    }
    /* file bytes, in segment order (a later one wins where they overlap) */
    for (unsigned i = 0; i < nr; i++) {
        if (!r[i].bytes || !r[i].nbytes)
            continue;
        for (unsigned k = 0; k < nm; k++)
            if (r[i].lo >= lo[k] && r[i].hi <= hi[k])
                memcpy(img->mem[k].data + (r[i].lo - lo[k]), r[i].bytes, r[i].nbytes);
    }

    struct syms s = { 0 };
    find_symbols(elf, &s);
    uint64_t ram_top = ram_base + ram_size;
    uint64_t top8 = ram_top & ~7ull;
    uint32_t stack_top = (uint32_t)(top8 > UINT32_MAX ? top8 - 8 : top8);
    img->sp = stack_top;
    if (s.have_stack && s.stack && in_memory(img, (uint64_t)s.stack - 1))
        img->sp = s.stack;
    img->entry = (uint32_t)eh.e_entry;
    /* the semihosting layout takes the whole RAM region whatever the
       symbols say: newlib's default script has _stack = 0x80000, which
       would leave its heap a few hundred KiB */
    uint32_t mid = img->ram_base + img->ram_size / 2;
    img->heap_base = s.have_end && in_memory(img, s.end) && s.end <= mid ? s.end : img->ram_base;
    img->heap_limit = mid;
    img->stack_base = stack_top;
    img->stack_limit = mid;
    find_build_id(elf, img);
    find_cpu_arch(elf, img);
    return 0;
}

int np_image_load(const char *path, const struct np_image_options *o, struct np_image *img, char *err,
                  size_t errsize)
{
    memset(img, 0, sizeof *img);
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(err, errsize, "libelf: %s", elf_errmsg(-1));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errsize, "%s", strerror(errno));
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    int rc = elf ? load(elf, o, img, err, errsize) : fail(err, errsize, "not an ELF file");
    if (rc)
        np_image_free(img);
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

void np_image_free(struct np_image *img)
{
    for (unsigned i = 0; i < img->nmem; i++)
        free(img->mem[i].data);
    img->nmem = 0;
}
