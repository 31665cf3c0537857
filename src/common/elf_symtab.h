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
 * bit is cleared (labels have none). A function of size 0 holds its
 * address only.
 *
 * Labels are functions too, as gprof and objdump name them: global and
 * weak symbols without a type (STT_NOTYPE) in a section of code, as
 * hand-written assembly defines them. Never a local one (a loop's label
 * would cut its function in two), an ARM mapping symbol ($a, $t, $d, $x),
 * a section's or a file's symbol. A typed function at the same address
 * wins, and a label inside a sized function is a label of its code, not
 * a function. A label holds its addresses up to the next function, and
 * no further than its section's end.
 *
 * A stub of the PLT, through which a call reaches another module's
 * function, is NAME@plt, as objdump and perf name it, where no symbol
 * names its address: its jump decoded to the GOT slot it loads, that
 * slot's relocation to the function. x86-64 (.plt, .plt.sec, .plt.got)
 * and AArch64 (.plt); another machine's stubs stay unnamed. */
#ifndef NP_COMMON_ELF_SYMTAB_H
#define NP_COMMON_ELF_SYMTAB_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct np_elf_func {
    uint64_t addr, size;
    const char *name;  /* in libelf's string table: LEN bytes are the name */
    uint32_t len;      /* without the version */
    uint32_t rank;     /* lower wins among aliases; NP_ELF_RANK_LABEL: a label */
};
#define NP_ELF_RANK_LABEL 16u

struct np_elf_funcs {
    struct np_elf_func *v; /* sorted by address */
    size_t n;
    char **owned; /* the PLT stubs' names (NAME@plt), which no string table holds */
    size_t nowned;
};

/* Reads the functions of ELF, and of DEBUG's .symtab (its debug file, or
 * NULL) where ELF has none, into OUT; the names stay in the two files'
 * string tables, which the caller keeps open. Returns 0, or -1 when out
 * of memory (OUT then empty). */
int np_elf_funcs_read(Elf *elf, Elf *debug, struct np_elf_funcs *out);
void np_elf_funcs_free(struct np_elf_funcs *f);
/* The index of the function holding ADDR (an ELF address), or -1. */
ptrdiff_t np_elf_funcs_find(const struct np_elf_funcs *f, uint64_t addr);

/* The sections of ELF that list the places of patchable entries
 * (-fpatchable-function-entry's __patchable_function_entries, -mnop-mcount
 * -mrecord-mcount's __mcount_loc): up to MAX headers into OUT; how many
 * there are. The one definition `nanoprof record` (is PROG patchable?)
 * and the runtime (where are the places?) share. */
size_t np_elf_patchable_lists(Elf *elf, GElf_Shdr *out, size_t max);

#endif
