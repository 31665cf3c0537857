/* rtos.h - an RTOS's threads named as its kernel names them (`nanoprof
 * emu --rtos NAME`): where the kernel keeps the running task and its name
 * is read from the firmware ELF's symbols and debug information before
 * the run; the call tracker asks the name when it starts a thread
 * (emu/calltrack.h, np_calltrack_funcs.thread_name), and it is read from
 * guest memory then.
 *
 * freertos: the word at `pxCurrentTCB` is the running task's TCB, whose
 * member `pcTaskName` (struct tskTaskControlBlock, typedef TCB_t) holds
 * its name, NUL-terminated within configMAX_TASK_NAME_LEN bytes. */
#ifndef NP_ANALYZE_RTOS_H
#define NP_ANALYZE_RTOS_H

#include <stddef.h>
#include "emu/cpu.h"

/* The RTOS names known, for messages: "freertos". */
#define NP_RTOS_NAMES "freertos"

struct np_rtos;

/* Whether NAME is an RTOS known. */
int np_rtos_known(const char *name);
/* RTOS NAME's kernel found in ELF: NULL with a one-line reason in ERR
 * (not that RTOS's firmware, no debug information, out of memory). */
struct np_rtos *np_rtos_open(const char *name, const char *elf, char *err, size_t size);
/* The running task's name in CPU's memory (R: the np_rtos), valid until
 * the next call; NULL when the kernel has none yet or it is not a name. */
const char *np_rtos_thread_name(void *r, struct np_cpu *cpu);
void np_rtos_free(struct np_rtos *r);

#endif
