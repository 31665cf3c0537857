/* posix.h - what the POSIX port offers the hosted parts of the runtime
 * (the recorder) beyond port.h. */
#ifndef NP_POSIX_H
#define NP_POSIX_H

#include <stddef.h>

/* write() of the whole range to FD, going on after a signal (EINTR) and
 * after a short write; 0, or -1 when write() fails or writes nothing.
 * The one loop of the runtime: the default output and the trace files. */
int np_posix_write_all(int fd, const void *p, size_t n);

/* NAME demangled, when it is a C++ name ("_Z...") and the program has a
 * C++ library loaded (its __cxa_demangle: the runtime links none): its
 * signature into FULL and its short name (common/demangle.h) into SHORT,
 * each cut to its buffer's size. 1 when demangled, else 0. Allocates:
 * never in a signal handler. */
int np_posix_demangle(const char *name, char *full, size_t full_len, char *short_name, size_t short_len);

#endif
