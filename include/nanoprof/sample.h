/* sample.h - statistical sampling of every thread's call stack while a
 * trace is recorded (docs/sampling.md). `nanoprof record --sample` or
 * NANOPROF_SAMPLE=HZ samples the whole run; these calls sample a phase.
 * In the all-in-one libraries (libnanoprof), like the recorder. */
#ifndef NANOPROF_SAMPLE_H
#define NANOPROF_SAMPLE_H

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* 997: a prime, so the rate does not beat against periodic work. */
#define NP_SAMPLE_HZ_DEFAULT 997
#define NP_SAMPLE_HZ_MAX 100000

/* Samples every recorded thread HZ times per second of its CPU time, into
 * the trace, from now on (or at a new rate, if sampling already runs).
 * Threads created later are sampled from their start. Returns 0, or
 * NP_EINVAL (HZ is 0 or over NP_SAMPLE_HZ_MAX), NP_ENOTINIT (not recording:
 * no NANOPROF_RECORD), NP_EBUSY (called from inside a hook). */
NP_API int np_sample_start(unsigned hz);

/* Stops sampling (the trace says so). Returns 0, NP_ENOTINIT or
 * NP_EBUSY, as np_sample_start. */
NP_API int np_sample_stop(void);

NP_END_DECLS

#endif
