/* fw.h - what every bare test firmware shares: the attribute that keeps a
 * function a real, named, called function, and the few host services
 * (text out, exit) it reaches by semihosting (fwlib.c). */
#ifndef NP_FW_H
#define NP_FW_H

/* A function the tests count: never inlined, cloned or merged (noipa),
 * so every call in the source is one call in the code, to its own name. */
#define NP_FW_FN __attribute__((noipa))

/* S to stdout. */
void np_fw_puts(const char *s);
/* "LABEL VALUE\n" in decimal to stdout, in one write. */
void np_fw_put_uint(const char *label, unsigned value);
/* SYS_EXIT_EXTENDED with ADP_Stopped_ApplicationExit and CODE. */
void np_fw_exit(int code) __attribute__((noreturn));

#endif
