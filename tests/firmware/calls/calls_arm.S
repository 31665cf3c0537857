/* calls_arm.S - the ARM-state call and return forms a compiler does not
 * emit reliably, made by hand. np_forms_arm calls each callee below once
 * per call (arm_ret_mov_pc twice: once more from arm_ret_ldm); the
 * callees add to r0 so that a skipped one changes the sum printed.
 *
 *   call form                          callee           its return
 *   mov lr, pc ; bx r4                 arm_ret_mov_pc   mov pc, lr
 *   mov lr, pc ; ldr pc, [r4, #4]      arm_ret_ldm      ldmfd sp!, {r4, pc}
 *     (a jump table)                     and inside it: bl arm_ret_mov_pc
 *   add lr, pc, #0 ; mov pc, r4        arm_ret_ldr_post ldr pc, [sp], #4
 *   bl                                 arm_ret_apcs     ldmdb fp, {fp, sp, pc}
 *                                        (an APCS frame, as old compilers made)
 *   bl                                 arm_ret_pop_bx   ldmfd sp!, {r4, ip} ; bx ip
 *   mov lr, pc ; ldr pc, [r4]          arm_leaf         bx lr
 *
 * The returns that do not interwork on ARMv4T (mov pc, ldm, ldr) are only
 * reached from ARM code. arm_leaf is also called from Thumb
 * (calls_thumb.S). */
    .syntax unified
    .arm
    .text

    .global np_forms_arm
    .type np_forms_arm, %function
np_forms_arm:
    stmfd sp!, {r4, r5, lr}
    mov r5, r0

    ldr r4, =arm_ret_mov_pc
    mov r0, r5
    mov lr, pc
    bx r4
    add r5, r5, r0

    ldr r4, =arm_jump_table
    mov r0, r5
    mov lr, pc
    ldr pc, [r4, #4]
    add r5, r5, r0

    ldr r4, =arm_ret_ldr_post
    mov r0, r5
    adr lr, 1f
    mov pc, r4
1:  add r5, r5, r0

    mov r0, r5
    bl arm_ret_apcs
    add r5, r5, r0

    mov r0, r5
    bl arm_ret_pop_bx
    add r5, r5, r0

    ldr r4, =arm_jump_table
    mov r0, r5
    mov lr, pc
    ldr pc, [r4]
    add r0, r5, r0

    ldmfd sp!, {r4, r5, lr}
    bx lr                       @ the caller may be Thumb
    .size np_forms_arm, . - np_forms_arm
    .ltorg

    .type arm_ret_mov_pc, %function
arm_ret_mov_pc:
    add r0, r0, #1
    mov pc, lr
    .size arm_ret_mov_pc, . - arm_ret_mov_pc

    .type arm_ret_ldm, %function
arm_ret_ldm:
    stmfd sp!, {r4, lr}
    bl arm_ret_mov_pc
    add r0, r0, #2
    ldmfd sp!, {r4, pc}
    .size arm_ret_ldm, . - arm_ret_ldm

    .type arm_ret_ldr_post, %function
arm_ret_ldr_post:
    str lr, [sp, #-4]!
    add r0, r0, #3
    ldr pc, [sp], #4
    .size arm_ret_ldr_post, . - arm_ret_ldr_post

    .type arm_ret_apcs, %function
arm_ret_apcs:
    mov ip, sp
    stmfd sp!, {fp, ip, lr, pc}
    sub fp, ip, #4
    add r0, r0, #4
    ldmdb fp, {fp, sp, pc}
    .size arm_ret_apcs, . - arm_ret_apcs

    .type arm_ret_pop_bx, %function
arm_ret_pop_bx:
    stmfd sp!, {r4, lr}
    add r0, r0, #5
    ldmfd sp!, {r4, ip}
    bx ip
    .size arm_ret_pop_bx, . - arm_ret_pop_bx

    .global arm_leaf
    .type arm_leaf, %function
arm_leaf:
    add r0, r0, #6
    bx lr
    .size arm_leaf, . - arm_leaf

    .section .rodata
    .align 2
arm_jump_table:
    .word arm_leaf
    .word arm_ret_ldm
