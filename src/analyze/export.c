/* export.c - the table of exporters (export.h): one line per format. */
#include "export.h"
#include <string.h>
#include "textfmt.h"

const struct np_exporter np_exporters[] = {
    { "chrome", "Chrome trace-event JSON: every call on a timeline (Perfetto, chrome://tracing)", 0, NULL, true,
      np_export_chrome_listen, np_export_chrome_finish },
    { "folded", "folded stacks, one line per call path (flamegraph.pl, speedscope, inferno)",
      NP_EXPORT_OPT_VALUE | NP_EXPORT_OPT_PER_THREAD | NP_EXPORT_OPT_EXCLUDE_SWITCHED, np_export_folded, false,
      NULL, NULL },
    { "callgrind", "callgrind profile: self and inclusive time, calls (KCachegrind, callgrind_annotate)",
      NP_EXPORT_OPT_EXCLUDE_SWITCHED, np_export_callgrind, true, NULL, NULL },
    /* gmon's time is its histogram of samples, which gprof labels as such */
    { "gmon", "gmon.out: sampled histogram, call arcs, block counts (gprof)", NP_EXPORT_OPT_BUCKET | NP_EXPORT_BINARY,
      np_export_gmon, true, NULL, NULL },
    { NULL, NULL, 0, NULL, false, NULL, NULL },
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
