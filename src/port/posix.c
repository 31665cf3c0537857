/* posix.c - the port for Linux and other POSIX hosts.
 *
 * Clock: the CPU's counter (TSC on x86-64, CNTVCT on AArch64), calibrated
 * against CLOCK_MONOTONIC_RAW. Time a thread spends switched out is taken
 * off without root and without a system call per hook, using the
 * restartable-sequences area glibc registers for every thread: the hooks
 * point its rseq_cs field at a descriptor that covers no code, and the
 * kernel clears that field whenever it preempts, migrates or signals the
 * thread. A hook that finds it cleared reads the thread's CPU time once and
 * takes (wall time - CPU time) since the last check off the thread's clock.
 * Where rseq is not registered, the thread CPU-time clock is read instead
 * (slower, equally exact). docs/cost.md explains this.
 *
 * Symbols: dl_iterate_phdr finds the module holding an address, libelf reads
 * its .symtab (static functions included), falling back to .dynsym. */
#define _GNU_SOURCE
#include "port.h"
#include "../runtime/hooks.h"
#include "../runtime/record.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define NP_HAVE_RSEQ 1
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
#endif

int np_clock_kind = NP_CLOCK_MONOTONIC;
__thread volatile uint64_t *np_switch_flag __attribute__((tls_model("initial-exec")));

static __thread uint64_t ref_counter, ref_cpu_ns;
static double calib_ns_per_tick = 1.0;
static uint64_t base_counter, base_ns;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t np_port_wall_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

uint64_t np_port_clock_slow(void)
{
    return ns_of(np_clock_kind == NP_CLOCK_THREAD_CPU ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC);
}

#ifdef NP_HAVE_RSEQ
/* A critical-section descriptor that contains no instruction: the kernel
 * validates it (the abort address must follow the signature) and, since the
 * thread is never inside it, simply clears rseq_cs on preemption. */
static const uint32_t rseq_sig_area[4] __attribute__((aligned(16))) = { RSEQ_SIG, RSEQ_SIG, RSEQ_SIG, RSEQ_SIG };
static struct rseq_cs rseq_desc __attribute__((aligned(32)));

static int rseq_usable(void)
{
    return &__rseq_size && &__rseq_offset &&
           __rseq_size >= offsetof(struct rseq, rseq_cs) + sizeof(uint64_t);
}
#endif

/* A (ns, ticks) pair read as close together as this thread can: the best
 * of a few tries, so a preemption between the two reads does not skew the
 * calibration. */
static void clock_pair(uint64_t *ns, uint64_t *ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t c0 = np_port_counter(), t = ns_of(CLOCK_MONOTONIC_RAW), c1 = np_port_counter();
        if (c1 - c0 < best) {
            best = c1 - c0;
            *ns = t;
            *ticks = c0 + (c1 - c0) / 2;
        }
    }
}

static int counter_usable(void)
{
#if defined(__x86_64__)
    uint32_t a, b, c, d;
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000007u)
        return 0;
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
    return (d >> 8) & 1; /* invariant TSC */
#elif defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

static void clock_setup(void)
{
    const char *force = getenv("NANOPROF_CLOCK");
    int kind = NP_CLOCK_THREAD_CPU;
#ifdef NP_HAVE_RSEQ
    if (counter_usable() && rseq_usable()) {
        kind = NP_CLOCK_COUNTER;
        rseq_desc.version = 0;
        rseq_desc.flags = 0;
        rseq_desc.start_ip = (uint64_t)(uintptr_t)&rseq_sig_area[0];
        rseq_desc.post_commit_offset = 0;
        rseq_desc.abort_ip = (uint64_t)(uintptr_t)&rseq_sig_area[2];
    }
#endif
    if (force && strcmp(force, "thread-cputime") == 0)
        kind = NP_CLOCK_THREAD_CPU;
    else if (force && strcmp(force, "monotonic") == 0)
        kind = NP_CLOCK_MONOTONIC;

    if (kind == NP_CLOCK_COUNTER) {
#if defined(__aarch64__)
        uint64_t f;
        __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
        calib_ns_per_tick = 1e9 / (double)f;
        base_counter = np_port_counter();
        base_ns = ns_of(CLOCK_MONOTONIC_RAW);
#else
        /* 5 ms against the raw monotonic clock; np_port_ns_per_tick()
         * refines this over the whole run. */
        uint64_t t0, c0, t1, c1;
        clock_pair(&t0, &c0);
        do
            clock_pair(&t1, &c1);
        while (t1 - t0 < 5000000u);
        calib_ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
        base_counter = c0;
        base_ns = t0;
#endif
    }
    __atomic_store_n(&np_clock_kind, kind, __ATOMIC_RELEASE);
}

