/* labels_thumb.c - Thumb code calling the Thumb label asm_twice. */
#include "fw.h"

unsigned asm_twice(unsigned x);

NP_FW_FN unsigned thumb_twice_all(unsigned x)
{
    for (int i = 0; i < 4; i++)
        x = asm_twice(x);
    return x;
}
