/* resync.S - functions that return to their caller's caller, leaving a
 * call that never returns: the call tracker must close it as
 * re-synchronised. Each skipping function returns with a form that is a
 * return everywhere else (ldm + bx, pop + bx), to an address that is not
 * its own caller's:
 *
 *   rs_mid   -> rs_skip    ARM: ldmfd sp!, {r4, ip} ; bx ip pops rs_mid's
 *                          frame and returns into rs_mid's caller
 *   rs_mid2a -> rs_mid2b -> rs_skip2
 *                          ARM: pops both frames, returns into rs_mid2a's caller
 *   rs_tmid  -> rs_tskip   Thumb: pop {r4} ; pop {r3} ; bx r3 of rs_tmid's frame
 *
 * rs_skip, rs_skip2 and rs_tskip return (by the instruction that leaves
 * them); rs_mid, rs_mid2a, rs_mid2b and rs_tmid never do.
 * np_fw_setjmp / np_fw_longjmp: the same in C's way (resync.c). */
    .syntax unified
    .text

    .arm
    .global rs_mid
    .type rs_mid, %function
rs_mid:
    stmfd sp!, {r4, lr}
    mov r4, #0
    bl rs_skip
    mov r0, #0                  @ never run
    ldmfd sp!, {r4, lr}
    bx lr
    .size rs_mid, . - rs_mid

    .type rs_skip, %function
rs_skip:
    add r0, r0, #1
    ldmfd sp!, {r4, ip}         @ rs_mid's frame: ip returns into its caller
    bx ip
    .size rs_skip, . - rs_skip

    .global rs_mid2a
    .type rs_mid2a, %function
rs_mid2a:
    stmfd sp!, {r4, lr}
    bl rs_mid2b
    mov r0, #0                  @ never run
    ldmfd sp!, {r4, lr}
    bx lr
    .size rs_mid2a, . - rs_mid2a

    .type rs_mid2b, %function
rs_mid2b:
    stmfd sp!, {r5, lr}
    bl rs_skip2
    mov r0, #0                  @ never run
    ldmfd sp!, {r5, lr}
    bx lr
    .size rs_mid2b, . - rs_mid2b

    .type rs_skip2, %function
rs_skip2:
    add r0, r0, #2
    ldmfd sp!, {r5, ip}         @ rs_mid2b's frame
    ldmfd sp!, {r4, ip}         @ rs_mid2a's: ip returns into its caller
    bx ip
    .size rs_skip2, . - rs_skip2

    .global np_fw_setjmp
    .type np_fw_setjmp, %function
np_fw_setjmp:
    stmia r0, {r4-r11, sp, lr}
    mov r0, #0
    bx lr
    .size np_fw_setjmp, . - np_fw_setjmp

    .global np_fw_longjmp
    .type np_fw_longjmp, %function
np_fw_longjmp:
    ldmia r0, {r4-r11, sp, lr}
    movs r0, r1
    moveq r0, #1
    bx lr                       @ into the function that called np_fw_setjmp
    .size np_fw_longjmp, . - np_fw_longjmp

    .thumb
    .global rs_tmid
    .type rs_tmid, %function
    .thumb_func
rs_tmid:
    push {r4, lr}
    bl rs_tskip
    movs r0, #0                 @ never run
    pop {r4}
    pop {r3}
    bx r3
    .size rs_tmid, . - rs_tmid

    .type rs_tskip, %function
    .thumb_func
rs_tskip:
    adds r0, r0, #3
    pop {r4}                    @ rs_tmid's frame: r3 returns into its caller
    pop {r3}
    bx r3
    .size rs_tskip, . - rs_tskip