void np_port_clock_init(void)
{
    pthread_once(&clock_once, clock_setup);
}

double np_port_ns_per_tick(void)
{
    if (np_clock_kind != NP_CLOCK_COUNTER)
        return 1.0;
#if !defined(__aarch64__)
    uint64_t t, c;
    clock_pair(&t, &c);
    if (t - base_ns > 200000000u && c > base_counter)
        return (double)(t - base_ns) / (double)(c - base_counter);
#endif
    return calib_ns_per_tick;
}

const char *np_port_clock_name(void)
{
    switch (np_clock_kind) {
    case NP_CLOCK_COUNTER:
#if defined(__aarch64__)
        return "cntvct";
#else
        return "tsc";
#endif
    case NP_CLOCK_THREAD_CPU: return "thread-cputime";
    default: return "monotonic";
    }
}

/* A thread that ends without summarising has its records counted as lost;
 * the recorder hands its last buffer to the writer. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *arg)
{
    struct np_thread *t = np_thread_os();
    (void)arg;
    if (t) {
        void (*rec)(struct np_thread *) = __atomic_load_n(&np_rec_exit_hook, __ATOMIC_ACQUIRE);
        if (rec)
            rec(t);
        np_cost_thread_exit(t);
    }
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

void np_port_thread_start(void)
{
    pthread_once(&exit_once, make_exit_key);
    pthread_setspecific(exit_key, (void *)1);
}

void np_port_clock_thread(void)
{
    np_port_clock_init();
#ifdef NP_HAVE_RSEQ
    if (np_clock_kind == NP_CLOCK_COUNTER && !np_switch_flag) {
        struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        np_switch_flag = (volatile uint64_t *)&rs->rseq_cs;
        *np_switch_flag = (uint64_t)(uintptr_t)&rseq_desc;
        ref_cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID);
        ref_counter = np_port_counter();
    }
#endif
}

uint64_t np_port_resync(struct np_thread *t)
{
    /* Arm first: a switch before the reads below falls in this window, one
     * after them clears the flag again. */
    *np_switch_flag = (uint64_t)(uintptr_t)&rseq_desc;
    uint64_t cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
    uint64_t now = np_port_counter();
    uint64_t wall = now - ref_counter;
    uint64_t ran = (uint64_t)((double)(cpu - ref_cpu_ns) / calib_ns_per_tick);
    if (wall > ran)
        t->off += wall - ran;
    ref_counter = now;
    ref_cpu_ns = cpu;
    return now;
}

long np_port_tid(void)
{
    return (long)syscall(SYS_gettid);
}

void np_port_relax(void)
{
    sched_yield();
}

