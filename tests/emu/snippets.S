@ snippets.S - instruction sequences for test_emu_cpu.c, assembled and
@ linked at address 0 (tests/emu/snippets.ld) at build time. Each starts
@ at a global label and ends at END, an undefined instruction that stops
@ the run; the test knows what each leaves in registers and memory.
@ r10 points to zeroed scratch RAM unless a test says otherwise.

        .syntax unified
        .arch armv5te

        .macro END
        .word 0xe7f000f0
        .endm
        .macro TEND
        .hword 0xde00
        .endm

@ ---- vectors: each handler counts itself in a register ----
        .section .vectors, "ax"
        .arm
        .global vectors
vectors:
        b       .               @ reset
        b       .               @ undefined
        b       swi_vec
        b       pabt_vec
        b       .               @ data abort
        nop
        b       irq_vec
        b       .               @ fiq

        .text
        .arm
swi_vec:
        add     r7, r7, #1
        movs    pc, lr
pabt_vec:
        add     r9, r9, #1
        movs    pc, lr
irq_vec:
        add     r8, r8, #1
        subs    pc, lr, #4

@ ---- data processing ----
        .global t_dp
t_dp:
        mov     r0, #0x0f
        mvn     r1, #0
        add     r2, r0, r0, lsl #4
        sub     r3, r2, #0x100
        rsb     r4, r0, #0x100
        and     r5, r1, r2, ror #4
        orr     r6, r0, #0xf00
        eor     r7, r6, r0, lsl #8
        bic     r8, r1, r2
        mov     r9, r2, asr #4
        mov     r10, r1, lsr #28
        mov     r11, #3
        mov     r12, r0, lsl r11
        END

        .global t_flags
t_flags:
        movs    r0, #0
        mvns    r1, r0
        adds    r2, r1, #1
        adds    r3, r1, r1
        mov     r4, #0x80000000
        subs    r5, r4, #1
        adcs    r6, r0, r0
        sbcs    r7, r0, #0
        rscs    r8, r0, #0
        cmp     r0, #1
        cmn     r1, #1
        tst     r4, r4, lsl #1
        teq     r1, r0, lsr #32
        movs    r9, r1, asr #32
        movs    r10, r1, rrx
        mov     r11, #33
        movs    r12, r1, lsl r11
        movs    r12, r1, lsl r0
        movs    r12, r4, ror #31
        movs    r12, r1, lsr #1
        ands    r12, r1, #0xf0000000
        END

        .global t_cond
t_cond:
        mov     r0, #0
        cmp     r0, #0
        addeq   r1, r0, #1
        addne   r2, r0, #1
        addcs   r3, r0, #1
        addhi   r4, r0, #1
        addls   r5, r0, #1
        addge   r6, r0, #1
        addlt   r7, r0, #1
        addgt   r8, r0, #1
        addle   r9, r0, #1
        addmi   r10, r0, #1
        addvs   r11, r0, #1
        END

        .global t_cond_fail
t_cond_fail:
        cmp     r0, r0
        bne     1f
        ldrne   r1, [r10]
        mulne   r2, r3, r4
        ldmne   r10, {r0-r3}
        movne   pc, lr
1:      END

        .global t_pcops
