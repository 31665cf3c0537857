/* fentry_floor.c - the floors under -pg -mfentry's hooks (bench/run.sh),
 * linked into a -pg -mfentry build in place of the runtime:
 *   FLOOR_EXIT 0: __fentry__ only returns: what calling a hook before
 *                 every function's prologue costs, with no work at all;
 *   FLOOR_EXIT 1: __fentry__ only replaces the function's return address
 *                 with a trampoline's, which jumps back to it: what any
 *                 exit found by its return address costs before it does
 *                 anything (the return the CPU's predictor misses, and the
 *                 jump back).
 * The benchmarks are single-threaded: one return stack for the process. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl __fentry__\n"
        ".type __fentry__, @function\n"
        "__fentry__:\n"
#if FLOOR_EXIT
        "  pushq %rax\n"
        "  movq floor_top(%rip), %r11\n"
        "  movq 16(%rsp), %rax\n"
        "  movq %rax, (%r11)\n"
        "  addq $8, %r11\n"
        "  movq %r11, floor_top(%rip)\n"
        "  leaq floor_return(%rip), %rax\n"
        "  movq %rax, 16(%rsp)\n"
        "  popq %rax\n"
#endif
        "  ret\n"
        ".size __fentry__, . - __fentry__\n"
#if FLOOR_EXIT
        "floor_return:\n"
        "  movq floor_top(%rip), %r11\n"
        "  subq $8, %r11\n"
        "  movq %r11, floor_top(%rip)\n"
        "  jmp *(%r11)\n"
        ".data\n"
        ".p2align 3\n"
        "floor_top: .quad floor_stack\n"
        ".bss\n"
        ".p2align 4\n"
        "floor_stack: .zero 1048576\n"
#endif
        ".text\n");
#endif
