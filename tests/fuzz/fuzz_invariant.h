/* fuzz_invariant.h - what every model built from any input must hold, for
 * the fuzz harnesses that build one (fuzz_trace_read.c, fuzz_capture.c):
 * each function's least call no longer than its longest, and the functions'
 * self times adding up to the threads' totals. Aborts otherwise. */
#ifndef NP_FUZZ_INVARIANT_H
#define NP_FUZZ_INVARIANT_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/model.h"

/* A memfd named NAME holding DATA (SIZE bytes); -1 when it cannot be
 * made. */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    return fd;
}

static inline void check_invariant(const struct np_model *m)
{
    size_t nf, nt;
    const struct np_function *f = np_model_functions(m, &nf);
    const struct np_thread *t = np_model_threads(m, &nt);
    uint64_t self = 0, total = 0; /* both wrap alike on absurd times */
    for (size_t i = 0; i < nf; i++) {
        self += f[i].self_ns;
        if (f[i].calls && f[i].min_ns > f[i].max_ns)
            abort();
    }
    for (size_t i = 0; i < nt; i++)
        total += t[i].total_ns;
    if (self != total)
        abort();
}

#endif
