/* start.S - the entry of the bare firmware (not the irq one): its own
 * stack, .bss cleared, then exit(main()). ARM state, as the CPU starts;
 * main and np_fw_exit may be Thumb (the linker then puts a veneer between
 * on ARMv4T, or makes the bl a blx on ARMv5). */
    .syntax unified
    .arm
    .section .text.start, "ax", %progbits
    .global _start
    .type _start, %function
_start:
    ldr sp, =__stack_top
    ldr r0, =__bss_start
    ldr r1, =__bss_end
    mov r2, #0
1:  cmp r0, r1
    strlo r2, [r0], #4
    blo 1b
    bl main
    bl np_fw_exit
    .size _start, . - _start
    .ltorg
