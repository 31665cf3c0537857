/* switch.S - the context switch of tasks.c, as FreeRTOS's port for the
 * Cortex-M3 makes it: PendSV saves r4-r11 on the running task's process
 * stack, its top in pxCurrentTCB->pxTopOfStack, makes the other task's
 * TCB pxCurrentTCB and restores from it; svc starts the first task. */
    .syntax unified
    .thumb
    .text

    .global pendsv_handler
    .type pendsv_handler, %function
    .thumb_func
pendsv_handler:
    mrs r0, psp
    stmdb r0!, {r4-r11}
    ldr r2, =pxCurrentTCB
    ldr r1, [r2]
    str r0, [r1]            @ pxCurrentTCB->pxTopOfStack
    ldr r3, =task_current
    ldr r0, [r3]
    eor r0, r0, #1
    str r0, [r3]
    ldr r1, =task_tcb
    ldr r1, [r1, r0, lsl #2]
    str r1, [r2]            @ pxCurrentTCB: the other task's
    ldr r0, [r1]
    ldmia r0!, {r4-r11}
    msr psp, r0
    bx lr
    .size pendsv_handler, . - pendsv_handler

    .global svc_handler
    .type svc_handler, %function
    .thumb_func
svc_handler:
    ldr r3, =task_current
    movs r0, #0
    str r0, [r3]
    ldr r1, =task_tcb
    ldr r1, [r1]
    ldr r2, =pxCurrentTCB
    str r1, [r2]
    ldr r0, [r1]
    ldmia r0!, {r4-r11}
    msr psp, r0
    ldr lr, =0xfffffffd
    bx lr
    .size svc_handler, . - svc_handler
    .ltorg
