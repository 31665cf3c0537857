/* fuzz_trace_read.c - libFuzzer target: any bytes as one trace file, read
 * by np_trace_read_fd into a model (symbols, filters and a listener on),
 * then the model's invariant checked: the self times of all functions add
 * up to the threads' totals, and the calls told nest as promised. Built with -DNP_FUZZ=ON under Clang; for
 * every compiler fuzz_replay.c runs it over the corpus in ctest. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/model.h"
#include "analyze/trace_read.h"
#include "../timeline.h"
#include "fuzz_invariant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = fuzz_memfd("fuzz.npt", data, size);
    if (fd < 0)
        return 0;
    static char glob[] = "0x*0"; /* exercises the filters: drops every address ending in 0 */
    static char *exclude[] = { glob };
    struct timeline tl;
    timeline_init(&tl);
    /* a minimum duration: calls are told once known to last it */
    struct np_model_options opt = { .listener = &tl.listener, .max_depth = 64, .min_duration_ns = 2,
                                    .exclude = exclude, .nexclude = 1 };
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_model *m = syms ? np_model_new(&opt, syms) : NULL;
    if (m) {
        struct np_event_sink sink = np_model_sink(m);
        struct np_trace_summary sum = { 0 };
        np_trace_read_fd(fd, "fuzz.npt", &sink, NULL, &sum);
        if (np_model_finish(m) == 0) {
            check_invariant(m);
            if (timeline_check(&tl))
                abort();
        }
    }
    np_model_free(m);
    timeline_free(&tl);
    np_symbols_free(syms);
    close(fd);
    return 0;
}
