/* mcount.c - the hooks of code built with -pg (mcount) or -pg -mfentry
 * (__fentry__) on x86-64, and -pg (_mcount) on AArch64, handed to the
 * compiler hooks' entry points (__cyg_profile_func_enter/exit), so that
 * every mechanism takes them.
 *
 * -pg calls the hook at each function's entry only. On x86-64 the
 * function's arguments are still in their registers (__fentry__ before the
 * prologue, mcount after it, with the frame pointer set). AArch64's
 * _mcount comes after the prologue too, with x0 overwritten by the
 * function's return address: it sees no arguments. The exit is found by
 * replacing the function's return address, in its slot (on x86-64 where
 * the call put it; on AArch64 in the frame record x29 points to), with
 * np_mcount_return's: the original is kept on a return stack of the OS
 * thread's, with the slot's address and the function's, and the function's
 * return comes to the trampoline, which tells the exit and jumps to it.
 * On x86-64 a module's calls of the hook become, at its first call, jumps
 * to thunks (thunks.c) that call the function from the caller's slot and
 * return to the caller, every call and return paired: their entry
 * (np_thunk_enter) replaces no return address, their exit is the
 * trampoline's work ending in a return; both meet on the return stack.
 * Each thunk starts with a fast path of its own (below) that writes the
 * return stack's entry itself, and the call trace's log record where it
 * alone runs in log mode, or has hooks_leaf.c's leaf functions take the
 * call where cost or the recorder runs alone.
 * On AArch64 a return address signed by pointer authentication
 * (-mbranch-protection) cannot be replaced without breaking its signature:
 * such a call is left unhooked, and counted.
 *
 * A return that does not come to the top of the return stack (a frame left
 * by a jump the C library's longjmp did not tell, a coroutine's switch) is
 * matched by its slot, and the calls above it are closed there. A longjmp
 * the runtime saw (setjmp.c) cuts the return stack to its depth at setjmp,
 * silently: the mechanisms cut their own calls. A tail call (a function
 * that jumps to another, which reuses the return address) finds its slot
 * already replaced: the second function's call is the first's child, and
 * both close at the return (as uftrace shows them). C++ exceptions and
 * pthread_exit unwind frames by reading their return addresses: the
 * originals are put back first (catch.c tells the throw, each landing pad,
 * where the calls below it close, and the catch, which takes the living
 * frames' again); so does backtrace(3), and the sampler's frame walk reads
 * them from the return stack (np_mcount_frame_return). gdb and libunwind,
 * from outside or without being told, stop at the trampoline, or lose
 * their way past a thunk (docs/instrumenting.md).
 *
 * Coroutines that switch stacks on one OS thread (swapcontext) interleave
 * their frames on its one return stack: a -pg build of such a program is
 * not supported.
 *
 * Code built with both -finstrument-functions and -pg gets its calls from
 * the first: the hooks of -pg are left alone in a module that imports
 * __cyg_profile_func_enter, so that each call is one event. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../port.h"
#include "../../runtime/hooks.h"
#include "../../runtime/thread.h"
#include "mcount.h"
#include "posix.h"

#if (defined(__x86_64__) || defined(__aarch64__) || defined(__arm__)) && defined(__linux__)

/* ---- the return stack ------------------------------------------------- */

struct rs_entry {
    uintptr_t *slot; /* where the return address was replaced */
    uintptr_t ret;   /* the return address */
    uintptr_t fn;    /* the function, as its entry event gave it */
};

struct rs_mark {
    const void *env;
    uint32_t n;
};

/* The OS thread's. N is raised before an entry is written and lowered
 * after it is read, so that a signal handler's calls, which come and go
 * above it, never touch an entry in use. BUSY: growing (the handler's
 * calls are then not hooked, and counted). */
struct rstack {
    struct rs_entry *v;
    uint32_t n, cap;
    uint32_t busy;
    uint32_t next_mark;
    struct rs_mark marks[NP_JMP_MARKS];
};

static NP_PORT_TLS struct rstack rs;
#if defined(__x86_64__)
/* VAR's offset from the thread pointer (%fs:0): a static TLS variable's,
 * every thread's the same. */
static int64_t tls_offset(const void *var)
{
    uintptr_t tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return (int64_t)((uintptr_t)var - tp);
}

/* For a debugger's unwinder (share/nanoprof/nanoprof-gdb.py): the return
 * stack's offset from the thread pointer, every thread's the same (static
 * TLS), set when a thread first makes one; 0 before. The script reads the
 * layout asserted here. */
__attribute__((visibility("default"))) int64_t np_mcount_rs_offset;
_Static_assert(offsetof(struct rstack, v) == 0 && offsetof(struct rstack, n) == 8 &&
                   sizeof(struct rs_entry) == 24 && offsetof(struct rs_entry, slot) == 0 &&
                   offsetof(struct rs_entry, ret) == 8,
               "the return stack as nanoprof-gdb.py reads it");
#endif
void (*np_mcount_values)(uintptr_t fn, const uint64_t *regs);
void (*np_mcount_retvals)(uintptr_t fn, const uint64_t *regs);
static uint64_t unhooked;  /* calls not hooked: no memory, or inside a growth */
static uint64_t unfound;   /* AArch64: calls whose return address is signed */
static pthread_key_t rs_key;
static pthread_once_t rs_once = PTHREAD_ONCE_INIT;

void np_mcount_return(void);

static void rs_free(void *p)
{
    struct rstack *r = &rs;
    if (p && r->v - 1 == p) {
        munmap(r->v - 1, ((size_t)r->cap + 1) * sizeof *r->v);
        r->v = NULL;
        r->n = r->cap = 0;
    }
}

static void rs_setup(void) { pthread_key_create(&rs_key, rs_free); }

/* More room, by mapping: at first NP_MCOUNT_RSTACK entries, then twice as
 * many each time (the depth has no limit but memory). One more lies below
 * the first, its slot 0: the tests of the entry below the newest need no
 * test of the depth. */
static int rs_grow(struct rstack *r)
{
    r->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    size_t cap = r->cap ? (size_t)r->cap * 2 : NP_MCOUNT_RSTACK;
    void *v;
    if (!r->v) {
        pthread_once(&rs_once, rs_setup);
        v = mmap(NULL, (cap + 1) * sizeof *r->v, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    } else {
        v = mremap(r->v - 1, ((size_t)r->cap + 1) * sizeof *r->v, (cap + 1) * sizeof *r->v, MREMAP_MAYMOVE);
    }
    int ok = v != MAP_FAILED && cap < UINT32_MAX;
    if (ok) {
        r->v = (struct rs_entry *)v + 1;
        r->cap = (uint32_t)cap;
        pthread_setspecific(rs_key, v);
#if defined(__x86_64__)
        __atomic_store_n(&np_mcount_rs_offset, tls_offset(&rs), __ATOMIC_RELAXED);
#endif
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->busy = 0;
    return ok ? 0 : -1;
}

/* The entry whose slot is SLOT, from the top; -1 when there is none. */
static long rs_find(const struct rstack *r, const uintptr_t *slot)
{
    for (long i = (long)r->n - 1; i >= 0; i--)
        if (r->v[i].slot == slot)
            return i;
    return -1;
}

/* Closes the calls above entry I, newest first: their frames are gone. */
static void rs_close_above(struct rstack *r, uint32_t i)
{
    while (r->n > i) {
        struct rs_entry e = r->v[r->n - 1];
        np_hooks_exit_here((void *)e.fn, (void *)e.ret);
        r->n--;
    }
}

/* ---- modules that take -finstrument-functions instead ----------------- */

struct mod {
    uintptr_t lo, hi;
    int hooked; /* imports __cyg_profile_func_enter */
};
static struct mod mods[NP_MCOUNT_MODULES];
static int nmods;
static int last_mod;
static pthread_mutex_t mods_lock = PTHREAD_MUTEX_INITIALIZER;

/* The number of dynamic symbols, from the GNU hash table or the SysV one. */
static size_t dynsym_count(const ElfW(Word) *gnu, const ElfW(Word) *sysv)
{
    if (sysv)
        return sysv[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom = gnu[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

struct mod_query {
    uintptr_t pc;
    struct mod m;
    int found;
    const uint8_t *eh_frame_hdr; /* its unwind table's, in memory (thunks.c) */
    uintptr_t code_lo, code_hi;   /* its executable segments */
};

static int mod_each(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct mod_query *q = ctx;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    const ElfW(Dyn) *dyn = NULL;
    int in = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            lo = a < lo ? a : lo;
            hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
            in |= q->pc - a < ph->p_memsz;
            if (ph->p_flags & PF_X) {
                q->code_lo = q->code_lo && q->code_lo < a ? q->code_lo : a;
                q->code_hi = q->code_hi > a + ph->p_memsz ? q->code_hi : a + ph->p_memsz;
            }
        } else if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)a;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            q->eh_frame_hdr = (const uint8_t *)a;
        }
    }
    if (!in) {
        q->eh_frame_hdr = NULL;
        q->code_lo = q->code_hi = 0;
        return 0;
    }
    q->found = 1;
    q->m.lo = lo;
    q->m.hi = hi;
    q->m.hooked = 0;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const ElfW(Word) *gnu = NULL, *sysv = NULL;
    /* the loader has relocated these in place, where .dynamic is writable */
#define NP_DYN_PTR(d) ((d)->d_un.d_ptr < info->dlpi_addr ? info->dlpi_addr + (d)->d_un.d_ptr : (d)->d_un.d_ptr)
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)NP_DYN_PTR(d);
        else if (d->d_tag == DT_STRTAB)
            str = (const char *)NP_DYN_PTR(d);
        else if (d->d_tag == DT_GNU_HASH)
            gnu = (const ElfW(Word) *)NP_DYN_PTR(d);
        else if (d->d_tag == DT_HASH)
            sysv = (const ElfW(Word) *)NP_DYN_PTR(d);
    }