void np_port_write_default(const char *bytes, size_t len)
{
    while (len) {
        ssize_t n = write(2, bytes, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        bytes += n;
        len -= (size_t)n;
    }
}

/* ---- symbols ------------------------------------------------------------ */

struct np_sym {
    uint64_t start, size;
    const char *name;
};

struct np_module {
    char path[512];
    uint64_t bias;
    int loaded;
    Elf *elf;
    int fd;
    struct np_sym *syms;
    size_t nsyms;
};

#define NP_MAX_MODULES 128
static struct np_module modules[NP_MAX_MODULES];
static int nmodules;
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;

struct find_ctx {
    uintptr_t addr;
    const char *path;
    uint64_t bias;
    int found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find_ctx *f = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz) {
            f->path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
            f->bias = info->dlpi_addr;
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

static int sym_cmp(const void *a, const void *b)
{
    const struct np_sym *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static size_t read_table(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct np_sym *out)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t n = 0, count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
    for (size_t i = 0; data && i < count; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s))
            break;
        int type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || s.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (!name || !*name)
            continue;
        if (out)
            out[n] = (struct np_sym){ s.st_value, s.st_size, name };
        n++;
    }
    return n;
}

static void load_module(struct np_module *m)
{
    m->loaded = 1;
    elf_version(EV_CURRENT);
    m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (m->fd < 0)
        return;
    m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
    if (!m->elf || elf_kind(m->elf) != ELF_K_ELF)
        return;
    Elf_Scn *symtab = NULL, *dynsym = NULL, *scn = NULL;
    GElf_Shdr sh, use_sh;
    while ((scn = elf_nextscn(m->elf, scn))) {
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB)
            symtab = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dynsym = scn;
    }
    scn = symtab ? symtab : dynsym;
    if (!scn || !gelf_getshdr(scn, &use_sh))
        return;
    size_t n = read_table(m->elf, scn, &use_sh, NULL);
    m->syms = n ? malloc(n * sizeof *m->syms) : NULL;
    if (!m->syms)
        return;
    m->nsyms = read_table(m->elf, scn, &use_sh, m->syms);
    qsort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
    /* an executable (ET_EXEC) is not relocated */
    GElf_Ehdr eh;
    if (gelf_getehdr(m->elf, &eh) && eh.e_type == ET_EXEC)
        m->bias = 0;
}

static const struct np_sym *lookup(struct np_module *m, uint64_t addr)
{
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) { /* first symbol starting after addr */
        size_t mid = (lo + hi) / 2;
        if (m->syms[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct np_sym *s = &m->syms[lo - 1];
    if (s->size && addr >= s->start + s->size)
        return NULL;
    return s;
}

/* The recorder's writer thread symbolizes while the program may fork: a
 * child must not inherit the lock held by a thread it does not have. */
static pthread_once_t sym_once = PTHREAD_ONCE_INIT;
static void sym_prepare(void) { pthread_mutex_lock(&sym_lock); }
static void sym_release(void) { pthread_mutex_unlock(&sym_lock); }
static void sym_setup(void) { pthread_atfork(sym_prepare, sym_release, sym_release); }

int np_port_symbolize_at(const void *addr, char *buf, size_t len, uint64_t *offset)
{
    struct find_ctx f = { (uintptr_t)addr, NULL, 0, 0 };
    const char *name = NULL;
    pthread_once(&sym_once, sym_setup);
    dl_iterate_phdr(find_module, &f);
    if (f.found) {
        pthread_mutex_lock(&sym_lock);
        struct np_module *m = NULL;
        for (int i = 0; i < nmodules; i++)
            if (modules[i].bias == f.bias && strcmp(modules[i].path, f.path) == 0)
                m = &modules[i];
        if (!m && nmodules < NP_MAX_MODULES) {
            m = &modules[nmodules++];
            strncpy(m->path, f.path, sizeof m->path - 1);
            m->bias = f.bias;
            load_module(m);
        }
        const struct np_sym *sym = m && m->syms ? lookup(m, (uint64_t)(uintptr_t)addr - m->bias) : NULL;
        if (sym) {
            name = sym->name;
            if (offset)
                *offset = (uint64_t)(uintptr_t)addr - m->bias - sym->start;
            strncpy(buf, name, len - 1);
            buf[len - 1] = 0;
        }
        pthread_mutex_unlock(&sym_lock);
    }
    return name != NULL;
}

int np_port_symbolize(const void *addr, char *buf, size_t len)
{
    return np_port_symbolize_at(addr, buf, len, NULL);
}
