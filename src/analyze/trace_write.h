/* trace_write.h - writes a trace file (docs/trace-format.md) from the
 * analysis side: what `nanoprof emu -o` saves of an emulated run, and
 * what tests write to read back.
 *
 * The file is the recorder's format: the header, INFO, UNITS when the
 * ticks are not a clock's ns or a second counter runs beside them,
 * MODULE and THREAD chunks as given, EVENTS chunks (uncompressed), END.
 * Events are buffered per thread and a thread's EVENTS chunk goes out
 * when its buffer fills, the rest at close. Each event gives its ticks
 * and the second counter's value (ignored without a count unit); a
 * thread's ticks and counts never go back. A COUNT record precedes an
 * event whose count differs from the thread's previous one.
 *
 * Every write is checked. After a failure every call returns -1 and does
 * nothing; np_trace_writer_error gives the one line that says why (the
 * path, then the problem). */
#ifndef NP_ANALYZE_TRACE_WRITE_H
#define NP_ANALYZE_TRACE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "events.h"

struct np_trace_writer;

/* What INFO and UNITS say. */
struct np_trace_writer_process {
    uint32_t pid, ppid;
    const char *clock;       /* INFO's clock name ("cycles" for an emulator) */
    double ns_per_tick;      /* INFO's and END's: > 0 (1 for a clock in cycles) */
    uint64_t start_tick;     /* the tick times count from */
    uint64_t start_ns;       /* Unix ns of start_tick (0 when none) */
    unsigned argc;
    const char *const *argv; /* the command line */
    const char *time_unit;   /* UNITS: what a tick is ("ns", "cycles",
                                "instructions"); NULL: no UNITS unless count_unit */
    const char *count_unit;  /* UNITS: the second counter's unit; NULL: none */
    size_t chunk_bytes;      /* a thread's buffer, flushed as an EVENTS chunk when
                                it holds that many bytes; 0: 256 KiB */
};

/* Creates PATH (replacing a file there) and writes the header, INFO and
 * UNITS. NULL with a one-line reason in ERR (ERRSIZE bytes). */
struct np_trace_writer *np_trace_writer_open(const char *path, const struct np_trace_writer_process *p, char *err,
                                             size_t errsize);
/* A MODULE chunk (its build_id and path; at most 65535 bytes each). */
int np_trace_writer_module(struct np_trace_writer *w, const struct np_trace_module *m);
/* A THREAD chunk: thread TID's name. */
int np_trace_writer_thread(struct np_trace_writer *w, uint32_t tid, const char *name);

/* A NAME chunk: ENTRY records at ADDRESS are of the region NAME. */
int np_trace_writer_name(struct np_trace_writer *w, uint64_t address, const char *name);
/* N bytes as they are (damage a source kept, np_event_sink.damaged),
 * after every thread's buffered events. */
int np_trace_writer_raw(struct np_trace_writer *w, const uint8_t *bytes, size_t n);

/* Events of thread TID at TICKS with the second counter at COUNT. */
int np_trace_writer_enter(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count,
                          uint64_t address);
int np_trace_writer_exit(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count);
/* The N innermost open calls end, closed by re-synchronisation. */
int np_trace_writer_resync(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count, uint64_t n);
/* N events were lost here. */
int np_trace_writer_lost(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count, uint64_t n);
/* The thread was switched out for SWITCHED ticks, ending at TICKS. */
/* A VALUES record of thread TID (N values of V; RETVAL: a return value),
 * at the time and count of its previous event (the call's entry, or the
 * exit that follows at its own); nothing for a thread with no event yet. */
int np_trace_writer_values(struct np_trace_writer *w, uint32_t tid, bool retval, const struct np_value *v, unsigned n);
int np_trace_writer_switch(struct np_trace_writer *w, uint32_t tid, uint64_t ticks, uint64_t count,
                           uint64_t switched);

/* Writes what is buffered and END (END_TICK, EVENTS_LOST), closes the
 * file and frees W. 0, or -1 with the first failure's line in ERR. */
int np_trace_writer_close(struct np_trace_writer *w, uint64_t end_tick, uint64_t events_lost, char *err,
                          size_t errsize);
/* The same without END: what is buffered is written (a trace whose
 * recording did not end). */
int np_trace_writer_close_unended(struct np_trace_writer *w, char *err, size_t errsize);
/* Closes and frees W without END (W may be NULL): the file stays, as a
 * process killed leaves it. */
void np_trace_writer_abandon(struct np_trace_writer *w);
/* The line saying why a call failed ("" when none did). */
const char *np_trace_writer_error(const struct np_trace_writer *w);

/* ---- a sink that writes -------------------------------------------------------------
 *
 * A sink (events.h) that writes what a source tells it as the trace file
 * PATH, created at begin(): INFO, MODULE, THREAD and NAME chunks as told,
 * the events, the damage a source kept (np_event_sink.damaged), and END
 * when the process told has one. A tick of the file is one unit of the
 * times told (INFO's ns_per_tick 1; UNITS when the clock's name does not
 * say the unit), so a reader gives back the same times. Takes one
 * process; samples and blocks are not written. A writer's failure stops
 * the source (NP_TRACE_EIO); np_trace_write_sink_close gives its line. */
struct np_trace_write_sink;
/* PREPARE (may be NULL) is called at begin(), before the file is
 * created (a directory made for it); its non-zero return stops the
 * source, nothing written. */
struct np_trace_write_sink *np_trace_write_sink_new(const char *path, int (*prepare)(void *ctx), void *ctx);
struct np_event_sink np_trace_write_sink(struct np_trace_write_sink *s);
/* The source stopped short of its end (a corrupt chunk): the file gets
 * no END, so that its readers say it is cut short. */
void np_trace_write_sink_stopped(struct np_trace_write_sink *s);
/* Whether begin() came: the file exists. */
bool np_trace_write_sink_begun(const struct np_trace_write_sink *s);
/* Ends the file and frees S. 0, or -1 with the first failure's line in
 * ERR. */
int np_trace_write_sink_close(struct np_trace_write_sink *s, char *err, size_t errsize);

#endif
