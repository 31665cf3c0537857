/* elf_symtab.h - the functions of an ELF file, read one way for both
 * symbolizers: the runtime's (port/posix/port.c: names in dumps) and the
 * host's (analyze/symbols.c: names in every view), so that they name an
 * address alike.
 *
 * Functions come from .symtab and .dynsym (a stripped file's debug file
 * stands in for its .symtab), one per address: among aliases, .symtab's
 * over .dynsym's, a global over a weak over a local name, a plain name
 * over a versioned one. A versioned name (name@@VERSION, as glibc's
 * debug file has them) is named without its version. On ARM the Thumb
 * bit is cleared. A function of size 0 holds its address only. */
#ifndef NP_COMMON_ELF_SYMTAB_H
#define NP_COMMON_ELF_SYMTAB_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct np_elf_func {
    uint64_t addr, size;
    const char *name;  /* in libelf's string table: LEN bytes are the name */
    uint32_t len;      /* without the version */
    uint32_t rank;     /* lower wins among aliases */
};

struct np_elf_funcs {
    struct np_elf_func *v; /* sorted by address */
    size_t n;
};

/* Reads the functions of ELF, and of DEBUG's .symtab (its debug file, or
 * NULL) where ELF has none, into OUT; the names stay in the two files'
 * string tables, which the caller keeps open. Returns 0, or -1 when out
 * of memory (OUT then empty). */
int np_elf_funcs_read(Elf *elf, Elf *debug, struct np_elf_funcs *out);
void np_elf_funcs_free(struct np_elf_funcs *f);
/* The index of the function holding ADDR (an ELF address), or -1. */
ptrdiff_t np_elf_funcs_find(const struct np_elf_funcs *f, uint64_t addr);

#endif
