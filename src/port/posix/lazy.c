/* lazy.c - loading libelf, libzstd and libunwind when libnanoprof.so first
 * needs them (lazy.h says why). Each is loaded once per process, under
 * pthread_once; a library that is missing, or lacks a function, is not
 * used. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gelf.h>
#include <pthread.h>
#include <zstd.h>
#if defined(NP_HAVE_LIBUNWIND)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif
#include "lazy.h"

#define NP_STR_(x) #x
#define NP_STR(x) NP_STR_(x)

#ifndef NP_LIBELF_SONAME
#define NP_LIBELF_SONAME "libelf.so.1"
#endif
#ifndef NP_LIBZSTD_SONAME
#define NP_LIBZSTD_SONAME "libzstd.so.1"
#endif
#ifndef NP_LIBUNWIND_SONAME
#define NP_LIBUNWIND_SONAME "libunwind.so.8"
#endif

/* Fills N pointers at FNS from the library SONAME; 1 when all are there. */
static int load(const char *soname, void **fns, const char *const *names, int n)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    for (int i = 0; i < n; i++)
        if (!(fns[i] = dlsym(h, names[i])))
            return 0; /* left loaded: harmless, and rare */
    return 1;
}

#define LOADER(lib, soname, ...)                                                       \
    static pthread_once_t lib##_once = PTHREAD_ONCE_INIT;                             \
    static int lib##_ok;                                                              \
    static void lib##_load(void)                                                      \
    {                                                                                 \
        static const char *const names[] = { __VA_ARGS__ };                           \
        _Static_assert(sizeof names / sizeof names[0] * sizeof(void *) == sizeof np_##lib, \
                       #lib ": one name per pointer");                                \
        lib##_ok = load(soname, (void **)&np_##lib, names, sizeof names / sizeof names[0]); \
    }                                                                                 \
    int np_lazy_##lib(void)                                                           \
    {                                                                                 \
        pthread_once(&lib##_once, lib##_load);                                        \
        return lib##_ok;                                                              \
    }

struct np_elf_fns np_elf;
LOADER(elf, NP_LIBELF_SONAME, "elf_version", "elf_begin", "elf_end", "elf_kind", "elf_nextscn", "elf_getscn", "elf_getdata",
       "elf_strptr", "elf_getshdrstrndx", "gelf_getshdr", "gelf_getsym", "gelf_getehdr", "gelf_getnote",
       "gelf_getrela")

struct np_zstd_fns np_zstd;
LOADER(zstd, NP_LIBZSTD_SONAME, "ZSTD_createCCtx", "ZSTD_freeCCtx", "ZSTD_compressCCtx", "ZSTD_isError")

#if defined(NP_HAVE_LIBUNWIND)
#if defined(__x86_64__)
#define NP_UNW_GETCONTEXT NP_STR(UNW_ARCH_OBJ(getcontext)),
#else
#define NP_UNW_GETCONTEXT /* (an inline assembly macro: lazy.h) */
#endif
struct np_unw_fns np_unw;
LOADER(unw, NP_LIBUNWIND_SONAME, NP_STR(UNW_OBJ(init_local)), NP_STR(UNW_OBJ(init_local2)), NP_STR(UNW_OBJ(step)),
       NP_STR(UNW_OBJ(get_reg)), NP_STR(UNW_OBJ(set_caching_policy)), NP_UNW_GETCONTEXT
       NP_STR(UNW_OBJ(local_addr_space)))
int np_lazy_unwind(void)
{
    return np_lazy_unw();
}
#endif
