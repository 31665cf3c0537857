/* posix.h - what the POSIX port offers the hosted parts of the runtime
 * (the recorder) beyond port.h. */
#ifndef NP_POSIX_H
#define NP_POSIX_H

#include <stddef.h>

/* write() of the whole range to FD, going on after a signal (EINTR) and
 * after a short write; 0, or -1 when write() fails or writes nothing.
 * The one loop of the runtime: the default output and the trace files. */
int np_posix_write_all(int fd, const void *p, size_t n);

#endif
