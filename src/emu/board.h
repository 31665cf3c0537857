/* board.h - the Cortex-M boards `nanoprof emu --board` gives a firmware:
 * the memory maps of QEMU's machines of the same names and their CMSDK
 * UART as the console, so that one ELF runs alike under
 * `qemu-system-arm -M BOARD` and `nanoprof emu --board BOARD`; and
 * `generic`, memory where the ELF's segments are. */
#ifndef NP_EMU_BOARD_H
#define NP_EMU_BOARD_H

#include <stdint.h>
#include "cpu.h"

#define NP_BOARD_MAX_RAMS 4

struct np_board {
    const char *name;
    enum np_cpu_model model;      /* QEMU's CPU for it */
    struct { uint32_t base, size; } ram[NP_BOARD_MAX_RAMS];
    unsigned nram;
    uint32_t vtor;                /* where the vector table is at reset */
    uint32_t uart;                /* the console's CMSDK UART; 0: none */
    unsigned nirq;                /* the NVIC's external interrupts */
};

/* The board NAME; NULL when unknown ("generic" is not in the table). */
const struct np_board *np_board_find(const char *name);
/* "mps2-an385, mps2-an386, mps2-an505" */
const char *np_board_names(void);

/* The CMSDK APB UART's transmit side, writing to FD: a device for
 * np_m_add_device (cpu_m.h); CTX is a struct np_cmsdk_uart. */
struct np_cmsdk_uart {
    int fd;
    uint32_t ctrl, bauddiv;
};
int np_cmsdk_uart_read(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t *val);
int np_cmsdk_uart_write(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t val);

#endif
