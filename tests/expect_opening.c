/* expect_opening.c - the bytes a target's stream opens with (the file
 * header, INFO and MODULE: runtime/report.c's np_stream_opening, which
 * writes them from constants and fields of its own), as the host's one
 * encoder of those chunks (common/trace_chunks.h) makes them for the
 * firmware ELF: a target's clock "cycles" at 1 ns a tick from 0, no
 * process, no command line, one module over the 32-bit address space
 * with the ELF's build-id (empty when longer than the target sends) and
 * no path. tests/port/trace_import.sh compares them with the opening in
 * each firmware's capture, byte for byte.
 *
 *   expect_opening FIRMWARE.elf > bytes */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <unistd.h>
#include "common/debug_file.h"
#include "common/trace_chunks.h"

#define TARGET_BUILD_ID_MAX 32 /* report.c's BUILD_ID_MAX */

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: expect_opening FIRMWARE.elf\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    if (!elf) {
        fprintf(stderr, "expect_opening: %s: not an ELF\n", argv[1]);
        return 1;
    }
    uint8_t id[NP_BUILD_ID_MAX], out[NP_TRACE_HEADER_SIZE + 2 * 1024];
    size_t idlen = np_elf_build_id(elf, id, sizeof id);
    if (idlen > TARGET_BUILD_ID_MAX)
        idlen = 0;
    np_trace_file_header(out);
    size_t n = NP_TRACE_HEADER_SIZE;
    struct np_trace_info info = { 0, 0, 1.0, 0, 0, "cycles", 0, NULL };
    size_t k = np_trace_info_chunk(out + n, sizeof out - n, &info);
    n += k;
    size_t m = np_trace_module_chunk(out + n, sizeof out - n, 0, 0, 1ull << 32, id, idlen, "", 0);
    n += m;
    if (!k || !m || fwrite(out, 1, n, stdout) != n) {
        fprintf(stderr, "expect_opening: the chunks were not made\n");
        return 1;
    }
    elf_end(elf);
    close(fd);
    return 0;
}
