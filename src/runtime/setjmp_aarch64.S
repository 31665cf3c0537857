/* setjmp_aarch64.S - the assembly in front of setjmp (see setjmp.c). */
    .text

.macro NP_SETJMP name, which
    .globl \name
    .type \name, %function
\name:
    .cfi_startproc
    stp x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov x29, sp
    stp x0, x1, [sp, #16]
    mov w1, #\which
    bl np_setjmp_note
    mov x16, x0
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #32
    .cfi_def_cfa_offset 0
    br x16
    .cfi_endproc
    .size \name, . - \name
.endm

    NP_SETJMP setjmp, 0
    NP_SETJMP _setjmp, 1
    NP_SETJMP __sigsetjmp, 2

    .section .note.GNU-stack,"",@progbits
