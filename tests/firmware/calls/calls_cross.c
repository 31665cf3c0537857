/* calls_cross.c - built in the state opposite to calls_main.c's, so that
 * calls between them cross states: through linker veneers on ARMv4T, as
 * blx on ARMv5. */
#include "calls.h"
#include "fw.h"

NP_FW_FN int cross_call(int x)
{
    return cross_back(x) + 1;
}
