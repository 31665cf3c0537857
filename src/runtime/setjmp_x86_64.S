/* setjmp_x86_64.S - the assembly in front of setjmp (see setjmp.c): note
 * the depths, then jump to the real setjmp with the caller's stack as it
 * was, so the real one saves the right frame. */
    .text

.macro NP_SETJMP name, which
    .globl \name
    .type \name, @function
\name:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    movl $\which, %esi
    call np_setjmp_note
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size \name, . - \name
.endm

    NP_SETJMP setjmp, 0
    NP_SETJMP _setjmp, 1
    NP_SETJMP __sigsetjmp, 2

    .section .note.GNU-stack,"",@progbits
