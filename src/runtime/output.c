/* output.c - the output sink and error reporting. */
#include "output.h"
#include "report.h"
#include "hooks.h"
#include "thread.h"
#include "../port/port.h"
#include "nanoprof/nanoprof.h"

static np_write_fn sink;
static void *sink_ctx;

int np_output_opened, np_output_tracing;

void np_output_set(np_write_fn write, void *ctx)
{
    sink_ctx = ctx;
    sink = write;
    np_output_opened = 0; /* another writer: its stream needs its opening */
}

uint32_t np_output_failures;

void np_output_failed(void)
{
    np_output_failures++;
}

void np_write(const char *bytes, size_t len)
{
    np_write_fn w = sink;
    if (w)
        w(sink_ctx, bytes, len);
    else
        np_port_write_default(bytes, len);
}

int np_error_msg(int status, const char *where, const char *what)
{
    NP_REPORT(NP_REP_ERROR, (uint64_t)(int64_t)status, NP_RV(where), NP_RV(what));
    return status;
}

int np_api_enter_msg(struct np_thread *t, const char *where)
{
    if (np_thread_lock(t))
        return 1;
    np_error_msg(NP_EBUSY, where, NP_MSG("called from inside a hook (a signal handler?): not done"));
    return 0;
}
