/* source_qemu_log.c - a QEMU execution log as a source of events
 * (source_qemu_log.h): the blocks QEMU ran, decoded from the firmware's
 * ELF, told to the emulator's call tracker as the PC writes they ended
 * with, and its calls to the sink.
 *
 * QEMU logs a translation block as it starts it (`-d exec`; `nochain`
 * so that every start is logged), not the instructions in it nor how it
 * ended. A block runs from its start to its first instruction that may
 * write the PC (QEMU ends a block there), or stops earlier (a page's end,
 * an instruction that changes the CPU's state: the next block then starts
 * at the next instruction). So each pair of consecutive starts P, Q says:
 * the instructions from P up to Q ran when Q follows them; else those up
 * to the block's PC write X, and X went to Q (not taken, when X is
 * conditional and Q is the next instruction). An exception is taken
 * between two blocks: Q is then a handler's start that X did not go to
 * (the ELF's vector table names the handlers; with `-d cpu`, the exception
 * number in XPSR changing says it). When X's target is not known (an
 * indirect branch, a conditional one), where the exception returns says
 * it: X is decided, and the block's count made, at that return. An
 * exception returns by a return-form instruction of its handler (its
 * EXC_RETURN value, in LR or on the stack, is not in the log). */
#define _GNU_SOURCE
#include "source_qemu_log.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "calls_out.h"
#include "containers.h"
#include "symbols.h"
#include "emu/calltrack.h"
#include "emu/decode.h"
#include "emu/image.h"

/* A block's instructions decoded from its start: QEMU's blocks hold at
 * most 512 (TCG_MAX_INSNS). */
#define QLOG_BLOCK_MAX_INSNS 600
/* Each exception returns, to the tracker, to a key of its own in this
 * range (no code is there: it is the EXC_RETURN values' range), even as
 * the tracker clears bit 0: which of the calls left open in threads an
 * exception return ends is decided here, by address and stack. */
#define QLOG_NOWHERE 0xfffffffeu
#define QLOG_KEY_BASE 0xffff0000u
/* How far a thread's stack pointer may have moved inside the block an
 * exception interrupted (its pushes): stacks of two threads lie further
 * apart. */
#define QLOG_SP_SLACK 256u

/* What the block that starts at ADDR does, decoded once. */
struct block {
    uint32_t addr;
    uint16_t n;            /* instructions up to and with X; 0: no code there */
    uint16_t first_end;    /* the first that ends a block (a semihosting bkpt), 1-based; 0: none */
    bool calls_host;       /* it holds a semihosting call (bkpt, svc): a run may end there */
    bool has_x;
    struct np_insn_flow x; /* its PC write (or exception-raising instruction) */
};

/* An exception the log entered, innermost last. */
struct exc {
    uint32_t resume;        /* where it returns; QLOG_NOWHERE: found at its return */
    uint32_t key;           /* its return address to the tracker, its own */
    uint32_t handler;       /* its handler's address */
    uint16_t number;        /* its exception's number (0: not known, QLOG_SHARED) */
    uint32_t sp;            /* the stack pointer where it came (sp_known) */
    bool sp_known;
    uint32_t block;         /* the block it came after */
    bool pending_x;         /* that block's X is decided at the return */
    bool pending_count;     /* that block's instructions are counted at the return */
    struct np_insn_flow x;
};

/* A handler of the vector table: its exception's number (2 NMI, 3
 * HardFault, ..., 16 + n IRQ n), or QLOG_SHARED for a handler several
 * exceptions share. */
struct handler {
    uint32_t addr;
    uint16_t number;
};
#define QLOG_SHARED 0xffffu
/* A `b .` inside a handler that has run so many times in a row is taken
 * for the firmware's end: nothing of a lower priority can run again. */
#define QLOG_HALT_LOOPS 64

/* Registers a `-d cpu` log gives at a block's start. */
struct regs {
    bool known;
    uint32_t sp, lr, ipsr;
};

struct qlog {
    struct np_calls_out out;
    struct np_calltrack *trk;
    struct np_cpu cpu;           /* what the tracker reads: r13, r14, the counters */
    struct np_image img;
    struct np_symbols *syms;
    struct np_addrspace *as;
    bool mclass;
    struct handler *handlers;    /* the vector table's handlers, by address */
    size_t nhandlers;
    uint64_t max_insns;          /* stop there (0: never) */
    uint32_t self_loops;         /* a `b .` run so many times in a row */
    struct block *blocks;        /* in the order first seen */
    size_t nblocks, blocks_cap;
    struct np_hmap block_index;  /* a block's start: its index in blocks */
    struct exc *excs;            /* the CPU's exceptions, innermost last */
    size_t nexc, exc_cap;
    /* the exceptions threads were switched out in, oldest first: each
     * ends when an exception returns where it came */
    struct exc *parked;
    size_t nparked, parked_cap;
    uint32_t next_key;
    /* handlers seen returning to another thread than they interrupted:
     * where a log without registers cannot tell, theirs switch */
    uint32_t switchers[8];
    unsigned nswitchers;
    struct np_qemu_log_stats st;
};

/* ---- the firmware's code ------------------------------------------------------- */

