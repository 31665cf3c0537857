/* source_emu.h - the emulator as a source of events: runs bare-metal ARM
 * firmware in the interpreter (src/emu/cpu.h) with semihosting
 * (src/emu/semihost.h), rebuilds its calls from the instructions that
 * write the PC (src/emu/calltrack.h), and tells them to a sink as any
 * trace would be told, and to a trace file when asked (-o).
 *
 * Times are cycles of the CPU's cycle model; the instruction count is the
 * second counter beside them (source.h: NP_METRIC_COUNT makes it the
 * time). The process is pid 1, its clock "cycles"; threads are numbered
 * from 1 ("main") in the order they appear. A run is deterministic: the
 * same firmware, arguments and options tell the same events. */
#ifndef NP_ANALYZE_SOURCE_EMU_H
#define NP_ANALYZE_SOURCE_EMU_H

#include <stdbool.h>
#include <stdint.h>
#include "events.h"
#include "source.h"
#include "emu/calltrack.h"
#include "emu/cpu.h"
#include "emu/driver.h"

/* Sets one "name=value" setting (source options' args: cpu, board, max-insns,
 * irq-every, thread-switch, rtos, n-wait, s-wait, ram, map=ADDR,SIZE, clock,
 * real-time, save, console=stdout|stderr, arg). 0, or -1 with a one-line
 * reason in ERR. */
int np_emu_config_set(struct np_emu_config *c, const char *setting, char *err, size_t errsize);

/* Runs ELF with C (NULL: the defaults), telling SINK (may be NULL) its
 * events with times of METRIC, scaled by CLOCK_HZ (> 0: cycles made ns).
 * Returns an np_trace_status: NP_TRACE_OK also when the firmware failed
 * (R says so, and the events up to the failure were told); an error when
 * the ELF cannot be run (SUMMARY->message says why). */
int np_emu_run(const char *elf, const struct np_emu_config *c, enum np_metric metric, double clock_hz,
               const struct np_event_sink *sink, const struct np_trace_hooks *hooks, struct np_trace_summary *summary,
               struct np_emu_result *r);

/* The source table's entry (source.h): the settings come from O->args. */
int np_source_emu_read(const char *path, const struct np_source_options *o, const struct np_event_sink *sink,
                       const struct np_trace_hooks *hooks, struct np_trace_summary *summary);

#endif
