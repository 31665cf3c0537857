/* lazy.h - the libraries libnanoprof.so loads only when it first needs one
 * (NP_LAZY_LIBS): libelf to name functions (dumps, the recorder's NAME
 * chunks), libzstd to compress a trace, libunwind for
 * NANOPROF_UNWIND=dwarf. A process that never needs them does not load
 * them: loading them at start-up cost a program run under `nanoprof
 * record` about 0.4 ms (docs/performance.md). Their calls go through
 * pointers that lazy.c fills with dlsym; np_lazy_elf() and the others load
 * the library the first time and say whether it is there (when it is not,
 * the runtime goes without: addresses for names, an uncompressed trace,
 * frame-pointer stacks). Not from a signal handler: dlopen.
 *
 * The static libraries link the three as before (a static executable has
 * no dlopen): there np_lazy_*() are 1 and the names are the libraries'.
 * Include this after the library's own header. */
#ifndef NP_PORT_LAZY_H
#define NP_PORT_LAZY_H

#if defined(NP_LAZY_LIBS)

#if defined(_GELF_H)
struct np_elf_fns {
    __typeof__(elf_version) *version;
    __typeof__(elf_begin) *begin;
    __typeof__(elf_end) *end;
    __typeof__(elf_kind) *kind;
    __typeof__(elf_nextscn) *nextscn;
    __typeof__(elf_getscn) *getscn;
    __typeof__(elf_getdata) *getdata;
    __typeof__(elf_strptr) *strptr;
    __typeof__(elf_getshdrstrndx) *getshdrstrndx;
    __typeof__(gelf_getshdr) *getshdr;
    __typeof__(gelf_getsym) *getsym;
    __typeof__(gelf_getehdr) *getehdr;
    __typeof__(gelf_getnote) *getnote;
    __typeof__(gelf_getrela) *getrela;
};
extern struct np_elf_fns np_elf;
int np_lazy_elf(void);
#define elf_version np_elf.version
#define elf_begin np_elf.begin
#define elf_end np_elf.end
#define elf_kind np_elf.kind
#define elf_nextscn np_elf.nextscn
#define elf_getscn np_elf.getscn
#define elf_getdata np_elf.getdata
#define elf_strptr np_elf.strptr
#define elf_getshdrstrndx np_elf.getshdrstrndx
#define gelf_getshdr np_elf.getshdr
#define gelf_getsym np_elf.getsym
#define gelf_getehdr np_elf.getehdr
#define gelf_getnote np_elf.getnote
#define gelf_getrela np_elf.getrela
#endif

#if defined(ZSTD_H_235446)
struct np_zstd_fns {
    __typeof__(ZSTD_createCCtx) *createCCtx;
    __typeof__(ZSTD_freeCCtx) *freeCCtx;
    __typeof__(ZSTD_compressCCtx) *compressCCtx;
    __typeof__(ZSTD_isError) *isError;
};
extern struct np_zstd_fns np_zstd;
int np_lazy_zstd(void);
#define ZSTD_createCCtx np_zstd.createCCtx
#define ZSTD_freeCCtx np_zstd.freeCCtx
#define ZSTD_compressCCtx np_zstd.compressCCtx
#define ZSTD_isError np_zstd.isError
#endif

#if defined(UNW_LOCAL_ONLY) && defined(UNW_OBJ)
struct np_unw_fns {
    __typeof__(unw_init_local) *init_local;
    __typeof__(unw_init_local2) *init_local2;
    __typeof__(unw_step) *step;
    __typeof__(unw_get_reg) *get_reg;
    __typeof__(unw_set_caching_policy) *set_caching_policy;
#if defined(__x86_64__) /* (elsewhere an inline assembly macro) */
    __typeof__(unw_tdep_getcontext) *getcontext;
#endif
    unw_addr_space_t *local_addr_space;
};
extern struct np_unw_fns np_unw;
int np_lazy_unwind(void);
#undef unw_init_local
#undef unw_init_local2
#undef unw_step
#undef unw_get_reg
#undef unw_set_caching_policy
#if defined(__x86_64__)
#undef unw_getcontext
#endif
#undef unw_local_addr_space
#define unw_init_local np_unw.init_local
#define unw_init_local2 np_unw.init_local2
#define unw_step np_unw.step
#define unw_get_reg np_unw.get_reg
#define unw_set_caching_policy np_unw.set_caching_policy
#if defined(__x86_64__)
#define unw_getcontext(uc) np_unw.getcontext(uc)
#endif
#define unw_local_addr_space (*np_unw.local_addr_space)
#endif

#else /* the static libraries: linked */

static inline int np_lazy_elf(void) { return 1; }
static inline int np_lazy_zstd(void) { return 1; }
static inline int np_lazy_unwind(void) { return 1; }

#endif
#endif
