/* bad_write.S - main calls write_away, which stores a word at 0x40000000,
 * outside memory: the run stops at that str. */
#include "main_calls.h"
    MAIN_CALLS(write_away)

    .type write_away, %function
write_away:
    ldr r1, =0x40000000
    str r0, [r1]
    bx lr
    .size write_away, . - write_away
    .ltorg
