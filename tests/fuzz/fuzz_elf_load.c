/* fuzz_elf_load.c - libFuzzer target: any bytes as the firmware ELF of
 * `nanoprof emu`, read by everything that reads it before and as the
 * emulator runs: the loader (emu/image.h, default options), the FreeRTOS
 * kernel's symbols and DWARF (analyze/rtos.h), the symbol cache the
 * emulator source names functions with (analyze/symbols.h: the ELF mapped
 * as np_emu_run maps it, looked up at the entry and the code's ends,
 * lines, a function by name), and, when the image loads, the emulator
 * itself (np_emu_run, as `nanoprof emu` runs it) for at most
 * FUZZ_MAX_INSNS instructions, generic and, for a Cortex-M firmware, on a
 * board: its events into a model with a listener (invariant checked as
 * fuzz_trace_read.c checks it), its trace saved to a memfd and read back.
 * The firmware's console is /dev/null (stdin: end of file); its
 * semihosting files are made in a directory of its own under TMPDIR,
 * the working directory while it runs and emptied after each run
 * (relative paths only: semihosting has no sandbox). Built with
 * -DNP_FUZZ=ON under Clang; for every compiler fuzz_replay.c runs it over
 * the corpus (tests/fuzz/corpus_elf) in ctest. Fuzz it with absolute
 * paths (the working directory changes during a run) and room for the
 * loader's regions, which may span up to 4 GiB (calloc'd, mostly never
 * touched):
 *   fuzz_elf_load -timeout=5 -malloc_limit_mb=4200 -rss_limit_mb=4096
 *     -artifact_prefix=$PWD/ $PWD/corpus_copy
 *
 * The corpus (tests/fuzz/corpus_elf), made from the test firmware
 * (tests/firmware, built by arm-none-eabi-gcc) and damaged copies of it:
 *  - as built, symbols and DWARF kept: cm_tasks_emu, the FreeRTOS-shaped
 *    Cortex-M3 firmware (TCB_t, pxCurrentTCB; three threads).
 *  - symbols kept, DWARF dropped (arm-none-eabi-strip --strip-debug):
 *    cm_calls_emu_m0 (ARMv6-M), cm_fault (a HardFault), cm_fib_an505
 *    (ARMv8-M on mps2-an505's memory), irq (ARM7, vectors at 0), calls_v5
 *    (ARMv5TE).
 *  - stripped of everything (arm-none-eabi-strip): calls_thumb, threads
 *    and semihost_thumb (newlib's start-up; it makes, renames and removes
 *    files by semihosting within the first 200000 instructions).
 *  - cm_calls_emu_m3, stripped (5 KiB), patched with python3's struct:
 *    cut in its ELF header (trunc-ehdr) and in its program headers
 *    (trunc-phdr); ELFCLASS64 (elf64); e_machine x86-64; big-endian;
 *    e_phoff past the end; e_phnum 0xffff; e_shoff past the end; a
 *    segment's p_offset past the end; p_filesz > p_memsz; a p_memsz of
 *    1 GiB (memsz-huge: loads, runs); a segment ending past 4 GiB; a
 *    second segment over the first's code (seg-overlap); segments and
 *    RAM from 0 to 4 GiB (span-4g); no PT_LOAD; the initial SP and reset
 *    vector outside memory; .ARM.attributes with a length past its end;
 *    and an empty file.
 *  - cm_tasks_emu with its .debug_info cut to 64 bytes (sh_size), and one
 *    the fuzzer found whose second thread starts in no function
 *    (cm_tasks_emu-unnamed-thread).
 *  - deep-unreturned-calls: hand-written ARM, assembled, linked at 0x8000
 *    and stripped: `adr r4, loop; loop: bl f; f: mov pc, r4`, a call
 *    whose return never comes and a return form to no open call's
 *    address, 100000 times (as a fuzzed firmware did).
 *  - fuzz-*: five of libFuzzer's inputs (mutated cm_* firmware), each
 *    adding the most new coverage over the rest in its turn: ARM7 runs
 *    of Cortex-M code whose .ARM.attributes broke (a halt, an undefined
 *    instruction, a runaway, a write outside memory) and a segment
 *    past 4 GiB in a file with its section headers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/calls_out.h"
#include "analyze/model.h"
#include "analyze/rtos.h"
#include "analyze/source_emu.h"
#include "analyze/symbols.h"
#include "emu/image.h"
#include "../timeline.h"
#include "fuzz_invariant.h"

/* Enough for a newlib start-up to reach main and make a few semihosting
 * calls; a run stays within a few milliseconds. */
#define FUZZ_MAX_INSNS 200000
/* The generic run's RAM region: less than the loader's 16 MiB, which
 * ASan's allocator would take most of the time to map and poison. */
#define FUZZ_RAM (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* LeakSanitizer's (ASan builds): libdw's dwarf_getscopes, which symbols.c
 * asks for a line's function, leaks the scopes it found when it then
 * fails to follow an inlined instance to its abstract origin (elfutils
 * 0.188, and its upstream source as of this writing): nothing the caller
 * is given to free. */
const char *__lsan_default_suppressions(void)
{
    return "leak:pc_record\nleak:dwarf_getscopes\n";
}

/* The firmware's own directory (made once), and /dev/null. */
static char sandbox[PATH_MAX];
static int null_fd = -1;

/* Removes what a run left in the sandbox (files only: semihosting makes
 * no directories). */
