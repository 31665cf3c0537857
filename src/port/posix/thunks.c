/* thunks.c - x86-64: the exit of a -pg -mfentry call found with every call
 * and return paired, so that the CPU's return-address predictor stays
 * right (docs/instrumenting.md).
 *
 * The first call a module makes to __fentry__ (mcount.c) has its
 * functions' `call __fentry__` rewritten, each into a `jmp` to a thunk of
 * the function's own, placed within a jump's reach:
 *
 *   t+0   the fast path   mcount.c's: the call trace alone in log mode
 *                         told in place, else on to the calls:
 *   c+0   call *enter     np_thunk_enter: the caller's return address on
 *                         the return stack, this call's in its place
 *   c+6   call body       the function's code after its hook, from the
 *                         caller's slot: the stack as the caller left it
 *   c+11  jmp exit        np_thunk_exit: the exit, then `ret` to the
 *                         caller with its address pushed back
 *   c+16  .quad body      (unhooked, the enter jumps there)
 *   c+24  .quad fn
 *
 * The functions are those the module's unwind table (.eh_frame_hdr, in
 * memory) starts, whose first instruction (after an endbr64) calls
 * __fentry__: directly, through the PLT, or through the GOT. Patched
 * entries (patch.c) take thunks too. A function that has none (no unwind
 * entry, no room near the module) keeps its call to __fentry__, whose
 * exit is the return-address trampoline's: both kinds meet on the one
 * return stack.
 *
 * A site is rewritten as patchable entries are (the same three steps, each
 * followed by every CPU serialised): a thread that meets the int3 meanwhile
 * is sent to the thunk, where the finished jump sends it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../runtime/np_config.h"
#include "mcount.h"
#include "posix.h"

#if defined(__x86_64__) && defined(__linux__)

#define THUNK NP_THUNK_BYTES
#define CALLS_AT (NP_THUNK_BYTES - NP_THUNK_CALLS) /* where a thunk's calls start */
/* the enter's and exit's addresses, the jump to the exit; from the next
 * cache line the fast path's code, then the thunks, each on a line's start */
#define AREA_HEAD (64 + NP_THUNK_SHARED_BYTES)
_Static_assert(AREA_HEAD % 64 == 0 && NP_THUNK_BYTES % 64 == 0, "thunks and code at cache lines' starts");

void __fentry__(void);

struct pair {
    uintptr_t site, thunk;
};

/* Every area of thunks, and the sites each module's batch switched (the
 * SIGTRAP handler reads them without a lock: entries are written before
 * they are counted, and never change). */
static struct area {
    uintptr_t start;     /* its code: the fast path's shared code first */
    uintptr_t base, end; /* its thunks */
    uintptr_t code_end;  /* and -pg's code after them */
} areas[NP_THUNK_AREAS];
static int nareas;
static struct batch {
    const struct pair *v;
    size_t n;
} batches[NP_THUNK_AREAS];
static int nbatches;
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;


int np_posix_reach(uintptr_t from, uintptr_t to)
{
    int64_t d = (int64_t)(to - from);
    return d > (int64_t)INT32_MIN + 4096 && d < (int64_t)INT32_MAX - 4096;
}

void *np_posix_map_near(uintptr_t lo, uintptr_t hi, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size = (size + (size_t)page - 1) & ~(size_t)(page - 1);
    uintptr_t base = lo & ~(uintptr_t)(page - 1);
    /* a free range near LO..HI: below first (the executable's code is low,
     * the heap grows above it), then above */
    for (int dir = -1; dir <= 1; dir += 2)
        for (uintptr_t step = 1u << 20; step < (1u << 30); step += 1u << 20) {
            uintptr_t cand = dir < 0 ? base - step - size : ((hi + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1)) + step;
            if (dir < 0 && cand > base)
                break;
            if (!np_posix_reach(lo, cand) || !np_posix_reach(hi, cand + size) || !np_posix_reach(cand, lo) ||
                !np_posix_reach(cand + size, hi))
                continue;
            void *p = mmap((void *)cand, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                           -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p != cand) { /* (a kernel before 4.17 takes the flag as a hint) */
                munmap(p, size);
                continue;
            }
            return p;
        }
    return NULL;
}

