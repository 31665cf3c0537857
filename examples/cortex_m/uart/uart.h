/* uart.h - a byte writer for the CMSDK UART0 of Arm's MPS2 boards
 * (mps2-an385, mps2-an386), for nanoprof's output (np_output_set). */
#ifndef UART_H
#define UART_H

#include <stddef.h>

/* Turns the transmitter on (115200 baud at 25 MHz). */
void uart_init(void);
/* An np_write_fn: LEN bytes out, waiting while the transmit buffer is
 * full; a transmitter that stays full tells the runtime
 * (np_output_failed), which counts the trace's chunk lost. */
void uart_write(void *ctx, const char *bytes, size_t len);
/* A C string out. */
void uart_puts(const char *s);

#endif
