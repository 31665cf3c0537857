/* bad_jump.S - main calls jump_away, which jumps to 0x40000000, outside
 * memory: the run stops at the fetch. */
#include "main_calls.h"
    MAIN_CALLS(jump_away)

    .type jump_away, %function
jump_away:
    ldr r0, =0x40000000
    bx r0
    .size jump_away, . - jump_away
    .ltorg
