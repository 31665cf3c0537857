/* sections.h - measured code sections: a time and an occurrence count per
 * section, read as a share of a global section that brackets the whole
 * measured region; optionally hardware events (instructions, cache misses)
 * beside the time. Works in any code, instrumented or not. */
#ifndef NANOPROF_SECTIONS_H
#define NANOPROF_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "nanoprof/api.h"

NP_BEGIN_DECLS

/* Section 0 is the global section: bracket the measured region with it
 * (NP_SECTIONS_START / NP_SECTIONS_STOP) and every other section reads as
 * a share of it. Ids run from 1 to np_sections_max() - 1. */
#define NP_SECTION_GLOBAL 0u

/* np_sections_init flags */
#define NP_SECTIONS_HW 1u /* count instructions and cache misses as well */

/* Chooses the clock (once per process) and, with NP_SECTIONS_HW, tries the
 * hardware counters on the calling thread; when the kernel refuses them,
 * one line on the output sink says so and sections measure time only (the
 * call still returns NP_OK). Optional on hosts: sections work without it,
 * time only, in the built-in table. A target's runtime takes no RAM
 * unasked: there, call it or np_sections_init_buf first (a section before
 * either is refused with NP_EINVAL and one line, as np_section_begin
 * says). Call it before any section begins. NP_EALREADY the second time;
 * NP_EINVAL for an unknown flag. */
NP_API int np_sections_init(unsigned flags);
/* np_sections_init with the table in BUF (SIZE bytes, 8-byte aligned)
 * instead of the runtime's built-in one of NP_SECTIONS_MAX sections: ids
 * then run to np_sections_max() - 1, as many as the buffer holds
 * (NP_SECTIONS_BUF_BYTES(n) holds n on any port). Where the OS runs one
 * thread (a target), the buffer also holds its open sections, and a
 * firmware that calls only this links no table of its own. Call it before
 * any section begins or is named. NP_ESMALL for a buffer smaller than
 * NP_SECTIONS_BUF_BYTES(2); NP_EINVAL for one NULL or misaligned, and an
 * unknown flag; NP_EALREADY after an init or a section. */
NP_API int np_sections_init_buf(void *buf, size_t size, unsigned flags);
/* Bytes that hold N sections on any port: at most 64 each, and the
 * alignment. */
#define NP_SECTIONS_BUF_BYTES(n) (64u * (size_t)(n) + 64u)

/* Begin and end of section ID on the calling thread. Sections nest; a
 * section nested inside itself is measured at its outermost level only.
 * NP_EINVAL (with one error line per process) for an id out of range or an
 * end with no begin; never touches memory outside the table. */
NP_API int np_section_begin(unsigned id);
NP_API int np_section_end(unsigned id);
/* Names section ID for dumps. NAME must have static storage. */
NP_API int np_section_name(unsigned id, const char *name);
/* np_section_begin that also names the section, the first time only. */
NP_API int np_section_begin_named(unsigned id, const char *name);

#define NP_SECTION_BEGIN(id) np_section_begin(id)
#define NP_SECTION_END(id) np_section_end(id)
#define NP_SECTION_BEGIN_NAMED(id, name) np_section_begin_named(id, name)
#define NP_SECTIONS_START() np_section_begin(NP_SECTION_GLOBAL)
#define NP_SECTIONS_STOP() np_section_end(NP_SECTION_GLOBAL)

/* The size of the section table (ids 0 .. max-1): what the buffer given
 * to np_sections_init_buf holds, else the built-in table's, fixed when
 * the runtime is built (CMake option NP_SECTIONS_MAX, default 64; 16 on
 * a target). */
NP_API unsigned np_sections_max(void);

typedef struct np_section_stats {
    const char *name;       /* NULL when unnamed */
    uint32_t count;         /* completed outermost occurrences (mod 2^32) */
    uint64_t time_ns;       /* wall time inside the section, all threads */
    int hw;                 /* 1 when the two fields below are counted */
    uint64_t instructions;
    uint64_t cache_misses;
} np_section_stats;

/* Reads section ID. NP_EINVAL for a bad id or NULL OUT. */
NP_API int np_sections_get(unsigned id, np_section_stats *out);
/* Zeroes every count and time (names stay). */
NP_API int np_sections_clear(void);
/* One line per section that has a name or a count, in id order, then the
 * global section:
 *   <name>: count <N>, time <ns>, <P>% of global
 * (unnamed: "section <id>"; the global one is "global" unless named),
 * with ", instructions <n>, cache-misses <n>" appended when hardware
 * events are counted. <P> has one decimal; "-" when the global section
 * has no time. */
NP_API int np_sections_dump(void);

NP_END_DECLS
#endif
