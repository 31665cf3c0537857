/* bins_builtin.c - np_bins_init: the bins in the runtime's own table of
 * np_bins_max() bins (bins.h), an object apart from bins.c, so that a
 * firmware that gives its own (np_bins_init_buf) does not carry it. */
#include "hooks.h"
#include "report.h"
#include "nanoprof/bins.h"
#include "np_config.h"

int np_bins_init(unsigned n, unsigned hz)
{
    static const char *table[NP_BINS_BUF_BYTES(NP_BINS_MAX) / sizeof(const char *)];
    return np_bins_start(NP_MSG("np_bins_init"), table, n, hz);
}
