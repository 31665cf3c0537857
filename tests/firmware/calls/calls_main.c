/* calls_main.c - the calls firmware's C side: the call and return forms a
 * compiler emits by itself, in the state this file is built in, then the
 * hand-written forms of the assembly files. Every function is called a
 * fixed number of times (expected/NAME.calls); the sum printed is only
 * there to compare qemu-arm's run with the emulator's.
 *
 * Built -O2 -fno-optimize-sibling-calls: no tail calls (a call form of
 * their own, not counted here). What GCC 12 emits, by state:
 *   ARMv4T ARM:   bl; mov lr, pc + bx r3; bx lr; pop {r4, lr} + bx lr
 *   ARMv4T Thumb: bl; bl to an in-function `bx r3` stub; bx lr;
 *                 pop {r4} + pop {r1} + bx r1
 *   ARMv5 ARM:    bl; blx r3; bx lr; pop {r4, pc}
 *   ARMv5 Thumb:  bl; blx r3; bx lr; pop {r4, pc}
 * A call into the other state is a bl to a linker veneer on ARMv4T
 * (ARM->Thumb: ldr ip + bx ip; Thumb->ARM: bx pc + b), a blx on ARMv5. */
#include "calls.h"
#include "fw.h"

NP_FW_FN int c_leaf(int x)
{
    return x * 3 + 1;
}

NP_FW_FN int c_nonleaf(int x)
{
    return c_leaf(x) + c_leaf(x + 1);
}

NP_FW_FN int c_target(int x)
{
    return x ^ 0x55;
}

/* volatile: the call stays indirect */
int (*volatile c_pointer)(int) = c_target;

NP_FW_FN int c_indirect(int x)
{
    return c_pointer(x) + 2;
}

NP_FW_FN int c_recurse(int n)
{
    return n ? c_recurse(n - 1) + n : 0;
}

/* called back from the other state's cross_call */
NP_FW_FN int cross_back(int x)
{
    return x * 5;
}

int main(void)
{
    unsigned sum = 0;
    for (int i = 0; i < 3; i++)
        sum += (unsigned)c_nonleaf(i);
    for (int i = 0; i < 4; i++)
        sum += (unsigned)c_indirect(i);
    for (int i = 0; i < 5; i++)
        sum += (unsigned)cross_call(i);
    sum += (unsigned)c_recurse(6);
    for (int i = 0; i < 2; i++)
        sum += (unsigned)np_forms_arm(i);
    for (int i = 0; i < 3; i++)
        sum += (unsigned)np_forms_thumb(i);
#if __ARM_ARCH >= 5
    for (int i = 0; i < 4; i++)
        sum += (unsigned)np_forms_v5(i);
#endif
    np_fw_put_uint("sum", sum);
    return 0;
}
