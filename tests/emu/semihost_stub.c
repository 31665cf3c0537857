/* semihost_stub.c - semihosting answered the same in both engines
 * (semihost_stub.h). The operation numbers and parameter blocks are those
 * of ARM's semihosting specification (r0: the operation, r1: its
 * argument or a block of words; r0: the result). */
#include "semihost_stub.h"
#include <stdio.h>
#include <string.h>

enum {
    SYS_OPEN = 0x01,
    SYS_CLOSE = 0x02,
    SYS_WRITEC = 0x03,
    SYS_WRITE0 = 0x04,
    SYS_WRITE = 0x05,
    SYS_READ = 0x06,
    SYS_ISTTY = 0x09,
    SYS_SEEK = 0x0a,
    SYS_FLEN = 0x0c,
    SYS_CLOCK = 0x10,
    SYS_TIME = 0x11,
    SYS_ERRNO = 0x13,
    SYS_GET_CMDLINE = 0x15,
    SYS_HEAPINFO = 0x16,
    SYS_EXIT = 0x18,
    SYS_EXIT_EXTENDED = 0x20
};

static const char cmdline[] = "firmware";

static int refuse(struct stub_host *h, const char *what, uint32_t op)
{
    snprintf(h->error, sizeof h->error, "semihosting 0x%02x: %s", op, what);
    return 0;
}

static void emit(struct stub_host *h, const void *bytes, size_t len)
{
    if (len > sizeof h->out - h->outlen) {
        len = sizeof h->out - h->outlen;
        h->overflow = true;
    }
    memcpy(h->out + h->outlen, bytes, len);
    h->outlen += len;
}

/* Word I of the parameter block at R1. */
static bool arg(struct lockstep *ls, enum lockstep_side side, uint32_t r1, unsigned i, uint32_t *v)
{
    const uint8_t *p = lockstep_mem(ls, side, r1 + 4 * i, 4);
    if (!p)
        return false;
    *v = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    return true;
}

static bool put_word(struct lockstep *ls, enum lockstep_side side, uint32_t addr, uint32_t v)
{
    uint8_t *p = lockstep_mem(ls, side, addr, 4);
    if (!p)
        return false;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    lockstep_wrote(ls, side, addr, 4);
    return true;
}

int stub_semihost(void *ctx, struct lockstep *ls, enum lockstep_side side, enum lockstep_call call, uint32_t imm)
{
    struct stub_host *h = &((struct stub_host *)ctx)[side];
    uint32_t op = lockstep_reg(ls, side, 0), r1 = lockstep_reg(ls, side, 1), a, b, c, ret = 0;
    if (call == LS_SVC ? imm != 0x123456 && imm != 0xab : imm != 0xab)
        return refuse(h, call == LS_SVC ? "an svc other than semihosting's" : "a bkpt other than 0xab", imm);
    switch (op) {
    case SYS_OPEN: { /* [name, mode, length]: the console ":tt" only */
        const char *name;
        if (!arg(ls, side, r1, 0, &a) || !arg(ls, side, r1, 2, &c) || !(name = (const char *)lockstep_mem(ls, side, a, c)))
            return refuse(h, "bad block", op);
        ret = c == 3 && !memcmp(name, ":tt", 3) ? ++h->handles : 0xffffffffu;
        break;
    }
    case SYS_CLOSE:
    case SYS_SEEK:
    case SYS_FLEN:
    case SYS_ERRNO:
        ret = 0;
        break;
    case SYS_ISTTY:
        ret = 1;
        break;
    case SYS_WRITEC: {
        const uint8_t *p = lockstep_mem(ls, side, r1, 1);
        if (!p)
            return refuse(h, "bad address", op);
        emit(h, p, 1);
        break;
    }
    case SYS_WRITE0: {
        const uint8_t *p;
        uint32_t n = 0;
        while ((p = lockstep_mem(ls, side, r1 + n, 1)) && *p)
            n++;
        if (!p)
            return refuse(h, "unterminated string", op);
        emit(h, lockstep_mem(ls, side, r1, n + 1), n);
        break;
    }
    case SYS_WRITE: { /* [handle, buffer, length]: the bytes not written */
        const uint8_t *p;
        if (!arg(ls, side, r1, 1, &b) || !arg(ls, side, r1, 2, &c) || !(p = lockstep_mem(ls, side, b, c)))
            return refuse(h, "bad block", op);
        emit(h, p, c);
        ret = 0;
        break;
    }
    case SYS_READ: /* end of file: nothing read */
        if (!arg(ls, side, r1, 2, &c))
            return refuse(h, "bad block", op);
        ret = c;
        break;
    case SYS_CLOCK: /* centiseconds: one per reading, the same in both */
        ret = h->clock++;
        break;
    case SYS_TIME:
        ret = 1700000000;
        break;
    case SYS_GET_CMDLINE: { /* [buffer, size]: the size becomes the length */
        uint8_t *p;
        if (!arg(ls, side, r1, 0, &a) || !arg(ls, side, r1, 1, &b) || b < sizeof cmdline ||
            !(p = lockstep_mem(ls, side, a, sizeof cmdline)))
            return refuse(h, "bad block", op);
        memcpy(p, cmdline, sizeof cmdline);
        lockstep_wrote(ls, side, a, sizeof cmdline);
        if (!put_word(ls, side, r1 + 4, sizeof cmdline - 1))
            return refuse(h, "bad block", op);
        break;
    }
    case SYS_HEAPINFO: /* [address of four words] */
        if (!arg(ls, side, r1, 0, &a))
            return refuse(h, "bad block", op);
        for (unsigned i = 0; i < 4; i++)
            if (!put_word(ls, side, a + 4 * i, h->heapinfo[i]))
                return refuse(h, "bad block", op);
        break;
    case SYS_EXIT:
        h->exited = true;
        h->exit_reason = r1;
        lockstep_halt(ls, side);
        break;
    case SYS_EXIT_EXTENDED:
        if (!arg(ls, side, r1, 0, &a))
            return refuse(h, "bad block", op);
        h->exited = true;
        h->exit_reason = a;
        lockstep_halt(ls, side);
        break;
    default:
        return refuse(h, "not one the stub answers", op);
    }
    h->calls++;
    lockstep_set_reg(ls, side, 0, ret);
    return 1;
}
