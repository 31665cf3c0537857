/* patch.c - functions built with patchable entries, switched on and off
 * while the program runs (include/nanoprof/patch.h; `nanoprof record -P`
 * and its signal).
 *
 * -fpatchable-function-entry=5 (GCC: five one-byte NOPs; Clang: one
 * five-byte NOP) and -pg -mfentry -mnop-mcount -mrecord-mcount (one
 * five-byte NOP) leave room at each function's entry and list the places
 * in a section (__patchable_function_entries, __mcount_loc). The runtime
 * finds the section in each module's file and reads it in memory, where
 * the loader has relocated it. A place counts only where the symbol table
 * says a function starts and the five bytes are NOPs: -fpatchable-function-
 * entry=N,M with M > 0 puts NOPs before the entry, where a call cannot go.
 *
 * Switching a function on writes there a jump to a thunk of its own
 * (thunks.c), within a jump's reach (2 GiB) of the module: the function is
 * then traced as a -pg -mfentry build is. Without one (NANOPROF_PG_THUNKS=0,
 * no room) it writes "call JUMP", JUMP a jump to the -mfentry hook
 * (mcount.c's np_patch_fentry) placed as near, which exits through the
 * return-address trampoline. Switching off writes the original bytes back.
 *
 * Cross-modifying code (Intel SDM vol. 3A, 8.1.3; Linux's text_poke_bp
 * does the same): other threads may run the bytes being written, so a
 * switch goes in three steps, each followed by every CPU of the process
 * serialised (membarrier's PRIVATE_EXPEDITED_SYNC_CORE, Linux 4.16):
 *   1. int3 on each place's first byte;
 *   2. its last four bytes;
 *   3. its first byte.
 * A thread that meets an int3 meanwhile gets SIGTRAP: the handler moves it
 * past the place, as the NOPs would have (that call is not traced: the
 * switch was not done). Where the NOPs are five instructions (GCC's), a
 * thread may stand between two of them when step 2 writes, so before it
 * every other thread is sent a signal whose handler moves it past the
 * place if it stands inside one. A thread that blocks the signal is taken
 * as safe only when the kernel says it sleeps in a system call
 * (/proc/self/task/TID/syscall); otherwise the switch is undone and fails. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "nanoprof/patch.h"
#include "../../common/elf_symtab.h"
#include "../../common/name_match.h"
#include "../../common/trace_format.h"
#include "../../runtime/np_config.h"
#include "../port.h"
#include "lazy.h"
#include "mcount.h"
#include "modules.h"
#include "posix.h"

static char why[256];

NP_API const char *np_trace_error(void) { return why; }

#if defined(__x86_64__) && defined(__linux__)

#define SITE 5 /* the bytes a call takes */

struct site {
    uintptr_t at;        /* the function's entry */
    uintptr_t thunk;     /* its thunk (thunks.c), once made; 0: none */
    uint8_t orig[SITE];  /* its NOPs, as built */
    uint8_t multi;       /* several NOP instructions (a thread may stand between) */
    uint8_t on;          /* 0 off; on: the first byte written (0xe9 to the thunk, 0xe8 to a jump) */
};

/* Every place found, sorted by address. Signal handlers read it without a
 * lock: a larger table replaces it whole, and the old one is kept. */
struct table {
    size_t n;
    struct site v[];
};
static struct table *tab;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long adds; /* the module walk's "loaded since" */
static uintptr_t seen[NP_PATCH_MODULES]; /* modules read (their code's start) */
static int nseen;
static size_t not_entries; /* places where no function starts, by the symbol table */
static uintptr_t jumps[NP_PATCH_JUMPS];
static int njumps;

static int fail(const char *fmt, const char *arg)
{
    snprintf(why, sizeof why, fmt, arg);
    return -1;
}

/* ---- finding the places ------------------------------------------------ */

struct mod {
    uintptr_t bias, start, end;
    char path[PATH_MAX];
};
struct mods {
    struct mod *v;
    int n, cap;
};

static int note_module(struct np_posix_module *m, void *ctx)
{
    struct mods *ms = ctx;
    char buf[PATH_MAX];
    const char *path = np_posix_module_path(m, buf);
    if (!path || !strcmp(path, NP_TRACE_VDSO) || strlen(path) >= PATH_MAX)
        return 0;
    for (int i = 0; i < nseen; i++)
        if (seen[i] == m->start)
            return 0;
    if (ms->n == ms->cap) {
        int cap = ms->cap ? ms->cap * 2 : 16;
        struct mod *v = realloc(ms->v, (size_t)cap * sizeof *v);
        if (!v)
            return 1;
        ms->v = v, ms->cap = cap;
    }
    struct mod *d = &ms->v[ms->n++];
    d->bias = m->bias, d->start = m->start, d->end = m->end;
    strcpy(d->path, path);
    return 0;
}