void np_posix_code_rel(uint8_t *b, uintptr_t at, uint8_t op, uintptr_t to)
{
    int32_t rel = (int32_t)(int64_t)(to - (at + 5));
    b[0] = op;
    memcpy(b + 1, &rel, 4);
}

static void put_rel(uint8_t *at, uint8_t op, uintptr_t to) { np_posix_code_rel(at, (uintptr_t)at, op, to); }

static void put_riprel(uint8_t *at, uint8_t op2, uintptr_t slot)
{
    int32_t rel = (int32_t)(int64_t)(slot - ((uintptr_t)at + 6));
    at[0] = 0xff;
    at[1] = op2;
    memcpy(at + 2, &rel, 4);
}

/* An area being written: N thunks, then EXTRA bytes of code (-pg's, below). */
struct area_w {
    uint8_t *base;
    size_t n, size;
    struct np_thunk_fast fast; /* the fast path's shared code */
};

/* Opens an area within reach of LO..HI, read-write; 0 or -1. */
static int area_open(struct area_w *w, uintptr_t lo, uintptr_t hi, size_t n, size_t extra)
{
    if (!n || !np_posix_reach(lo, hi) || __atomic_load_n(&nareas, __ATOMIC_ACQUIRE) == NP_THUNK_AREAS)
        return -1;
    w->n = n;
    w->size = AREA_HEAD + n * THUNK + extra;
    w->base = np_posix_map_near(lo, hi, w->size);
    if (!w->base)
        return -1;
    uintptr_t enter = (uintptr_t)np_thunk_enter, exit = (uintptr_t)np_thunk_exit;
    memcpy(w->base, &enter, 8);
    memcpy(w->base + 8, &exit, 8);
    put_riprel(w->base + 16, 0x25, (uintptr_t)w->base + 8);
    np_thunk_shared_put(w->base + 64, (uintptr_t)w->base + 16, &w->fast);
    return 0;
}

static uintptr_t thunk_at(const struct area_w *w, size_t i) { return (uintptr_t)w->base + AREA_HEAD + i * THUNK; }

/* Thunk I: for the function FN, whose body is at BODY: the fast path,
 * then the calls. */
static void thunk_put(struct area_w *w, size_t i, uintptr_t fn, uintptr_t body)
{
    uint8_t *t = (uint8_t *)thunk_at(w, i);
    np_thunk_fast_put(t, fn, body, &w->fast);
    t += CALLS_AT;
    put_riprel(t, 0x15, (uintptr_t)w->base);
    put_rel(t + 6, 0xe8, body);
    put_rel(t + 11, 0xe9, (uintptr_t)w->base + 16);
    memcpy(t + 16, &body, 8);
    memcpy(t + 24, &fn, 8);
}

/* Made executable and known (its thunks' return points): 0, or -1 (gone). */
static int area_close(struct area_w *w)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* (modules' and patch.c's) */
    long page = sysconf(_SC_PAGESIZE);
    size_t size = (w->size + (size_t)page - 1) & ~(size_t)(page - 1);
    pthread_mutex_lock(&lock);
    int i = nareas;
    if (i == NP_THUNK_AREAS || mprotect(w->base, size, PROT_READ | PROT_EXEC) != 0) {
        pthread_mutex_unlock(&lock);
        munmap(w->base, size);
        return -1;
    }
    areas[i].start = (uintptr_t)w->base;
    areas[i].base = thunk_at(w, 0);
    areas[i].end = thunk_at(w, w->n);
    areas[i].code_end = (uintptr_t)w->base + w->size;
    __atomic_store_n(&nareas, i + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return 0;
}

uintptr_t np_posix_thunks(size_t n, const uintptr_t *fn, const uintptr_t *body)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fn[i] < lo ? fn[i] : lo;
        hi = body[i] > hi ? body[i] : hi;
    }
    struct area_w w;
    if (area_open(&w, lo, hi, n, 0) != 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        thunk_put(&w, i, fn[i], body[i]);
    return area_close(&w) == 0 ? thunk_at(&w, 0) : 0;
}

int np_posix_thunks_wanted(void)
{
    static int wanted = -1;
    if (wanted < 0) {
        const char *e = getenv("NANOPROF_PG_THUNKS");
        wanted = !(e && !strcmp(e, "0"));
    }
    return wanted;
}

int np_thunk_return_point(uintptr_t a)
{
    int n = __atomic_load_n(&nareas, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (a - areas[i].base < areas[i].end - areas[i].base)
            return (a - areas[i].base) % THUNK == CALLS_AT + 11 || (a - areas[i].base) % THUNK == np_thunk_fast_return();
    return 0;
}

int np_thunk_code(uintptr_t pc)
{
    int n = __atomic_load_n(&nareas, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc - areas[i].start < areas[i].code_end - areas[i].start)
            return 1;
    return 0;
}

uintptr_t np_thunk_trapped(uintptr_t site)
{
    int n = __atomic_load_n(&nbatches, __ATOMIC_ACQUIRE);
    for (int b = 0; b < n; b++) {
        size_t lo = 0, hi = batches[b].n;
        const struct pair *v = batches[b].v;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].site < site)
                lo = mid + 1;
            else if (v[mid].site > site)
                hi = mid;
            else
                return v[mid].thunk;
        }
    }
    return 0;
}

/* ---- a module's calls of the hooks ------------------------------------- */

void mcount(void);

enum { FENTRY, MCOUNT };

/* A function whose call of a hook becomes a jump: __fentry__'s, its first
 * instruction; or mcount's, after a prologue the thunk undoes and repeats. */
struct site_info {
    uintptr_t site;  /* the call */
    uintptr_t start; /* mcount's: the prologue; 0 for __fentry__'s */
    uint8_t len;     /* the call's bytes */
    uint8_t npush;   /* mcount's: the registers pushed after %rbp, in order */
    uint8_t push[NP_PG_PROLOGUE_PUSHES];
};

struct scan {
    uintptr_t lo, hi;         /* the module's code */
    uintptr_t mod_lo, mod_hi; /* all of it (its GOT) */
    uintptr_t plt[2];         /* the call targets found to reach each hook */
    size_t n, extra;          /* the functions; the bytes of mcount's code */
    struct site_info *v;      /* NULL: counting */
};

static uintptr_t hook_addr(int k) { return k == FENTRY ? (uintptr_t)__fentry__ : (uintptr_t)mcount; }

/* Whether the GOT slot at GOT, in the module, holds hook K's address (the
 * module's first call of a hook bound it; __fentry__'s and mcount's are
 * bound together under BIND_NOW, and lazily each by its first call). */
UNSANITIZED static int got_holds(const struct scan *s, uintptr_t got, int k)
{
    return got - s->mod_lo < s->mod_hi - s->mod_lo && s->mod_hi - got >= sizeof(uintptr_t) &&
           *(const uintptr_t *)got == hook_addr(k);
}

/* Whether a call to T reaches hook K: directly, or through a PLT entry
 * (endbr64, bnd, jmp *GOT). */
UNSANITIZED static int reaches(const struct scan *s, uintptr_t t, int k)
{
    if (t == hook_addr(k))
        return 1;
    if (t - s->lo >= s->hi - s->lo || s->hi - t < 16)
        return 0;
    const uint8_t *p = (const uint8_t *)t;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4;
    if (p[0] == 0xf2)
        p++;
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    int32_t d;
    memcpy(&d, p + 2, 4);
    return got_holds(s, (uintptr_t)p + 6 + (uintptr_t)(intptr_t)d, k);
}

/* The length of a call of hook K at P (call, call *GOT(%rip), or the
 * linker's addr32 call), or 0. */
UNSANITIZED static int hook_call(struct scan *s, const uint8_t *p, int k)
{
    int32_t d;
    if (p[0] == 0xff && p[1] == 0x15) {
        memcpy(&d, p + 2, 4);
        return got_holds(s, (uintptr_t)p + 6 + (uintptr_t)(intptr_t)d, k) ? 6 : 0;
    }
    int len = p[0] == 0xe8 ? 5 : p[0] == 0x67 && p[1] == 0xe8 ? 6 : 0;
    if (!len)
        return 0;
    memcpy(&d, p + len - 4, 4);
    uintptr_t t = (uintptr_t)p + (uintptr_t)len + (uintptr_t)(intptr_t)d;
    if (t == s->plt[k])
        return len;
    if (!reaches(s, t, k))
        return 0;
    s->plt[k] = t;
    return len;
}

/* The length of an instruction of -pg's prologue at P that changes nothing
 * but %rsp and the registers pushed (mask PUSHED): a store below %rbp of
 * an argument register (mov, movss, movsd, 8 to 64 bits), or a move into
 * a pushed register; 0: another. */
UNSANITIZED static int pg_store(const uint8_t *p, unsigned pushed)
{
    const uint8_t *q = p;
    if ((q[0] == 0xf3 || q[0] == 0xf2) && q[1] == 0x0f && q[2] == 0x11) { /* movss, movsd */
        q += 3;
    } else {
        if (q[0] == 0x66)
            q++;
        int rex = (q[0] & 0xf0) == 0x40 ? *q++ : 0;
        if (q[0] != 0x89 && q[0] != 0x88)
            return 0;
        int op = *q++, mod = q[0] >> 6, rm = (q[0] & 7) | (rex & 1 ? 8 : 0);
        if (mod == 3) /* into a register: one pushed */
            return op == 0x89 && (pushed >> rm & 1) ? (int)(q + 1 - p) : 0;
        if (rex & 1)
            return 0; /* (based on %r13) */
    }
    int mod = q[0] >> 6; /* a store at disp8 or disp32 from %rbp */
    if ((q[0] & 7) != 5 || (mod != 1 && mod != 2))
        return 0;
    return (int)(q + 1 + (mod == 1 ? 1 : 4) - p);
}

/* -pg's prologue at P, as GCC and Clang write it on x86-64: push %rbp; mov
 * %rsp,%rbp; pushes of callee-saved registers; %rsp lowered (or %rax
 * pushed, to the same end); stores and
 * moves (pg_store), up to the call of mcount. Undone by reading the pushed
 * registers back and `leave`; repeated by a copy, where every instruction
 * means the same (none is relative to %rip). 1 (IN filled), or 0. */
UNSANITIZED static int pg_prologue(struct scan *s, const uint8_t *p, struct site_info *in)
{
    if (p[0] != 0x55 || p[1] != 0x48 || p[2] != 0x89 || p[3] != 0xe5)
        return 0;
    const uint8_t *q = p + 4;
    unsigned pushed = 0;
    int lowered = 0;
    in->npush = 0;
    for (int k = 0; k < NP_PG_PROLOGUE_INSNS; k++) {
        if ((uintptr_t)q + 16 > s->hi)
            return 0;
        int len = hook_call(s, q, MCOUNT);
        if (len) {
            in->site = (uintptr_t)q;
            in->len = (uint8_t)len;
            in->start = (uintptr_t)p;
            return 1;
        }
        int reg = q[0] == 0x53 ? 3 : q[0] == 0x41 && q[1] >= 0x54 && q[1] <= 0x57 ? 12 + (q[1] - 0x54) : -1;
        if (reg >= 0) { /* push %rbx, %r12-%r15 */
            if (lowered || in->npush == NP_PG_PROLOGUE_PUSHES)
                return 0;
            in->push[in->npush++] = (uint8_t)reg;
            pushed |= 1u << reg;
            q += reg == 3 ? 1 : 2;
        } else if (q[0] == 0x48 && (q[1] == 0x83 || q[1] == 0x81) && (q[2] == 0xec || q[2] == 0xc4)) {
            lowered = 1; /* sub $imm, %rsp; add $-imm, %rsp */
            q += q[1] == 0x83 ? 4 : 7;
        } else if (q[0] == 0x50) {
            lowered = 1; /* push %rax: Clang's sub $8, %rsp */
            q++;
        } else if ((len = pg_store(q, pushed))) {
            q += len;
        } else {
            return 0;
        }
    }
    return 0;
}

