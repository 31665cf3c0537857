/* port.c - the POSIX port (port.h): Linux and other POSIX hosts.
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
 * Symbols: the walk of the loaded modules the recorder makes too
 * (modules.h) finds the module holding an address, whose
 * functions are read as the host's symbolizer reads them
 * (common/elf_symtab.h): .symtab (static functions included) or,
 * stripped, its separate debug file's (common/debug_file.h), and .dynsym. */
#define _GNU_SOURCE
#include "../port.h"
#include "../../common/debug_file.h"
#include "../../common/demangle.h"
#include "../../common/elf_symtab.h"
#include "modules.h"
#include "posix.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "lazy.h"
#ifdef __linux__
#include <linux/perf_event.h>
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define NP_HAVE_RSEQ 1
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
#endif

int np_clock_kind = NP_CLOCK_MONOTONIC;
/* Until a thread arms switch detection, its flag is this word, never 0:
 * the hooks read the flag without first testing the pointer. */
__attribute__((visibility("default"))) const uint64_t np_switch_never = 1;
NP_PORT_TLS volatile uint64_t *np_switch_flag __attribute__((visibility("default"))) =
    (volatile uint64_t *)&np_switch_never;

static __thread uint64_t ref_counter, ref_cpu_ns;
/* The counter's rate, once measured (x86-64: 0 until then, see
 * np_port_ns_per_tick), and where its measurement started. */
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

static __thread uint64_t steps;

uint64_t np_port_clock_slow(void)
{
    if (np_clock_kind == NP_CLOCK_STEPS)
        return ++steps;
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
    else if (force && strcmp(force, "steps") == 0)
        kind = NP_CLOCK_STEPS;

    if (kind == NP_CLOCK_COUNTER) {
#if defined(__aarch64__)
        uint64_t f;
        __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
        calib_ns_per_tick = 1e9 / (double)f;
        clock_pair(&base_ns, &base_counter);
#else
        /* Only the start of the measurement here: the rate is taken over
         * the time from now to when it is first needed (at least 1 ms:
         * np_port_ns_per_tick), so that a process does not wait for it at
         * its start, and usually not at all. */
        clock_pair(&base_ns, &base_counter);
        calib_ns_per_tick = 0;
#endif
    }
    __atomic_store_n(&np_clock_kind, kind, __ATOMIC_RELEASE);
}

void np_port_clock_init(void)
{
    pthread_once(&clock_once, clock_setup);
}

#if !defined(__aarch64__)
/* The counter's rate since the start of the measurement, waiting until
 * MIN_NS have passed: each end is read within some 10 ns (clock_pair), so
 * over 1 ms the rate is within about 20 ppm. */
static double rate_since_base(uint64_t min_ns)
{
    uint64_t t, c;
    do
        clock_pair(&t, &c);
    while (t - base_ns < min_ns || c <= base_counter);
    return (double)(t - base_ns) / (double)(c - base_counter);
}

/* The rate measured over the first millisecond (at least): the first call
 * waits for what is left of it. Lock-free (a fatal signal's handler may
 * end a trace with it): threads that race measure alike, one keeps its. */
