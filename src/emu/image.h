/* image.h - a bare-metal 32-bit ARM firmware ELF loaded into memory
 * regions for the interpreter (cpu.h): its segments, a RAM region for the
 * stack and the heap, the entry point, the initial stack pointer, the
 * semihosting heap/stack layout, the build-id and the code's range.
 *
 * Segments are loaded at their physical (load) addresses, as a debugger
 * or a boot ROM does, and where a segment's virtual address differs (an
 * initialised .data copied from flash to RAM by the start-up code) at its
 * virtual address too. Segments whose ranges touch the same 4 KiB page
 * are one region; so is the RAM region when it starts on the page the
 * highest segment ends on. Nothing is mapped that no segment covers: the
 * vectors at 0 exist only when the firmware has them. */
#ifndef NP_EMU_IMAGE_H
#define NP_EMU_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include "cpu.h"

#define NP_IMAGE_BUILD_ID_MAX 64
#define NP_IMAGE_DEFAULT_RAM (16u << 20)

struct np_image_options {
    uint32_t ram_size;  /* the stack and heap region; 0: NP_IMAGE_DEFAULT_RAM */
    uint32_t ram_base;  /* 0: just after the highest segment, 16-byte aligned */
};

struct np_image {
    struct np_mem_region mem[NP_CPU_MAX_REGIONS]; /* for np_cpu_init; data from calloc */
    unsigned nmem;
    uint32_t entry;             /* the ELF's entry point; bit 0 set: Thumb */
    uint32_t sp;                /* initial SP: __stack, _stack, __StackTop, _estack or
                                   __stack_top when in memory, else the RAM region's top */
    uint32_t ram_base, ram_size; /* the RAM region (inside mem[]) */
    /* semihosting SYS_HEAPINFO: the heap from the end of the loaded data
       (end, _end or __end__ when in memory below the RAM region's middle,
       else ram_base) to that middle, the stack from the RAM region's top
       down to the middle (whatever sp is: a rdimon program moves its stack
       there) */
    uint32_t heap_base, heap_limit, stack_base, stack_limit;
    uint32_t text_lo, text_hi;  /* the executable segments: [text_lo, text_hi) */
    uint8_t build_id[NP_IMAGE_BUILD_ID_MAX]; /* NT_GNU_BUILD_ID */
    size_t build_id_len;        /* 0: none */
    int cpu_arch;               /* the ELF's Tag_CPU_arch (.ARM.attributes): 2 ARMv4T,
                                   4 ARMv5TE, 10 ARMv7, 13 ARMv7E-M, ...; -1: none */
    char cpu_profile;           /* its Tag_CPU_arch_profile: 'A', 'R', 'M', 'S' or 0 */
    int fp_arch;                /* its Tag_FP_arch: 0 none, 6 VFPv4-D16 (FPv4), 8 ARMv8 FP-D16
                                   (FPv5), ...; -1: not said */
    int fp_use;                 /* its Tag_ABI_HardFP_use: 1 single precision only; 0 or 3: as
                                   fp_arch allows (double too) */
};

/* The architecture Tag_CPU_arch ARCH (with its PROFILE) names: "ARMv4T",
 * "ARMv7-M", ... */
const char *np_image_arch_name(int arch, char profile);
/* ARCH and PROFILE are a microcontroller's (Cortex-M: ARMv6-M, ARMv7-M,
 * ARMv7E-M, ARMv8-M, ARMv8.1-M). */
bool np_image_is_m_profile(int arch, char profile);
/* IMG's FP code needs double precision (its FP attributes allow it: a
 * Cortex-M7's FPv5-D16). */
bool np_image_fp_double(const struct np_image *img);

/* EACH(CTX, NAME, SYM) for every symbol ELF's .symtab defines (not
 * SHN_UNDEF), until it returns non-zero; that return, or 0. */
int np_image_each_symbol(Elf *elf, int (*each)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx);

/* Loads PATH (O: NULL for the defaults) into IMG. Returns 0, or -1 with a
 * one-line reason in ERR ("not an ELF file", "a 64-bit ELF: not 32-bit ARM
 * firmware", "an x86-64 ELF (machine 62): not ARM firmware", "no loadable
 * segment", ...); IMG then holds nothing to free. */
int np_image_load(const char *path, const struct np_image_options *o, struct np_image *img, char *err,
                  size_t errsize);
void np_image_free(struct np_image *img);

#endif