#undef NP_DYN_PTR
    if (sym && str) {
        size_t n = dynsym_count(gnu, sysv);
        for (size_t i = 0; i < n; i++)
            if (sym[i].st_shndx == SHN_UNDEF && !strcmp(str + sym[i].st_name, "__cyg_profile_func_enter"))
                q->m.hooked = 1;
    }
    return 1;
}

/* Whether the call from code at PC is to be hooked here: its module's
 * answer, looked up once per module. */
static __attribute__((noinline)) int wanted_slow(uintptr_t pc)
{
    struct mod_query q = { pc, { 0, 0, 0 }, 0, NULL, 0, 0 };
    pthread_mutex_lock(&mods_lock);
    for (int i = 0; i < nmods; i++)
        if (pc - mods[i].lo < mods[i].hi - mods[i].lo) {
            __atomic_store_n(&last_mod, i, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&mods_lock);
            return !mods[i].hooked;
        }
    dl_iterate_phdr(mod_each, &q);
    if (q.found && nmods < NP_MCOUNT_MODULES) {
        mods[nmods] = q.m;
        __atomic_store_n(&last_mod, nmods, __ATOMIC_RELEASE);
        __atomic_store_n(&nmods, nmods + 1, __ATOMIC_RELEASE);
#if defined(__x86_64__)
        /* the module's first call: its calls of __fentry__ become jumps to
         * thunks (thunks.c) */
        if (!q.m.hooked && np_posix_thunks_wanted())
            np_posix_thunks_module(q.eh_frame_hdr, q.code_lo, q.code_hi, q.m.lo, q.m.hi);
#endif
    }
    pthread_mutex_unlock(&mods_lock);
    return !q.m.hooked;
}

static inline int wanted(uintptr_t pc)
{
    int i = __atomic_load_n(&last_mod, __ATOMIC_ACQUIRE);
    if (i < __atomic_load_n(&nmods, __ATOMIC_ACQUIRE) && pc - mods[i].lo < mods[i].hi - mods[i].lo)
        return !mods[i].hooked;
    return wanted_slow(pc);
}

/* ---- entry and exit --------------------------------------------------- */

static void (*args_fn)(uintptr_t self, const uintptr_t *regs);

/* What asks each call for more than its event: 1 the call trace's
 * arguments (np_port_args_start), 2 and 4 the recorder's arguments and
 * return values (np_mcount_values_set): a thunk's fast path then leaves
 * the call (the recorder's: its entry, or its exit) to the hooks. */
static uint32_t mcount_extras;

void np_port_args_start(void (*fn)(uintptr_t self, const uintptr_t *regs))
{
    if (fn)
        __atomic_fetch_or(&mcount_extras, 1u, __ATOMIC_SEQ_CST);
    __atomic_store_n(&args_fn, fn, __ATOMIC_RELEASE);
    if (!fn)
        __atomic_fetch_and(&mcount_extras, ~1u, __ATOMIC_SEQ_CST);
}

void np_mcount_values_set(void (*arguments)(uintptr_t, const uint64_t *), void (*retvals)(uintptr_t, const uint64_t *))
{
    __atomic_fetch_or(&mcount_extras, (arguments ? 2u : 0u) | (retvals ? 4u : 0u), __ATOMIC_SEQ_CST);
    if (arguments)
        __atomic_store_n(&np_mcount_values, arguments, __ATOMIC_RELEASE);
    if (retvals)
        __atomic_store_n(&np_mcount_retvals, retvals, __ATOMIC_RELEASE);
}

/* __fentry__'s call is a function's first instruction: the function starts
 * at it (5 bytes; 6 through the GOT, or as the linker relaxes that to a
 * direct call with a prefix). mcount's is after the prologue: its return
 * address stands for the function (every view names an address by the
 * function containing it). */
static inline uintptr_t fentry_start(uintptr_t ret)
{
#if defined(__x86_64__)
    const uint8_t *p = (const uint8_t *)ret;
    if ((p[-6] == 0xff && p[-5] == 0x15) || (p[-6] == 0x67 && p[-5] == 0xe8))
        return ret - 6;
    if (p[-5] == 0xe8)
        return ret - 5;
#endif
    return ret;
}

/* AArch64: whether the function whose _mcount call returns to SELF signs
 * its return address (PARENT, as its frame record holds it): a pointer
 * authentication code in the bits above the address, or, as that code
 * may be all zeros, PACIASP or PACIBSP in its prologue, which the call
 * ends (fixed-size instructions: read back from the call, up to the
 * previous function's return). */
static inline int a64_signed(uintptr_t parent, uintptr_t self)
{
    if ((uint64_t)parent >> 48)
        return 1;
    const uint32_t *p = (const uint32_t *)self - 1; /* the bl */
    for (int i = 1; i <= NP_A64_PROLOGUE_INSNS; i++) {
        uint32_t insn = p[-i];
        if (insn == 0xd503233fu || insn == 0xd503237fu) /* paciasp, pacibsp */
            return 1;
        if (insn == 0xd65f03c0u || insn == 0xd65f0bffu || insn == 0xd65f0fffu) /* ret, retaa, retab */
            return 0;
    }
    return 0;
}

/* The hooks (the assembly's FENTRY): what each sees. A thunk's (HOOK_THUNK)
 * gives the function itself, and replaces no return address: the thunk's
 * call of the body puts its own where the caller's was. */
enum { HOOK_MCOUNT, HOOK_FENTRY, HOOK_PATCHED, HOOK_A64_MCOUNT, HOOK_ARM_MCOUNT, HOOK_THUNK };

#if defined(__arm__)
/* 32-bit ARM's __gnu_mcount_nc is called with the function's return
 * address pushed (at PUSHED), which it pops into lr as it returns: a leaf
 * function returns from there. A function that calls others has saved lr
 * in its prologue already, higher in its frame (above its locals), and
 * returns from that copy: the first word above PUSHED holding the same
 * address. Nothing else in the frames above holds it (a return address
 * into the caller, where the caller called this function; a tail call's,
 * the trampoline's, is not looked for), so the first such word is the
 * one; none within NP_ARM_SCAN_WORDS, or below the thread's stack top,
 * means a leaf. Each call site's answer (its offset from PUSHED) is kept,
 * checked at each call against the address. */
#define NP_ARM_SITES 4096
static uint64_t arm_sites[NP_ARM_SITES]; /* site << 32 | offset in words, 0: empty */
static NP_PORT_TLS uintptr_t stack_lo, stack_top; /* the thread's stack, when known */

static uintptr_t *arm_slot(uintptr_t *pushed, uintptr_t site, const struct rstack *r)
{
    uintptr_t v = *pushed;
    /* A tail call is reached with the trampoline's address in lr, which
     * every replaced slot above holds too: the function's own copy, if it
     * saved one, lies below the slot of the newest call still alive (the
     * one under the call that jumped here). */
    uintptr_t *bound = NULL;
    if (v == (uintptr_t)np_mcount_return)
        bound = r->n >= 2 ? r->v[r->n - 2].slot : (uintptr_t *)UINTPTR_MAX;
    unsigned h = (unsigned)((site * 0x9e3779b1u) >> 20) & (NP_ARM_SITES - 1), i = h;
    for (unsigned k = 0; k < 8; k++, i = (i + 1) & (NP_ARM_SITES - 1)) {
        uint64_t e = __atomic_load_n(&arm_sites[i], __ATOMIC_ACQUIRE);
        if (!e)
            break;
        if ((uintptr_t)(e >> 32) == site) {
            uint32_t off = (uint32_t)e;
            if (pushed[off] == v)
                return pushed + off;
            break;
        }
    }
    uintptr_t *end = pushed + NP_ARM_SCAN_WORDS;
    if (stack_top && (uintptr_t)end > stack_top)
        end = (uintptr_t *)stack_top;
    if (bound && end > bound)
        end = bound;
    uint32_t off = 0;
    for (uintptr_t *q = pushed + 1; q < end; q++)
        if (*q == v) {
            off = (uint32_t)(q - pushed);
            break;
        }
    if (bound)
        return pushed + off; /* (kept from calls that are not tail calls) */
    uint64_t mine = (uint64_t)site << 32 | off;
    for (unsigned k = 0; k < 8; k++, h = (h + 1) & (NP_ARM_SITES - 1)) {
        uint64_t zero = 0;
        if (__atomic_compare_exchange_n(&arm_sites[h], &zero, mine, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED) ||
            (uintptr_t)(zero >> 32) == site)
            break;
    }
    return pushed + off;
}
#endif