static double first_rate(void)
{
    double r;
    __atomic_load(&calib_ns_per_tick, &r, __ATOMIC_ACQUIRE);
    if (r == 0) {
        double zero = 0, mine = rate_since_base(1000000u);
        __atomic_compare_exchange(&calib_ns_per_tick, &zero, &mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        __atomic_load(&calib_ns_per_tick, &r, __ATOMIC_ACQUIRE);
    }
    return r;
}
#endif

uint64_t np_port_ns_per_tick_q32(void)
{
    return (uint64_t)(np_port_ns_per_tick() * 4294967296.0 + 0.5);
}

double np_port_ns_per_tick(void)
{
    if (np_clock_kind != NP_CLOCK_COUNTER)
        return 1.0;
#if !defined(__aarch64__)
    /* more than 200 ms after the start: over the whole time, finer */
    uint64_t t, c;
    clock_pair(&t, &c);
    if (t - base_ns > 200000000u && c > base_counter)
        return (double)(t - base_ns) / (double)(c - base_counter);
    return first_rate();
#else
    return calib_ns_per_tick;
#endif
}

double np_port_ns_per_tick_final(void)
{
#if !defined(__aarch64__)
    if (np_clock_kind == NP_CLOCK_COUNTER) {
        double r;
        uint64_t t, c;
        __atomic_load(&calib_ns_per_tick, &r, __ATOMIC_ACQUIRE);
        clock_pair(&t, &c);
        if (r == 0 && t - base_ns < 1000000u)
            return rate_since_base(50000u); /* (not kept: nothing after it) */
    }
#endif
    return np_port_ns_per_tick();
}

double np_port_ns_per_tick_soon(void)
{
    if (np_clock_kind != NP_CLOCK_COUNTER)
        return 1.0;
#if !defined(__aarch64__)
    double r;
    __atomic_load(&calib_ns_per_tick, &r, __ATOMIC_ACQUIRE);
    return r != 0 ? r : rate_since_base(50000u);
#else
    return calib_ns_per_tick;
#endif
}

const char *np_port_wall_clock_name(void)
{
    return np_clock_kind == NP_CLOCK_COUNTER ? np_port_clock_name() : "monotonic";
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
    case NP_CLOCK_STEPS: return "steps";
    default: return "monotonic";
    }
}

/* The runtime's callback for a thread that ends, run by the thread's
 * thread-specific data destructor. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *fn)
{
    ((void (*)(void))fn)();
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

void np_port_thread_start(void (*on_exit)(void))
{
    pthread_once(&exit_once, make_exit_key);
    pthread_setspecific(exit_key, (void *)on_exit);
}

/* A thread's end call: its function is the key's value, which the key's
 * destructor calls. */
static pthread_key_t end_key;
static pthread_once_t end_once = PTHREAD_ONCE_INIT;

static void end_call(void *fn) { ((void (*)(void))fn)(); }

static void make_end_key(void)
{
    pthread_key_create(&end_key, end_call);
}

int np_port_at_thread_end(void (*fn)(void))
{
    pthread_once(&end_once, make_end_key);
    return pthread_setspecific(end_key, (void *)fn) == 0;
}

void *np_port_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *np_port_alloc(size_t size)
{
    return malloc(size);
}

void np_port_free(void *p)
{
    free(p);
}

const char *np_port_getenv(const char *name)
{
    return getenv(name);
}

void np_port_atfork_child(void (*fn)(void))
{
    pthread_atfork(NULL, NULL, fn);
}

void np_port_clock_thread(void)
{
    np_port_clock_init();
#ifdef NP_HAVE_RSEQ
    if (np_clock_kind == NP_CLOCK_COUNTER && np_switch_flag == &np_switch_never) {
        struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        np_switch_flag = (volatile uint64_t *)&rs->rseq_cs;
        *np_switch_flag = (uint64_t)(uintptr_t)&rseq_desc;
        ref_cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID);
        ref_counter = np_port_counter();
    }
#endif
}