/* Whether the five bytes at P are NOPs that end there: 1 (one instruction)
 * or 2 (five); 0 otherwise. */
static int nops(const uint8_t *p)
{
    if (p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x44 && p[3] == 0x00)
        return 1; /* nopl disp8(%rax,%rax,1): Clang, -mnop-mcount */
    for (int i = 0; i < SITE; i++)
        if (p[i] != 0x90)
            return 0;
    return 2;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = ((const struct site *)a)->at, y = ((const struct site *)b)->at;
    return x < y ? -1 : x > y;
}

/* The places of module D, appended to *V (N of CAP). */
static void read_module(const struct mod *d, struct site **v, size_t *n, size_t *cap)
{
    int fd = open(d->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Shdr lists[2];
    size_t nlists = elf && elf_kind(elf) == ELF_K_ELF ? np_elf_patchable_lists(elf, lists, 2) : 0;
    for (size_t l = 0; l < nlists && l < 2; l++) {
        const GElf_Shdr sh = lists[l];
        if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_addr)
            continue; /* (in memory, relocated, only when allocated) */
        const uintptr_t *a = (const uintptr_t *)(d->bias + sh.sh_addr);
        for (size_t i = 0; i < sh.sh_size / sizeof *a; i++) {
            uintptr_t at = a[i];
            uint64_t off = 1;
            char fn[8];
            int kind;
            if (at - d->start >= d->end - d->start || at + SITE > d->end || !(kind = nops((const uint8_t *)at)))
                continue;
            if (!np_port_symbolize_at((const void *)at, fn, sizeof fn, &off) || off != 0) {
                not_entries++;
                continue;
            }
            if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 1024;
                struct site *nv = realloc(*v, c * sizeof *nv);
                if (!nv)
                    break;
                *v = nv, *cap = c;
            }
            struct site *s = &(*v)[(*n)++];
            memset(s, 0, sizeof *s);
            s->at = at;
            memcpy(s->orig, (const void *)at, SITE);
            s->multi = kind == 2;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
}

/* Reads the modules loaded since the last look; the table grows. */
static void find_places(void)
{
    struct mods ms = { NULL, 0, 0 };
    np_posix_modules(note_module, &ms, &adds); /* no file opened in the loader's lock */
    if (!ms.n || !np_lazy_elf()) {
        free(ms.v);
        return;
    }
    elf_version(EV_CURRENT);
    struct table *old = __atomic_load_n(&tab, __ATOMIC_ACQUIRE);
    size_t n = old ? old->n : 0, cap = n + 1024;
    struct site *v = malloc(cap * sizeof *v);
    if (!v) {
        free(ms.v);
        return;
    }
    if (n)
        memcpy(v, old->v, n * sizeof *v);
    for (int i = 0; i < ms.n; i++) {
        if (nseen < NP_PATCH_MODULES)
            seen[nseen++] = ms.v[i].start;
        read_module(&ms.v[i], &v, &n, &cap);
    }
    free(ms.v);
    struct table *t = old && n == old->n ? NULL : malloc(sizeof *t + n * sizeof *v);
    if (t) {
        t->n = n;
        memcpy(t->v, v, n * sizeof *v);
        qsort(t->v, n, sizeof *v, by_address);
        size_t k = 0; /* a place both sections list, once */
        for (size_t i = 0; i < n; i++)
            if (!k || t->v[i].at != t->v[k - 1].at)
                t->v[k++] = t->v[i];
        t->n = k;
        __atomic_store_n(&tab, t, __ATOMIC_RELEASE); /* the old one stays: a handler may read it */
    }
    free(v);
}

static struct site *place_of(const struct table *t, uintptr_t pc, int inside)
{
    size_t lo = 0, hi = t ? t->n : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].at + (inside ? SITE : 1) <= pc)
            lo = mid + 1;
        else if (t->v[mid].at > pc)
            hi = mid;
        else
            return (struct site *)&t->v[mid];
    }
    return NULL;
}

/* ---- the jumps to the hook, each within a call's reach ------------ */

