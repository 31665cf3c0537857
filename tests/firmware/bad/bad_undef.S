/* bad_undef.S - main calls undef_here, whose first instruction is
 * permanently undefined (0xe7f000f0): the run stops there. */
#include "main_calls.h"
    MAIN_CALLS(undef_here)

    .type undef_here, %function
undef_here:
    .word 0xe7f000f0
    bx lr
    .size undef_here, . - undef_here
