/* halt_loop.S - bare-metal firmware that ends as many do: main calls
 * tick 3 times, then stops in a branch to itself with IRQs masked
 * (`b .`). The emulator ends the run there (exit status 0) instead of
 * spinning to --max-insns. It also stores to and loads from 0x40000000,
 * a device register outside its image: run it with --map 0x40000000,4096. */
#include "../bad/main_calls.h"
    MAIN_CALLS(run)

    .type run, %function
run:
    push {r4, lr}
    ldr r4, =0x40000000
    mov r0, #7
    str r0, [r4]
    bl tick
    bl tick
    bl tick
    ldr r0, [r4]
    mrs r1, cpsr
    orr r1, r1, #0x80
    msr cpsr_c, r1
halt:
    b halt
    .size run, . - run

    .type tick, %function
tick:
    add r0, r0, #1
    bx lr
    .size tick, . - tick
