/* test_emu_lockstep_firmware.c - the interpreter against Unicorn on real
 * firmware, compared after every instruction (lockstep.h), from the ELF's
 * entry to its semihosting exit: newlib rdimon programs built at build
 * time (tests/emu/firmware/), their semihosting answered alike in both
 * engines (semihost_stub.h). Both engines must print exactly the expected
 * output and exit normally. The Cortex-M builds (Thumb only, hard float
 * on the M4 and M33) start at the same entry, _mainCRTStartup, with the SP
 * set here as for the ARM CPUs: newlib's crt0 needs no vector table (it
 * moves the SP where SYS_HEAPINFO says), and no exception is taken.
 *
 *   test_emu_lockstep_firmware CPU FIRMWARE.elf EXPECTED-OUTPUT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "image.h"
#include "lockstep.h"
#include "semihost_stub.h"

/* more than any of the firmware runs */
#define MAX_STEPS 30000000ull
/* the RAM region for stack and heap (the whole of it is compared) */
#define RAM_SIZE (1u << 20)
/* an address no firmware runs code at: the run ends at its exit */
#define NO_END 0xfffffff0u
/* SYS_EXIT's reason when the application exits */
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static const char *cpu_name, *elf_path, *expected_path;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1u << 20);
    *len = buf ? fread(buf, 1, (1u << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[*len] = 0;
    return buf;
}

/* The image's regions widened to whole pages (Unicorn maps pages; image.c
 * keeps regions on distinct pages, so they stay apart). */
static unsigned page_regions(const struct np_image *img, struct lockstep_region *r)
{
    unsigned n = 0;
    for (unsigned i = 0; i < img->nmem; i++) {
        uint32_t lo = img->mem[i].base & ~0xfffu;
        uint64_t hi = ((uint64_t)img->mem[i].base + img->mem[i].size + 0xfff) & ~0xfffull;
        r[n].base = lo;
        r[n].size = (uint32_t)(hi - lo);
        n++;
    }
    return n;
}

static void firmware(void **state)
{
    (void)state;
    int model = np_cpu_model_parse(cpu_name);
    assert_true(model >= 0);
    struct np_image img;
    struct np_image_options opt = {.ram_size = RAM_SIZE};
    char err[256];
    if (np_image_load(elf_path, &opt, &img, err, sizeof err))
        fail_msg("%s: %s", elf_path, err);
    size_t want_len = 0;
    char *want = read_file(expected_path, &want_len);
    assert_non_null(want);

    struct lockstep_region regions[NP_CPU_MAX_REGIONS];
    unsigned n = page_regions(&img, regions);
    static struct stub_host host[2];
    memset(host, 0, sizeof host);
    /* SYS_HEAPINFO: the loader's layout, as nanoprof emu gives it */
    uint32_t layout[4] = {img.heap_base, img.heap_limit, img.stack_base, img.stack_limit};
    memcpy(host[LS_NP].heapinfo, layout, sizeof layout);
    memcpy(host[LS_UC].heapinfo, layout, sizeof layout);

    static struct lockstep ls;
    if (lockstep_init(&ls, (enum np_cpu_model)model, regions, n, stub_semihost, host))
        fail_msg("%s", ls.report);
    for (unsigned i = 0; i < img.nmem; i++)
        assert_int_equal(lockstep_load(&ls, img.mem[i].base, img.mem[i].data, img.mem[i].size), 0);
    /* every page and every region compared now and then, not each 64
     * instructions: the RAM region is large */
    ls.full_every = 1u << 14;
    ls.check_branches = true; /* as nanoprof emu runs it */
    uint32_t r[16] = {0};
    r[13] = img.sp;
    r[15] = img.entry & ~1u;
    if (model >= NP_CPU_CORTEX_M0) /* a Cortex-M: thread mode, xPSR 0, from the entry (no vector table read) */
        lockstep_set_state(&ls, r, 0, 0);
    else
        lockstep_set_state(&ls, r, NP_MODE_SVC | NP_CPSR_I | NP_CPSR_F | (img.entry & 1 ? NP_CPSR_T : 0), 0);

    enum lockstep_result res = lockstep_run(&ls, NO_END, MAX_STEPS);
    if (res == LS_HALTED && lockstep_compare_memory(&ls))
        res = LS_DIFFERENT;
    printf("%s on %s: %llu instructions compared (%llu steps), %u semihosting calls\n", elf_path, cpu_name,
           (unsigned long long)ls.insns, (unsigned long long)ls.steps, host[LS_NP].calls);
    if (res != LS_HALTED) {
        fputs(ls.report, stderr);
        for (int s = 0; s < 2; s++)
            if (host[s].error[0])
                fprintf(stderr, "%s: %s\n", s == LS_NP ? "interpreter" : "unicorn", host[s].error);
        if (res == LS_LIMIT)
            fprintf(stderr, "no exit after %llu steps\n", (unsigned long long)MAX_STEPS);
        fail();
    }
    for (int s = 0; s < 2; s++) {
        const char *who = s == LS_NP ? "interpreter" : "unicorn";
        assert_true(host[s].exited);
        if (host[s].exit_reason != ADP_STOPPED_APPLICATION_EXIT)
            fail_msg("%s: exit reason 0x%x", who, host[s].exit_reason);
        assert_false(host[s].overflow);
        if (host[s].outlen != want_len || memcmp(host[s].out, want, want_len))
            fail_msg("%s printed:\n%.*s\nexpected:\n%s", who, (int)host[s].outlen, host[s].out, want);
    }
    lockstep_free(&ls);
    np_image_free(&img);
    free(want);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_emu_lockstep_firmware CPU FIRMWARE.elf EXPECTED-OUTPUT\n");
        return 2;
    }
    cpu_name = argv[1];
    elf_path = argv[2];
    expected_path = argv[3];
    const struct CMUnitTest tests[] = {cmocka_unit_test(firmware)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