uint64_t np_port_resync(uint64_t *switched)
{
    /* Arm first: a switch before the reads below falls in this window, one
     * after them clears the flag again. */
    *np_switch_flag = (uint64_t)(uintptr_t)&rseq_desc;
    uint64_t cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
    uint64_t now = np_port_counter();
    uint64_t wall = now - ref_counter;
    uint64_t ran = (uint64_t)((double)(cpu - ref_cpu_ns) / np_port_ns_per_tick_soon());
    *switched = wall > ran ? wall - ran : 0;
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

int np_posix_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void np_port_write_default(const char *bytes, size_t len)
{
    (void)np_posix_write_all(2, bytes, len);
}

/* ---- symbols ------------------------------------------------------------ */

/* A module whose functions were read (common/elf_symtab.h: the rules the
 * host's symbolizer follows too). */
struct np_module {
    char path[512];
    uint64_t bias;
    int fd, dbg_fd;
    Elf *elf;
    Elf *dbg_elf;     /* its separate debug file, when stripped */
    struct np_elf_funcs funcs;
};

#define NP_MAX_MODULES NP_POSIX_SYM_MODULES
static struct np_module modules[NP_MAX_MODULES];
static int nmodules;
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_module(struct np_module *m)
{
    m->dbg_fd = -1;
    m->fd = -1;
    if (!np_lazy_elf())
        return; /* no libelf (libnanoprof.so loads it now): addresses */
    elf_version(EV_CURRENT);
    m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (m->fd < 0)
        return;
    m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
    if (!m->elf || elf_kind(m->elf) != ELF_K_ELF)
        return;
    int symtab = 0;
    GElf_Shdr sh;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));)
        symtab |= gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
    if (!symtab) { /* stripped: its debug file's .symtab, where one is installed */
        char real[PATH_MAX];
        const char *path = realpath(m->path, real) ? real : m->path;
        m->dbg_elf = np_debug_file_open(m->elf, path, &m->dbg_fd);
    }
    if (np_elf_funcs_read(m->elf, m->dbg_elf, &m->funcs) < 0)
        return;
    /* an executable (ET_EXEC) is not relocated */
    GElf_Ehdr eh;
    if (gelf_getehdr(m->elf, &eh) && eh.e_type == ET_EXEC)
        m->bias = 0;
}

/* The recorder's writer thread symbolizes while the program may fork: a
 * child must not inherit the lock held by a thread it does not have. */
static pthread_once_t sym_once = PTHREAD_ONCE_INIT;
static void sym_prepare(void) { pthread_mutex_lock(&sym_lock); }
static void sym_release(void) { pthread_mutex_unlock(&sym_lock); }
static void sym_setup(void) { pthread_atfork(sym_prepare, sym_release, sym_release); }

int np_port_symbolize_at(const void *addr, char *buf, size_t len, uint64_t *offset)
{
    struct np_posix_module mod;
    char path[PATH_MAX];
    const char *name = NULL;
    pthread_once(&sym_once, sym_setup);
    if (np_posix_module_of((uintptr_t)addr, &mod, path)) {
        pthread_mutex_lock(&sym_lock);
        struct np_module *m = NULL;
        for (int i = 0; i < nmodules; i++)
            if (modules[i].bias == mod.bias && strcmp(modules[i].path, path) == 0)
                m = &modules[i];
        size_t plen = strlen(path);
        if (!m && nmodules < NP_MAX_MODULES && plen < sizeof m->path) { /* a longer path: no names */
            m = &modules[nmodules++];
            memcpy(m->path, path, plen + 1);
            m->bias = mod.bias;
            load_module(m);
        }
        ptrdiff_t k = m ? np_elf_funcs_find(&m->funcs, (uint64_t)(uintptr_t)addr - m->bias) : -1;
        if (k >= 0 && len) {
            const struct np_elf_func *fn = &m->funcs.v[k];
            name = fn->name;
            if (offset)
                *offset = (uint64_t)(uintptr_t)addr - m->bias - fn->addr;
            size_t n = fn->len < len - 1 ? fn->len : len - 1; /* without a version */
            memcpy(buf, fn->name, n);
            buf[n] = 0;
        }
        pthread_mutex_unlock(&sym_lock);
    }
    return name != NULL;
}

int np_port_symbolize(const void *addr, char *buf, size_t len)
{
    return np_port_symbolize_at(addr, buf, len, NULL);
}

/* ---- C++ names ------------------------------------------------------------ */

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
static cxa_demangle_fn cxa_demangle; /* once found */

/* The C++ library's demangler, when the program has one loaded: a C++
 * program's libstdc++ (or libc++abi), global or, loaded by dlopen, local
 * to it. Not found, it is looked for again the next time: a library
 * loaded since may bring it. */
