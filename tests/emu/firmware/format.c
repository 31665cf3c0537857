/* format.c - printf and friends over integers, strings and soft-float
 * doubles: the C library's formatting and libgcc's floating point
 * (lockstep firmware). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char buf[96];
    long long big = 1;
    for (int i = 0; i < 8; i++) {
        printf("%3d|%-5d|%05u|%x|%X|%o|%+d|% d\n", i * 37 - 100, i, i * 1000u, i * 0x1234567u, i * 0xabcdu, i * 8u,
               i - 4, i);
        big = big * -9876543LL + i;
        printf("%lld %llx\n", big, (unsigned long long)big);
    }
    const char *names[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++)
        printf("[%8s][%-8s][%.3s][%c]\n", names[i], names[i], names[i], names[i][0]);
    double d = 1.0;
    for (int i = 0; i < 10; i++) {
        d = d * 3.7 - i / 7.0;
        printf("%f %.3e %g %10.4f\n", d, d, d / 1000.0, -d);
    }
    float f = 0.1f;
    for (int i = 0; i < 5; i++) {
        f = f * f + 0.5f;
        printf("%.6f\n", (double)f);
    }
    snprintf(buf, sizeof buf, "%d-%s-%.2f", 42, "x", 2.5);
    printf("%s len %u\n", buf, (unsigned)strlen(buf));
    printf("%ld %lu %s\n", strtol("-12345", NULL, 10), strtoul("ff", NULL, 16), buf + 3);
    double s = 0;
    for (int i = 1; i <= 50; i++)
        s += 1.0 / (i * i);
    printf("sum 1/i^2 = %.12f\n", s);
    return 0;
}
