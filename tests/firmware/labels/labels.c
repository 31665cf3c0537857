/* labels.c - calls the functions of labels_arm.S and labels_thumb.S,
 * whose symbols are labels without a type (expected/labels.calls): each
 * must be named, its calls counted. */
#include "fw.h"

unsigned asm_sum(unsigned n);
unsigned asm_bump(unsigned x);
unsigned thumb_twice_all(unsigned x);

int main(void)
{
    unsigned total = 0;
    for (unsigned n = 1; n <= 3; n++)
        total += asm_sum(n * 10);
    total = asm_bump(asm_bump(total));
    total = thumb_twice_all(total);
    np_fw_put_uint("total", total);
    return 0;
}