static cxa_demangle_fn find_demangler(void)
{
    cxa_demangle_fn fn = __atomic_load_n(&cxa_demangle, __ATOMIC_ACQUIRE);
    if (fn)
        return fn;
    void *lib = NULL;
    fn = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!fn && (lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD)) != NULL)
        fn = (cxa_demangle_fn)dlsym(lib, "__cxa_demangle"); /* kept open: the pointer stays good */
    if (fn)
        __atomic_store_n(&cxa_demangle, fn, __ATOMIC_RELEASE);
    return fn;
}

int np_posix_demangle(const char *name, char *full, size_t full_len, char *short_name, size_t short_len)
{
    cxa_demangle_fn fn = np_is_mangled(name) ? find_demangler() : NULL;
    int status;
    char *d = fn && full_len && short_len ? fn(name, NULL, NULL, &status) : NULL;
    if (!d)
        return 0;
    size_t n = strlen(d) < full_len - 1 ? strlen(d) : full_len - 1;
    memcpy(full, d, n);
    full[n] = 0;
    np_demangled_short(d, short_name, short_len); /* from the whole signature */
    free(d);
    return 1;
}

int np_posix_names_of(uint64_t addr, struct np_posix_names *n)
{
    int found = np_port_symbolize((const void *)(uintptr_t)addr, n->name, sizeof n->name);
    if (!found)
        snprintf(n->name, sizeof n->name, "0x%llx", (unsigned long long)addr);
    n->v[0] = n->name;
    n->v[1] = n->v[2] = NULL;
    /* a C++ function: by its mangled name, its signature or its short name */
    if (found && np_posix_demangle(n->name, n->full, sizeof n->full, n->short_name, sizeof n->short_name))
        n->v[1] = n->full, n->v[2] = n->short_name;
    return found;
}

void np_port_display_name(char *name, size_t len)
{
    char full[1024], short_name[512];
    if (!len || !np_posix_demangle(name, full, sizeof full, short_name, sizeof short_name))
        return;
    size_t n = strlen(short_name) < len - 1 ? strlen(short_name) : len - 1;
    memcpy(name, short_name, n);
    name[n] = 0;
}

/* ---- hardware event counters -------------------------------------------
 * One perf_event group per thread: instructions leading, cache misses in
 * its group, user space only (what perf_event_paranoid 2 still allows),
 * read together with one read(). NANOPROF_NO_PERF=1 refuses them (to see
 * the time-only path on a machine that has them); NANOPROF_PERF_EVENTS=
 * software counts task-clock and page-faults instead, software events
 * every kernel has, so the counting path can be exercised where the
 * machine has no PMU (a VM). Those two are opened apart, not as a group:
 * page-faults grouped under task-clock (another PMU) counts nothing on
 * some kernels (6.18: 0 for 64 first touches). */
static __thread int hw_fd = -1, hw_fd2 = -1;
static int hw_software;
static const char *hw_refused; /* set once: the environment refuses */
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
static pthread_key_t hw_key;

static void hw_close(void *arg)
{
    (void)arg;
    if (hw_fd2 >= 0)
        close(hw_fd2);
    if (hw_fd >= 0)
        close(hw_fd);
    hw_fd = hw_fd2 = -1;
}

/* A forked child has the parent's descriptors, which count the parent's
 * thread: it opens its own at its next section. */
static void hw_after_fork(void)
{
    hw_close(NULL);
}

static void hw_setup(void)
{
    const char *no = getenv("NANOPROF_NO_PERF");
    const char *ev = getenv("NANOPROF_PERF_EVENTS");
    if (no && *no && strcmp(no, "0") != 0)
        hw_refused = "NANOPROF_NO_PERF is set";
    hw_software = ev && strcmp(ev, "software") == 0;
    pthread_key_create(&hw_key, hw_close);
    pthread_atfork(NULL, NULL, hw_after_fork);
}

