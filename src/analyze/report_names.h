/* report_names.h - what a firmware's report records name (common/
 * report_text.h's struct np_report_names), read from its ELF: a function
 * by the ELF's symbols, named as the views name it; the program's strings
 * from the ELF's loaded bytes; the runtime's messages (report_format.h's
 * MSG values) from the section .np_msg, which holds them without loading
 * them, or, in a firmware built to format text (no such section), from
 * its loaded bytes as the program's strings. */
#ifndef NP_ANALYZE_REPORT_NAMES_H
#define NP_ANALYZE_REPORT_NAMES_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/elf_symtab.h"
#include "common/report_text.h"

/* The ELF a struct np_report_names reads; the caller keeps ELF and FUNCS. */
struct np_elf_names {
    Elf *elf;
    const struct np_elf_funcs *funcs;
    Elf_Scn *msg;   /* .np_msg, or NULL */
    bool thumb;     /* ARM: an address's bit 0 is the Thumb state's, not the address's */
};

/* N readies for ELF and its functions FUNCS (np_elf_funcs_read). */
void np_elf_names_init(struct np_elf_names *n, Elf *elf, const struct np_elf_funcs *funcs);
/* The names N gives, as long as N lives. */
struct np_report_names np_elf_report_names(struct np_elf_names *n);

/* The C string of printable bytes at ELF address ADDR in ELF's loaded
 * bytes, into OUT (SIZE bytes, NUL-terminated): its length; 0 when there
 * is none there, or it does not fit. */
size_t np_elf_string_at(Elf *elf, uint64_t addr, char *out, size_t size);

#endif
