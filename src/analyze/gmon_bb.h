/* gmon_bb.h - the model's basic-block counts as gprof's gmon.out holds
 * them, for an exporter that writes gmon.out.
 *
 * A gmon.out file is a header ("gmon", u32 version 1, 12 spare bytes)
 * followed by records, each a one-byte tag and its data. The basic-block
 * record (GMON_TAG_BB_COUNT = 2, as glibc's <sys/gmon_out.h> and gprof's
 * basic_blocks.c define and read it) is:
 *
 *   u8   tag                 2
 *   u32  nblocks
 *   then nblocks times:
 *     vma  address           an address inside the block
 *     vma  count             times the block ran
 *
 * where vma is an integer of the target's address size (8 bytes on a
 * 64-bit target), and every integer is in the target's byte order. The
 * addresses are those of the executable's ELF file (gprof looks them up in
 * its symbol table and line table: `gprof -l`, `-A`, `-x`); several
 * records may follow one another. Ours are the recorded addresses (the
 * return address of the coverage callback, inside the block and on its
 * line: docs/blocks.md). */
#ifndef NP_ANALYZE_GMON_BB_H
#define NP_ANALYZE_GMON_BB_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

/* One entry of a GMON_TAG_BB_COUNT record. */
struct np_gmon_bb {
    uint64_t address; /* ELF address in its module */
    uint64_t count;
};

/* The blocks of M whose function lies in MODULE (a path as the model's
 * functions name it; NULL: every block), sorted by address, in a new
 * array *OUT of *N entries (the caller frees it). Returns 0, or -1 when
 * out of memory. */
int np_gmon_bb_counts(const struct np_model *m, const char *module, struct np_gmon_bb **out, size_t *n);

#endif
