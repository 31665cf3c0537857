/* switch.S - the context switch of tasks.c, as FreeRTOS's port for the
 * Cortex-M3 makes it: PendSV saves r4-r11 on the running task's process
 * stack and restores the other's; svc starts the first task. */
    .syntax unified
    .thumb
    .text

    .global pendsv_handler
    .type pendsv_handler, %function
    .thumb_func
pendsv_handler:
    mrs r0, psp
    stmdb r0!, {r4-r11}
    ldr r2, =task_current
    ldr r1, [r2]
    ldr r3, =task_sp
    str r0, [r3, r1, lsl #2]
    eor r1, r1, #1
    str r1, [r2]
    ldr r0, [r3, r1, lsl #2]
    ldmia r0!, {r4-r11}
    msr psp, r0
    bx lr
    .size pendsv_handler, . - pendsv_handler

    .global svc_handler
    .type svc_handler, %function
    .thumb_func
svc_handler:
    ldr r2, =task_current
    movs r1, #0
    str r1, [r2]
    ldr r3, =task_sp
    ldr r0, [r3]
    ldmia r0!, {r4-r11}
    msr psp, r0
    ldr lr, =0xfffffffd
    bx lr
    .size svc_handler, . - svc_handler
    .ltorg