static size_t pg_extra(const struct site_info *in)
{
    /* undo: a 4-byte load per pushed register, leave, jmp; the copy, jmp */
    return (size_t)in->npush * 4 + 1 + 5 + (in->site - in->start) + 5;
}

/* The functions .eh_frame_hdr's table starts (sorted), each to EACH. */
static size_t each_function(const uint8_t *hdr, void (*each)(uintptr_t fn, void *ctx), void *ctx)
{
    if (!hdr || hdr[0] != 1 || hdr[3] != 0x3b) /* version 1; table: datarel sdata4 */
        return 0;
    int ptr = hdr[1] & 0x0f, cnt = hdr[2] & 0x0f;
    const uint8_t *p = hdr + 4;
    if (ptr == 0x03 || ptr == 0x0b)
        p += 4;
    else if (ptr == 0x04 || ptr == 0x0c)
        p += 8;
    else
        return 0;
    uint64_t n;
    if (cnt == 0x03 || cnt == 0x0b) {
        uint32_t v;
        memcpy(&v, p, 4);
        n = v, p += 4;
    } else {
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        int32_t loc;
        memcpy(&loc, p + i * 8, 4);
        each((uintptr_t)hdr + (uintptr_t)(intptr_t)loc, ctx);
    }
    return (size_t)n;
}

UNSANITIZED static void scan_one(uintptr_t fn, void *ctx)
{
    struct scan *s = ctx;
    if (fn - s->lo >= s->hi - s->lo || s->hi - fn < 16)
        return;
    const uint8_t *p = (const uint8_t *)fn;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) /* endbr64 */
        p += 4;
    struct site_info in;
    int len = hook_call(s, p, FENTRY);
    if (len) {
        in.site = (uintptr_t)p;
        in.len = (uint8_t)len;
        in.start = 0;
    } else if (!pg_prologue(s, p, &in)) {
        return;
    }
    if (s->v) {
        if (s->n && s->v[s->n - 1].site == in.site)
            return; /* (two entries of one function) */
        s->v[s->n] = in;
    }
    s->n++;
    s->extra += in.start ? pg_extra(&in) : 0;
}

/* mcount's code for IN at C, its thunk T: the undo, then the copy. The
 * undo's address (where the call's jump goes), *BODY the copy's. */
UNSANITIZED static uintptr_t pg_code(uint8_t *c, const struct site_info *in, uintptr_t t, uintptr_t *body)
{
    uintptr_t undo = (uintptr_t)c;
    for (int k = 0; k < in->npush; k++) { /* mov -8(k+1)(%rbp), reg */
        int reg = in->push[k];
        *c++ = reg >= 8 ? 0x4c : 0x48;
        *c++ = 0x8b;
        *c++ = (uint8_t)(0x45 | (reg & 7) << 3);
        *c++ = (uint8_t)(-8 * (k + 1));
    }
    *c++ = 0xc9; /* leave */
    put_rel(c, 0xe9, t);
    c += 5;
    *body = (uintptr_t)c;
    size_t n = in->site - in->start;
    const volatile uint8_t *from = (const volatile uint8_t *)in->start; /* (the program's code: no memcpy) */
    for (size_t i = 0; i < n; i++)
        c[i] = from[i];
    put_rel(c + n, 0xe9, in->site + in->len);
    return undo;
}

/* Bytes FROM to TO of B written at AT, each a store of its own. */
UNSANITIZED static void code_put(uintptr_t at, const uint8_t *b, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        __atomic_store_n((uint8_t *)at + i, b[i], __ATOMIC_RELAXED);
}

/* The pages of AT..AT+LEN given PROT, LAST the page done before (0 at
 * first). */
static int code_protect(uintptr_t at, size_t len, int prot, uintptr_t *last)
{
    long page = sysconf(_SC_PAGESIZE);
    for (uintptr_t p = at & ~(uintptr_t)(page - 1); p < at + len; p += (uintptr_t)page) {
        if (p == *last)
            continue;
        if (mprotect((void *)p, (size_t)page, prot) != 0)
            return -1;
        *last = p;
    }
    return 0;
}

