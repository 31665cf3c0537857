/* main.c - a firmware that records its call trace on the target and
 * sends it out of the UART, beside its own messages (README.md). Built
 * with -finstrument-functions; main is not instrumented. */
#include <stdint.h>
#include "nanoprof/nanoprof.h"
#include "uart.h"

static volatile int32_t adc = 1000;

/* A sensor read, a filter and a check: 64 samples, one check per 8. */
__attribute__((noinline)) int32_t read_sensor(void)
{
    adc = adc * 7 % 1999 + 3;
    return adc;
}

__attribute__((noinline)) int32_t filter(int32_t state, int32_t sample)
{
    return state + (sample - state) / 4;
}

__attribute__((noinline)) int check_limits(int32_t v)
{
    return v > 1900 || v < 100;
}

static uint8_t trace_buf[1024]; /* the chunk buffer: no malloc */

NP_NO_PROFILE int main(void)
{
    uart_init();
    np_output_set(uart_write, NULL); /* the trace, and any error line */
    uart_puts("uart example: recording\n");
    if (np_trace_init(trace_buf, sizeof trace_buf) != NP_OK)
        return 1;
    int32_t state = 0;
    int alarms = 0;
    for (int i = 0; i < 64; i++) {
        state = filter(state, read_sensor());
        if (i % 8 == 7)
            alarms += check_limits(state);
    }
    np_trace_stop();
    uart_puts(alarms ? "uart example: alarms\n" : "uart example: done\n");
    return 0;
}
