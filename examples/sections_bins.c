/* sections_bins.c - measured sections and the bins histogram around the
 * same small loop, for about one second. Neither needs instrumentation.
 *
 *   cc -O2 $(pkg-config --cflags nanoprof-runtime) sections_bins.c \
 *      $(pkg-config --libs nanoprof-runtime) */
#include <stdio.h>
#include <nanoprof/nanoprof.h>

enum { SEC_PARSE = 1, SEC_EMIT = 2 };          /* section ids */
enum { BIN_PARSE = 2, BIN_EMIT = 3, NBINS = 6 }; /* bins; 5 is the delay bin */

static volatile unsigned long sink;

static __attribute__((noinline)) void parse(void)
{
    for (unsigned long i = 0; i < 2000000; i++)
        sink += i;
}

static __attribute__((noinline)) void emit(void)
{
    for (unsigned long i = 0; i < 700000; i++)
        sink ^= i;
}

int main(void)
{
    np_sections_init(NP_SECTIONS_HW); /* time only, said once, where refused */
    np_section_name(SEC_PARSE, "parse");
    np_section_name(SEC_EMIT, "emit");
    np_bins_init(NBINS, 1000);
    np_bin_name(BIN_PARSE, "parse");
    np_bin_name(BIN_EMIT, "emit");
    np_bin_name(NBINS - 1, "delay");

    NP_SECTIONS_START();
    for (int i = 0; i < 200; i++) {
        NP_BIN(1);
        NP_BIN(BIN_PARSE);
        NP_SECTION_BEGIN(SEC_PARSE);
        parse();
        NP_SECTION_END(SEC_PARSE);
        NP_BIN(BIN_EMIT);
        NP_SECTION_BEGIN(SEC_EMIT);
        emit();
        NP_SECTION_END(SEC_EMIT);
        np_bins_delay_us(1500);
    }
    NP_SECTIONS_STOP();

    printf("== sections\n");
    fflush(stdout);
    np_sections_dump();
    printf("== bins (1 kHz)\n");
    fflush(stdout);
    np_bins_dump();
    np_bins_shutdown();
    return 0;
}