/* The call's entry on the return stack, N raised first. */
static inline __attribute__((always_inline)) void rs_push(struct rstack *r, uintptr_t *slot, uintptr_t ret,
                                                          uintptr_t fn)
{
    uint32_t i = r->n;
    r->n = i + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->v[i].slot = slot;
    r->v[i].ret = ret;
    r->v[i].fn = fn;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The entry told: the call trace's arguments (for the record the entry
 * writes), the entry, the recorder's values; the arguments when SEEN. */
static inline __attribute__((always_inline)) void tell_enter(uintptr_t fn, uintptr_t site, const uintptr_t *words,
                                                             const uint64_t *regs, int seen)
{
    void (*args)(uintptr_t, const uintptr_t *) = __atomic_load_n(&args_fn, __ATOMIC_RELAXED);
    if (args && seen)
        args(fn, words);
    np_hooks_enter_here((void *)fn, (void *)site);
    void (*values)(uintptr_t, const uint64_t *) = __atomic_load_n(&np_mcount_values, __ATOMIC_RELAXED);
    if (values && seen)
        values(fn, regs);
}

/* Any call of function FN (np_mcount_enter's arguments): tail calls,
 * frames left by a jump, a return stack to grow, signed return addresses. */
NP_HOOKS_TEXT static __attribute__((noinline)) int enter_any(uintptr_t *slot, uintptr_t ret, uintptr_t fentry,
                                               const uint64_t *regs, uintptr_t fn)
{
    struct rstack *r = &rs;
    if (r->busy) {
        __atomic_fetch_add(&unhooked, 1, __ATOMIC_RELAXED);
        return 0;
    }
    const uintptr_t *words = (const uintptr_t *)regs; /* as the assembly saved them, a word each */
#if defined(__arm__)
    /* the argument registers as the values hooks take them */
    uint64_t regs64[4];
    for (int k = 0; k < 4; k++)
        regs64[k] = ((const uint32_t *)regs)[k];
    regs = regs64;
    if (!stack_top) /* once per thread: the search's bound, and the cleanup's below */
        (void)np_posix_thread_stack(pthread_self(), &stack_lo, &stack_top);
    slot = arm_slot(slot, ret, r);
#endif
    uintptr_t parent = *slot;
    int tail = parent == (uintptr_t)np_mcount_return;
    if (fentry == HOOK_A64_MCOUNT && a64_signed(parent, ret)) {
        __atomic_fetch_add(&unfound, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (tail) {
        /* a tail call: the function whose return this slot holds jumped
         * here; this call is its child, and both return at once. On
         * AArch64 the callee has a frame record of its own: the caller's
         * call is the newest. */
        long k = fentry == HOOK_A64_MCOUNT || fentry == HOOK_ARM_MCOUNT ? (long)r->n - 1 : rs_find(r, slot);
        if (k < 0)
            return 0;
        rs_close_above(r, (uint32_t)k + 1);
        parent = r->v[k].ret;
    }
#if defined(__arm__)
    /* calls whose slot is at or below this one's have ended, left by a
     * jump (32-bit ARM has no setjmp interposition): a caller's slot is
     * above its callee's frame. Not on another stack (a signal handler's
     * alternate one), whose addresses say nothing of the thread's. */
    if (!tail && (uintptr_t)slot - stack_lo < stack_top - stack_lo) {
        uint32_t live = r->n;
        while (live && r->v[live - 1].slot <= slot)
            live--;
        rs_close_above(r, live);
    }
#endif
    if (r->n == r->cap && rs_grow(r) < 0) {
        __atomic_fetch_add(&unhooked, 1, __ATOMIC_RELAXED);
        return 0;
    }
    /* A function reached by a jump from one a thunk called finds the
     * thunk's return point in its slot (a thunk's own call follows: both
     * return there, this one first): the call site is the first's. */
    uintptr_t site = parent;
    for (long k = (long)r->n - 1; !tail && k >= 0 && r->v[k].slot == slot; k--)
        site = r->v[k].ret;
    rs_push(r, slot, parent, fn);
    if (!tail && fentry != HOOK_THUNK)
        *slot = (uintptr_t)np_mcount_return;
    tell_enter(fn, site, words, regs, fentry != HOOK_A64_MCOUNT); /* (AArch64's: no arguments in REGS) */
    return 1;
}

#if defined(__x86_64__)
/* The common call: on a return stack with room, under a call of another
 * slot (no tail call, no frame left by a jump), the slot holding the
 * caller's return address, replaced with the trampoline's when REPLACE.
 * 1 hooked; -1 not that call. */
static inline __attribute__((always_inline)) int enter_common(uintptr_t *slot, uintptr_t fn, const uint64_t *regs,
                                                              int replace)
{
    struct rstack *r = &rs;
    uint32_t n = r->n;
    uintptr_t parent = *slot;
    if (__builtin_expect(r->busy || n == r->cap || parent == (uintptr_t)np_mcount_return ||
                             r->v[(long)n - 1].slot == slot, 0)) /* (v[-1]: rs_grow's, slot 0) */
        return -1;
    rs_push(r, slot, parent, fn);
    if (replace)
        *slot = (uintptr_t)np_mcount_return;
    tell_enter(fn, parent, (const uintptr_t *)regs, regs, 1);
    return 1;
}
#endif

/* From the assembly: SLOT holds the function's return address, RET is the
 * hook's own (in the function), FENTRY says which hook, REGS the argument
 * registers as it saved them (rdi, rsi, rdx, rcx, r8, r9; on AArch64 x0-x7,
 * x0 the function's return address as -pg passes it). 1: the call is
 * hooked (its exit will come). */
NP_HOOKS_TEXT __attribute__((used, visibility("hidden"))) int np_mcount_enter(uintptr_t *slot, uintptr_t ret, uintptr_t fentry,
                                                                 const uint64_t *regs)
{
    /* a patched entry's call (patch.c) is always five bytes; (read before
     * the module's first call has its calls rewritten) */
    uintptr_t fn = fentry == HOOK_PATCHED ? ret - 5 : fentry == HOOK_FENTRY ? fentry_start(ret) : ret;
    if (!wanted(ret))
        return 0;
#if defined(__x86_64__)
    int rc = enter_common(slot, fn, regs, 1);
    if (rc >= 0)
        return rc;
#endif
    return enter_any(slot, ret, fentry, regs, fn);
}

/* The calls a return to the trampoline (or a thunk's exit) with the stack
 * pointer at SP ends: from the first (whose return address it takes) to
 * *CALL (the one that returns: the newest of those whose return address
 * was in that slot, tail calls, which kept the first's return address; a
 * thunk's tail call kept its thunk's, and returns there alone) and above
 * it those left by a jump. The first, or -1 when
 * there is none. On x86-64 the return took its address from just below
 * SP; on AArch64 every frame record below SP is gone. */
static long rs_ending(const struct rstack *r, const uintptr_t *sp, long *call)
{
    long i = r->n ? (long)r->n - 1 : -1;
#if defined(__x86_64__)
    const uintptr_t *slot = sp - 1;
    if (i < 0 || r->v[i].slot != slot)
        i = rs_find(r, slot);
    *call = i;
    while (i > 0 && r->v[i - 1].slot == slot && r->v[i - 1].ret == r->v[i].ret)
        i--;
#else
    *call = i;
    if (i < 0 || r->v[i].slot >= sp)
        return -1;
    while (i > 0 && r->v[i - 1].slot < sp)
        i--;
#endif
    return i;
}

/* The exit of call I told (the recorder's return value first, REGS[0]),
 * its return to RET, and its entry off the return stack. */
static inline __attribute__((always_inline)) void tell_exit(struct rstack *r, uint32_t i, uintptr_t ret,
                                                            const uint64_t *regs)
{
    void (*values)(uintptr_t, const uint64_t *) = __atomic_load_n(&np_mcount_retvals, __ATOMIC_RELAXED);
    if (values)
        values(r->v[i].fn, regs);
    np_hooks_exit_here((void *)r->v[i].fn, (void *)ret);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->n = i;
}

/* From the trampoline, with the stack as the function's return left it
 * (SP); REGS[0] is the return value's register (rax, x0) as the function
 * returned it. Returns where the function returns to. */
NP_HOOKS_TEXT static __attribute__((noinline)) uintptr_t exit_any(uintptr_t *sp, const uint64_t *regs)
{
    struct rstack *r = &rs;
#if defined(__arm__)
    uint64_t ret64[2] = { ((const uint32_t *)regs)[0], ((const uint32_t *)regs)[1] }; /* r0, r1 */
    regs = ret64;
#endif
    long i, first = rs_ending(r, sp, &i);
    if (first < 0) {
        static const char msg[] = "nanoprof: a return through a replaced return address with no record of "
                                  "it (a stack switched or copied?): cannot go on\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    rs_close_above(r, (uint32_t)i + 1);
    uintptr_t ret = r->v[first].ret;
    for (; i >= first; i--) /* a tail call's callers return what it returns, as uftrace shows */
        tell_exit(r, (uint32_t)i, ret, regs);
    return ret;
}

NP_HOOKS_TEXT __attribute__((used, visibility("hidden"))) uintptr_t np_mcount_exit(uintptr_t *sp, const uint64_t *regs)
{
#if defined(__x86_64__)
    /* the common return: the newest call's, alone in its slot */
    struct rstack *r = &rs;
    uint32_t n = r->n;
    const uintptr_t *slot = sp - 1;
    if (__builtin_expect(n && r->v[n - 1].slot == slot && r->v[(long)n - 2].slot != slot, 1)) { /* (v[-1]'s slot: 0) */
        uintptr_t ret = r->v[n - 1].ret;
        tell_exit(r, n - 1, ret, regs);
        return ret;
    }
#endif
    return exit_any(sp, regs);
}

#if defined(__x86_64__)
/* A thunk's entry (the assembly's np_thunk_enter). */
NP_HOOKS_TEXT __attribute__((used, visibility("hidden"))) int np_thunk_enter_c(uintptr_t *slot, uintptr_t fn, const uint64_t *regs)
{
    int rc = enter_common(slot, fn, regs, 0);
    return rc >= 0 ? rc : enter_any(slot, fn, HOOK_THUNK, regs, fn);
}

/* ---- a thunk's own fast path ------------------------------------------ */

#if !NP_CALLTRACE_ARGS && defined(NP_PORT_THUNK_LEAVES)
/* The user hooks' word (hooks.c's, where the library has them) */
#if defined(NP_HOOKS_MECHANISMS) && (NP_HOOKS_MECHANISMS & NP_MECH_USER)
#define NP_FAST_GLOBAL (&np_hooks_global)
#else
static const uint32_t no_global;
#define NP_FAST_GLOBAL (&no_global)
#endif

/* The fast path of each thunk, copied in front of its calls (thunks.c)
 * and patched: the common call (what enter_common and np_mcount_exit's
 * first test take) is told here, with the return stack's entry written
 * as rs_push writes it, where one mechanism alone runs on the thread: the
 * call trace in log mode, its record written as np_ct_log_enter writes it
 * (the offsets and sizes are theirs, and test_pg_fast compares the records
 * both ways); function cost or the recorder, by hooks_leaf.c's leaf
 * functions, from code each area of thunks shares; the exit the same way,
 * in shared code too. Anything else goes to the thunk's calls before
 * anything is written, or at the exit to np_thunk_exit. Registers: %r11
 * is free at a function's start, %rax (a variadic call's count), %rcx and
 * %rdx are saved; at the return %rax and %rdx hold the value, the rest
 * are free. Patched: the thread-local
 * offsets (np_cur's and rs's, in static TLS: from the thread pointer at
 * %fs:0), the words read, the function, the call of its body and the
 * jumps out; the rest is position-independent. */
extern const uint8_t np_fast_start[], np_fast_cur0[], np_fast_rs0[], np_fast_extras0[], np_fast_global0[],
    np_fast_return0[], np_fast_fn0[], np_fast_enter[], np_fast_body[], np_fast_exit0[], np_fast_calls[],
    np_fast_end[];
extern const uint8_t np_fenter_start[], np_fenter_cost[], np_fenter_extras[], np_fenter_rec[], np_fenter_args[],
    np_fenter_end[];
extern const uint8_t np_fexit_start[], np_fexit_cur[], np_fexit_rs[], np_fexit_cost[], np_fexit_extras[],
    np_fexit_rec[], np_fexit_slow[], np_fexit_end[];

__attribute__((used)) static void fast_template(void)
{
    __asm__ volatile(
        ".pushsection .rodata.np_fast, \"a\", @progbits\n"
        ".globl np_fast_start, np_fast_cur0, np_fast_rs0, np_fast_extras0, np_fast_global0, np_fast_return0\n"
        ".globl np_fast_fn0, np_fast_enter, np_fast_body, np_fast_exit0, np_fast_calls, np_fast_end\n"
        ".globl np_fenter_start, np_fenter_cost, np_fenter_extras, np_fenter_rec, np_fenter_args, np_fenter_end\n"
        ".globl np_fexit_start, np_fexit_cur, np_fexit_rs, np_fexit_cost, np_fexit_extras, np_fexit_rec, np_fexit_slow, np_fexit_end\n"
        ".hidden np_fast_start, np_fast_cur0, np_fast_rs0, np_fast_extras0, np_fast_global0, np_fast_return0\n"
        ".hidden np_fast_fn0, np_fast_enter, np_fast_body, np_fast_exit0, np_fast_calls, np_fast_end\n"
        ".hidden np_fenter_start, np_fenter_cost, np_fenter_extras, np_fenter_rec, np_fenter_args, np_fenter_end\n"
        ".hidden np_fexit_start, np_fexit_cur, np_fexit_rs, np_fexit_cost, np_fexit_extras, np_fexit_rec, np_fexit_slow, np_fexit_end\n"
        "np_fast_start:\n"
        /* the caller's return address at 24(%%rsp) once these are pushed */
        "  pushq %%rax\n"
        "  pushq %%rcx\n"
        "  pushq %%rdx\n"
        "  movq %%fs:0, %%rcx\n"
        "  movq 0x7fffffff(%%rcx), %%r11\n" /* np_cur */
        "np_fast_cur0:\n"
        "  movabsq $0x7fffffffffffffff, %%rax\n" /* &mcount_extras */
        "np_fast_extras0:\n"
        "  testl $1, (%%rax)\n"
        "  jnz 9f\n"
        "  movabsq $0x7fffffffffffffff, %%rax\n" /* the user hooks' word */
        "np_fast_global0:\n"
        "  cmpl $0, (%%rax)\n"
        "  jne 9f\n"
        "  leaq 0x7fffffff(%%rcx), %%rcx\n" /* &rs */
        "np_fast_rs0:\n"
        "  cmpl $0, %c[busy](%%rcx)\n"
        "  jne 9f\n"
        "  movl %c[n](%%rcx), %%eax\n"
        "  cmpl %c[cap](%%rcx), %%eax\n"
        "  jae 9f\n"
        "  movq %c[v](%%rcx), %%rdx\n"
        "  leaq (%%rax,%%rax,2), %%rax\n"
        "  leaq (%%rdx,%%rax,8), %%rdx\n" /* &v[n] */
        "  leaq 24(%%rsp), %%rax\n"       /* the slot */
        "  cmpq %%rax, %c[slot]-%c[esize](%%rdx)\n"
        "  je 9f\n"                       /* a tail call's (v[-1]: slot 0) */
        "  movabsq $0x7fffffffffffffff, %%rax\n" /* np_mcount_return */
        "np_fast_return0:\n"
        "  cmpq %%rax, 24(%%rsp)\n"
        "  je 9f\n"
        /* the return stack's entry, N raised first */
        "  addl $1, %c[n](%%rcx)\n"
        "  leaq 24(%%rsp), %%rax\n"
        "  movq %%rax, %c[slot](%%rdx)\n"
        "  movq 24(%%rsp), %%rax\n"
        "  movq %%rax, %c[ret](%%rdx)\n"
        "  movabsq $0x7fffffffffffffff, %%rax\n" /* the function */
        "np_fast_fn0:\n"
        "  movq %%rax, %c[fn](%%rdx)\n"
        /* which mechanism: the call trace alone in log mode, here; else
         * the area's enter (below): 1 done, 0 not */
        "  movl %c[hot](%%r11), %%edx\n"
        "  andl $%c[ctmask], %%edx\n"
        "  cmpl $%c[ctlog], %%edx\n"
        "  je 1f\n"
        "  .byte 0xe8\n" /* to the area's enter */
        "  .long 0\n"
        "np_fast_enter:\n"
        "  testl %%eax, %%eax\n"
        "  jnz 7f\n"
        "6:\n"
        "  subl $1, %c[n](%%rcx)\n" /* (the entry taken back) */
        "9:\n"
        "  popq %%rdx\n"
        "  popq %%rcx\n"
        "  popq %%rax\n"
        "  .byte 0xe9\n" /* to the thunk's calls */
        "  .long 0\n"
        "np_fast_calls:\n"
        "1:\n"
        /* the record: its place taken (the ring round at its end), the
         * depth raised, then written */
        "  movq %c[pos](%%r11), %%rcx\n"
        "  cmpq %c[end](%%r11), %%rcx\n"
        "  jne 1f\n"
        "  movq %c[buf](%%r11), %%rcx\n"
        "  addl $1, %c[wraps](%%r11)\n"
        "  adcl $0, %c[wraps_hi](%%r11)\n"
        "1:\n"
        "  leaq %c[rsize](%%rcx), %%rdx\n"
        "  movq %%rdx, %c[pos](%%r11)\n"
        "  movl %c[depth](%%r11), %%edx\n"
        "  addl $1, %%edx\n"
        "  movl %%edx, %c[depth](%%r11)\n"
        "  movq %%rax, (%%rcx)\n"
        "  cmpl $%c[dmax], %%edx\n"
        "  jb 2f\n"
        "  movl $%c[dmax], %%edx\n"
        "2:\n"
        "  shlq $%c[abits], %%rdx\n"
        "  orq 24(%%rsp), %%rdx\n"
        "  movq %%rdx, 8(%%rcx)\n"
        "7:\n"
        "  popq %%rdx\n"
        "  popq %%rcx\n"
        "  popq %%rax\n"
        "  leaq 8(%%rsp), %%rsp\n" /* the body called from the caller's slot */
        "  .byte 0xe8\n"
        "  .long 0\n"
        "np_fast_body:\n" /* (where the body returns) */
        "  .byte 0xe9\n"  /* to the area's exit */
        "  .long 0\n"
        "np_fast_exit0:\n"
        "np_fast_end:\n"
        /* the enter of cost or the recorder alone, one per area, called
         * by a thunk's fast path with the function in %%rax, the thread in
         * %%r11, the caller's return address at 32(%%rsp): a leaf
         * function of hooks_leaf.c's given the function, its call site
         * and the thread (with `record -A`, the argument registers too:
         * below); %%eax 1 done, 0 not */
        "np_fenter_start:\n"
        "  movl %c[hot](%%r11), %%edx\n"
        "  andl $%c[costmask], %%edx\n"
        "  cmpl $%c[cost], %%edx\n"
        "  jne 5f\n"
        "  movabsq $0x7fffffffffffffff, %%rdx\n" /* np_hooks_cost_enter_leaf */
        "np_fenter_cost:\n"
        "  jmp 4f\n"
        "5:\n"
        "  movl %c[hot](%%r11), %%edx\n"
        "  andl $%c[recmask], %%edx\n"
        "  cmpl $%c[rec], %%edx\n"
        "  jne 0f\n"
        "  movabsq $0x7fffffffffffffff, %%rdx\n" /* &mcount_extras: arguments (-A)? */
        "np_fenter_extras:\n"
        "  testl $2, (%%rdx)\n"
        "  jnz 1f\n"
        "  movabsq $0x7fffffffffffffff, %%rdx\n" /* np_hooks_rec_enter_leaf */
        "np_fenter_rec:\n"
        "4:\n"
        /* what the leaf may change and is live: the argument registers
         * (%%rax and %%rdx the thunk saved), the static chain, the return
         * stack's pointer */
        "  pushq %%rdi\n"
        "  pushq %%rsi\n"
        "  pushq %%r8\n"
        "  pushq %%r9\n"
        "  pushq %%r10\n"
        "  pushq %%rcx\n"
        "  leaq -8(%%rsp), %%rsp\n" /* (the stack aligned for the call) */
        "  movq %%rax, %%rdi\n"
        "  movq 88(%%rsp), %%rsi\n"
        "  movq %%rdx, %%rax\n"
        "  movq %%r11, %%rdx\n"
        "  call *%%rax\n"
        "  leaq 8(%%rsp), %%rsp\n"
        "  popq %%rcx\n"
        "  popq %%r10\n"
        "  popq %%r9\n"
        "  popq %%r8\n"
        "  popq %%rsi\n"
        "  popq %%rdi\n"
        "  ret\n"
        "0:\n"
        "  xorl %%eax, %%eax\n"
        "  ret\n"
        /* the recorder's with the arguments: the leaf given them as an
         * array, rdi to r9 (rdx and rcx the thunk's copies), above what
         * else is live */
        "1:\n"
        "  pushq %%r10\n"
        "  pushq %%rcx\n"
        "  pushq %%r9\n"
        "  pushq %%r8\n"
        "  pushq 48(%%rsp)\n" /* the caller's %%rcx */
        "  pushq 48(%%rsp)\n" /* its %%rdx */
        "  pushq %%rsi\n"
        "  pushq %%rdi\n"
        "  leaq -8(%%rsp), %%rsp\n" /* (the stack aligned for the call) */
        "  movq %%rax, %%rdi\n"
        "  movq 104(%%rsp), %%rsi\n"
        "  movq %%r11, %%rdx\n"
        "  leaq 8(%%rsp), %%rcx\n"
        "  movabsq $0x7fffffffffffffff, %%rax\n" /* np_hooks_rec_args_enter_leaf */
        "np_fenter_args:\n"
        "  call *%%rax\n"
        "  leaq 8(%%rsp), %%rsp\n"
        "  popq %%rdi\n"
        "  popq %%rsi\n"
        "  leaq 16(%%rsp), %%rsp\n"
        "  popq %%r8\n"
        "  popq %%r9\n"
        "  popq %%rcx\n"
        "  popq %%r10\n"
        "  ret\n"
        "np_fenter_end:\n"
        /* the exit, one per area: the newest call's, alone in its slot */
        "np_fexit_start:\n"
        "  movq %%fs:0, %%rcx\n"
        "  movq 0x7fffffff(%%rcx), %%r11\n"
        "np_fexit_cur:\n"
        "  leaq 0x7fffffff(%%rcx), %%rcx\n"
        "np_fexit_rs:\n"
        "  movl %c[n](%%rcx), %%esi\n"
        "  testl %%esi, %%esi\n"
        "  jz 8f\n"
        "  movq %c[v](%%rcx), %%rdi\n"
        "  leaq (%%rsi,%%rsi,2), %%r9\n"
        "  leaq -%c[esize](%%rdi,%%r9,8), %%r9\n" /* &v[n - 1] */
        "  leaq -8(%%rsp), %%r8\n"                /* the slot */
        "  cmpq %%r8, %c[slot](%%r9)\n"
        "  jne 8f\n"
        "  cmpq %%r8, %c[slot]-%c[esize](%%r9)\n"
        "  je 8f\n"
        "  movq %c[ret](%%r9), %%r10\n"
        "  movl %c[hot](%%r11), %%esi\n"
        "  andl $%c[ctmask], %%esi\n"
        "  cmpl $%c[ctlog], %%esi\n"
        "  je 4f\n"
        "  movl %c[hot](%%r11), %%esi\n"
        "  andl $%c[costmask], %%esi\n"
        "  cmpl $%c[cost], %%esi\n"
        "  jne 5f\n"
        "  movabsq $0x7fffffffffffffff, %%r8\n" /* np_hooks_cost_exit_leaf */
        "np_fexit_cost:\n"
        "  jmp 2f\n"
        "5:\n"
        "  movl %c[hot](%%r11), %%esi\n"
        "  andl $%c[recmask], %%esi\n"
        "  cmpl $%c[rec], %%esi\n"
        "  jne 8f\n"
        "  movabsq $0x7fffffffffffffff, %%r8\n" /* &mcount_extras: no return values */
        "np_fexit_extras:\n"
        "  testl $4, (%%r8)\n"
        "  jnz 8f\n"
        "  movabsq $0x7fffffffffffffff, %%r8\n" /* np_hooks_rec_exit_leaf */
        "np_fexit_rec:\n"
        "2:\n"
        /* the return value, and the return stack and address kept here
         * (the rest is free at a return) */
        "  pushq %%rax\n"
        "  pushq %%rdx\n"
        "  pushq %%rcx\n"
        "  pushq %%r10\n"
        "  movq %c[fn](%%r9), %%rdi\n"
        "  movq %%r10, %%rsi\n"
        "  movq %%r11, %%rdx\n"
        "  call *%%r8\n"
        "  testl %%eax, %%eax\n"
        "  popq %%r10\n"
        "  popq %%rcx\n"
        "  popq %%rdx\n"
        "  popq %%rax\n"
        "  jz 8f\n"
        "  jmp 3f\n"
        "4:\n"
        "  movl %c[depth](%%r11), %%edi\n"
        "  testl %%edi, %%edi\n"
        "  jz 3f\n"
        "  subl $1, %%edi\n"
        "  movl %%edi, %c[depth](%%r11)\n"
        "3:\n"
        "  subl $1, %c[n](%%rcx)\n"
        "  pushq %%r10\n"
        "  ret\n"
        "8:\n"
        "  .byte 0xe9\n" /* to np_thunk_exit */
        "  .long 0\n"
        "np_fexit_slow:\n"
        "np_fexit_end:\n"
        ".popsection\n"
        :
        : [hot] "i"(offsetof(struct np_thread, hot)),
          [ctmask] "i"(NP_HOT_MASK(NP_F_BUSY | NP_F_COST_ON | NP_F_REC_ON | NP_F_CT_ON | NP_F_CT_LOG)),
          [ctlog] "i"(NP_F_CT_ON | NP_F_CT_LOG),
          [costmask] "i"(NP_HOT_MASK(NP_F_BUSY | NP_F_CT_ON | NP_F_COST_ON | NP_F_REC_ON) | NP_F_COST_SLOW),
          [cost] "i"(NP_F_COST_ON), [recmask] "i"(NP_HOT_MASK(NP_F_BUSY | NP_F_CT_ON | NP_F_COST_ON | NP_F_REC_ON)),
          [rec] "i"(NP_F_REC_ON), [busy] "i"(offsetof(struct rstack, busy)),
          [n] "i"(offsetof(struct rstack, n)), [cap] "i"(offsetof(struct rstack, cap)),
          [v] "i"(offsetof(struct rstack, v)), [esize] "i"(sizeof(struct rs_entry)),
          [slot] "i"(offsetof(struct rs_entry, slot)), [ret] "i"(offsetof(struct rs_entry, ret)),
          [fn] "i"(offsetof(struct rs_entry, fn)), [pos] "i"(offsetof(struct np_thread, ct.pos)),
          [end] "i"(offsetof(struct np_thread, ct.end)), [buf] "i"(offsetof(struct np_thread, ct.buf)),
          [wraps] "i"(offsetof(struct np_thread, ct.wraps)),
          [wraps_hi] "i"(offsetof(struct np_thread, ct.wraps_hi)),
          [depth] "i"(offsetof(struct np_thread, ct.depth)), [rsize] "i"(sizeof(np_trace_record)),
          [dmax] "i"(NP_DEPTH_MAX), [abits] "i"(NP_ADDR_BITS));
}
_Static_assert(sizeof(np_trace_record) == 16 && NP_ADDR_BITS == 48 && NP_PORT_CODE_ADDR_FITS,
               "the fast path writes the 64-bit host's record: function; site | level << 48");

/* VAR's offset from the thread pointer, where a 32-bit displacement holds
 * it. */
static int fast_tls(const void *var, int32_t *off)
{
    int64_t d = tls_offset(var);
    *off = (int32_t)d;
    return d == *off;
}

/* A word a copy of a template takes: the N bytes that end at LABEL. */
struct fast_word {
    const uint8_t *label;
    const void *v;
    size_t n;
};

/* The template FROM..TO copied to AT, its N words W written. */
static void fast_copy(uint8_t *at, const uint8_t *from, const uint8_t *to, const struct fast_word *w, size_t n)
{
    memcpy(at, from, (size_t)(to - from));
    for (size_t i = 0; i < n; i++)
        memcpy(at + (w[i].label - from) - w[i].n, w[i].v, w[i].n);
}

/* The call or jump (OP) that ends at LABEL, to TO. */
static void fast_rel(uint8_t *t, const uint8_t *from, const uint8_t *label, uint8_t op, uintptr_t to)
{
    size_t at = (size_t)(label - from) - 5;
    np_posix_code_rel(t + at, (uintptr_t)t + at, op, to);
}

int np_thunk_shared_put(uint8_t *at, uintptr_t slow, struct np_thunk_fast *f)
{
    size_t ne = (size_t)(np_fenter_end - np_fenter_start), nx = (size_t)(np_fexit_end - np_fexit_start);
    f->enter = f->exit = 0;
    if (((nx + 63) & ~(size_t)63) + ne > NP_THUNK_SHARED_BYTES ||
        (size_t)(np_fast_end - np_fast_start) > NP_THUNK_BYTES - NP_THUNK_CALLS || !fast_tls(&np_cur, &f->cur) ||
        !fast_tls(&rs, &f->rs))
        return 0;
    uintptr_t extras = (uintptr_t)&mcount_extras, cost_in = (uintptr_t)np_hooks_cost_enter_leaf,
              rec_in = (uintptr_t)np_hooks_rec_enter_leaf, cost_out = (uintptr_t)np_hooks_cost_exit_leaf,
              rec_out = (uintptr_t)np_hooks_rec_exit_leaf, rec_args = (uintptr_t)np_hooks_rec_args_enter_leaf;
    const struct fast_word in[] = { { np_fenter_cost, &cost_in, 8 },
                                    { np_fenter_extras, &extras, 8 },
                                    { np_fenter_rec, &rec_in, 8 },
                                    { np_fenter_args, &rec_args, 8 } };
    const struct fast_word out[] = { { np_fexit_cur, &f->cur, 4 },     { np_fexit_rs, &f->rs, 4 },
                                     { np_fexit_cost, &cost_out, 8 },  { np_fexit_extras, &extras, 8 },
                                     { np_fexit_rec, &rec_out, 8 } };
    /* the exit first, where AT is: a cache line's start (its speed
     * depends on where it falls); the enter on the next line after it */
    fast_copy(at, np_fexit_start, np_fexit_end, out, sizeof out / sizeof out[0]);
    fast_rel(at, np_fexit_start, np_fexit_slow, 0xe9, slow);
    f->exit = (uintptr_t)at;
    at += (nx + 63) & ~(size_t)63;
    fast_copy(at, np_fenter_start, np_fenter_end, in, sizeof in / sizeof in[0]);
    f->enter = (uintptr_t)at;
    return 1;
}

void np_thunk_fast_put(uint8_t *t, uintptr_t fn, uintptr_t body, const struct np_thunk_fast *f)
{
    uintptr_t calls = (uintptr_t)t + NP_THUNK_BYTES - NP_THUNK_CALLS;
    if (!f->exit) {
        np_posix_code_rel(t, (uintptr_t)t, 0xe9, calls); /* the calls alone */
        return;
    }
    uintptr_t extras = (uintptr_t)&mcount_extras, ret = (uintptr_t)np_mcount_return,
              global = (uintptr_t)NP_FAST_GLOBAL;
    const struct fast_word w[] = { { np_fast_cur0, &f->cur, 4 },     { np_fast_rs0, &f->rs, 4 },
                                   { np_fast_extras0, &extras, 8 },  { np_fast_global0, &global, 8 },
                                   { np_fast_return0, &ret, 8 },     { np_fast_fn0, &fn, 8 } };
    const uint8_t *from = np_fast_start;
    fast_copy(t, from, np_fast_end, w, sizeof w / sizeof w[0]);
    fast_rel(t, from, np_fast_enter, 0xe8, f->enter);
    fast_rel(t, from, np_fast_calls, 0xe9, calls);
    fast_rel(t, from, np_fast_body, 0xe8, body);
    fast_rel(t, from, np_fast_exit0, 0xe9, f->exit);
}

size_t np_thunk_fast_return(void) { return (size_t)(np_fast_body - np_fast_start); }
#else
int np_thunk_shared_put(uint8_t *at, uintptr_t slow, struct np_thunk_fast *f)
{
    (void)at, (void)slow;
    f->enter = f->exit = 0;
    return 0;
}

void np_thunk_fast_put(uint8_t *t, uintptr_t fn, uintptr_t body, const struct np_thunk_fast *f)
{
    (void)fn, (void)body, (void)f;
    np_posix_code_rel(t, (uintptr_t)t, 0xe9, (uintptr_t)t + NP_THUNK_BYTES - NP_THUNK_CALLS);
}

size_t np_thunk_fast_return(void) { return SIZE_MAX; }
#endif
#endif

/* ---- jumps, unwinding, backtraces -------------------------------------- */

void np_mcount_setjmp(const void *env)
{
    struct rstack *r = &rs;
    struct rs_mark *m = NULL;
    for (int i = 0; i < NP_JMP_MARKS; i++)
        if (r->marks[i].env == env)
            m = &r->marks[i];
    if (!m) {
        m = &r->marks[r->next_mark];
        r->next_mark = (r->next_mark + 1) % NP_JMP_MARKS;
    }
    m->env = env;
    m->n = r->n;
}

void np_mcount_longjmp(const void *env)
{
    struct rstack *r = &rs;
    for (int i = 0; i < NP_JMP_MARKS; i++)
        if (r->marks[i].env == env && r->marks[i].n < r->n)
            r->n = r->marks[i].n;
}

/* The original return addresses back in their slots (before the stack is
 * unwound by reading them), or the trampoline's again (after). */
static void rs_put_back(void)
{
    struct rstack *r = &rs;
    for (uint32_t i = 0; i < r->n; i++)
        if (*r->v[i].slot == (uintptr_t)np_mcount_return || np_thunk_return_point(*r->v[i].slot))
            *r->v[i].slot = r->v[i].ret;
}

static void rs_take_again(void)
{
    struct rstack *r = &rs;
    for (uint32_t i = 0; i < r->n; i++)
        if (*r->v[i].slot == r->v[i].ret)
            *r->v[i].slot = (uintptr_t)np_mcount_return;
}

/* Calls not hooked are said once, at the end: their events are missing
 * from every mechanism (their nesting is not, since neither end was told). */
__attribute__((destructor)) static void say_unhooked(void)
{
    uint64_t n = __atomic_load_n(&unhooked, __ATOMIC_RELAXED), m = __atomic_load_n(&unfound, __ATOMIC_RELAXED);
    char line[320];
    int len = 0;
    if (n)
        len = snprintf(line, sizeof line,
                       "nanoprof: %llu calls of -pg code were not hooked (made while a thread's return stack grew, "
                       "or with no memory for it)\n", (unsigned long long)n);
    if (m)
        len += snprintf(line + len, sizeof line - (size_t)len,
                       "nanoprof: %llu calls of -pg code were not hooked: their return address is signed "
                       "(built with -mbranch-protection)\n", (unsigned long long)m);
    if (len > 0)
        (void)!write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
}

uintptr_t np_mcount_frame_return(const uintptr_t *slot, uintptr_t ret, long *cursor)
{
    if (ret != (uintptr_t)np_mcount_return && !np_thunk_return_point(ret))
        return ret;
    const struct rstack *r = &rs;
    long k = *cursor == -1 || *cursor >= (long)r->n ? (long)r->n - 1 : *cursor; /* (-2: none left) */
    while (k >= 0 && r->v[k].slot != slot)
        k--;
    if (k < 0)
        return ret;
    while (k > 0 && r->v[k - 1].slot == slot) /* (a tail call's: its caller's) */
        k--;
    *cursor = k > 0 ? k - 1 : -2;
    return r->v[k].ret;
}

/* An exception is thrown: the unwinder reads the return addresses. */
void np_mcount_unwinding(void) { rs_put_back(); }

/* A landing pad runs (a cleanup, or the handler) in the frame whose stack
 * pointer at its calls is LIVE: the calls whose return addresses lie below
 * are over. */
void np_mcount_unwound(const void *live)
{
    struct rstack *r = &rs;
    uint32_t i = r->n;
    while (i > 0 && (const void *)r->v[i - 1].slot < live)
        i--;
    rs_close_above(r, i);
}

/* The exception is caught: the frames left return through the trampoline. */
void np_mcount_caught(void) { rs_take_again(); }

#if defined(NP_INTERPOSE_NEXT)
#define NP_NEXT(type, name) ((type)dlsym(RTLD_NEXT, name))

NP_HOOK __attribute__((noreturn)) void pthread_exit(void *value)
{
    rs_put_back();
    rs.n = 0;
    NP_NEXT(void (*)(void *), "pthread_exit")(value);
    __builtin_unreachable();
}

NP_HOOK int backtrace(void **buf, int size)
{
    rs_put_back();
    int n = NP_NEXT(int (*)(void **, int), "backtrace")(buf, size);
    rs_take_again();
    return n;
}
#endif

/* -pg's start and end of glibc's own profiling (gcrt1.o): its histogram
 * timer and gmon.out, which would compete with the runtime's, do nothing. */
NP_HOOK void __monstartup(unsigned long low, unsigned long high) { (void)low, (void)high; }
NP_HOOK void _mcleanup(void) {}

#if defined(__x86_64__)
/* The hooks and the trampoline. Each saves what the function may still
 * need: the argument registers (integer and vector, rax the vector count
 * of a variadic call, r10 the static chain) at entry, the return value
 * registers at exit. */
#define NP_SAVE_ARGS                          \
    "  pushq %rbp\n"                          \
    "  .cfi_adjust_cfa_offset 8\n"            \
    "  .cfi_rel_offset %rbp, 0\n"             \
    "  movq %rsp, %rbp\n"                     \
    "  .cfi_def_cfa_register %rbp\n"          \
    "  andq $-16, %rsp\n"                     \
    "  subq $208, %rsp\n"                     \
    "  movq %rdi, 0(%rsp)\n"                  \
    "  movq %rsi, 8(%rsp)\n"                  \
    "  movq %rdx, 16(%rsp)\n"                 \
    "  movq %rcx, 24(%rsp)\n"                 \
    "  movq %r8, 32(%rsp)\n"                  \
    "  movq %r9, 40(%rsp)\n"                  \
    "  movq %rax, 48(%rsp)\n"                 \
    "  movq %r10, 56(%rsp)\n"                 \
    "  movq %r11, 64(%rsp)\n"                 \
    "  movaps %xmm0, 80(%rsp)\n"              \
    "  movaps %xmm1, 96(%rsp)\n"              \
    "  movaps %xmm2, 112(%rsp)\n"             \
    "  movaps %xmm3, 128(%rsp)\n"             \
    "  movaps %xmm4, 144(%rsp)\n"             \
    "  movaps %xmm5, 160(%rsp)\n"             \
    "  movaps %xmm6, 176(%rsp)\n"             \
    "  movaps %xmm7, 192(%rsp)\n"
#define NP_RESTORE_ARGS                       \
    "  movq 0(%rsp), %rdi\n"                  \
    "  movq 8(%rsp), %rsi\n"                  \
    "  movq 16(%rsp), %rdx\n"                 \
    "  movq 24(%rsp), %rcx\n"                 \
    "  movq 32(%rsp), %r8\n"                  \
    "  movq 40(%rsp), %r9\n"                  \
    "  movq 48(%rsp), %rax\n"                 \
    "  movq 56(%rsp), %r10\n"                 \
    "  movq 64(%rsp), %r11\n"                 \
    "  movaps 80(%rsp), %xmm0\n"              \
    "  movaps 96(%rsp), %xmm1\n"              \
    "  movaps 112(%rsp), %xmm2\n"             \
    "  movaps 128(%rsp), %xmm3\n"             \
    "  movaps 144(%rsp), %xmm4\n"             \
    "  movaps 160(%rsp), %xmm5\n"             \
    "  movaps 176(%rsp), %xmm6\n"             \
    "  movaps 192(%rsp), %xmm7\n"             \
    "  movq %rbp, %rsp\n"                     \
    "  .cfi_def_cfa_register %rsp\n"          \
    "  popq %rbp\n"                           \
    "  .cfi_adjust_cfa_offset -8\n"           \
    "  .cfi_restore %rbp\n"

/* The exit's work, in the trampoline and a thunk's exit: the return value
 * kept, np_mcount_exit told, where to return in r11. The trampoline's
 * address goes first in the slot the return freed, its frame's return
 * address: a frame-pointer walk while the exit runs (a sample's) takes the
 * caller's from the return stack there, as for any replaced one. */
#define NP_RETURN_HOOK                        \
    "  leaq np_mcount_return(%rip), %r11\n"   \
    "  pushq %r11\n"                          \
    "  pushq %rbp\n"                          \
    "  movq %rsp, %rbp\n"                     \
    "  andq $-16, %rsp\n"                     \
    "  subq $48, %rsp\n"                      \
    "  movq %rax, 0(%rsp)\n"                  \
    "  movq %rdx, 8(%rsp)\n"                  \
    "  movaps %xmm0, 16(%rsp)\n"              \
    "  movaps %xmm1, 32(%rsp)\n"              \
    "  leaq 16(%rbp), %rdi\n"                 \
    "  movq %rsp, %rsi\n"                     \
    "  call np_mcount_exit\n"                 \
    "  movq %rax, %r11\n"                     \
    "  movq 0(%rsp), %rax\n"                  \
    "  movq 8(%rsp), %rdx\n"                  \
    "  movaps 16(%rsp), %xmm0\n"              \
    "  movaps 32(%rsp), %xmm1\n"              \
    "  movq %rbp, %rsp\n"                     \
    "  popq %rbp\n"                           \
    "  leaq 8(%rsp), %rsp\n"

__asm__(".pushsection np_hooks_text, \"ax\", @progbits\n"
        /* __fentry__: 8(%rbp) its return (the function's start + 5 or 6),
         * 16(%rbp) the function's return address */
        ".globl __fentry__\n"
        ".type __fentry__, @function\n"
        "__fentry__:\n"
        "  .cfi_startproc\n"
        NP_SAVE_ARGS
        "  leaq 16(%rbp), %rdi\n"
        "  movq 8(%rbp), %rsi\n"
        "  movl $1, %edx\n"
        "  movq %rsp, %rcx\n"
        "  call np_mcount_enter\n"
        NP_RESTORE_ARGS
        "  ret\n"
        "  .cfi_endproc\n"
        ".size __fentry__, . - __fentry__\n"
        /* the same for a patched entry (patch.c), through its jump */
        ".globl np_patch_fentry\n"
        ".hidden np_patch_fentry\n"
        ".type np_patch_fentry, @function\n"
        "np_patch_fentry:\n"
        "  .cfi_startproc\n"
        NP_SAVE_ARGS
        "  leaq 16(%rbp), %rdi\n"
        "  movq 8(%rbp), %rsi\n"
        "  movl $2, %edx\n"
        "  movq %rsp, %rcx\n"
        "  call np_mcount_enter\n"
        NP_RESTORE_ARGS
        "  ret\n"
        "  .cfi_endproc\n"
        ".size np_patch_fentry, . - np_patch_fentry\n"
        /* mcount (and _mcount): called with the function's frame set up, its
         * frame pointer in 0(%rbp) once pushed, its return address above that */
        ".globl mcount\n"
        ".type mcount, @function\n"
        ".globl _mcount\n"
        ".type _mcount, @function\n"
        "mcount:\n"
        "_mcount:\n"
        "  .cfi_startproc\n"
        NP_SAVE_ARGS
        "  movq 0(%rbp), %rdi\n"
        "  addq $8, %rdi\n"
        "  movq 8(%rbp), %rsi\n"
        "  xorl %edx, %edx\n"
        "  movq %rsp, %rcx\n"
        "  call np_mcount_enter\n"
        NP_RESTORE_ARGS
        "  ret\n"
        "  .cfi_endproc\n"
        ".size mcount, . - mcount\n"
        ".size _mcount, . - _mcount\n"
        /* the trampoline: reached by a return; the caller's return address
         * is on the return stack, so an unwinder stops here (backtrace(3)
         * has the originals put back while it runs) */
        ".globl np_mcount_return\n"
        ".hidden np_mcount_return\n"
        ".type np_mcount_return, @function\n"
        "  nop\n"
        "np_mcount_return:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined %rip\n"
        NP_RETURN_HOOK
        "  jmp *%r11\n"
        "  .cfi_endproc\n"
        ".size np_mcount_return, . - np_mcount_return\n"
        /* a thunk's first call (thunks.c): its return address in the
         * thunk (the thunk's function at +18 from it, the body at +10),
         * then the function's. Hooked, the caller's return address is on
         * the return stack: the thunk's goes in its place and is returned
         * to, and the thunk calls the body from there. Not hooked, the
         * body runs as if called by the caller. */
        ".globl np_thunk_enter\n"
        ".hidden np_thunk_enter\n"
        ".type np_thunk_enter, @function\n"
        "np_thunk_enter:\n"
        "  .cfi_startproc\n"
        /* its own return address off first: its frame's is the caller's,
         * so that a walk while the hook runs (a sample's) finds it */
        "  popq %r11\n"
        "  .cfi_def_cfa %rsp, 8\n"
        NP_SAVE_ARGS
        "  leaq 8(%rbp), %rdi\n"
        "  movq 18(%r11), %rsi\n"
        "  movq %rsp, %rdx\n"
        "  call np_thunk_enter_c\n"
        "  testl %eax, %eax\n"
        NP_RESTORE_ARGS /* (moves: the flags stay) */
        "  jz 1f\n"
        "  movq %r11, (%rsp)\n"
        "  ret\n"
        "1:\n"
        "  jmp *10(%r11)\n"
        "  .cfi_endproc\n"
        ".size np_thunk_enter, . - np_thunk_enter\n"
        /* a thunk's exit: the trampoline's, returning to the caller by a
         * return, which the call to the function predicted */
        ".globl np_thunk_exit\n"
        ".hidden np_thunk_exit\n"
        ".type np_thunk_exit, @function\n"
        "np_thunk_exit:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined %rip\n"
        NP_RETURN_HOOK
        "  pushq %r11\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size np_thunk_exit, . - np_thunk_exit\n"
        ".popsection\n");

#elif defined(__aarch64__)
/* _mcount, called after the function's prologue with x29 at its frame
 * record (-pg keeps the frame pointer) and x0 the function's return
 * address: it saves what the function may still need (x1-x8, q0-q7),
 * though GCC calls it as any function. The trampoline keeps the return
 * value (x0, x1, x8, q0-q3) and returns by x30, as the function would. */
__asm__(".text\n"
        ".globl _mcount\n"
        ".type _mcount, %function\n"
        ".p2align 2\n"
        "_mcount:\n"
        "  .cfi_startproc\n"
        "  stp x29, x30, [sp, #-224]!\n"
        "  .cfi_def_cfa_offset 224\n"
        "  .cfi_offset x29, -224\n"
        "  .cfi_offset x30, -216\n"
        "  mov x29, sp\n"
        "  stp x0, x1, [sp, #16]\n"
        "  stp x2, x3, [sp, #32]\n"
        "  stp x4, x5, [sp, #48]\n"
        "  stp x6, x7, [sp, #64]\n"
        "  str x8, [sp, #80]\n"
        "  stp q0, q1, [sp, #96]\n"
        "  stp q2, q3, [sp, #128]\n"
        "  stp q4, q5, [sp, #160]\n"
        "  stp q6, q7, [sp, #192]\n"
        "  ldr x9, [x29]\n"
        "  add x0, x9, #8\n"
        "  mov x1, x30\n"
        "  mov x2, #3\n"
        "  add x3, sp, #16\n"
        "  bl np_mcount_enter\n"
        "  ldp x0, x1, [sp, #16]\n"
        "  ldp x2, x3, [sp, #32]\n"
        "  ldp x4, x5, [sp, #48]\n"
        "  ldp x6, x7, [sp, #64]\n"
        "  ldr x8, [sp, #80]\n"
        "  ldp q0, q1, [sp, #96]\n"
        "  ldp q2, q3, [sp, #128]\n"
        "  ldp q4, q5, [sp, #160]\n"
        "  ldp q6, q7, [sp, #192]\n"
        "  ldp x29, x30, [sp], #224\n"
        "  .cfi_def_cfa_offset 0\n"
        "  .cfi_restore x29\n"
        "  .cfi_restore x30\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size _mcount, . - _mcount\n"
        ".globl np_mcount_return\n"
        ".hidden np_mcount_return\n"
        ".type np_mcount_return, %function\n"
        ".p2align 2\n"
        "  nop\n"
        "np_mcount_return:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined x30\n"
        "  stp x29, x30, [sp, #-112]!\n"
        "  mov x29, sp\n"
        "  stp x0, x1, [sp, #16]\n"
        "  str x8, [sp, #32]\n"
        "  stp q0, q1, [sp, #48]\n"
        "  stp q2, q3, [sp, #80]\n"
        "  add x0, sp, #112\n"
        "  add x1, sp, #16\n"
        "  bl np_mcount_exit\n"
        "  mov x30, x0\n"
        "  ldp x0, x1, [sp, #16]\n"
        "  ldr x8, [sp, #32]\n"
        "  ldp q0, q1, [sp, #48]\n"
        "  ldp q2, q3, [sp, #80]\n"
        "  ldr x29, [sp]\n"
        "  add sp, sp, #112\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size np_mcount_return, . - np_mcount_return\n");

#else /* 32-bit ARM (Thumb-2; ARM code reaches it by interworking) */
/* __gnu_mcount_nc: the function's return address pushed above the hook's
 * stack, the hook's own in lr; it returns to lr with the pushed word
 * popped into lr (which may now be the trampoline's). It saves r0-r3 (the
 * arguments) and d0-d7 (a hard-float call's), r4 and r5 for the stack's
 * 8-byte alignment. The trampoline keeps the return value (r0-r3, d0-d3:
 * d0-d7 kept) and returns by bx, to ARM or Thumb code alike. */
#if defined(__ARM_PCS_VFP)
#define NP_VPUSH "  vpush {d0-d7}\n"
#define NP_VPOP "  vpop {d0-d7}\n"
#define NP_VSIZE "64"
#else
#define NP_VPUSH ""
#define NP_VPOP ""
#define NP_VSIZE "0"
#endif
__asm__(".text\n"
        ".syntax unified\n"
        ".thumb\n"
        ".globl __gnu_mcount_nc\n"
        ".type __gnu_mcount_nc, %function\n"
        ".p2align 2\n"
        ".thumb_func\n"
        "__gnu_mcount_nc:\n"
        "  push {r0-r5, lr}\n"
        NP_VPUSH
        "  mov r4, sp\n"
        "  add r0, r4, #(28 + " NP_VSIZE ")\n"
        "  mov r1, lr\n"
        "  movs r2, #4\n"
        "  add r3, r4, #" NP_VSIZE "\n"
        "  bic r5, r4, #7\n"
        "  mov sp, r5\n"
        "  bl np_mcount_enter\n"
        "  mov sp, r4\n"
        NP_VPOP
        "  pop {r0-r5, ip}\n"
        "  pop {lr}\n"
        "  bx ip\n"
        ".size __gnu_mcount_nc, . - __gnu_mcount_nc\n"
        ".globl np_mcount_return\n"
        ".hidden np_mcount_return\n"
        ".type np_mcount_return, %function\n"
        ".p2align 2\n"
        "  nop\n"
        ".thumb_func\n"
        "np_mcount_return:\n"
        "  push {r0-r5}\n"
        NP_VPUSH
        "  mov r4, sp\n"
        "  add r0, r4, #(24 + " NP_VSIZE ")\n"
        "  add r1, r4, #" NP_VSIZE "\n"
        "  bic r5, r4, #7\n"
        "  mov sp, r5\n"
        "  bl np_mcount_exit\n"
        "  mov ip, r0\n"
        "  mov sp, r4\n"
        NP_VPOP
        "  pop {r0-r5}\n"
        "  bx ip\n"
        ".size np_mcount_return, . - np_mcount_return\n");
#endif

#else /* no hooks for -pg on this CPU yet */

void np_port_args_start(void (*fn)(uintptr_t self, const uintptr_t *regs)) { (void)fn; }
void np_mcount_values_set(void (*arguments)(uintptr_t, const uint64_t *), void (*retvals)(uintptr_t, const uint64_t *))
{
    (void)arguments, (void)retvals;
}

void (*np_mcount_values)(uintptr_t fn, const uint64_t *regs);
void (*np_mcount_retvals)(uintptr_t fn, const uint64_t *regs);
void np_mcount_setjmp(const void *env) { (void)env; }
void np_mcount_longjmp(const void *env) { (void)env; }
void np_mcount_unwinding(void) {}
void np_mcount_unwound(const void *live) { (void)live; }
void np_mcount_caught(void) {}
uintptr_t np_mcount_frame_return(const uintptr_t *slot, uintptr_t ret, long *cursor)
{
    (void)slot, (void)cursor;
    return ret;
}

#endif