const char *np_port_hw_name(int i)
{
    static const char *const hw[NP_HW_EVENTS] = { "instructions", "cache-misses" };
    static const char *const sw[NP_HW_EVENTS] = { "task-clock", "page-faults" };
    return i < 0 || i >= NP_HW_EVENTS ? "?" : hw_software ? sw[i] : hw[i];
}

#ifdef __linux__
static int hw_event(int i, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    if (hw_software) {
        a.type = PERF_TYPE_SOFTWARE;
        a.config = i == 0 ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_PAGE_FAULTS;
    } else {
        a.type = PERF_TYPE_HARDWARE;
        a.config = i == 0 ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_HW_CACHE_MISSES;
    }
    a.read_format = hw_software ? 0 : PERF_FORMAT_GROUP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, hw_software ? -1 : group, PERF_FLAG_FD_CLOEXEC);
}

static const char *hw_errno_reason(int e)
{
    switch (e) {
    case ENOENT: case ENODEV: case EOPNOTSUPP:
        return "no hardware counters here, as in most virtual machines";
    case EACCES: case EPERM:
        return "not permitted: see /proc/sys/kernel/perf_event_paranoid";
    case ENOSYS:
        return "perf_event_open is not available";
    case EMFILE: case ENFILE:
        return "out of file descriptors";
    default:
        return "perf_event_open failed";
    }
}
#endif

int np_port_hw_open(const char **reason)
{
    const char *why = "hardware counters are supported on Linux only";
    pthread_once(&hw_once, hw_setup);
    if (hw_fd >= 0)
        return 1;
#ifdef __linux__
    if (hw_refused) {
        why = hw_refused;
    } else {
        int fd = hw_event(0, -1);
        int fd2 = fd >= 0 ? hw_event(1, fd) : -1;
        if (fd2 >= 0) {
            hw_fd = fd;
            hw_fd2 = fd2;
            pthread_setspecific(hw_key, (void *)1); /* closes them at thread exit */
            return 1;
        }
        why = hw_errno_reason(errno);
        if (fd >= 0)
            close(fd);
    }
#endif
    if (reason)
        *reason = why;
    return 0;
}

int np_port_hw_read(uint64_t v[NP_HW_EVENTS])
{
    uint64_t buf[1 + NP_HW_EVENTS]; /* PERF_FORMAT_GROUP: nr, then values */
    if (hw_fd < 0)
        return 0;
    if (hw_software) /* apart: one value each */
        return read(hw_fd, &v[0], sizeof v[0]) == (ssize_t)sizeof v[0] &&
               read(hw_fd2, &v[1], sizeof v[1]) == (ssize_t)sizeof v[1];
    if (read(hw_fd, buf, sizeof buf) != (ssize_t)sizeof buf || buf[0] != NP_HW_EVENTS)
        return 0;
    for (int i = 0; i < NP_HW_EVENTS; i++)
        v[i] = buf[1 + i];
    return 1;
}

/* ---- periodic tick: a POSIX timer and a real-time signal -----------------
 * The signal is the highest real-time signal nobody has a handler for, so
 * that it clashes neither with SIGPROF (the sampler) nor with a program's
 * own SIGALRM. */
static void (*tick_fn)(uint32_t late);
static timer_t tick_timer;
static int tick_signo;

static void on_tick_signal(int sig)
{
    (void)sig;
    int saved = errno;
    int over = timer_getoverrun(__atomic_load_n(&tick_timer, __ATOMIC_ACQUIRE));
    void (*fn)(uint32_t) = __atomic_load_n(&tick_fn, __ATOMIC_ACQUIRE);
    if (fn)
        fn(over > 0 ? (uint32_t)over : 0);
    errno = saved;
}

int np_posix_free_rt_signal(void)
{
    for (int s = SIGRTMAX; s >= SIGRTMIN; s--) {
        struct sigaction old;
        if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            return s;
    }
    return 0;
}

