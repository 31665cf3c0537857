/* bad_semihost.S - main calls write_bad, which asks semihosting to write
 * 12 bytes from 0x40000000 (SYS_WRITE to stdout): the emulator stops with
 * "semihosting SYS_WRITE: buffer 0x40000000+12 is outside memory". */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    bl write_bad
    pop {r4, pc}
    .size main, . - main

    .type write_bad, %function
write_bad:
    mov r0, #5                  @ SYS_WRITE
    adr r1, 1f                  @ its block: handle, buffer, length
    svc 0x123456
    bx lr
1:  .word 1, 0x40000000, 12
    .size write_bad, . - write_bad
