/* model_internal.h - what model.c and model_samples.c share inside the
 * library (not for views: they read model.h).
 *
 * model.c owns the model and its event handling; model_samples.c
 * aggregates the SAMPLE events beside it, in a state of its own that
 * model.c only holds, feeds and frees. */
#ifndef NP_ANALYZE_MODEL_INTERNAL_H
#define NP_ANALYZE_MODEL_INTERNAL_H

#include "model.h"

struct np_model_samples;

/* ---- model_samples.c, called by model.c ---- */

/* The sink's sample and sampling callbacks (CTX: the model). */
int np_model_on_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                       uint64_t periods, uint64_t skipped);
int np_model_on_sampling(void *ctx, const struct np_trace_sampling *s);
/* After the last event (every process ended), before the model's maps
 * are freed: builds the profile from the samples when it is to be. 0 or
 * NP_TRACE_ENOMEM. */
int np_model_samples_finish(struct np_model *m);
void np_model_samples_free(struct np_model_samples *s);
/* The earliest start of the estimated timeline once it is being told,
 * else UINT64_MAX. */
uint64_t np_model_samples_first_ns(const struct np_model *m);

/* ---- model.c, lent to model_samples.c ---- */

struct np_model_samples *np_model_samples_get(const struct np_model *m);
void np_model_samples_set(struct np_model *m, struct np_model_samples *s);
const struct np_model_options *np_model_opts(const struct np_model *m);
/* Whether function F's name matches an include pattern (bit 0) and an
 * exclude one (bit 1): matched once, as the function is first named. */
unsigned np_model_function_filters(const struct np_model *m, uint32_t f);
/* The process being read (NP_NONE between processes) and its addresses
 * (NULL without symbols). */
uint32_t np_model_current_process(const struct np_model *m);
struct np_addrspace *np_model_addrspace(struct np_model *m);
/* The thread TID of the current process (NP_NONE: not selected) and the
 * function at run-time address ADDR, created on first sight. 0 or
 * NP_TRACE_ENOMEM. */
int np_model_thread_at(struct np_model *m, uint32_t tid, uint32_t *out);
int np_model_function_at(struct np_model *m, uint64_t addr, uint32_t *out);
/* The call-tree child of node PARENT for FUNCTION, created on first sight. */
int np_model_child_at(struct np_model *m, uint32_t parent, uint32_t function, uint32_t *out);
/* Adds CALLS calls lasting NS in all to the arc CALLER -> CALLEE, OUTER_NS
 * of them with the callee not open already (np_arc.outer_ns). */
int np_model_add_arc(struct np_model *m, uint32_t caller, uint32_t callee, uint64_t calls, uint64_t ns,
                     uint64_t outer_ns);
/* Whether a listener wants the timeline (options.listener). */
bool np_model_listened(const struct np_model *m);
/* Tells the listener that C begins (BEGIN) or ends: 0, or NP_TRACE_ESTOP
 * when it stopped the read (it is then told nothing more). */
int np_model_tell(struct np_model *m, const struct np_call *c, bool begin);

#endif