static const uint8_t *code_at(const struct qlog *L, uint32_t addr, size_t *len)
{
    *len = 0;
    for (unsigned i = 0; i < L->img.nmem; i++) {
        const struct np_mem_region *m = &L->img.mem[i];
        if (addr >= m->base && addr - m->base < m->size) {
            *len = m->size - (addr - m->base);
            return m->data + (addr - m->base);
        }
    }
    return NULL;
}

/* Thumb code at ADDR: an M-profile ELF's always, else its function's
 * symbol says (bit 0). */
static bool thumb_at(const struct qlog *L, uint32_t addr)
{
    if (L->mclass)
        return true;
    struct np_symbol sym;
    np_addrspace_lookup(L->as, addr, &sym);
    return sym.name && (sym.elf_addr & 1);
}

static uint8_t insn_size(const struct qlog *L, uint32_t addr, bool thumb)
{
    size_t len = 0;
    const uint8_t *p = code_at(L, addr, &len);
    if (!thumb)
        return 4;
    if (!p || len < 2)
        return 2;
    unsigned hw = (unsigned)p[0] | (unsigned)p[1] << 8;
    return (hw >> 11) >= 0x1d ? 4 : 2;
}

/* The block at ADDR, decoded when first seen (a lookup adds nothing, so
 * that the blocks stay where they are); NULL when out of memory or
 * Capstone is missing (L->st says which). */
static const struct block *block_at(struct qlog *L, uint32_t addr)
{
    const uint64_t *i = np_hmap_find(&L->block_index, addr);
    if (i)
        return &L->blocks[*i];
    if (NP_GROW(L->blocks, L->blocks_cap, L->nblocks + 1) != 0 ||
        np_hmap_put(&L->block_index, addr, L->nblocks) != 0)
        return NULL;
    struct block *b = &L->blocks[L->nblocks++];
    memset(b, 0, sizeof *b);
    b->addr = addr;
    size_t len;
    const uint8_t *code = code_at(L, addr, &len);
    if (code) {
        static struct np_insn_flow f[QLOG_BLOCK_MAX_INSNS];
        int n = np_decode_flow(code, len < 4 * QLOG_BLOCK_MAX_INSNS ? len : 4 * QLOG_BLOCK_MAX_INSNS, addr,
                               thumb_at(L, addr), L->mclass, f, QLOG_BLOCK_MAX_INSNS);
        if (n < 0) {
            L->st.no_capstone = true;
            return NULL;
        }
        b->n = (uint16_t)n;
        for (int k = 0; k < n; k++) {
            if (f[k].ends_block && !b->first_end)
                b->first_end = (uint16_t)(k + 1);
            b->calls_host |= f[k].bkpt || f[k].raises;
        }
        if (n > 0 && (f[n - 1].writes_pc || f[n - 1].raises)) {
            b->has_x = true;
            b->x = f[n - 1];
        }
    }
    return b;
}

/* The instructions from the start of B up to TO when TO follows them
 * before B's PC write (at most up to it); 0 when it does not. *LAST: the
 * address of the last of them. */
static uint32_t fall_count(const struct qlog *L, const struct block *b, uint32_t to, uint32_t *last)
{
    bool thumb = thumb_at(L, b->addr);
    uint32_t a = b->addr;
    for (uint32_t k = 1; k <= b->n; k++) {
        if (b->has_x && k == b->n)
            return 0; /* X itself: it decides */
        *last = a;
        a += insn_size(L, a, thumb);
        if (a == to)
            return k;
    }
    return 0;
}

/* Whether QEMU may have ended a block (that it did not cut short) before
 * TO, after the instruction at LAST: it ends one after an instruction
 * that may change the CPU's state, and at a page's end (1 KiB pages, the
 * smallest ARM has). Otherwise a branch back to TO went there. */
static bool may_end_before(const struct qlog *L, uint32_t last, uint32_t to)
{
    if (!(to & 0x3ff))
        return true;
    size_t len;
    const uint8_t *code = code_at(L, last, &len);
    struct np_insn_flow f;
    return code && np_decode_flow(code, len < 4 ? len : 4, last, thumb_at(L, last), L->mclass, &f, 1) == 1 &&
           f.ends_block;
}

/* The exception number of the handler at ADDR (QLOG_SHARED when several
 * share it); 0 when the vector table has no handler there. */
