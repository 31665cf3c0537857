/* labels_thumb.S - a global label without .type in Thumb code: its
 * symbol has no Thumb bit (no .thumb_func), and Thumb code calls it with
 * bl (labels_thumb.c). */
    .syntax unified
    .thumb
    .text

    .global asm_twice
asm_twice:
    adds r0, r0, r0
    bx lr
