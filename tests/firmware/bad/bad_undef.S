/* bad_undef.S - main calls undef_here, whose first instruction is
 * permanently undefined (0xe7f000f0): the run stops there. */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    bl undef_here
    pop {r4, pc}
    .size main, . - main

    .type undef_here, %function
undef_here:
    .word 0xe7f000f0
    bx lr
    .size undef_here, . - undef_here