static uint16_t handler_number(const struct qlog *L, uint32_t addr)
{
    size_t lo = 0, hi = L->nhandlers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (L->handlers[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == L->nhandlers || L->handlers[lo].addr != addr)
        return 0;
    return lo + 1 < L->nhandlers && L->handlers[lo + 1].addr == addr ? QLOG_SHARED : L->handlers[lo].number;
}

static bool is_handler(const struct qlog *L, uint32_t addr)
{
    return handler_number(L, addr) != 0;
}

static int cmp_handler(const void *a, const void *b)
{
    const struct handler *x = a, *y = b;
    return x->addr != y->addr ? (x->addr > y->addr) - (x->addr < y->addr) : (x->number > y->number) - (x->number < y->number);
}

/* The vector table: where the ELF's reset handler is word 1 (the
 * initial SP, then the handlers), at a symbol start firmware names it by
 * or at the image's lowest address. Its handlers are the words that are
 * Thumb addresses in the text. */
static int find_handlers(struct qlog *L)
{
    static const char *const names[] = { "__isr_vector", "__Vectors", "g_pfnVectors", "__vector_table", "vectors",
                                         "_vectors", "isr_vector", "vector_table", "exception_table", NULL };
    uint32_t cands[16];
    unsigned nc = 0;
    for (unsigned i = 0; names[i]; i++) {
        uint64_t a = np_addrspace_address_of(L->as, names[i]);
        if (a && a < UINT32_MAX)
            cands[nc++] = (uint32_t)a;
    }
    uint32_t lowest = UINT32_MAX;
    for (unsigned i = 0; i < L->img.nmem; i++)
        if (L->img.mem[i].base < lowest)
            lowest = L->img.mem[i].base;
    cands[nc++] = lowest;
    for (unsigned c = 0; c < nc; c++) {
        size_t len;
        const uint8_t *p = code_at(L, cands[c], &len);
        if (!p || len < 8)
            continue;
        uint32_t reset;
        memcpy(&reset, p + 4, 4);
        if ((reset | 1) != (L->img.entry | 1))
            continue;
        size_t n = len / 4 < 512 ? len / 4 : 512;
        L->handlers = malloc(n * sizeof *L->handlers);
        if (!L->handlers)
            return -1;
        /* the table ends at a word that is neither 0 (reserved, or no
         * handler) nor a Thumb address in the text, and before the code
         * it points to */
        uint32_t end = cands[c] + 4 * (uint32_t)n;
        for (size_t i = 1; i < n && cands[c] + 4 * i < end; i++) {
            uint32_t w;
            memcpy(&w, p + 4 * i, 4);
            if (!w)
                continue;
            if (!(w & 1) || (w & ~1u) < L->img.text_lo || (w & ~1u) >= L->img.text_hi)
                break;
            L->handlers[L->nhandlers].addr = w & ~1u;
            L->handlers[L->nhandlers++].number = (uint16_t)i;
            if ((w & ~1u) > cands[c] && (w & ~1u) < end)
                end = w & ~1u;
        }
        qsort(L->handlers, L->nhandlers, sizeof *L->handlers, cmp_handler);
        return 0;
    }
    return 0;
}

/* ---- telling the tracker ---------------------------------------------------------- */

static bool return_form(uint8_t kind)
{
    return kind == NP_BR_BX || kind == NP_BR_MOV_PC || kind == NP_BR_LDR_PC || kind == NP_BR_LDM_PC;
}

static void tell(struct qlog *L, uint32_t from, uint32_t to, uint8_t kind, uint8_t reg, uint8_t flags)
{
    struct np_branch b = { from, to & ~1u, kind, reg, flags, NP_VEC_IRQ, 0 };
    if (L->mclass || thumb_at(L, to))
        b.flags |= NP_BRF_THUMB;
    np_calltrack_branch(L->trk, &L->cpu, &b);
}

static void tell_x(struct qlog *L, const struct np_insn_flow *x, uint32_t to)
{
    uint8_t flags = (uint8_t)((x->size == 2 || L->mclass || thumb_at(L, x->addr) ? NP_BRF_FROM_THUMB : 0) |
                              (x->cond ? NP_BRF_COND : 0));
    if (x->kind == NP_BR_BL || x->kind == NP_BR_BLX_REG)
        L->cpu.r[14] = (x->addr + x->size) | 1; /* what LR holds after it */
    tell(L, x->addr, to, x->kind, x->reg, flags);
}

static int push_exc(struct qlog *L, struct exc *e, uint32_t handler, const struct regs *rp, const struct regs *rq)
{
    e->number = rq->known && rq->ipsr ? (uint16_t)rq->ipsr : handler_number(L, handler);
    if (e->resume == QLOG_NOWHERE)
        L->st.resumes_deferred++;
    e->key = QLOG_KEY_BASE + 2 * (L->next_key++ & 0x7fffu);
    e->handler = handler;
    e->sp = rp->sp;
    e->sp_known = rp->known;
    if (NP_GROW(L->excs, L->exc_cap, L->nexc + 1) != 0)
        return -1;
    L->excs[L->nexc++] = *e;
    L->st.exceptions++;
    tell(L, e->key, handler, NP_BR_EXCEPTION, 15, 0);
    return 0;
}

static void count_insns(struct qlog *L, uint32_t n)
{
    L->cpu.insns += n;
    L->cpu.cycles += n;
}

/* Whether TO is where E returns: its address, or where the block it came
 * after may have gone. With ANY_X, an indirect X may have gone anywhere. */
static bool resumes_at(struct qlog *L, const struct exc *e, uint32_t to, bool any_x)
{
    if (e->resume != QLOG_NOWHERE)
        return e->resume == to;
    uint32_t last;
    const struct block *b = e->pending_count ? block_at(L, e->block) : NULL;
    if (b && fall_count(L, b, to, &last))
        return true;
    if (!e->pending_x)
        return false;
    if (e->x.direct)
        return to == e->x.target || (e->x.cond && to == e->x.addr + e->x.size);
    return any_x;
}

/* E returned to TO, as resumes_at says: the block it came after ran up
 * to TO, or through its X to TO. */
static void resolve(struct qlog *L, const struct exc *e, uint32_t to)
{
    if (e->pending_count) {
        const struct block *b = block_at(L, e->block);
        uint32_t last, k = b ? fall_count(L, b, to, &last) : 0;
        if (k) {
            count_insns(L, k);
            return;
        }
        if (!e->pending_x) {
            L->st.unexplained++;
            return;
        }
        count_insns(L, b ? b->n : 1);
    }
    if (e->pending_x && !(e->x.cond && to == e->x.addr + e->x.size))
        tell_x(L, &e->x, to);
}

static bool switcher(const struct qlog *L, uint32_t handler)
{
    for (unsigned i = 0; i < L->nswitchers; i++)
        if (L->switchers[i] == handler)
            return true;
    return false;
}

/* Whether E returns to TO with the stack RQ (its pointer when known) */
static bool returns_to(struct qlog *L, const struct exc *e, uint32_t to, const struct regs *rq, bool any_x)
{
    if (rq->known && e->sp_known && (rq->sp > e->sp ? rq->sp - e->sp : e->sp - rq->sp) > QLOG_SP_SLACK)
        return false;
    return resumes_at(L, e, to, any_x || (rq->known && e->sp_known));
}

/* X, the return of the innermost exception's handler, landed at TO
 * (registers RQ): the exception's call ends, and what it left undecided
 * of the block it came after is decided by where it returned. A return
 * elsewhere is a switch of threads (an RTOS's PendSV): the exception's
 * call stays open in the thread switched from, and the one switched to
 * ends, found by where it was interrupted and, with registers, its
 * stack. */
static void exc_return(struct qlog *L, const struct np_insn_flow *x, uint32_t to, const struct regs *rq)
{
    if (!L->nexc) {
        tell_x(L, x, to);
        return;
    }
    struct exc e = L->excs[--L->nexc];
    size_t i = 0;
    while (i < L->nparked && !returns_to(L, &L->parked[i], to, rq, false))
        i++;
    bool found = i < L->nparked;
    bool own = returns_to(L, &e, to, rq, !found);
    if (own && found && !rq->known && switcher(L, e.handler))
        own = false; /* both could be: this handler switches */
    if (own) {
        tell(L, x->addr, e.key, NP_BR_EXC_RETURN, x->reg, NP_BRF_FROM_THUMB);
        resolve(L, &e, to);
        return;
    }
    if (NP_GROW(L->parked, L->parked_cap, L->nparked + 1) == 0)
        L->parked[L->nparked++] = e;
    else
        L->st.unexplained++;
    if (!switcher(L, e.handler) && L->nswitchers < sizeof L->switchers / sizeof *L->switchers)
        L->switchers[L->nswitchers++] = e.handler;
    if (!found) {
        /* no thread was interrupted there: a new one (the tracker starts
         * it where it lands) */
        tell(L, x->addr, to, NP_BR_EXC_RETURN, x->reg, NP_BRF_FROM_THUMB);
        return;
    }
    /* (kept in the order they were parked: where several could be, the
     * one switched out longest ago runs again, as a round robin has it) */
    struct exc s = L->parked[i];
    memmove(&L->parked[i], &L->parked[i + 1], (L->nparked - i - 1) * sizeof *L->parked);
    L->nparked--;
    tell(L, x->addr, s.key, NP_BR_EXC_RETURN, x->reg, NP_BRF_FROM_THUMB);
    resolve(L, &s, to);
}

/* The block at P ran (registers RP at its start; at most COUNT
 * instructions when COUNT > 0, as QEMU says of a block it cut short),
 * and the next started at Q (registers RQ). */
static int step(struct qlog *L, uint32_t p, const struct regs *rp, uint32_t count, uint32_t q,
                const struct regs *rq)
{
    const struct block *b = block_at(L, p);
    if (!b)
        return -1;
    if (rq->known) {
        L->cpu.r[13] = rq->sp;
        L->cpu.r[14] = rq->lr;
    }
    if (!b->n) { /* no code of the ELF there */
        L->st.outside++;
        count_insns(L, 1);
        return 0;
    }
    if (L->max_insns && L->cpu.insns >= L->max_insns) {
        L->st.limited = true;
        L->st.end_pc = p;
        L->cpu.halt = true;
        return 0;
    }
    /* a handler's `b .`: the end */
    if (b->has_x && b->x.addr == p && b->x.kind == NP_BR_B && b->x.direct && !b->x.cond && b->x.target == p &&
        q == p && L->nexc) {
        if (++L->self_loops == QLOG_HALT_LOOPS) {
            L->st.halted = true;
            L->st.end_pc = p;
            L->st.end_exception = L->excs[L->nexc - 1].number;
            L->st.end_resume = L->excs[L->nexc - 1].resume;
            L->st.end_block = L->excs[L->nexc - 1].block;
            L->cpu.halt = true;
        }
    } else {
        L->self_loops = 0;
    }
    uint32_t last, k = fall_count(L, b, q, &last);
    if (k && !count && b->has_x && b->x.direct && b->x.target == q && !may_end_before(L, last, q))
        k = 0; /* a loop: its branch went back to Q */
    if (k && (!count || k <= count)) {
        count_insns(L, k);
        return 0;
    }
    /* whether the block ran through its X: QEMU says when it cut it */
    bool cut = count && count < b->n;
    const struct np_insn_flow *x = b->has_x && !cut ? &b->x : NULL;
    bool ret = x && return_form(x->kind) && np_calltrack_in_exception(L->trk) &&
               (!rq->known || rq->ipsr != rp->ipsr);
    bool entry;
    if (rq->known) /* the exception number says: a tail-chain lands on a handler */
        entry = rq->ipsr && rq->ipsr != rp->ipsr && (!ret || is_handler(L, q));
    else
        entry = is_handler(L, q) && !(x && x->direct && x->target == q && !x->cond) &&
                !(x && x->raises && q == x->addr + x->size);
    if (x && x->raises && q != x->addr + x->size)
        entry = true; /* svc: its handler (semihosting's bkpt goes on) */
    struct exc e = { .resume = QLOG_NOWHERE, .block = p };
    if (!x) {
        if (!entry) {
            L->st.unexplained++;
            return 0;
        }
        if (cut) { /* interrupted after COUNT instructions */
            uint32_t a = p;
            bool thumb = thumb_at(L, p);
            for (uint32_t i = 0; i < count; i++)
                a += insn_size(L, a, thumb);
            count_insns(L, count);
            e.resume = a;
        } else {
            e.pending_count = true;
        }
        return push_exc(L, &e, q, rp, rq);
    }
    if (entry && !count && !x->raises && !ret) {
        /* a log without counts: the block may have been cut before X */
        e.pending_count = e.pending_x = true;
        e.x = *x;
        return push_exc(L, &e, q, rp, rq);
    }
    count_insns(L, b->n);
    if (!entry) {
        if (x->raises || (x->cond && q == x->addr + x->size))
            return 0; /* not taken */
        if (ret)
            exc_return(L, x, q, rq);
        else
            tell_x(L, x, q);
        return 0;
    }
    if (x->raises) {
        e.resume = x->addr + x->size;
    } else if (ret) {
        /* tail-chained: the handler's return goes on to the next one,
         * which returns where it would have */
        if (!L->nexc)
            return push_exc(L, &e, q, rp, rq);
        struct exc inner = L->excs[--L->nexc];
        tell(L, x->addr, inner.key, NP_BR_EXC_RETURN, x->reg, NP_BRF_FROM_THUMB);
        L->st.tail_chains++;
        L->st.exceptions--; /* (the same interruption, counted once) */
        if (inner.resume == QLOG_NOWHERE)
            L->st.resumes_deferred--;
        struct regs was = { inner.sp_known, inner.sp, 0, 0 }; /* where it came */
        return push_exc(L, &inner, q, &was, rq);
    } else if (x->direct && !x->cond) {
        tell_x(L, x, x->target);
        e.resume = x->target;
    } else {
        e.pending_x = true; /* taken or not, where to: said by the return */
        e.x = *x;
    }
    return push_exc(L, &e, q, rp, rq);
}

/* ---- the log -------------------------------------------------------------------- */

/* "Trace 0: 0x7f... [00800400/00000058/00000110/ff000201] Reset_Handler":
 * the block's start is the second field in the brackets; the fourth, the
 * block's cflags, holds the most instructions it may run (CF_COUNT_MASK,
 * 0 when it runs up to its end), which QEMU sets when it cuts a block
 * short (for icount, or an interrupt due). */
static bool parse_trace(const char *line, uint32_t *pc, uint32_t *count)
{
    if (strncmp(line, "Trace ", 6) != 0)
        return false;
    const char *s = strchr(line, '[');
    if (!s || !(s = strchr(s, '/')))
        return false;
    char *end;
    unsigned long long v = strtoull(s + 1, &end, 16);
    if (end == s + 1 || (*end != '/' && *end != ']') || v > UINT32_MAX)
        return false;
    *pc = (uint32_t)v;
    *count = 0;
    const char *f = *end == '/' ? strchr(end + 1, '/') : NULL;
    if (f && strchr(f, ']'))
        *count = (uint32_t)strtoul(f + 1, NULL, 16) & 0x1ff;
    return true;
}

/* The function QEMU named a Trace line's block by (from the ELF it
 * loaded), into NAME; "" when it named none. */
static void trace_name(const char *line, char *name, size_t size)
{
    const char *s = strchr(line, ']');
    name[0] = 0;
    if (!s || s[1] != ' ')
        return;
    s += 2;
    size_t n = strcspn(s, "\r\n");
    if (n >= size)
        n = size - 1;
    memcpy(name, s, n);
    name[n] = 0;
}

static bool reg_field(const char *line, const char *name, uint32_t *out)
{
    const char *s = strstr(line, name);
    if (!s)
        return false;
    char *end;
    s += strlen(name);
    unsigned long v = strtoul(s, &end, 16);
    if (end == s)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool np_probe_qemu_log(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char line[512];
    bool yes = false;
    for (int i = 0; i < 64 && !yes && fgets(line, sizeof line, f); i++) {
        uint32_t pc, count;
        yes = parse_trace(line, &pc, &count);
    }
    fclose(f);
    return yes;
}

static int fail(struct np_trace_summary *s, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct np_trace_summary *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->message, sizeof s->message, fmt, ap);
    va_end(ap);
    s->status = status;
    return status;
}


/* Whether the log is a run of this ELF: QEMU names each block's function
 * from the ELF it ran, and that name must be this ELF's function there
 * (or an alias of it) at the log's first distinct blocks, all but a few
 * (a name QEMU picks among symbols at one address). 0, or the status
 * with SUM's message. Leaves F at its start. */
#define QLOG_NAME_CHECKS 4096
static int check_names(struct qlog *L, FILE *f, const char *log, const char *elf, struct np_trace_summary *sum)
{
    char *line = NULL, name[256], first[768] = "";
    size_t cap = 0;
    unsigned checked = 0, other = 0;
    struct np_hmap seen; /* the blocks checked */
    np_hmap_init(&seen);
    while (checked < QLOG_NAME_CHECKS && getline(&line, &cap, f) >= 0) {
        uint32_t pc, count;
        if (!parse_trace(line, &pc, &count))
            continue;
        trace_name(line, name, sizeof name);
        if (!name[0])
            continue;
        if (np_hmap_find(&seen, pc))
            continue;
        if (np_hmap_put(&seen, pc, 0) != 0) {
            free(line);
            np_hmap_free(&seen);
            return fail(sum, NP_TRACE_ENOMEM, "out of memory");
        }
        checked++;
        const char *ours = np_calls_name_of(L->as, pc);
        if (ours && strcmp(ours, name) == 0)
            continue;
        uint32_t fn = np_calls_func_of(L->as, pc);
        if (fn && np_addrspace_address_of(L->as, name) == fn) /* an alias */
            continue;
        if (!other++) {
            snprintf(first, sizeof first, "QEMU ran %.200s at 0x%08" PRIx32 ", where %.200s has %.200s", name, pc,
                     elf, ours ? ours : "no function");
        }
    }
    free(line);
    np_hmap_free(&seen);
    rewind(f);
    if (other * 20 > checked)
        return fail(sum, NP_TRACE_ENOTTRACE, "%s is not a run of %s: %s", log, elf, first);
    return 0;
}

/* A logged block: its start, its instruction limit, its registers. */
struct rec {
    uint32_t pc, count;
    struct regs r;
};

/* Reads LOG's blocks into the tracker: each is told once the next one's
 * start (and registers) are read. */
static int read_log(struct qlog *L, FILE *f, struct np_trace_summary *sum)
{
    char *line = NULL;
    size_t cap = 0;
    bool have_prev = false, have_cur = false;
    struct rec prev = { 0 }, cur = { 0 };
    int rc = 0;
    ssize_t got;
    bool whole = true; /* the last line read ended with its newline */
    while (!rc && !L->cpu.halt && (got = getline(&line, &cap, f)) >= 0) {
        uint32_t pc, count, v;
        whole = got > 0 && line[got - 1] == '\n';
        if (parse_trace(line, &pc, &count)) {
            if (have_prev && have_cur)
                rc = step(L, prev.pc, &prev.r, prev.count, cur.pc, &cur.r);
            if (have_cur) {
                prev = cur;
                have_prev = true;
            }
            memset(&cur, 0, sizeof cur);
            cur.pc = pc;
            cur.count = count;
            have_cur = true;
            L->st.blocks++;
        } else if (line[0] == 'R' && have_cur && reg_field(line, "R13=", &v)) {
            cur.r.sp = v;
            cur.r.known = true;
            if (reg_field(line, "R14=", &v))
                cur.r.lr = v;
        } else if (strncmp(line, "XPSR=", 5) == 0 && have_cur && reg_field(line, "XPSR=", &v)) {
            cur.r.ipsr = v & 0x1ff;
        } else if ((strncmp(line, "Stopped execution of TB chain before ", 37) == 0 ||
                    strncmp(line, "cpu_io_recompile: rewound execution of TB to ", 45) == 0) &&
                   have_cur) {
            /* the block logged last ran no instruction (an interrupt, or
             * icount's budget, came first; its first instruction does I/O,
             * which icount runs last in a block): it starts again next.
             * (Rewound further on: it ran up to there, as a block cut
             * short does.) */
            const char *b = line[0] == 'S' ? strchr(line, '[') : line + 44;
            if (b && strtoull(b + 1, NULL, 16) == cur.pc) {
                cur = prev;
                have_cur = have_prev;
                have_prev = false;
                L->st.blocks--;
            }
        } else if (strncmp(line, "Trace ", 6) == 0) {
            L->st.bad_lines++;
        }
    }
    if (!rc && have_prev && have_cur && !L->cpu.halt)
        rc = step(L, prev.pc, &prev.r, prev.count, cur.pc, &cur.r);
    /* the last block: its instructions up to its PC write, or the one
     * that ended the run (a semihosting exit); a run ends at one (QEMU
     * exits at the firmware's exit), a log that ends elsewhere was cut
     * (QEMU stopped, or the file) */
    if (!rc && have_cur && !L->cpu.halt) {
        const struct block *b = block_at(L, cur.pc);
        uint32_t n = b ? b->n : 0;
        if (b && b->first_end && b->first_end < n)
            n = b->first_end;
        count_insns(L, cur.count && cur.count < n ? cur.count : n);
        if (!whole || (b && !b->calls_host))
            L->st.cut = true;
        if (L->st.cut)
            L->st.end_pc = cur.pc;
    }
    free(line);
    if (ferror(f))
        return fail(sum, NP_TRACE_EIO, "cannot read the log");
    if (rc)
        return fail(sum, L->st.no_capstone ? NP_TRACE_EOPTION : NP_TRACE_ENOMEM, "%s",
                    L->st.no_capstone ? "Capstone (libcapstone4) is not installed: it decodes the firmware's code"
                                      : "out of memory");
    return NP_TRACE_OK;
}

/* "0x... in FUNCTION" */
static void where(struct qlog *L, uint32_t addr, char *buf, size_t size)
{
    const char *name = np_calls_name_of(L->as, addr);
    snprintf(buf, size, "0x%08" PRIx32 " %s%.200s", addr, name ? "in " : "(in no function)", name ? name : "");
}

static void exception_name(uint16_t n, char *buf, size_t size)
{
    static const char *const names[16] = { [2] = "NMI", [3] = "HardFault", [4] = "MemManage", [5] = "BusFault",
                                           [6] = "UsageFault", [11] = "SVCall", [12] = "DebugMonitor",
                                           [14] = "PendSV", [15] = "SysTick" };
    if (!n || n == QLOG_SHARED)
        snprintf(buf, size, "an exception");
    else if (n >= 16)
        snprintf(buf, size, "IRQ %u", n - 16u);
    else if (names[n])
        snprintf(buf, size, "%s", names[n]);
    else
        snprintf(buf, size, "exception %u", n);
}

/* The line that says how the run ended, when the log did not just end. */
static void say_ending(struct qlog *L, char *buf, size_t size)
{
    const struct np_qemu_log_stats *st = &L->st;
    char at[256], from[256], what[32];
    buf[0] = 0;
    if (st->threads_full) {
        snprintf(buf, size, "a stack switch to a new thread after %" PRIu64 " instructions, with %u threads "
                 "already: a firmware that moves its stack and jumps to a function's start at every turn?",
                 L->cpu.insns, NP_CALLTRACK_MAX_THREADS);
    } else if (st->limited) {
        where(L, st->end_pc, at, sizeof at);
        snprintf(buf, size, "still running after %" PRIu64 " instructions (the limit: --max-insns), at %s", st->insns,
                 at);
    } else if (st->cut) {
        where(L, st->end_pc, at, sizeof at);
        snprintf(buf, size, "the log is cut short: it ends at %s, not at a semihosting call that could end the run",
                 at);
    } else if (st->halted) {
        where(L, st->end_pc, at, sizeof at);
        exception_name(st->end_exception, what, sizeof what);
        if (st->end_resume != QLOG_NOWHERE)
            where(L, st->end_resume, from, sizeof from);
        else
            where(L, st->end_block, from, sizeof from);
        bool fault = st->end_exception >= 2 && st->end_exception <= 6;
        snprintf(buf, size, "%s %s %s%.200s; its handler loops at %.200s", fault ? "the firmware faulted:" : "stopped in",
                 what, st->end_resume != QLOG_NOWHERE ? "at " : "in the block at ", from, at);
    }
}

int np_qemu_log_read(const char *path, const char *elf, enum np_metric metric, const struct np_event_sink *sink,
                     struct np_trace_summary *summary, struct np_qemu_log_stats *stats)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        memset(summary, 0, sizeof *summary);
        memset(stats, 0, sizeof *stats);
        return fail(summary, NP_TRACE_EIO, "%s: %m", path);
    }
    int rc = np_qemu_log_read_stream(f, path, elf, true, 0, metric, sink, summary, stats);
    fclose(f);
    return rc;
}

