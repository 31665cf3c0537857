/* calls_thumb.S - the Thumb-state call and return forms, made by hand.
 * np_forms_thumb calls each callee below once per call:
 *
 *   call form                        callee            its return
 *   bl                               thumb_ret_pop_pc  pop {r4, pc}
 *   bl _call_via_r4 (libgcc's        thumb_ret_pop_bx  pop {r4} ; pop {r3} ; bx r3
 *     bx r4 veneer: one call)
 *   bl                               thumb_bl_jump     pop {r4, pc}; inside it a bl
 *                                                      used as a long jump, which
 *                                                      is no call
 *   bl                               thumb_ret_mov_pc  mov pc, lr
 *   bl                               thumb_ret_bx_lr   bx lr
 *   bl into ARM (a veneer on         arm_leaf          bx lr
 *     ARMv4T, blx on ARMv5)
 *
 * np_forms_thumb itself returns with pop {r3} ; bx r3, which interworks:
 * its caller may be ARM. */
    .syntax unified
    .thumb
    .text

    .global np_forms_thumb
    .type np_forms_thumb, %function
    .thumb_func
np_forms_thumb:
    push {r4, r5, lr}
    movs r5, r0

    bl thumb_ret_pop_pc
    adds r5, r5, r0

    ldr r4, =thumb_ret_pop_bx
    movs r0, r5
    bl _call_via_r4
    adds r5, r5, r0

    movs r0, r5
    bl thumb_bl_jump
    adds r5, r5, r0

    movs r0, r5
    bl thumb_ret_mov_pc
    adds r5, r5, r0

    movs r0, r5
    bl thumb_ret_bx_lr
    adds r5, r5, r0

    movs r0, r5
    bl arm_leaf
    adds r0, r5, r0

    pop {r4, r5}
    pop {r3}
    bx r3
    .size np_forms_thumb, . - np_forms_thumb
    .ltorg

    .type thumb_ret_pop_pc, %function
    .thumb_func
thumb_ret_pop_pc:
    push {r4, lr}
    adds r0, r0, #1
    pop {r4, pc}
    .size thumb_ret_pop_pc, . - thumb_ret_pop_pc

    .type thumb_ret_pop_bx, %function
    .thumb_func
thumb_ret_pop_bx:
    push {r4, lr}
    adds r0, r0, #2
    pop {r4}
    pop {r3}
    bx r3
    .size thumb_ret_pop_bx, . - thumb_ret_pop_bx

    .type thumb_bl_jump, %function
    .thumb_func
thumb_bl_jump:
    push {r4, lr}
    adds r0, r0, #3
    bl 1f                       @ a long jump within the function: LR is dead
    adds r0, r0, #100           @ never run
1:  adds r0, r0, #1
    pop {r4, pc}
    .size thumb_bl_jump, . - thumb_bl_jump

    .type thumb_ret_mov_pc, %function
    .thumb_func
thumb_ret_mov_pc:
    adds r0, r0, #4
    mov pc, lr
    .size thumb_ret_mov_pc, . - thumb_ret_mov_pc

    .type thumb_ret_bx_lr, %function
    .thumb_func
thumb_ret_bx_lr:
    adds r0, r0, #5
    bx lr
    .size thumb_ret_bx_lr, . - thumb_ret_bx_lr
