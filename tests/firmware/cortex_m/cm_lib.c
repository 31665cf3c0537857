/* cm_lib.c - start-up, vectors, semihosting and a spin loop for the
 * Cortex-M test firmware (cm.h). A firmware defines the handlers it
 * takes; the others stop it with "fault". */
#include "cm.h"

static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void put_str(const char *s)
{
    semihost(0x04, s); /* SYS_WRITE0 */
}

NOIPA void put_uint(const char *name, uint32_t v)
{
    char buf[16], *p = buf + sizeof buf;
    *--p = 0;
    *--p = '\n';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    put_str(name);
    put_str(p);
}

void cm_exit(int code)
{
    /* SYS_EXIT: on a 32-bit target the reason itself, Application Exit
     * or RunTimeErrorUnknown */
    semihost(0x18, (const void *)(code ? 0x20024 : 0x20026));
    for (;;)
        ;
}

NOIPA int spin(int n)
{
    volatile int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

extern uint32_t _data, _edata, _data_load, _bss, _ebss, _stack_top;
int main(void);

void reset_handler(void)
{
    uint32_t *d = &_data, *l = &_data_load;
    while (d < &_edata)
        *d++ = *l++;
    for (d = &_bss; d < &_ebss;)
        *d++ = 0;
    cm_exit(main());
}

void fault_handler(void)
{
    put_str("fault\n");
    cm_exit(1);
}

void hardfault_handler(void) __attribute__((weak, alias("fault_handler")));
void svc_handler(void) __attribute__((weak, alias("fault_handler")));
void pendsv_handler(void) __attribute__((weak, alias("fault_handler")));
void systick_handler(void) __attribute__((weak, alias("fault_handler")));
void irq0_handler(void) __attribute__((weak, alias("fault_handler")));

__attribute__((section(".vectors"), used)) static void (*const vectors[17])(void) = {
    (void (*)(void))&_stack_top, reset_handler, fault_handler, hardfault_handler, fault_handler, fault_handler,
    fault_handler, 0, 0, 0, 0, svc_handler, fault_handler, 0, pendsv_handler, systick_handler, irq0_handler,
};
