/* fuzz_qemu_log.c - libFuzzer target: any bytes as a QEMU execution log,
 * read by the QEMU log source (analyze/source_qemu_log.h) with the ELF of
 * the firmware that made the corpus (tests/fuzz/qemu_fw.elf, the test
 * firmware cortex_m/cm.c for a Cortex-M3) into a model, filters and a
 * listener on, whose invariant is checked as fuzz_trace_read.c checks
 * it. Built with -DNP_FUZZ=ON under Clang; for every compiler
 * fuzz_replay.c runs it over the corpus (tests/fuzz/corpus_qemu_log: the
 * starts of that firmware's logs from qemu-system-arm -M mps2-an385
 * -icount shift=0 with -d exec,nochain, with -singlestep, and with -d
 * exec,cpu,nochain; and its last blocks, where a SysTick handler, svc
 * and QEMU's lines on blocks it cut short or stopped come) in ctest. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/model.h"
#include "../timeline.h"
#include "fuzz_invariant.h"

#ifndef NP_FUZZ_QEMU_ELF
#error "NP_FUZZ_QEMU_ELF: the corpus's firmware ELF"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = fuzz_memfd("fuzz.log", data, size);
    if (fd < 0)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    static char glob[] = "s*"; /* exercises the filters: drops spin, svc_* and systick_* */
    static char *exclude[] = { glob };
    static const char *args[] = { "elf=" NP_FUZZ_QEMU_ELF, NULL };
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener, .max_depth = 64, .exclude = exclude, .nexclude = 1 };
    opt.source.args = args;
    opt.source.source = "qemu-log";
    struct np_model *m = NULL;
    struct np_trace_summary sum;
    np_model_load(path, &opt, NULL, &m, &sum);
    if (m && sum.status < NP_TRACE_ENOMEM) {
        check_invariant(m);
        if (timeline_check(&tl))
            abort();
    }
    np_model_free(m);
    timeline_free(&tl);
    close(fd);
    return 0;
}
