/* bad_jump.S - main calls jump_away, which jumps to 0x40000000, outside
 * memory: the run stops at the fetch. */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    bl jump_away
    pop {r4, pc}
    .size main, . - main

    .type jump_away, %function
jump_away:
    ldr r0, =0x40000000
    bx r0
    .size jump_away, . - jump_away
    .ltorg
