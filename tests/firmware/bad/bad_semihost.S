/* bad_semihost.S - main calls write_bad, which asks semihosting to write
 * 12 bytes from 0x40000000 (SYS_WRITE to stdout): the emulator stops with
 * "semihosting SYS_WRITE: buffer 0x40000000+12 is outside memory". */
#include "main_calls.h"
    MAIN_CALLS(write_bad)

    .type write_bad, %function
write_bad:
    mov r0, #5                  @ SYS_WRITE
    adr r1, 1f                  @ its block: handle, buffer, length
    svc 0x123456
    bx lr
1:  .word 1, 0x40000000, 12
    .size write_bad, . - write_bad