int np_qemu_log_read_stream(FILE *f, const char *path, const char *elf, bool check, uint64_t max_insns,
                            enum np_metric metric, const struct np_event_sink *sink, struct np_trace_summary *summary,
                            struct np_qemu_log_stats *stats)
{
    memset(summary, 0, sizeof *summary);
    memset(stats, 0, sizeof *stats);
    if (metric == NP_METRIC_COUNT) /* (its times are instructions already) */
        metric = NP_METRIC_TIME;
    struct qlog *L = calloc(1, sizeof *L);
    if (!L)
        return fail(summary, NP_TRACE_ENOMEM, "out of memory");
    np_hmap_init(&L->block_index);
    char err[256];
    if (np_image_load(elf, NULL, &L->img, err, sizeof err) != 0) {
        free(L);
        return fail(summary, NP_TRACE_ENOTTRACE, "%s: %s", elf, err);
    }
    int status = NP_TRACE_OK;
    bool begun = false;
    L->mclass = np_image_is_m_profile(L->img.cpu_arch, L->img.cpu_profile);
    L->max_insns = max_insns;
    char *real = realpath(elf, NULL);
    struct np_trace_module mod = { 0, L->img.text_lo, L->img.text_hi, L->img.build_id, L->img.build_id_len,
                                   real ? real : elf };
    L->syms = np_symbols_new(NULL, NULL);
    L->as = L->syms ? np_addrspace_new(L->syms) : NULL;
    if (!L->as || np_addrspace_map(L->as, &mod) != 0 || find_handlers(L) != 0) {
        status = fail(summary, NP_TRACE_ENOMEM, "out of memory");
        goto out;
    }
    if (check && (status = check_names(L, f, path, elf, summary)) != 0)
        goto out;
    begun = true;
    /* the calls in the view's metric (the log's cycles are instructions) */
    struct np_calls_metric view = { sink, metric, 0 };
    struct np_event_sink view_sink = np_calls_metric_sink(&view);
    L->out.sink = &view_sink;
    L->out.insns_now = &L->cpu.insns;
    const char *argv[] = { elf };
    struct np_trace_process proc = { 0 };
    proc.file = path;
    proc.pid = 1;
    proc.ns_per_tick = proc.info_ns_per_tick = 1.0;
    proc.clock = "instructions";
    proc.time_unit = NP_UNIT_INSNS;
    proc.argc = 1;
    proc.argv = argv;
    proc.has_end = true;
    if (np_calls_out_sink_rc(&L->out, view_sink.begin(view_sink.ctx, &proc)) ||
        np_calls_out_sink_rc(&L->out, view_sink.module(view_sink.ctx, &mod)))
        goto told;
    struct np_calltrack_out out = np_calls_out_hooks(&L->out);
    struct np_calltrack_funcs funcs = np_calls_funcs(L->as);
    L->trk = np_calltrack_new(&out, &funcs, NULL);
    if (!L->trk) {
        status = fail(summary, NP_TRACE_ENOMEM, "out of memory");
        goto told;
    }
    status = read_log(L, f, summary);
    if (status == NP_TRACE_OK && L->st.cut) {
        say_ending(L, summary->message, sizeof summary->message);
        status = NP_TRACE_ETRUNC;
    }
    L->st.threads_full = np_calltrack_stats(L->trk)->thread_limit;
    np_calltrack_finish(L->trk, &L->cpu);
    stats->calls = *np_calltrack_stats(L->trk);
told:
    status = np_calls_out_end(&L->out, status);
    if (status == NP_TRACE_OK && !L->st.blocks)
        status = fail(summary, NP_TRACE_ENOTTRACE,
                      "%s: no block QEMU ran (log it with -d exec,nochain; -d cpu adds the registers)", path);
out:
    L->st.insns = L->cpu.insns;
    L->st.calls = stats->calls;
    say_ending(L, L->st.ending, sizeof L->st.ending);
    *stats = L->st;
    np_calltrack_free(L->trk);
    np_addrspace_free(L->as);
    np_symbols_free(L->syms);
    free(real);
    free(L->handlers);
    free(L->blocks);
    np_hmap_free(&L->block_index);
    free(L->excs);
    free(L->parked);
    np_image_free(&L->img);
    free(L);
    summary->status = status;
    summary->files = 1;
    summary->files_read = begun; /* (a log refused is not read at all) */
    return status;
}

