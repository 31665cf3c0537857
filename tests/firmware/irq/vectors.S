/* vectors.S - the irq firmware's exception vectors at address 0, its
 * reset code and its two handlers, in ARM state:
 *
 *   reset_handler  a stack for IRQ, SVC and System modes, .bss cleared,
 *                  main called in System mode (so that an svc, which
 *                  enters SVC mode, leaves main's lr alone), then
 *                  np_fw_exit with main's result
 *   irq_handler    saves the caller-saved registers, calls irq_service
 *                  (C), returns with subs pc, lr, #4
 *   swi_handler    the same around swi_service(its svc number), returns
 *                  with movs pc, lr
 *
 * There is no interrupt controller to acknowledge: the emulator's timer
 * (--irq-every=N) lowers the IRQ line once the IRQ is taken. */
    .syntax unified
    .arm

    .section .vectors, "ax", %progbits
    .global np_fw_vectors
np_fw_vectors:
    ldr pc, vec_reset           @ 0x00 reset
    b .                         @ 0x04 undefined instruction
    ldr pc, vec_swi             @ 0x08 svc
    b .                         @ 0x0c prefetch abort
    b .                         @ 0x10 data abort
    b .                         @ 0x14 (reserved)
    ldr pc, vec_irq             @ 0x18 IRQ
    b .                         @ 0x1c FIQ
vec_reset:  .word reset_handler
vec_swi:    .word swi_handler
vec_irq:    .word irq_handler

    .text
    .global reset_handler
    .type reset_handler, %function
reset_handler:
    msr cpsr_c, #0xd2           @ IRQ mode, IRQ and FIQ masked
    ldr sp, =irq_stack_top
    msr cpsr_c, #0xd3           @ SVC mode
    ldr sp, =svc_stack_top
    msr cpsr_c, #0xdf           @ System mode: main runs here
    ldr sp, =sys_stack_top
    ldr r0, =__bss_start
    ldr r1, =__bss_end
    mov r2, #0
1:  cmp r0, r1
    strlo r2, [r0], #4
    blo 1b
    bl main
    bl np_fw_exit
    .size reset_handler, . - reset_handler
    .ltorg

    .global irq_handler
    .type irq_handler, %function
irq_handler:
    stmfd sp!, {r0-r3, r12, lr}
    bl irq_service
    ldmfd sp!, {r0-r3, r12, lr}
    subs pc, lr, #4
    .size irq_handler, . - irq_handler

    .global swi_handler
    .type swi_handler, %function
swi_handler:
    stmfd sp!, {r0-r3, r12, lr}
    ldr r0, [lr, #-4]           @ the svc instruction (from ARM code)
    bic r0, r0, #0xff000000     @ its number
    bl swi_service
    ldmfd sp!, {r0-r3, r12, lr}
    movs pc, lr
    .size swi_handler, . - swi_handler

    .bss
    .align 3
    .space 1024
irq_stack_top:
    .space 1024
svc_stack_top:
    .space 4096
sys_stack_top:
