/* bad_write.S - main calls write_away, which stores a word at 0x40000000,
 * outside memory: the run stops at that str. */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    bl write_away
    pop {r4, pc}
    .size main, . - main

    .type write_away, %function
write_away:
    ldr r1, =0x40000000
    str r0, [r1]
    bx lr
    .size write_away, . - write_away
    .ltorg