static uintptr_t jump_for(uintptr_t at)
{
    for (int i = 0; i < njumps; i++)
        if (np_posix_reach(at + SITE, jumps[i]))
            return jumps[i];
    if (njumps == NP_PATCH_JUMPS)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *c = np_posix_map_near(at, at + SITE, (size_t)page);
    if (!c)
        return 0;
    /* jmp *0(%rip); .quad np_patch_fentry */
    static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };
    uintptr_t hook = (uintptr_t)np_patch_fentry;
    memcpy(c, jmp, sizeof jmp);
    memcpy(c + sizeof jmp, &hook, sizeof hook);
    if (mprotect(c, (size_t)page, PROT_READ | PROT_EXEC) != 0) {
        munmap(c, (size_t)page);
        return 0;
    }
    jumps[njumps++] = (uintptr_t)c;
    return (uintptr_t)c;
}

/* ---- serialising every CPU, and the threads between NOPs --------------- */

static int sync_state; /* 1 registered; -1 the kernel cannot */

static int threads_other_than_me(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;
}

int np_posix_sync_cores(void)
{
    if (!sync_state)
        sync_state = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 1 : -1;
    if (sync_state > 0)
        return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 0 : -1;
    return threads_other_than_me() > 0 ? -1 : 0; /* alone, nothing else runs the code */
}

/* The runtime's own threads (the recorder's writer, the signal's
 * switcher): they run no code of the program's, so the round leaves them
 * out (they block every signal, and may be busy). */
static pid_t own[4];

void np_posix_patch_own_thread(void)
{
    pid_t me = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < 4; i++)
        if (__atomic_load_n(&own[i], __ATOMIC_ACQUIRE) == 0) {
            pid_t zero = 0;
            if (__atomic_compare_exchange_n(&own[i], &zero, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return;
        }
}

static int is_own(pid_t tid)
{
    for (int i = 0; i < 4; i++)
        if (__atomic_load_n(&own[i], __ATOMIC_ACQUIRE) == tid)
            return 1;
    return 0;
}

static struct sigaction old_trap;
static int round_sig;
static pid_t acked[NP_PATCH_THREADS];
static unsigned nacked;

/* SIGTRAP: an int3 of a switch under way moves the thread past the place;
 * any other goes where it went before. */
static void on_trap(int sig, siginfo_t *info, void *ctx)
{
    ucontext_t *uc = ctx;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    struct site *s = place_of(__atomic_load_n(&tab, __ATOMIC_ACQUIRE), pc - 1, 0);
    if (s && s->at == pc - 1) {
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(s->at + SITE);
        return;
    }
    uintptr_t thunk = np_thunk_trapped(pc - 1); /* a call of __fentry__ becoming a jump (thunks.c) */
    if (thunk) {
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)thunk;
        return;
    }
    if (old_trap.sa_flags & SA_SIGINFO) {
        old_trap.sa_sigaction(sig, info, ctx);
    } else if (old_trap.sa_handler != SIG_IGN && old_trap.sa_handler != SIG_DFL) {
        old_trap.sa_handler(sig);
    } else {
        signal(SIGTRAP, SIG_DFL); /* as without the runtime */
        raise(SIGTRAP);
    }
}

/* The round's signal: a thread standing between a place's NOPs is moved
 * past it. */
static void on_round(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)info;
    ucontext_t *uc = ctx;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    struct site *s = place_of(__atomic_load_n(&tab, __ATOMIC_ACQUIRE), pc, 1);
    if (s && pc != s->at)
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(s->at + SITE);
    unsigned i = __atomic_fetch_add(&nacked, 1, __ATOMIC_ACQ_REL);
    if (i < NP_PATCH_THREADS)
        __atomic_store_n(&acked[i], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

int np_posix_trap_ready(void)
{
    static int done;
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    int rc = 0;
    if (!done) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_trap;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        rc = sigaction(SIGTRAP, &sa, &old_trap) == 0 ? 0 : fail("cannot handle SIGTRAP%s", "");
        done = rc == 0;
    }
    pthread_mutex_unlock(&once);
    return rc;
}

static int handlers(void)
{
    static int done;
    if (done)
        return 0;
    if (np_posix_trap_ready() != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!(round_sig = np_posix_free_rt_signal()))
        return fail("every real-time signal has a handler already%s", "");
    sa.sa_sigaction = on_round;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    if (sigaction(round_sig, &sa, NULL) != 0)
        return fail("cannot handle a real-time signal%s", "");
    done = 1;
    return 0;
}

/* Whether thread TID, which did not answer, sleeps in a system call away
 * from every place (the kernel's word: its pc is the last field). */
