/* bad_threads.S - thread_fn moves the stack up and jumps to its own
 * start, again and again: each landing on a function's start on a new
 * stack looks like a new thread's first run, until the call tracker's
 * limit of threads stops the run, said (NP_CALLTRACK_MAX_THREADS). */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    bl thread_fn
    .size main, . - main

    .type thread_fn, %function
thread_fn:
    add sp, sp, #128
    ldr pc, =thread_fn
    .ltorg
    .size thread_fn, . - thread_fn
