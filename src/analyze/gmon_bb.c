/* gmon_bb.c - basic-block counts for gmon.out (gmon_bb.h). */
#include "gmon_bb.h"
#include <stdlib.h>
#include <string.h>

static int bb_cmp(const void *a, const void *b)
{
    const struct np_gmon_bb *x = a, *y = b;
    return (x->address > y->address) - (x->address < y->address);
}

int np_gmon_bb_counts(const struct np_model *m, const char *module, struct np_gmon_bb **out, size_t *n)
{
    size_t nb, nf;
    const struct np_block *b = np_model_blocks(m, &nb);
    const struct np_function *f = np_model_functions(m, &nf);
    *n = 0;
    *out = malloc((nb ? nb : 1) * sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < nb; i++) {
        const char *mod = f[b[i].function].module;
        if (module && (!mod || strcmp(mod, module) != 0))
            continue;
        (*out)[(*n)++] = (struct np_gmon_bb){ b[i].address, b[i].count };
    }
    qsort(*out, *n, sizeof **out, bb_cmp);
    return 0;
}
