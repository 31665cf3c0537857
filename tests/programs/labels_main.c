/* labels_main.c - calls the labels of labels.S: asm_spin 3 times,
 * asm_weak_spin twice, each spinning LOOPS times (argv[1], default 1000). */
#include <stdlib.h>

void asm_spin(long loops);
void asm_weak_spin(long loops);

int main(int argc, char **argv)
{
    long loops = argc > 1 ? atol(argv[1]) : 1000;
    if (loops < 1)
        return 2;
    for (int i = 0; i < 3; i++)
        asm_spin(loops);
    for (int i = 0; i < 2; i++)
        asm_weak_spin(loops);
    return 0;
}
