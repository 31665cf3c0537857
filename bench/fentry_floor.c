/* fentry_floor.c - the floors under -pg -mfentry's hooks (bench/run.sh),
 * linked into a -pg -mfentry build in place of the runtime:
 *   FLOOR_EXIT 0: __fentry__ only returns: what calling a hook before
 *                 every function's prologue costs, with no work at all;
 *   FLOOR_EXIT 1: __fentry__ only replaces the function's return address
 *                 with a trampoline's, which jumps back to it: what any
 *                 exit found by its return address costs before it does
 *                 anything (the return the CPU's predictor misses, and the
 *                 jump back);
 *   FLOOR_EXIT 2: the same exit with every call and return paired, as a
 *                 runtime that rewrote each function's `call __fentry__`
 *                 would have it: a constructor makes each one a `jmp` to a
 *                 thunk of the function's own, which takes the caller's
 *                 return address off the stack and calls the function's
 *                 body from there, then returns to the caller with `ret`.
 *                 No return is replaced behind the predictor's back (its
 *                 stack of return addresses stays right): what the design
 *                 that docs/performance.md proposes costs before any work.
 * The benchmarks are single-threaded: one return stack for the process. */
#if defined(__x86_64__)
#if FLOOR_EXIT == 2
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

__asm__(".text\n"
        ".globl __fentry__\n"
        ".type __fentry__, @function\n"
        "__fentry__:\n"
#if FLOOR_EXIT == 1
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
#if FLOOR_EXIT == 1
        "floor_return:\n"
        "  movq floor_top(%rip), %r11\n"
        "  subq $8, %r11\n"
        "  movq %r11, floor_top(%rip)\n"
        "  jmp *(%r11)\n"
#endif
#if FLOOR_EXIT == 2
        /* a thunk's first call: the caller's return address (above this
         * call's) onto the return stack, and this call's return address
         * in its place, returned to: the thunk then calls the body */
        "floor_thunk_enter:\n"
        "  pushq %rax\n"
        "  movq floor_top(%rip), %rax\n"
        "  movq 16(%rsp), %r11\n"
        "  movq %r11, (%rax)\n"
        "  addq $8, %rax\n"
        "  movq %rax, floor_top(%rip)\n"
        "  popq %rax\n"
        "  popq %r11\n"
        "  movq %r11, (%rsp)\n"
        "  ret\n"
        /* after the body's return: back to the caller by a return */
        "floor_thunk_exit:\n"
        "  movq floor_top(%rip), %r11\n"
        "  subq $8, %r11\n"
        "  movq %r11, floor_top(%rip)\n"
        "  pushq (%r11)\n"
        "  ret\n"
#endif
#if FLOOR_EXIT
        ".data\n"
        ".p2align 3\n"
        "floor_top: .quad floor_stack\n"
        ".bss\n"
        ".p2align 4\n"
        "floor_stack: .zero 1048576\n"
#endif
        ".text\n");

#if FLOOR_EXIT == 2
void __fentry__(void);
void floor_thunk_enter(void);
void floor_thunk_exit(void);

#define THUNK 16 /* bytes: call enter, call body, jmp exit (5 each) */
#define THUNKS_BYTES (1u << 20)

static void put_rel(uint8_t *at, uint8_t op, uintptr_t to)
{
    int32_t rel = (int32_t)(to - ((uintptr_t)at + 5));
    at[0] = op;
    memcpy(at + 1, &rel, 4);
}

static int fits(uintptr_t from, uintptr_t to)
{
    intptr_t d = (intptr_t)(to - from);
    return d > INT32_MIN / 2 && d < INT32_MAX / 2;
}

static int text_of_program(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    uintptr_t *r = ctx;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            r[0] = info->dlpi_addr + ph->p_vaddr;
            r[1] = r[0] + ph->p_memsz;
            return 1;
        }
    }
    return 1; /* the program is the first object */
}

/* Every `call __fentry__` of the program (each function's first
 * instruction under -mfentry) made a jump to its thunk. Fails loudly: a
 * floor measured on unpatched code would be another floor. */
__attribute__((constructor)) static void call_through(void)
{
    uintptr_t text[2] = { 0, 0 };
    dl_iterate_phdr(text_of_program, text);
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = text[0] & ~(uintptr_t)(page - 1), hi = (text[1] + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    uint8_t *area = MAP_FAILED;
    /* below the program first (above it the heap grows), then above */
    uintptr_t hint[2] = { lo - (1u << 26), hi + (1u << 28) };
    for (int i = 0; i < 2 && (area == MAP_FAILED || !fits(lo, (uintptr_t)area) ||
                              !fits(hi, (uintptr_t)area + THUNKS_BYTES)); i++) {
        if (area != MAP_FAILED)
            munmap(area, THUNKS_BYTES);
        area = mmap((void *)hint[i], THUNKS_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
    }
    if (!text[0] || area == MAP_FAILED || !fits(lo, (uintptr_t)area) || !fits(hi, (uintptr_t)area + THUNKS_BYTES) ||
        mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0) {
        fputs("fentry_floor: cannot place the thunks near the program's code\n", stderr);
        exit(1);
    }
    size_t n = 0;
    for (uint8_t *p = (uint8_t *)text[0]; p + 5 <= (uint8_t *)text[1]; p++) {
        int32_t rel;
        memcpy(&rel, p + 1, 4);
        if (p[0] != 0xe8 || (uintptr_t)p + 5 + (intptr_t)rel != (uintptr_t)__fentry__)
            continue;
        if ((n + 1) * THUNK > THUNKS_BYTES) {
            fputs("fentry_floor: too many functions\n", stderr);
            exit(1);
        }
        uint8_t *t = area + n++ * THUNK;
        put_rel(t, 0xe8, (uintptr_t)floor_thunk_enter);
        put_rel(t + 5, 0xe8, (uintptr_t)p + 5);
        put_rel(t + 10, 0xe9, (uintptr_t)floor_thunk_exit);
        put_rel(p, 0xe9, (uintptr_t)t);
    }
    mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
    if (!n) {
        fputs("fentry_floor: no call of __fentry__ found\n", stderr);
        exit(1);
    }
}
#endif
#endif