static int sleeps_away(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT; /* gone */
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    if (!strncmp(buf, "running", 7))
        return 0;
    const char *last = strrchr(buf, ' ');
    uintptr_t pc = last ? (uintptr_t)strtoull(last + 1, NULL, 16) : 0;
    return pc && !place_of(__atomic_load_n(&tab, __ATOMIC_ACQUIRE), pc, 1);
}

/* Whether thread TID blocks signal SIG (its SigBlk in /proc): it will not
 * answer, so the kernel is asked at once. */
static int blocks(pid_t tid, int sig)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *b = strstr(buf, "\nSigBlk:\t");
    return b && (strtoull(b + 9, NULL, 16) >> (sig - 1) & 1);
}

/* The round's signal to TID: 1 sent, 0 the thread is gone, 2 to send
 * again (the queue of real-time signals, shared by the user's processes,
 * full: EAGAIN). */
static unsigned char sent(pid_t tid)
{
    if (syscall(SYS_tgkill, getpid(), tid, round_sig) == 0)
        return 1;
    return errno == EAGAIN ? 2 : 0;
}

static int answered(pid_t tid, unsigned got)
{
    for (unsigned k = 0; k < got && k < NP_PATCH_THREADS; k++)
        if (__atomic_load_n(&acked[k], __ATOMIC_ACQUIRE) == tid)
            return 1;
    return 0;
}

static int gone(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    return access(path, F_OK) != 0;
}

/* Every other thread out of the places' NOPs; -1 when one cannot be told.
 * A thread that takes the signal is moved by its handler, and answers
 * once it runs (on a busy machine, later); any handler that runs after
 * the int3s are in place answers for this round: from then on, no thread
 * enters a place but through its int3. One that blocks the signal (for a
 * while: inside a previous round's handler; or for good) is sent it once
 * it does not, or asked of the kernel: asleep in a system call, away from
 * every place, it is out. One that ends meanwhile needs nothing. */
static int round_of_threads(void)
{
    static pid_t tids[NP_PATCH_THREADS];
    static unsigned char state[NP_PATCH_THREADS]; /* 0 out, 1 sent, 2 blocking */
    pid_t me = (pid_t)syscall(SYS_gettid);
    unsigned n = 0;
    __atomic_store_n(&nacked, 0, __ATOMIC_RELEASE);
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return fail("cannot list the threads (/proc/self/task)%s", "");
    for (struct dirent *e; (e = readdir(d));) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == me || is_own(tid))
            continue;
        if (n == NP_PATCH_THREADS) {
            closedir(d);
            return fail("more threads than NP_PATCH_THREADS%s", "");
        }
        tids[n] = tid;
        state[n++] = 2;
    }
    closedir(d);
    struct timespec nap = { 0, 100000 };
    for (int waited = 0;; waited++) {
        unsigned got = __atomic_load_n(&nacked, __ATOMIC_ACQUIRE), left = 0;
        for (unsigned i = 0; i < n; i++) {
            if (state[i] == 1 && (answered(tids[i], got) || (waited % 100 == 99 && gone(tids[i]))))
                state[i] = 0;
            else if (state[i] == 1 && waited % 1000 == 999)
                state[i] = 2; /* no answer yet: sent again (a handler that runs more answers more) */
            if (state[i] == 2 && !blocks(tids[i], round_sig))
                state[i] = sent(tids[i]);
            else if (state[i] == 2 && sleeps_away(tids[i]))
                state[i] = 0;
            left += state[i] != 0;
        }
        if (!left)
            return 0;
        if (waited > NP_PATCH_ANSWER_MS * 10) {
            for (unsigned i = 0; i < n; i++)
                if (state[i]) {
                    char tid[24];
                    snprintf(tid, sizeof tid, "%d", (int)tids[i]);
                    return fail(state[i] == 2 ? "thread %s blocks the runtime's signal and keeps running: it may "
                                                "stand inside a function's NOPs"
                                              : "thread %s did not take the runtime's signal (stopped?)",
                                tid);
                }
        }
        nanosleep(&nap, NULL);
    }
}

/* ---- switching ---------------------------------------------------------- */

/* The bytes V[I] gets: a jump to its thunk, else a call to its jump to
 * the hook; or its NOPs. */
static void bytes_of(const struct site *s, uintptr_t jump, int on, uint8_t *b)
{
    if (!on)
        memcpy(b, s->orig, SITE);
    else
        np_posix_code_rel(b, s->at, s->thunk ? 0xe9 : 0xe8, s->thunk ? s->thunk : jump);
}

