/* bad_cortex_m.S - a Cortex-M3 firmware (its ELF's build attributes
 * ARMv7-M) with no vector table: where one would be, at its code's start,
 * word 1 is no Thumb address, and `nanoprof emu` refuses it before its
 * first instruction. */
    .syntax unified
    .cpu cortex-m3
    .thumb
    .section .text.start, "ax"
    .global _start
    .type _start, %function
    .thumb_func
_start:
    movw r0, #0x1234
    b .
    .size _start, . - _start
