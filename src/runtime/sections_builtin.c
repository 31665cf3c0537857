/* sections_builtin.c - the sections' built-in table of NP_SECTIONS_MAX
 * sections (np_sections_init, and on a host the table sections use
 * unasked), an object apart from sections.c: a firmware that gives its
 * own (np_sections_init_buf) does not carry it. */
#include "hooks.h"
#include "report.h"
#include "nanoprof/sections.h"
#include "np_config.h"

void *np_sections_builtin(size_t *size);
int np_sections_init_in(const char *who, unsigned flags, void *buf, size_t size, int builtin);

void *np_sections_builtin(size_t *size)
{
    static uint64_t table[NP_SECTIONS_BUF_BYTES(NP_SECTIONS_MAX) / 8] __attribute__((aligned(64)));
    *size = sizeof table;
    return table;
}

int np_sections_init(unsigned flags)
{
    size_t size;
    void *b = np_sections_builtin(&size);
    return np_sections_init_in(NP_MSG("np_sections_init"), flags, b, size, 1);
}
