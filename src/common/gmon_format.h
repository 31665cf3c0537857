/* gmon_format.h - constants of GNU gprof's gmon.out file (glibc's
 * <sys/gmon_out.h>; gprof's gmon_io.c, hist.c, call_graph.c), shared by
 * the host's exporter (analyze/export_gmon.c) and a target's writer
 * (runtime/gprof.c). Header-only and freestanding.
 *
 * The file is a header ("gmon", u32 version 1, 12 zero bytes), then
 * records, each a one-byte tag:
 *
 *   0 TIME_HIST  vma low_pc, vma high_pc, u32 hist_size, u32 prof_rate,
 *                char dimen[15], char dimen_abbrev, then hist_size u16 bins
 *   1 CG_ARC     vma from_pc, vma self_pc, u32 count
 *   2 BB_COUNT   u32 n, then n times vma address, vma count
 *
 * vma is the ELF class's address size; every integer is in the ELF's
 * byte order. */
#ifndef NP_GMON_FORMAT_H
#define NP_GMON_FORMAT_H

#define NP_GMON_MAGIC "gmon"
#define NP_GMON_MAGIC_LEN 4
#define NP_GMON_VERSION 1
#define NP_GMON_HEADER_SIZE 20 /* magic, version, 12 spare bytes */
#define NP_GMON_TAG_TIME_HIST 0
#define NP_GMON_TAG_CG_ARC 1
#define NP_GMON_TAG_BB_COUNT 2
#define NP_GMON_DIMEN_LEN 15   /* the histogram's dimension name, NUL-padded */
#define NP_GMON_BIN_MAX 65535  /* a bin is a u16: it saturates there */
#define NP_GMON_COUNT_MAX 4294967295u /* an arc's count is a u32 */

#endif
