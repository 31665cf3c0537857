/* bad_cortex_m.S - a Cortex-M3 firmware (Thumb-2 only, its ELF's build
 * attributes ARMv7-M): `nanoprof emu` refuses it before its first
 * instruction, naming the architecture. */
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
