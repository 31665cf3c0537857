/* debug_file.h - finding an ELF file's separate debug file, as GDB finds
 * them, for the host's symbols (analyze/symbols.c) and the runtime's
 * (port/posix/port.c): by build-id, DIR/.build-id/xx/rest.debug, and by
 * .gnu_debuglink, beside the file, in its .debug/ and under DIR followed
 * by the file's directory; DIR is each of NANOPROF_DEBUG_DIR's
 * (colon-separated), else /usr/lib/debug. A candidate is used only when
 * it is ELF and, where the file has a build-id, has the same one. */
#ifndef NP_COMMON_DEBUG_FILE_H
#define NP_COMMON_DEBUG_FILE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include "trace_format.h" /* NP_BUILD_ID_MAX */

/* The section of ELF named NAME, or NULL. */
Elf_Scn *np_elf_section(Elf *elf, const char *name);

/* ELF's GNU build-id into ID (at most CAP bytes); its length, 0 if none. */
size_t np_elf_build_id(Elf *elf, uint8_t *id, size_t cap);

/* The debug file of ELF, the file at PATH: opened (read-only) into *FD and
 * returned, to be ended and closed by the caller; NULL when there is none. */
Elf *np_debug_file_open(Elf *elf, const char *path, int *fd);

#endif
