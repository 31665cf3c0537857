/* labels.S - functions written as assembly often is: a global and a weak
 * label without .type (STT_NOTYPE symbols, no size), each with a local
 * label inside (a symbol too, but no function). main calls them
 * (labels_main.c); they call the instrumentation hooks themselves, as
 * -finstrument-functions would, and spin LOOPS times (their first
 * argument) so that samples land past their first instruction.
 * x86-64 and AArch64. */
#if defined(__x86_64__)
    .macro spin name, bind
    \bind \name
\name:
    push %rbp
    mov %rsp, %rbp
    push %rbx
    push %rbx
    mov %rdi, %rbx
    lea \name(%rip), %rdi
    mov 8(%rbp), %rsi
    call __cyg_profile_func_enter@PLT
\name\()_loop:
    dec %rbx
    jnz \name\()_loop
    lea \name(%rip), %rdi
    mov 8(%rbp), %rsi
    call __cyg_profile_func_exit@PLT
    pop %rbx
    pop %rbx
    pop %rbp
    ret
    .endm
#elif defined(__aarch64__)
    .macro spin name, bind
    \bind \name
\name:
    stp x29, x30, [sp, #-32]!
    mov x29, sp
    str x19, [sp, #16]
    mov x19, x0
    adr x0, \name
    mov x1, x30
    bl __cyg_profile_func_enter
\name\()_loop:
    subs x19, x19, #1
    b.ne \name\()_loop
    adr x0, \name
    ldr x1, [x29, #8]
    bl __cyg_profile_func_exit
    ldr x19, [sp, #16]
    ldp x29, x30, [sp], #32
    ret
    .endm
#else
#error "labels.S: x86-64 and AArch64 only"
#endif

    .text
    spin asm_spin, .globl
    spin asm_weak_spin, .weak
    .section .note.GNU-stack, "", %progbits