static int protect(const struct np_code_site *v, size_t n, int prot)
{
    uintptr_t last = 0;
    for (size_t i = 0; i < n; i++)
        if (code_protect(v[i].at, NP_CODE_SITE, prot, &last) != 0)
            return -1;
    return 0;
}

int np_posix_code_write(struct np_code_site *v, size_t n, int (*round)(void))
{
    static const uint8_t int3 = 0xcc;
    pthread_mutex_lock(&code_lock);
    int rc = 0;
    if (protect(v, n, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        rc = -1;
    } else {
        for (size_t i = 0; i < n; i++) {
            v[i].was = *(const volatile uint8_t *)v[i].at;
            code_put(v[i].at, &int3, 0, 1);
        }
        if (np_posix_sync_cores() != 0 || (round && round() != 0)) {
            rc = -2;
            for (size_t i = 0; i < n; i++) /* the tails are untouched: the first byte as it was */
                code_put(v[i].at, &v[i].was, 0, 1);
        } else {
            for (size_t i = 0; i < n; i++)
                code_put(v[i].at, v[i].b, 1, NP_CODE_SITE);
            np_posix_sync_cores();
            for (size_t i = 0; i < n; i++)
                code_put(v[i].at, v[i].b, 0, 1);
        }
        np_posix_sync_cores();
    }
    protect(v, n, PROT_READ | PROT_EXEC);
    pthread_mutex_unlock(&code_lock);
    return rc;
}

int np_posix_thunks_module(const uint8_t *eh_frame_hdr, uintptr_t lo, uintptr_t hi, uintptr_t mod_lo,
                           uintptr_t mod_hi)
{
    struct scan s = { lo, hi, mod_lo, mod_hi, { 0, 0 }, 0, 0, NULL };
    if (!each_function(eh_frame_hdr, scan_one, &s) || !s.n)
        return 0;
    if (nbatches == NP_THUNK_AREAS || np_posix_trap_ready() != 0)
        return -1;
    size_t want = s.n, extra = s.extra,
           bytes = want * (sizeof(struct site_info) + sizeof(struct pair) + sizeof(struct np_code_site));
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    s.v = mem, s.n = 0, s.extra = 0;
    each_function(eh_frame_hdr, scan_one, &s);
    struct pair *v = (struct pair *)(s.v + want);
    struct np_code_site *code = (struct np_code_site *)(v + want);
    struct area_w w;
    if (s.n > want || s.extra > extra || area_open(&w, lo, hi, s.n, s.extra) != 0) {
        munmap(mem, bytes);
        return -1;
    }
    uint8_t *c = (uint8_t *)thunk_at(&w, s.n);
    for (size_t i = 0; i < s.n; i++) {
        const struct site_info *in = &s.v[i];
        uintptr_t body = in->site + in->len, t = thunk_at(&w, i);
        v[i].site = in->site;
        v[i].thunk = t;
        if (in->start) { /* mcount's: the function is the call's return address, as its hook gives it */
            v[i].thunk = pg_code(c, in, t, &body);
            c += pg_extra(in);
        }
        thunk_put(&w, i, in->start ? in->site + in->len : in->site, body);
        code[i].at = v[i].site;
        np_posix_code_rel(code[i].b, v[i].site, 0xe9, v[i].thunk);
    }
    if (area_close(&w) != 0) {
        munmap(mem, bytes);
        return -1;
    }
    /* no signal handler of the program's runs while the code is written
     * (its calls may want the code lock, or the module table's) */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGTRAP), sigdelset(&all, SIGSEGV), sigdelset(&all, SIGBUS);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    batches[nbatches].v = v;
    batches[nbatches].n = s.n;
    __atomic_store_n(&nbatches, nbatches + 1, __ATOMIC_RELEASE);
    int rc = np_posix_code_write(code, s.n, NULL) == 0 ? (int)s.n : -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

#else

int np_thunk_return_point(uintptr_t a)
{
    (void)a;
    return 0;
}

int np_thunk_code(uintptr_t pc)
{
    (void)pc;
    return 0;
}

#endif
