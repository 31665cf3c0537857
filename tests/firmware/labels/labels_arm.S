/* labels_arm.S - functions written as assembly often is: global and weak
 * labels without .type (STT_NOTYPE symbols, no size), a local label
 * inside one (asm_sum_loop: a symbol too, but no function), a literal
 * pool after one ($d: data, not code). ARM state.
 *
 *   asm_sum(n)     1 + 2 + ... + n, by a loop
 *   asm_bump(x)    x + the pool's word (weak)
 *   asm_undef      its first instruction is permanently undefined
 *                  (labels_bad's main calls it: the run stops there) */
    .syntax unified
    .arm
    .text

    .global asm_sum
asm_sum:
    mov r1, #0
asm_sum_loop:
    add r1, r1, r0
    subs r0, r0, #1
    bne asm_sum_loop
    mov r0, r1
    bx lr

    .weak asm_bump
asm_bump:
    ldr r1, =1000
    add r0, r0, r1
    bx lr
    .ltorg

    .global asm_undef
asm_undef:
    .inst 0xe7f000f0
    bx lr
