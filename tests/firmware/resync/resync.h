/* resync.h - the functions of the resync firmware (resync.c, resync.S). */
#ifndef NP_FW_RESYNC_H
#define NP_FW_RESYNC_H

/* resync.S: each calls a function that returns past it */
int rs_mid(int x);
int rs_mid2a(int x);
int rs_tmid(int x);
/* resync.S: setjmp and longjmp of r4-r11, sp and lr */
typedef unsigned np_fw_jmp_buf[10];
int np_fw_setjmp(np_fw_jmp_buf buf) __attribute__((returns_twice));
/* never returns; not declared noreturn, so that GCC keeps lj_deep's
 * recursion as it is written */
void np_fw_longjmp(np_fw_jmp_buf buf, int value);

#endif
