/* semihost_stub.h - the few ARM semihosting calls newlib's rdimon start-up
 * and C library make, answered the same in both engines of a lockstep run
 * (lockstep.h): console output collected, fixed heap and stack layout,
 * a clock that counts its readings, exit. Anything else is refused, which
 * fails the run: the firmware tests know every call they make. */
#ifndef NP_TEST_SEMIHOST_STUB_H
#define NP_TEST_SEMIHOST_STUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lockstep.h"

/* One engine's view of the host. */
struct stub_host {
    uint32_t heapinfo[4];   /* SYS_HEAPINFO: heap base, heap limit, stack base, stack limit */
    char out[1u << 16];     /* the console output */
    size_t outlen;
    bool overflow;          /* more output than out[] holds */
    unsigned handles;       /* handles SYS_OPEN gave */
    uint32_t clock;         /* SYS_CLOCK readings so far */
    unsigned calls;         /* semihosting calls served */
    bool exited;
    uint32_t exit_reason;   /* SYS_EXIT's r1 (0x20026: the application exited) */
    char error[160];        /* why a call was refused, or "" */
};

/* The lockstep handler; CTX is struct stub_host[2], one per engine
 * (enum lockstep_side). Semihosting traps are svc 0x123456 (ARM), svc
 * 0xab (Thumb) and bkpt 0xab; other svc and bkpt are refused. */
int stub_semihost(void *ctx, struct lockstep *ls, enum lockstep_side side, enum lockstep_call call, uint32_t imm);

#endif
