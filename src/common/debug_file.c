/* debug_file.c - separate debug files (design in debug_file.h). Reads
 * only: no state, so the runtime's writer thread and the host share it. */
#define _GNU_SOURCE
#include "debug_file.h"
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../port/posix/lazy.h" /* libnanoprof.so: libelf loaded when first used */

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

Elf_Scn *np_elf_section(Elf *elf, const char *name)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *n;
        if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
            return scn;
    }
    return NULL;
}

size_t np_elf_build_id(Elf *elf, uint8_t *id, size_t cap)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t off = 0, next, name_off, desc_off;
        GElf_Nhdr nh;
        while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz <= cap) {
                memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
                return nh.n_descsz;
            }
            off = next;
        }
    }
    return 0;
}

/* PATH, when it is a regular ELF file with build-id ID (if IDLEN); else
 * NULL. Never blocks (O_NONBLOCK, regular files only). */
static Elf *open_candidate(const char *path, const uint8_t *id, size_t idlen, int *fd)
{
    struct stat st;
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return NULL;
    Elf *elf = NULL;
    if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) && (elf = elf_begin(*fd, ELF_C_READ, NULL)) &&
        elf_kind(elf) == ELF_K_ELF) {
        uint8_t other[NP_BUILD_ID_MAX];
        if (!idlen || (np_elf_build_id(elf, other, sizeof other) == idlen && !memcmp(other, id, idlen)))
            return elf;
    }
    if (elf)
        elf_end(elf);
    close(*fd);
    *fd = -1;
    return NULL;
}

Elf *np_debug_file_open(Elf *elf, const char *path, int *fd)
{
    uint8_t id[NP_BUILD_ID_MAX];
    size_t idlen = np_elf_build_id(elf, id, sizeof id);
    const char *dirs = getenv("NANOPROF_DEBUG_DIR");
    if (!dirs || !*dirs)
        dirs = "/usr/lib/debug";
    /* the .gnu_debuglink name: a plain file name */
    const char *link = NULL;
    Elf_Scn *scn = np_elf_section(elf, ".gnu_debuglink");
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    if (d && d->d_size > 1 && memchr(d->d_buf, 0, d->d_size) && *(char *)d->d_buf && !strchr(d->d_buf, '/'))
        link = d->d_buf;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 0;
    char cand[4096];
    Elf *dbg = NULL;
    for (const char *p = dirs; *p && !dbg; p += strcspn(p, ":"), p += *p == ':') {
        int n = (int)strcspn(p, ":");
        if (!n)
            continue;
        if (idlen > 1) {
            int len = snprintf(cand, sizeof cand, "%.*s/.build-id/%02x/", n, p, id[0]);
            for (size_t i = 1; i < idlen && len > 0 && (size_t)len + 3 < sizeof cand; i++)
                len += snprintf(cand + len, sizeof cand - (size_t)len, "%02x", id[i]);
            if (len > 0 && (size_t)len + 7 < sizeof cand) {
                strcpy(cand + len, ".debug");
                if (strcmp(cand, path) && (dbg = open_candidate(cand, id, idlen, fd)))
                    break;
            }
        }
        if (link && (size_t)snprintf(cand, sizeof cand, "%.*s%.*s/%s", n, p, dirlen, path, link) < sizeof cand)
            dbg = open_candidate(cand, id, idlen, fd);
    }
    if (!dbg && link && (size_t)snprintf(cand, sizeof cand, "%.*s/%s", dirlen, path, link) < sizeof cand &&
        strcmp(cand, path))
        dbg = open_candidate(cand, id, idlen, fd);
    if (!dbg && link && (size_t)snprintf(cand, sizeof cand, "%.*s/.debug/%s", dirlen, path, link) < sizeof cand)
        dbg = open_candidate(cand, id, idlen, fd);
    return dbg;
}