static void empty_sandbox(void)
{
    DIR *d = opendir(sandbox);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

static void remove_sandbox(void)
{
    empty_sandbox();
    rmdir(sandbox);
}

static void setup(void)
{
    if (null_fd >= 0)
        return;
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    const char *tmp = getenv("TMPDIR");
    snprintf(sandbox, sizeof sandbox, "%s/fuzz_elf_load_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (null_fd < 0 || !mkdtemp(sandbox)) {
        perror("fuzz_elf_load: setup");
        abort();
    }
    atexit(remove_sandbox);
}

/* Each function's name read through. */
static void each_name(void *ctx, const char *name)
{
    *(size_t *)ctx += strlen(name);
}

/* The ELF's functions as the call tracker asks for them (np_calls_funcs
 * over the ELF mapped as np_emu_run maps it), and its lines. */
static void symbols(const char *path, const struct np_image *img)
{
    struct np_symbols *s = np_symbols_new(NULL, NULL);
    struct np_addrspace *as = s ? np_addrspace_new(s) : NULL;
    /* without an image, the whole address space */
    struct np_trace_module mod = { 0, 0, 1ull << 32, NULL, 0, path };
    if (img) {
        mod.start = img->text_lo;
        mod.end = img->text_hi;
        mod.build_id = img->build_id;
        mod.build_id_len = img->build_id_len;
    }
    if (as && np_addrspace_map(as, &mod) == 0) {
        struct np_calltrack_funcs f = np_calls_funcs(as);
        uint32_t at[] = { img ? img->entry & ~1u : 0x8000, (uint32_t)mod.start, (uint32_t)(mod.end - 1),
                          (uint32_t)((mod.start + mod.end) / 2) };
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
            struct np_source_line line;
            const char *name = f.name_of(f.ctx, at[i]);
            f.func_of(f.ctx, at[i]);
            np_addrspace_line(as, at[i], &line);
            if (name)
                np_addrspace_address_of(as, name);
        }
        np_addrspace_address_of(as, "main");
        size_t bytes = 0;
        np_symbols_each_function(s, each_name, &bytes);
    }
    np_addrspace_free(as);
    np_symbols_free(s);
}

/* Runs the firmware at PATH (on BOARD when not NULL) into a model, its
 * trace saved and read back. */
static void run(const char *path, const char *board, bool rtos)
{
    int save_fd = memfd_create("fuzz.npt", MFD_CLOEXEC);
    if (save_fd < 0)
        return;
    char save[64];
    snprintf(save, sizeof save, "/proc/self/fd/%d", save_fd);
    static const char *const argv[] = { "fw", ".", "0", NULL }; /* semihost.c: its files in "." */
    struct np_emu_config c;
    np_emu_config_init(&c);
    c.max_insns = FUZZ_MAX_INSNS;
    c.fd_in = c.fd_out = c.fd_err = null_fd;
    c.argv = argv;
    c.argc = 3;
    c.save = save;
    c.board = board;
    c.ram_size = board ? 0 : FUZZ_RAM; /* (a board has its own) */
    c.rtos = rtos ? "freertos" : NULL;

    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener, .max_depth = 64 };
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_model *m = syms ? np_model_new(&opt, syms) : NULL;
    if (!m) {
        np_symbols_free(syms);
        timeline_free(&tl);
        close(save_fd);
        return;
    }
    struct np_event_sink sink = np_model_sink(m);
    struct np_trace_summary sum;
    struct np_emu_result r;
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || chdir(sandbox) != 0)
        abort();
    int st = np_emu_run(path, &c, NP_METRIC_TIME, 0, &sink, NULL, &sum, &r);
    if (fchdir(cwd) != 0)
        abort();
    close(cwd);
    empty_sandbox();
    int fin = np_model_finish(m);
    if (st == NP_TRACE_OK && !fin) {
        check_invariant(m);
        if (timeline_check(&tl))
            abort();
    }
    np_model_free(m);
    np_symbols_free(syms);
    timeline_free(&tl);

    /* the trace it saved reads back */
    if (st == NP_TRACE_OK) {
        struct np_model_options back = { .max_depth = 64 };
        struct np_trace_summary bs;
        struct np_model *bm = NULL;
        np_model_load(save, &back, NULL, &bm, &bs);
        if (bs.status != NP_TRACE_OK) {
            fprintf(stderr, "fuzz_elf_load: the run's trace reads back with %s: %s\n", np_trace_strerror(bs.status),
                    bs.message);
            abort();
        }
        if (bm)
            check_invariant(bm);
        np_model_free(bm);
    }
    close(save_fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    int fd = fuzz_memfd("fuzz.elf", data, size);
    if (fd < 0)
        return 0;
    char path[64], err[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    struct np_image img;
    bool loaded = np_image_load(path, NULL, &img, err, sizeof err) == 0;
    struct np_rtos *rtos = np_rtos_open("freertos", path, err, sizeof err);
    bool freertos = rtos != NULL;
    np_rtos_free(rtos);
    symbols(path, loaded ? &img : NULL);
    if (loaded) {
        /* a Cortex-M firmware on the board of its architecture */
        const char *board = !np_image_is_m_profile(img.cpu_arch, img.cpu_profile) ? NULL
                            : img.cpu_arch == 17 ? "mps2-an505" : img.cpu_arch == 13 ? "mps2-an386" : "mps2-an385";
        np_image_arch_name(img.cpu_arch, img.cpu_profile);
        np_image_free(&img);
        run(path, NULL, freertos);
        if (board)
            run(path, board, freertos);
    }
    close(fd);
    return 0;
}