static int switch_places(struct site **v, uintptr_t *jump, size_t n, int on)
{
    _Static_assert(SITE == NP_CODE_SITE, "a place is a call's bytes");
    struct np_code_site *code = malloc(n * sizeof *code);
    if (!code)
        return fail("out of memory%s", "");
    int multi = 0;
    for (size_t i = 0; i < n; i++) {
        code[i].at = v[i]->at;
        bytes_of(v[i], jump[i], on, code[i].b);
        multi |= on && v[i]->multi;
    }
    int rc = np_posix_code_write(code, n, multi ? round_of_threads : NULL); /* (GCC's five NOPs) */
    for (size_t i = 0; rc == 0 && i < n; i++)
        v[i]->on = on ? code[i].b[0] : 0;
    free(code);
    if (rc == -1)
        return fail("cannot make the code writable (mprotect: %s)", strerror(errno));
    if (rc == -2 && !why[0])
        fail("the kernel cannot serialise the other threads' CPUs (membarrier SYNC_CORE, Linux 4.16)%s", "");
    return rc < 0 ? -1 : 0;
}

/* The code of the modules loaded now: a place of a module dlclose has
 * unloaded is left alone (its address may hold another's code). */
struct live {
    uintptr_t lo[NP_PATCH_MODULES], hi[NP_PATCH_MODULES];
    int n;
};

static int note_live(struct np_posix_module *m, void *ctx)
{
    struct live *l = ctx;
    if (l->n < NP_PATCH_MODULES) {
        l->lo[l->n] = m->start;
        l->hi[l->n++] = m->end;
    }
    return 0;
}

/* Whether S is in a loaded module and holds what the runtime left there,
 * or its NOPs as built (a module loaded again: off). */
static int intact(const struct live *l, struct site *s)
{
    for (int i = 0; i < l->n; i++)
        if (s->at - l->lo[i] < l->hi[i] - l->lo[i]) {
            if (!memcmp((const void *)s->at, s->orig, SITE)) {
                s->on = 0;
                return 1;
            }
            return s->on && *(const uint8_t *)s->at == s->on;
        }
    return 0;
}

static int matches(const struct np_name_pattern *p, uintptr_t at)
{
    if (!p)
        return 1;
    struct np_posix_names names;
    np_posix_names_of(at, &names);
    for (int k = 0; k < 3 && names.v[k]; k++)
        if (np_name_pattern_match(p, names.v[k]))
            return 1;
    return 0;
}

/* Thunks (thunks.c) for the N places V that have none, a batch for each
 * run of them within a jump's reach of one another (JUMP: room for their
 * functions' and bodies' addresses); those left keep calls to the jump. */
static void make_thunks(struct site **v, size_t n, uintptr_t *jump)
{
    if (!np_posix_thunks_wanted())
        return;
    uintptr_t *fn = jump, *body = malloc(n * sizeof *body);
    for (size_t i = 0; body && i < n;) {
        size_t k = 0, first = i;
        for (; i < n && (!k || v[i]->at - v[first]->at < (1u << 30)); i++)
            if (!v[i]->thunk) {
                fn[k] = v[i]->at;
                body[k++] = v[i]->at + SITE;
            }
        uintptr_t t = k ? np_posix_thunks(k, fn, body) : 0;
        for (size_t j = first, m = 0; t && j < i; j++)
            if (!v[j]->thunk)
                v[j]->thunk = t + m++ * NP_THUNK_BYTES;
    }
    free(body);
}

