/* bad_noload.S - code in a section that is not allocated: linked with
 * noload.ld, the ELF has no PT_LOAD segment at all. */
    .syntax unified
    .arm
    .section .noload, "", %progbits
    .global _start
    .type _start, %function
_start:
    b _start
    .size _start, . - _start
