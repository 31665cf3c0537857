/* report_names.c - a firmware's report records named from its ELF
 * (report_names.h). */
#include "report_names.h"
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/debug_file.h"
#include "common/report_format.h"
#include "symbols.h"

/* The C string of printable bytes at OFF in SCN's bytes into OUT (SIZE
 * bytes): its length, 0 when there is none or it does not fit. */
static size_t section_string(Elf_Scn *scn, uint64_t off, char *out, size_t size)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf || off >= d->d_size || !size)
        return 0;
    const char *p = (const char *)d->d_buf + off;
    size_t left = d->d_size - off, n = 0;
    while (n < left && n < size - 1 && p[n] >= ' ' && p[n] < 0x7f)
        n++;
    if (n == 0 || n == left || p[n] != 0)
        return 0; /* not a C string */
    memcpy(out, p, n);
    out[n] = 0;
    return n;
}

size_t np_elf_string_at(Elf *elf, uint64_t addr, char *out, size_t size)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_type == SHT_PROGBITS &&
            addr >= sh.sh_addr && addr - sh.sh_addr < sh.sh_size)
            return section_string(scn, addr - sh.sh_addr, out, size);
    }
    return 0;
}

void np_elf_names_init(struct np_elf_names *n, Elf *elf, const struct np_elf_funcs *funcs)
{
    GElf_Ehdr eh;
    n->elf = elf;
    n->funcs = funcs;
    n->msg = np_elf_section(elf, NP_MSG_SECTION);
    n->thumb = gelf_getehdr(elf, &eh) && eh.e_machine == EM_ARM;
}

/* The function holding ADDR, its name as the views show it (a C++ one
 * demangled, cut to its short name). */
static int function(void *ctx, uint64_t addr, char *buf, size_t len, uint64_t *offset)
{
    const struct np_elf_names *n = ctx;
    uint64_t at = n->thumb ? addr & ~(uint64_t)1 : addr;
    ptrdiff_t i = np_elf_funcs_find(n->funcs, at);
    if (i < 0 || !len)
        return 0;
    const struct np_elf_func *f = &n->funcs->v[i];
    char *full, *short_name;
    snprintf(buf, len, "%.*s", (int)f->len, f->name);
    if (np_demangle(buf, &full, &short_name) > 0)
        snprintf(buf, len, "%s", short_name);
    free(full);
    free(short_name);
    *offset = at - f->addr;
    return 1;
}

static const char *string(void *ctx, uint64_t addr, int msg, char *buf, size_t len)
{
    const struct np_elf_names *n = ctx;
    size_t got = msg && n->msg ? section_string(n->msg, addr, buf, len) : np_elf_string_at(n->elf, addr, buf, len);
    return got ? buf : NULL;
}

struct np_report_names np_elf_report_names(struct np_elf_names *n)
{
    return (struct np_report_names){ n, function, string };
}
