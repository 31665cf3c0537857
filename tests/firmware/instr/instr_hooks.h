/* instr_hooks.h - the counting hooks of the instrumented firmware. */
#ifndef NP_FW_INSTR_HOOKS_H
#define NP_FW_INSTR_HOOKS_H

/* Prints "ADDRESS COUNT" per function entered (the address without its
 * Thumb bit, in 0x%08x, lines in address order), then "sum SUM". */
void np_instr_report(unsigned sum) __attribute__((no_instrument_function));

#endif
