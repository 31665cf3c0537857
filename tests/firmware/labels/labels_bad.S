/* labels_bad.S - main calls asm_undef (labels_arm.S), a label without a
 * type whose first instruction is undefined: the error names it. */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    bl asm_undef
    pop {r4, pc}
    .size main, . - main
