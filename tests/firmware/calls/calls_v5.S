/* calls_v5.S - the ARMv5 forms (calls_v5 only): blx with an immediate
 * and with a register, both ways between ARM and Thumb, and the returns
 * that interwork on ARMv5 only (pop/ldm/ldr of the PC into the other
 * state). np_forms_v5 makes, once per call:
 *
 *   blx v5_thumb_leaf        ARM->Thumb blx imm; it makes a Thumb->ARM blx imm
 *                            to v5_arm_leaf (bx lr) and returns pop {r4, pc}
 *                            into ARM
 *   blx r4 (v5_thumb_pop)    ARM->Thumb blx reg; it makes a Thumb->ARM blx reg
 *                            to v5_arm_ldr and returns pop {r4, pc} into ARM
 *   blx r4 (v5_arm_ldr)      ARM->ARM blx reg; returns ldr pc, [sp], #4
 *   blx v5_thumb_call_ldm    which calls v5_arm_ldm by blx imm; that one
 *                            returns ldmfd sp!, {r4, pc} into Thumb
 *
 * and returns pop {r4, r5, pc} (ARM). */
    .syntax unified
    .text

    .arm
    .global np_forms_v5
    .type np_forms_v5, %function
np_forms_v5:
    push {r4, r5, lr}
    mov r5, r0

    blx v5_thumb_leaf
    add r5, r5, r0

    ldr r4, =v5_thumb_pop
    mov r0, r5
    blx r4
    add r5, r5, r0

    ldr r4, =v5_arm_ldr
    mov r0, r5
    blx r4
    add r5, r5, r0

    mov r0, r5
    blx v5_thumb_call_ldm
    add r0, r5, r0

    pop {r4, r5, pc}
    .size np_forms_v5, . - np_forms_v5
    .ltorg

    .type v5_arm_leaf, %function
v5_arm_leaf:
    add r0, r0, #1
    bx lr
    .size v5_arm_leaf, . - v5_arm_leaf

    .type v5_arm_ldr, %function
v5_arm_ldr:
    str lr, [sp, #-4]!
    add r0, r0, #2
    ldr pc, [sp], #4
    .size v5_arm_ldr, . - v5_arm_ldr

    .type v5_arm_ldm, %function
v5_arm_ldm:
    stmfd sp!, {r4, lr}
    add r0, r0, #3
    ldmfd sp!, {r4, pc}
    .size v5_arm_ldm, . - v5_arm_ldm

    .thumb
    .type v5_thumb_leaf, %function
    .thumb_func
v5_thumb_leaf:
    push {r4, lr}
    blx v5_arm_leaf
    adds r0, r0, #4
    pop {r4, pc}
    .size v5_thumb_leaf, . - v5_thumb_leaf

    .type v5_thumb_pop, %function
    .thumb_func
v5_thumb_pop:
    push {r4, lr}
    ldr r3, =v5_arm_ldr
    blx r3
    adds r0, r0, #5
    pop {r4, pc}
    .size v5_thumb_pop, . - v5_thumb_pop
    .ltorg

    .type v5_thumb_call_ldm, %function
    .thumb_func
v5_thumb_call_ldm:
    push {r4, lr}
    blx v5_arm_ldm
    adds r0, r0, #6
    pop {r4, pc}
    .size v5_thumb_call_ldm, . - v5_thumb_call_ldm
