/* api.h - what every nanoprof header shares: NP_API marks the functions
 * the runtime exports (it is built with hidden visibility), and
 * NP_BEGIN_DECLS / NP_END_DECLS give them C linkage in C++. */
#ifndef NANOPROF_API_H
#define NANOPROF_API_H

#ifndef NP_API
#define NP_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define NP_BEGIN_DECLS extern "C" {
#define NP_END_DECLS }
#else
#define NP_BEGIN_DECLS
#define NP_END_DECLS
#endif

#endif