/* What could not be told exactly, as one line (empty when nothing). */
void np_qemu_log_say(const struct np_qemu_log_stats *s, char *buf, size_t size)
{
    buf[0] = 0;
    size_t n = 0;
#define SAY(count, text)                                                                                    \
    if ((count) && n < size)                                                                                \
        n += (size_t)snprintf(buf + n, size - n, "%s%" PRIu64 " " text, n ? ", " : "", (uint64_t)(count));
    SAY(s->outside, "blocks outside the ELF's code (counted as one instruction each)")
    SAY(s->unexplained, "block ends the ELF's code does not explain (skipped)")
    SAY(s->calls.resynced, "calls closed by re-synchronisation, marked (?)")
    SAY(s->bad_lines, "malformed Trace lines skipped")
#undef SAY
}

int np_source_qemu_log_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                            const struct np_trace_hooks *hooks, struct np_trace_summary *summary)
{
    const char *elf = NULL;
    memset(summary, 0, sizeof *summary);
    for (const char *const *a = o && o->args ? o->args : NULL; a && *a; a++) {
        if (strncmp(*a, "elf=", 4) != 0)
            return fail(summary, NP_TRACE_EOPTION, "unknown setting '%s' for a QEMU log (elf=FILE)", *a);
        elf = *a + 4;
    }
    int rc = NP_TRACE_OK;
    if (!elf)
        rc = fail(summary, NP_TRACE_EOPTION, "%s is QEMU's execution log: give its firmware's ELF (--elf FILE)", path);
    else if (o && o->clock_hz > 0)
        rc = fail(summary, NP_TRACE_EOPTION, "a QEMU log counts instructions, not cycles: --clock does not apply");
    if (rc) {
        if (hooks && hooks->diag)
            hooks->diag(hooks->ctx, NP_DIAG_ERROR, summary->message);
        return rc;
    }
    struct np_qemu_log_stats st;
    rc = np_qemu_log_read(path, elf, o ? o->metric : NP_METRIC_TIME, sink, summary, &st);
    if (rc != NP_TRACE_OK && hooks && hooks->diag)
        hooks->diag(hooks->ctx, rc == NP_TRACE_ETRUNC ? NP_DIAG_WARNING : NP_DIAG_ERROR, summary->message);
    if ((rc == NP_TRACE_OK || rc == NP_TRACE_ETRUNC) && hooks && hooks->diag) {
        char line[NP_TRACE_MSG_MAX];
        np_qemu_log_say(&st, line, sizeof line);
        if (line[0])
            hooks->diag(hooks->ctx, NP_DIAG_WARNING, line);
        if (st.ending[0] && !st.cut)
            hooks->diag(hooks->ctx, NP_DIAG_NOTE, st.ending);
    }
    return rc;
}
