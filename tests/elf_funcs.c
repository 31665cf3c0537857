/* elf_funcs.c - elf_funcs FILE: the functions the symbolizers find in an
 * ELF file (common/elf_symtab.h), one "ADDRESS NAME" line each, in hex,
 * by address (test_plt_names.sh compares them with objdump's). */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <unistd.h>
#include "common/elf_symtab.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: elf_funcs FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    Elf *elf = NULL;
    struct np_elf_funcs f;
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
        elf_kind(elf) != ELF_K_ELF || np_elf_funcs_read(elf, NULL, &f) < 0) {
        fprintf(stderr, "elf_funcs: %s: not an ELF file it can read\n", argv[1]);
        return 1;
    }
    for (size_t i = 0; i < f.n; i++)
        printf("%llx %.*s\n", (unsigned long long)f.v[i].addr, (int)f.v[i].len, f.v[i].name);
    np_elf_funcs_free(&f);
    elf_end(elf);
    close(fd);
    return 0;
}