t_pcops:
        add     r0, pc, #4              @ t_pcops + 12
        sub     r1, pc, #4              @ t_pcops + 8
        mov     r2, pc                  @ t_pcops + 16
        add     r3, r2, pc              @ r2 + t_pcops + 20
        mov     r4, #1
        add     r5, pc, r4, lsl #2      @ t_pcops + 28
        ldr     r6, [pc, #-4]           @ the word of this instruction
        END

@ ---- multiplies ----
        .global t_mul
t_mul:
        ldr     r0, =7
        ldr     r1, =0x12345678
        mul     r2, r1, r0
        mla     r3, r0, r0, r1
        umull   r4, r5, r1, r1
        mvn     r6, #0
        smull   r7, r8, r6, r1
        smlal   r7, r8, r0, r0
        umlal   r7, r8, r6, r0
        muls    r9, r6, r6
        END
        .ltorg

@ ---- loads and stores ----
        .global t_ls
t_ls:
        ldr     r0, [r10]
        ldr     r1, [r10, #1]
        ldrb    r2, [r10, #5]!
        ldrh    r3, [r10, #-1]
        ldrsb   r4, [r10], #3
        ldrsh   r5, [r10, #2]!
        mov     r9, #2
        ldr     r6, [r10, -r9, lsl #1]
        ldr     r7, [r10], r9, lsl #2
        str     r0, [r10, #2]
        strb    r2, [r10, #-1]!
        strh    r3, [r10, #3]
        ldr     r8, [r10, #3]
        ldrt    r11, [r10], #-1
        END

        .global t_ls_misc
t_ls_misc:
        mov     r0, #8
        ldr     r1, [r10, r0, lsr #1]
        ldr     r2, [r10, r0, asr #2]!
        str     r2, [r10], -r0, ror #2
        mov     r3, #0x100
        ldrh    r4, [r10, r3]
        ldrsh   r5, [r10, -r3]!
        strh    r5, [r10], r3
        str     pc, [r10, #8]
        END

        .global t_lsm
t_lsm:
        mov     r0, #1
        mov     r1, #2
        mov     r2, #3
        mov     r3, #4
        stmia   r10!, {r0-r3}
        stmdb   r10!, {r0, r1}
        stmib   r10, {r2, r3}
        stmda   r10!, {r0-r2}
        ldmib   r10!, {r4-r8}
        ldmda   r10, {r0-r1}
        ldmdb   r10!, {r2, r3}
        mov     r9, r10
        .word   0xe8b90300              @ ldmia r9!, {r8, r9}: the loaded base wins
        .word   0xe8aa0c00              @ stmia r10!, {r10, r11}: the base stored
        END

        .global t_stm_pc
t_stm_pc:
        stmia   r10, {r0, pc}
        END

        .global t_interlock
t_interlock:
        ldr     r0, [r10]
        add     r1, r0, #1
        ldrb    r2, [r10]
        add     r3, r2, #1
        ldrh    r4, [r10]
        add     r5, r1, #1
        ldr     r6, [r10]
        str     r6, [r10, #4]
        ldmia   r10, {r7, r8}
        add     r9, r8, r7
        END

        .global t_swp
t_swp:
        mov     r0, #0x55
        swp     r1, r0, [r10]
        swpb    r2, r1, [r10]
        ldr     r3, [r10]
        END

@ ---- PSR transfers and modes ----
        .global t_modes
t_modes:
        mov     r13, #0x100
        mov     r14, #0x200
        mrs     r1, cpsr
        bic     r2, r1, #0x1f
        orr     r2, r2, #0x12
        msr     cpsr_c, r2
        mov     r13, #0x300
        mrs     r3, spsr
        msr     spsr_fsxc, r1
        orr     r2, r1, #0x1f
        msr     cpsr_c, r2
        mov     r13, #0x400
        mov     r14, #0x500
        bic     r2, r2, #0xf
        msr     cpsr_c, r2
        msr     cpsr_c, r1
        mrs     r4, cpsr
        msr     cpsr_f, #0xf0000000
        mrs     r5, cpsr
        END

        .global t_fiq
t_fiq:
        mov     r8, #8
        mov     r12, #12
        mrs     r0, cpsr
        bic     r1, r0, #0x1f
        orr     r1, r1, #0x11
        msr     cpsr_c, r1
        mov     r8, #0x88
        mov     r12, #0xcc
        mov     r13, #0xdd
        msr     cpsr_c, r0
        END

@ ---- exceptions ----
        .global t_swi
t_swi:
        mov     r7, #0
        swi     0x42
        add     r7, r7, #0x10
        END

        .global t_irq
t_irq:
        mrs     r0, cpsr
        bic     r0, r0, #0x80
        msr     cpsr_c, r0
        add     r1, r1, #1
        END

        .global t_undef
t_undef:
        mov     r0, #1
        .word   0xe6000010              @ media space: undefined on v4/v5
        END

@ ---- calls and returns ----
        .global t_calls
t_calls:
        bl      f_bx
        ldr     r3, =f_mov
        mov     lr, pc
        bx      r3
        ldr     r3, =f_pop
        add     lr, pc, #0
        mov     pc, r3
        ldr     r3, =f_ldr
        sub     lr, pc, #0
        ldr     pc, =f_ldr
        mov     r0, #1
        add     pc, pc, r0, lsl #2
        nop
        nop
        END
f_bx:   bx      lr
f_mov:  mov     pc, lr
f_pop:  push    {r4, lr}
        pop     {r4, pc}
f_ldr:  str     lr, [sp, #-4]!
        ldr     pc, [sp], #4
        .ltorg

        .global t_calls_v5
t_calls_v5:
        blx     tf_bx
        ldr     r3, =f_bx
        blx     r3
        ldr     r3, =tf_pop
        blx     r3
        END
        .ltorg

        .global t_ldr_pc_interwork
t_ldr_pc_interwork:
        ldr     r0, =tf_end
        push    {r0}
        pop     {pc}
        .ltorg

        .global t_exc_return
t_exc_return:
        mrs     r0, cpsr
        msr     spsr_fsxc, r0
        adr     lr, 1f
        movs    pc, lr
1:      adr     r1, 2f
        str     r1, [r10, #4]
        msr     spsr_fsxc, r0
        ldmia   r10, {r0, pc}^
2:      END

        .global t_user_bank
t_user_bank:
        mov     r0, #0x13
        mov     r1, #0x14
        stmia   r10, {r0, r1}
        cmp     r0, r0
        ldmiaeq r10, {r13, r14}^
        ldmiane r10, {r0}^
        mov     r13, #0x66
        stmdbeq r10, {r13, r14}^
        END

@ ---- ARMv5TE ----
        .global t_v5
t_v5:
        ldr     r0, =0x00f00000
        clz     r1, r0
        ldr     r2, =0x7ffffff0
        mov     r3, #0x20
        qadd    r4, r2, r3
        qsub    r5, r2, r3
        mvn     r6, #0x7f000000
        qdadd   r7, r3, r6
        qdsub   r8, r3, r6
        mrs     r9, cpsr
        END
        .ltorg

        .global t_v5_mul
t_v5_mul:
        ldr     r0, =0x00038000         @ top 3, bottom -32768
        ldr     r1, =0xfffe0005         @ top -2, bottom 5
        smulbb  r2, r0, r1
        smultb  r3, r0, r1
        smulbt  r4, r0, r1
        smultt  r5, r0, r1
        mov     r6, #100
        smlabb  r7, r0, r1, r6
        smulwb  r8, r0, r1
        smlawt  r9, r0, r1, r6
        mov     r11, #0
        mov     r12, #1
        smlaltb r11, r12, r0, r1
        END
        .ltorg

        .global t_ldrd
t_ldrd:
        ldr     r2, =0x11111111
        ldr     r3, =0x22222222
        strd    r2, r3, [r10, #8]!
        ldrd    r4, r5, [r10, #-8]
        mov     r0, #8
        ldrd    r6, r7, [r10], -r0
        pld     [r10]
        END
        .ltorg

        .global t_bkpt
t_bkpt:
        mov     r9, #0
        bkpt    0x12
        add     r9, r9, #0x10
        END

        .global t_cp15
t_cp15:
        mrc     p15, 0, r0, c0, c0, 0
        mrc     p15, 0, r1, c0, c0, 1
        mrc     p15, 0, r2, c1, c0, 0
        mcr     p15, 0, r0, c1, c0, 0
        END

@ ---- self-modifying code ----
        .global t_smc
t_smc:
        mov     r0, #0
        bl      smc_target
        ldr     r1, =0xe2800010         @ add r0, r0, #16
        ldr     r2, =smc_target
        str     r1, [r2]
        bl      smc_target
        ldr     r1, =0xe3a05063         @ mov r5, #99
        str     r1, [pc, #-4]
        mov     r5, #1
        END
smc_target:
        add     r0, r0, #1
        bx      lr
        .ltorg

        .global t_copy_run
t_copy_run:
        adr     r0, copied
        ldmia   r0, {r1, r2}
        stmia   r10, {r1, r2}
        mov     r4, #0
        mov     lr, pc
        mov     pc, r10
        ldr     r1, =0xe2844005         @ add r4, r4, #5
        str     r1, [r10]
        mov     lr, pc
        mov     pc, r10
        END
copied:
        add     r4, r4, #1
        mov     pc, lr
        .ltorg

@ ---- faults ----
        .global t_fault_read
t_fault_read:
        mov     r0, #7
        ldr     r0, [r10, #4]!
        END

        .global t_fault_ldm
t_fault_ldm:
        ldmia   r10!, {r0-r3}
        END

        .global t_fault_write
t_fault_write:
        stmdb   r10!, {r0-r3}
        END

        .global t_fault_fetch
t_fault_fetch:
        bx      r10

@ ---- Thumb ----
        .thumb
        .global t_thumb_alu
        .thumb_func
t_thumb_alu:
        movs    r0, #5
        movs    r1, #3
        adds    r2, r0, r1
        subs    r3, r1, r0
        adds    r4, r0, #7
        subs    r4, #2
        lsls    r5, r0, #30
        lsrs    r6, r0, #1
        asrs    r7, r3, #1
        movs    r2, #0xff
        ands    r2, r0
        eors    r2, r1
        lsls    r2, r1
        lsrs    r2, r1
        asrs    r3, r1
        movs    r7, #1
        rors    r7, r1
        tst     r7, r1
        negs    r6, r1
        cmn     r6, r1
        orrs    r6, r2
        muls    r6, r1
        bics    r6, r1
        mvns    r5, r6
        mov     r8, r0
        add     r8, r1
        cmp     r8, r0
        TEND

        .global t_thumb_carry
        .thumb_func
t_thumb_carry:
        movs    r0, #0
        subs    r1, r0, #1
        adcs    r1, r0
        sbcs    r2, r0
        lsrs    r3, r2, #32
        asrs    r4, r2, #32
        TEND

        .global t_thumb_ls
        .thumb_func
t_thumb_ls:
        ldr     r0, =0x12345678
        str     r0, [r1, #4]
        movs    r2, #6
        ldrh    r3, [r1, r2]
        ldrb    r4, [r1, #7]
        strb    r4, [r1, #1]
        strh    r3, [r1, #2]
        ldr     r5, [r1]
        ldrsb   r6, [r1, r2]
        ldrsh   r7, [r1, r2]
        add     r2, sp, #8
        str     r5, [sp, #4]
        ldr     r2, [sp, #4]
        sub     sp, #16
        add     sp, #8
        adr     r3, 1f
        TEND
        .align  2
        .global t_thumb_ls_lit
t_thumb_ls_lit:
1:      .word   0
        .ltorg

        .global t_thumb_lsm
        .thumb_func
t_thumb_lsm:
        movs    r0, #1
        movs    r2, #2
        movs    r3, #3
        stmia   r1!, {r0, r2, r3}
        push    {r0, r2, lr}
        subs    r1, #12
        ldmia   r1!, {r4, r5}
        pop     {r6, r7}
        ldmia   r1, {r1, r2}
        TEND

        .global t_tcalls
        .thumb_func
t_tcalls:
        bl      tf_bx
        ldr     r3, =tf_mov
        mov     lr, pc
        bx      r3
        bl      tf_pop
        movs    r0, #0
        beq     1f
        movs    r0, #1
1:      bne     2f
        b       2f
2:      TEND
        .align  2
        .ltorg

        .global tf_bx
        .thumb_func
tf_bx:  bx      lr
        .thumb_func
tf_mov: mov     pc, lr
        .global tf_pop
        .thumb_func
tf_pop: push    {r4, lr}
        pop     {r4, pc}
        .global tf_end
        .thumb_func
tf_end: TEND

        .align  2
        .global t_thumb_smc
        .thumb_func
t_thumb_smc:
        movs    r0, #0
        bl      tsmc_f
        strh    r5, [r6]
        movs    r7, #2
        .global tsmc_bl
tsmc_bl:
        bl      tsmc_f
        strh    r3, [r4]
        subs    r7, #1
        bne     tsmc_bl
        TEND
        .global tsmc_f
        .thumb_func
tsmc_f: adds    r0, #1
        bx      lr
        .global tsmc_g
        .thumb_func
tsmc_g: adds    r0, #64
        bx      lr

        .align  2
        .global t_thumb_to_arm
        .thumb_func
t_thumb_to_arm:
        bx      pc
        nop
        .arm
        mov     r0, #42
        END
        .thumb

        .global t_thumb_swi
        .thumb_func
t_thumb_swi:
        movs    r7, #0
        swi     0x12
        adds    r7, #0x10
        TEND

        .global t_thumb_irq
        .thumb_func
t_thumb_irq:
        movs    r1, #0
        adds    r1, #1
        adds    r1, #1
        TEND

        .global t_thumb_undef
        .thumb_func
t_thumb_undef:
        movs    r0, #1
        .hword  0xb100                  @ cbz: ARMv6T2, undefined here
        TEND

        .global t_thumb_bkpt
        .thumb_func
t_thumb_bkpt:
        movs    r0, #1
        bkpt    0xab
        movs    r0, #2
        TEND

        .global t_thumb_blx
        .thumb_func
t_thumb_blx:
        blx     f_bx
        ldr     r3, =f_bx
        blx     r3
        TEND
        .align  2
        .ltorg
