/* bad_read.S - main calls read_away, which loads a word from 0x40000000,
 * outside memory: the run stops at that ldr. */
#include "main_calls.h"
    MAIN_CALLS(read_away)

    .type read_away, %function
read_away:
    ldr r1, =0x40000000
    ldr r0, [r1]
    bx lr
    .size read_away, . - read_away
    .ltorg
