/* export.c - the table of exporters (export.h): one line per format. */
#include "export.h"
#include <string.h>
#include "textfmt.h"

const struct np_exporter np_exporters[] = {
    { "chrome", "Chrome trace-event JSON: every call on a timeline (Perfetto, chrome://tracing)", true, 0,
      np_export_chrome, true },
    { "folded", "folded stacks, one line per call path (flamegraph.pl, speedscope, inferno)", false,
      NP_EXPORT_OPT_VALUE | NP_EXPORT_OPT_PER_THREAD | NP_EXPORT_OPT_EXCLUDE_SWITCHED, np_export_folded, false },
    { "callgrind", "callgrind profile: self and inclusive time, calls (KCachegrind, callgrind_annotate)",
      false, NP_EXPORT_OPT_EXCLUDE_SWITCHED, np_export_callgrind, true },
    /* gmon's time is its histogram of samples, which gprof labels as such */
    { "gmon", "gmon.out: sampled histogram, call arcs, block counts (gprof)", false,
      NP_EXPORT_OPT_BUCKET | NP_EXPORT_BINARY, np_export_gmon, true },
    { NULL, NULL, false, 0, NULL, false },
};

const struct np_exporter *np_exporter_find(const char *name)
{
    for (const struct np_exporter *e = np_exporters; e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

void np_export_json_note(FILE *out, const struct np_export_options *o)
{
    if (!o->note)
        return;
    fputs(",\"loss\":", out);
    np_json_string(out, o->note);
}