int np_posix_thread_stack(pthread_t thread, uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(thread, &a) != 0)
        return -1;
    int rc = pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    if (rc != 0)
        return -1;
    *lo = (uintptr_t)addr;
    *hi = (uintptr_t)addr + size;
    return 0;
}

int np_port_tick_start(unsigned hz, void (*fn)(uint32_t late), const char **reason)
{
    int sig = np_posix_free_rt_signal();
    if (!sig) {
        *reason = "every real-time signal has a handler already";
        return 0;
    }
    __atomic_store_n(&tick_fn, fn, __ATOMIC_RELEASE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = sig;
    timer_t timer;
    if (sigaction(sig, &sa, NULL) != 0 || timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) {
        signal(sig, SIG_DFL);
        *reason = "timer_create failed";
        return 0;
    }
    __atomic_store_n(&tick_timer, timer, __ATOMIC_RELEASE);
    long period = 1000000000L / (long)hz;
    struct itimerspec it = { { period / 1000000000L, period % 1000000000L },
                             { period / 1000000000L, period % 1000000000L } };
    if (timer_settime(tick_timer, 0, &it, NULL) != 0) {
        timer_delete(tick_timer);
        signal(sig, SIG_DFL);
        *reason = "timer_settime failed";
        return 0;
    }
    tick_signo = sig;
    return sig;
}

void np_port_tick_stop(void)
{
    if (!tick_signo)
        return;
    timer_delete(tick_timer);
    /* Ignoring discards a signal still pending, which would otherwise
     * meet the default action (termination) once the handler is gone. */
    signal(tick_signo, SIG_IGN);
    signal(tick_signo, SIG_DFL);
    __atomic_store_n(&tick_fn, NULL, __ATOMIC_RELEASE);
    tick_signo = 0;
}

/* nanosleep, not clock_nanosleep: ThreadSanitizer delivers signals that
 * arrive during the former (a blocking call it knows) at once, and would
 * hold back the bins ticks during the latter. */
void np_port_delay_us(uint32_t us)
{
    uint64_t end = ns_of(CLOCK_MONOTONIC) + (uint64_t)us * 1000u;
    for (;;) {
        uint64_t now = ns_of(CLOCK_MONOTONIC);
        if (now >= end)
            return;
        struct timespec left = { (time_t)((end - now) / 1000000000u), (long)((end - now) % 1000000000u) };
        nanosleep(&left, NULL);
    }
}

/* ---- periodic thread ------------------------------------------------------ */
static pthread_t per_thread;
static pthread_mutex_t per_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t per_cond;
static int per_running, per_stop;
static unsigned per_seconds;
static void (*per_fn)(void);

static void *periodic_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&per_lock);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!per_stop) {
        next.tv_sec += per_seconds;
        while (!per_stop && pthread_cond_timedwait(&per_cond, &per_lock, &next) != ETIMEDOUT)
            ;
        if (per_stop)
            break;
        pthread_mutex_unlock(&per_lock);
        per_fn();
        pthread_mutex_lock(&per_lock);
    }
    pthread_mutex_unlock(&per_lock);
    return NULL;
}

int np_port_periodic_start(unsigned seconds, void (*fn)(void))
{
    np_port_periodic_stop();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&per_cond, &ca);
    pthread_condattr_destroy(&ca);
    per_seconds = seconds;
    per_fn = fn;
    per_stop = 0;
    /* The thread blocks every signal: the tick goes to the program's
     * threads, and the thread's waits are never interrupted. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int ok = pthread_create(&per_thread, NULL, periodic_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        pthread_cond_destroy(&per_cond);
        return 0;
    }
    per_running = 1;
    return 1;
}

void np_port_periodic_stop(void)
{
    if (!per_running)
        return;
    pthread_mutex_lock(&per_lock);
    per_stop = 1;
    pthread_cond_signal(&per_cond);
    pthread_mutex_unlock(&per_lock);
    pthread_join(per_thread, NULL);
    pthread_cond_destroy(&per_cond);
    per_running = 0;
}
