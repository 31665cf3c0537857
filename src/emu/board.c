/* board.c - the boards' memory maps (QEMU's hw/arm/mps2.c and
 * mps2-tz.c) and the CMSDK UART's transmit side. */
#include "board.h"

#include <string.h>
#include <unistd.h>

static const struct np_board boards[] = {
    /* AN385 (Cortex-M3) and AN386 (Cortex-M4): ZBT SSRAM1 4 MiB at 0,
     * SSRAM2&3 4 MiB at 0x20000000, block RAM 16 KiB at 0x01000000, PSRAM
     * 16 MiB at 0x21000000; UART0 at 0x40004000 (QEMU's -serial stdio) */
    { "mps2-an385", NP_CPU_CORTEX_M3,
      { { 0x00000000u, 0x400000u }, { 0x01000000u, 0x4000u }, { 0x20000000u, 0x400000u }, { 0x21000000u, 0x1000000u } },
      4, 0, 0x40004000u, 32 },
    { "mps2-an386", NP_CPU_CORTEX_M4,
      { { 0x00000000u, 0x400000u }, { 0x01000000u, 0x4000u }, { 0x20000000u, 0x400000u }, { 0x21000000u, 0x1000000u } },
      4, 0, 0x40004000u, 32 },
    /* AN505 (Cortex-M33), seen from the Secure side it boots in (a
     * firmware without TrustZone runs there): ZBT SSRAM1 4 MiB at
     * 0x10000000, SSRAM2 and 3 at 0x38000000 and 0x38200000 (2 MiB each),
     * PSRAM 16 MiB at 0x80000000; UART0 at 0x50200000 */
    { "mps2-an505", NP_CPU_CORTEX_M33,
      { { 0x10000000u, 0x400000u }, { 0x38000000u, 0x400000u }, { 0x80000000u, 0x1000000u } },
      3, 0x10000000u, 0x50200000u, 92 },
};

const struct np_board *np_board_find(const char *name)
{
    for (size_t i = 0; i < sizeof boards / sizeof *boards; i++)
        if (strcmp(boards[i].name, name) == 0)
            return &boards[i];
    return NULL;
}

const char *np_board_names(void)
{
    return "mps2-an385, mps2-an386, mps2-an505";
}

/* Registers (CMSDK APB UART TRM, ARM DDI 0479): DATA 0x0, STATE 0x4 (TX
 * full bit 0: never, the host takes each byte at once), CTRL 0x8, INTSTATUS
 * and INTCLEAR 0xc, BAUDDIV 0x10. What is written to DATA goes out as
 * QEMU's does: whether CTRL enables the transmitter or not. */
int np_cmsdk_uart_read(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t *val)
{
    struct np_cmsdk_uart *u = ctx;
    (void)cpu, (void)len;
    switch (off & ~3u) {
    case 0x8: *val = u->ctrl; break;
    case 0x10: *val = u->bauddiv; break;
    default: *val = 0; break;
    }
    return 0;
}

int np_cmsdk_uart_write(void *ctx, struct np_cpu *cpu, uint32_t off, unsigned len, uint32_t val)
{
    struct np_cmsdk_uart *u = ctx;
    (void)cpu, (void)len;
    switch (off & ~3u) {
    case 0x0: {
        char c = (char)val;
        if (write(u->fd, &c, 1) < 0) {
            /* the console is gone: the firmware goes on, as on a board */
        }
        break;
    }
    case 0x8: u->ctrl = val & 0x7f; break;
    case 0x10: u->bauddiv = val & 0xfffff; break;
    default: break;
    }
    return 0;
}
