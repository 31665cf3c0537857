/* switch.S - the threads firmware's context switch: saves the callee-
 * saved registers, sp and lr of the running thread in *r0 and loads
 * those of *r1, so that its `bx lr` returns into the other thread (into
 * its own earlier np_fw_switch call, or to its entry the first time).
 * `nanoprof emu --thread-switch=np_fw_switch` follows the switch. */
    .syntax unified
    .arm
    .text
    .global np_fw_switch
    .type np_fw_switch, %function
np_fw_switch:
    stmia r0, {r4-r11, sp, lr}
    ldmia r1, {r4-r11, sp, lr}
    bx lr
    .size np_fw_switch, . - np_fw_switch