static int turn(const char *pattern, int on)
{
    why[0] = 0;
    struct np_name_pattern pat, *p = NULL;
    char err[256];
    if (pattern && *pattern && strcmp(pattern, "*") != 0) { /* "*": every one, no name needed */
        if (np_name_pattern_init(&pat, pattern, err, sizeof err) != 0) {
            np_name_pattern_free(&pat);
            return fail("%s", err);
        }
        p = &pat;
    }
    pthread_mutex_lock(&lock);
    int rc = handlers();
    if (rc == 0) {
        find_places();
        struct table *t = __atomic_load_n(&tab, __ATOMIC_ACQUIRE);
        if ((!t || !t->n) && not_entries) {
            char n[24];
            snprintf(n, sizeof n, "%zu", not_entries);
            rc = fail("none of the program's %s patchable places is where a function starts by its symbol table "
                      "(-fpatchable-function-entry=N,M with M > 0, or no symbols): build with "
                      "-fpatchable-function-entry=5", n);
        } else if (!t || !t->n) {
            rc = fail("no function of the program has a patchable entry (build with "
                      "-fpatchable-function-entry=5)%s", "");
        } else {
            struct site **v = malloc(t->n * sizeof *v);
            uintptr_t *jump = malloc(t->n * sizeof *jump);
            static struct live live; /* (under the lock) */
            live.n = 0;
            np_posix_modules(note_live, &live, NULL);
            size_t n = 0;
            for (size_t i = 0; v && jump && i < t->n; i++) {
                struct site *s = &t->v[i];
                if (intact(&live, s) && !s->on != !on && matches(p, s->at))
                    v[n++] = s;
            }
            if (on && v && jump)
                make_thunks(v, n, jump);
            for (size_t i = 0; on && v && jump && i < n && rc == 0; i++)
                if (!v[i]->thunk && !(jump[i] = jump_for(v[i]->at)))
                    rc = fail("no free page within 2 GiB of the code for the jump to the hook%s", "");
            if (!v || !jump)
                rc = fail("out of memory%s", "");
            else if (rc == 0 && n)
                rc = switch_places(v, jump, n, on);
            if (rc == 0)
                rc = (int)n;
            free(v);
            free(jump);
        }
    }
    pthread_mutex_unlock(&lock);
    if (p)
        np_name_pattern_free(p);
    return rc;
}

NP_API int np_trace_on(const char *pattern) { return turn(pattern, 1); }
NP_API int np_trace_off(const char *pattern) { return turn(pattern, 0); }

/* ---- the recorder's -P, --trace-off and --trace-signal ------------------ */

static char *patch_list; /* the patterns, comma-separated */
static int patch_on;
static sem_t toggles;

static int each_pattern(int on)
{
    char *copy = strdup(patch_list), *save = NULL;
    int total = 0;
    if (!copy)
        return fail("out of memory%s", "");
    for (char *p = strtok_r(copy, ",", &save); p && total >= 0; p = strtok_r(NULL, ",", &save)) {
        int n = on ? np_trace_on(p) : np_trace_off(p);
        total = n < 0 ? -1 : total + n;
    }
    free(copy);
    return total;
}

static void on_toggle(int sig)
{
    (void)sig;
    int e = errno;
    sem_post(&toggles); /* async-signal-safe; the switch is the thread's */
    errno = e;
}

static void *toggler(void *arg)
{
    (void)arg;
    np_posix_patch_own_thread();
    for (;;) {
        while (sem_wait(&toggles) != 0 && errno == EINTR)
            ;
        if (each_pattern(!patch_on) < 0) {
            char line[320];
            int n = snprintf(line, sizeof line, "nanoprof: tracing not switched %s: %s\n", patch_on ? "off" : "on",
                             why);
            (void)!write(2, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        } else {
            patch_on = !patch_on;
        }
    }
    return NULL;
}

int np_posix_patch_start(const char *patterns, int on, int sig)
{
    why[0] = 0;
    if (!(patch_list = strdup(patterns)))
        return fail("out of memory%s", "");
    pthread_mutex_lock(&lock);
    find_places();
    struct table *t = __atomic_load_n(&tab, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&lock);
    if ((!t || !t->n) && !not_entries)
        return 0; /* a program exec'd from the one recorded, built without them */
    if (on && each_pattern(1) < 0)
        return -1;
    patch_on = on;
    if (!sig)
        return 0;
    pthread_t thread;
    sigset_t all, old;
    sigfillset(&all);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sem_init(&toggles, 0, 0) != 0)
        return fail("sem_init failed%s", "");
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread takes no signal of the program's */
    int e = pthread_create(&thread, NULL, toggler, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e)
        return fail("cannot start the thread that switches tracing: %s", strerror(e));
    pthread_detach(thread);
    if (sigaction(sig, &sa, NULL) != 0)
        return fail("cannot handle the signal: %s", strerror(errno));
    return 0;
}

#else

NP_API int np_trace_on(const char *pattern)
{
    (void)pattern;
    snprintf(why, sizeof why, "patchable entries are switched on x86-64 Linux only");
    return -1;
}
NP_API int np_trace_off(const char *pattern) { return np_trace_on(pattern); }
void np_posix_patch_own_thread(void) {}
int np_posix_patch_start(const char *patterns, int on, int sig)
{
    (void)on, (void)sig;
    return np_trace_on(patterns);
}

#endif
