/* modules.h - the modules (executable, shared libraries, the vDSO) loaded
 * in this process, found by one walk of the loader's list for both its
 * users: the recorder, which lists them in MODULE chunks, and the
 * symbolizer, which finds the one holding an address. A module is the
 * range of its executable segments, so both agree on what code is whose,
 * and is named by the path a reader opens: absolute, the executable's
 * real path, NP_TRACE_VDSO for the kernel's vDSO. */
#ifndef NP_POSIX_MODULES_H
#define NP_POSIX_MODULES_H

#include <stddef.h>
#include <stdint.h>

struct dl_phdr_info;

struct np_posix_module {
    uint64_t bias;              /* run-time address = ELF address + bias */
    uint64_t start, end;        /* run-time range of its code */
    const uint8_t *build_id;    /* its GNU build-id, in memory (NULL: none) */
    size_t build_id_len;
    const struct dl_phdr_info *info; /* the loader's entry, during the walk only */
};

/* Calls FN for each module that has code, in the loader's order, until FN
 * returns non-zero (which it returns). With ADDS, nothing is walked when
 * the loader has loaded nothing since *ADDS was stored (returns 0), and
 * *ADDS is kept up to date. */
int np_posix_modules(int (*fn)(struct np_posix_module *m, void *ctx), void *ctx, unsigned long long *adds);
/* M's path into BUF (PATH_MAX bytes) as said above; NULL when a path
 * dlopen gave relative cannot be made absolute. */
const char *np_posix_module_path(const struct np_posix_module *m, char *buf);
/* The module whose code holds ADDR: 1, *M, and its path in BUF (PATH_MAX
 * bytes); else 0. */
int np_posix_module_of(uintptr_t addr, struct np_posix_module *m, char *buf);

#endif
