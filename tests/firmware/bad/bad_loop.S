/* bad_loop.S - main calls spin_leaf forever: only --max-insns stops it,
 * with main's frame open (and spin_leaf's, at times). */
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
1:  bl spin_leaf
    b 1b
    .size main, . - main

    .type spin_leaf, %function
spin_leaf:
    add r0, r0, #1
    bx lr
    .size spin_leaf, . - spin_leaf
