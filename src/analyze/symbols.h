/* symbols.h - run-time addresses to function names and source lines.
 *
 * Two objects. np_symbols is a cache of ELF files, one entry per path,
 * loaded on first use and kept for the whole analysis: the functions of
 * .symtab (static ones included) merged with .dynsym's, as one array
 * sorted by address, searched by bisection; the file's build-id; and its
 * DWARF, opened lazily when a line is first asked for (libdw). An
 * np_addrspace is one process's view: the MODULE chunks it saw, each a
 * run-time range mapped to a cache entry with a load bias. Forked and
 * exec'd processes get their own address space over the shared cache.
 *
 * When a file cannot be read, or its build-id is not the one recorded
 * (rebuilt since), the warn callback hears it once per file and the
 * addresses in it stay unnamed (the model shows them in hex). */
#ifndef NP_ANALYZE_SYMBOLS_H
#define NP_ANALYZE_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include "events.h"

struct np_symbols;
struct np_addrspace;

/* What an address resolves to. Strings live as long as the np_symbols. */
struct np_symbol {
    const char *name;   /* the function, or NULL when unknown */
    const char *module; /* the mapped file's path, or NULL outside every module */
    const char *file;   /* source file from DWARF, or NULL */
    unsigned line;      /* its line (the function's declaration), 0 if unknown */
    uint64_t elf_addr;  /* the function's ELF address; without a name, the address's */
};

typedef void (*np_symbols_warn_fn)(void *ctx, const char *line);

/* NULL when out of memory. WARN may be NULL. */
struct np_symbols *np_symbols_new(np_symbols_warn_fn warn, void *ctx);
void np_symbols_free(struct np_symbols *s);

struct np_addrspace *np_addrspace_new(struct np_symbols *s);
void np_addrspace_free(struct np_addrspace *a);
/* Adds a MODULE chunk's mapping; 0, or -1 when out of memory. */
int np_addrspace_map(struct np_addrspace *a, const struct np_trace_module *m);
/* Resolves ADDR (always fills OUT). */
void np_addrspace_lookup(struct np_addrspace *a, uint64_t addr, struct np_symbol *out);

/* The run-time address of the function called NAME (the first module
 * that has one; a C++ function by its mangled name, its demangled
 * signature or its short name, as np_demangle gives them), or 0. */
uint64_t np_addrspace_address_of(struct np_addrspace *a, const char *name);

/* The module (its path, or NULL outside every module) holding ADDR, and
 * ADDR as an ELF address of that module in *ELF_ADDR (ADDR itself outside
 * every module). */
const char *np_addrspace_module(struct np_addrspace *a, uint64_t addr, uint64_t *elf_addr);

/* The source line of the instruction at ADDR itself (the DWARF line
 * table's row holding it), not of its function. */
struct np_source_line {
    const char *file;   /* NULL when unknown; lives as long as the np_symbols */
    unsigned line;      /* 0 when unknown */
    uint64_t elf_addr;  /* ADDR in its module's ELF addresses (ADDR outside every module) */
};
/* Fills OUT for ADDR (always). */
void np_addrspace_line(struct np_addrspace *a, uint64_t addr, struct np_source_line *out);

/* Calls EACH with the name of every function of every ELF file S has read
 * (the files the address spaces over it mapped, each once); returns how
 * many files that was. */
unsigned np_symbols_each_function(struct np_symbols *s, void (*each)(void *ctx, const char *name), void *ctx);
/* NAME demangled, when it is a C++ name (Itanium ABI: "_Z..."), by the
 * C++ library's __cxa_demangle: its signature ("Parser::parse(int)
 * const") in *FULL and its short name ("Parser::parse",
 * common/demangle.h) in *SHORT, both to free. 1 when demangled; 0 when
 * NAME is no mangled name (both NULL); -1 when out of memory. */
int np_demangle(const char *name, char **full, char **short_name);

/* What gmon.out needs to know of an ELF file. */
struct np_elf_text {
    uint64_t start, end;   /* its .text section's ELF addresses */
    unsigned addr_bytes;   /* 4 or 8: its class */
    bool big_endian;
    bool executable;       /* a program (ET_EXEC, or ET_DYN marked DF_1_PIE), not a library */
    bool pie;
};
/* Reads PATH's header and .text section into OUT. Returns NULL, or why
 * it cannot (a one-line reason). */
const char *np_elf_text(const char *path, struct np_elf_text *out);

#endif
