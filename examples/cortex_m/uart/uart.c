/* uart.c - the CMSDK APB UART0 at 0x40004000 as nanoprof's writer: a data
 * register and a status register, polled (uart.h). Not instrumented: the
 * trace's writer runs inside the hooks, whose calls it would only add to
 * the trace's lost count. */
#include "uart.h"
#include <stdint.h>
#include "nanoprof/nanoprof.h"

#define UART0 0x40004000u
#define UART_DATA (*(volatile uint32_t *)(UART0 + 0x00))
#define UART_STATE (*(volatile uint32_t *)(UART0 + 0x04))
#define UART_CTRL (*(volatile uint32_t *)(UART0 + 0x08))
#define UART_BAUDDIV (*(volatile uint32_t *)(UART0 + 0x10))
#define STATE_TX_FULL 1u
#define CTRL_TX_EN 1u
#define CPU_HZ 25000000u
#define BAUD 115200u
/* Polls of a full transmitter before a byte is given up: far more than
 * one byte's time at the baud rate. */
#define UART_SPINS 100000u

NP_NO_PROFILE void uart_init(void)
{
    UART_BAUDDIV = CPU_HZ / BAUD;
    UART_CTRL = CTRL_TX_EN;
}

NP_NO_PROFILE void uart_write(void *ctx, const char *bytes, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) {
        uint32_t spins = 0;
        while ((UART_STATE & STATE_TX_FULL) && ++spins < UART_SPINS)
            ;
        if (spins == UART_SPINS) {
            np_output_failed();
            return;
        }
        UART_DATA = (uint8_t)bytes[i];
    }
}

NP_NO_PROFILE void uart_puts(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    uart_write(NULL, s, n);
}
