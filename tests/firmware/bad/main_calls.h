/* main_calls.h - the main of the bad-input firmware: ARM code that calls
 * FN, the function that goes wrong, so the error names it. */
#define MAIN_CALLS(fn)                  \
    .syntax unified;                    \
    .arm;                               \
    .text;                              \
    .global main;                       \
    .type main, %function;              \
main:                                   \
    push {r4, lr};                      \
    bl fn;                              \
    pop {r4, pc};                       \
    .size main, . - main
