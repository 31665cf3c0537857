/* blocks.c - basic-block counts on a Cortex-M target (run.sh): the table
 * through np_blocks_hit with the host test's made-up addresses and its
 * exact dump (tests/test_blocks.c, dump_lines), the coverage callback on
 * blocks_covered.c's workload with the host test's counts, disabling,
 * and the table filling up, in a table the firmware gives (a target's
 * runtime has none of its own: before it, executions are lost, and the
 * dump says why). The dump's lines are the host's, byte for byte; only
 * their order differs: a target has no allocator for the sorted copy, so
 * blocks come in table order. */
#include "check.h"

void bb_loop(int n); /* blocks_covered.c, with coverage */

#define FAKE(i) ((const void *)(uintptr_t)(0x100000 + 16 * (i)))
#define SLOTS 64u
#define MAX_BLOCKS 64

static np_block_count seen[MAX_BLOCKS];

/* The blocks that ran N times; the last one's address in *PC. */
static NOPROF size_t with_count(uint64_t n, const void **pc)
{
    size_t count = np_blocks_read(seen, MAX_BLOCKS), found = 0;
    for (size_t i = 0; i < count && i < MAX_BLOCKS; i++)
        if (seen[i].count == n) {
            found++;
            if (pc)
                *pc = seen[i].pc;
        }
    return found;
}

static NOPROF char *put_str(char *o, const char *s)
{
    while (*s)
        *o++ = *s++;
    *o = 0;
    return o;
}

static NOPROF char *put_u64(char *o, uint64_t v)
{
    char b[24];
    int i = sizeof b;
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10));
    while (i < (int)sizeof b)
        *o++ = b[i++];
    *o = 0;
    return o;
}

static NOPROF char *put_hex(char *o, uint64_t v)
{
    char b[16];
    int i = sizeof b;
    do
        b[--i] = "0123456789abcdef"[v & 15];
    while ((v >>= 4));
    o = put_str(o, "0x");
    while (i < (int)sizeof b)
        *o++ = b[i++];
    *o = 0;
    return o;
}

/* The header line as blocks.h gives it. */
static NOPROF char *header(char *o, uint64_t blocks, uint64_t executions, uint64_t lost)
{
    o = put_str(o, "blocks: ");
    o = put_u64(o, blocks);
    o = put_str(o, " blocks, ");
    o = put_u64(o, executions);
    o = put_str(o, " executions, ");
    o = put_u64(o, lost);
    o = put_str(o, " lost, ");
    o = put_u64(o, SLOTS);
    return put_str(o, " slots\n");
}

/* The dump is the header, then "<0xaddress>: <count>" for each block that
 * ran, in the order np_blocks_read gives them (the table's). */
static NOPROF void check_dump(const char *what)
{
    static char want[1024];
    size_t n = np_blocks_read(seen, MAX_BLOCKS);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += seen[i].count;
    char *o = header(want, n, total, np_blocks_lost());
    for (size_t i = 0; i < n; i++) {
        o = put_hex(o, (uint64_t)(uintptr_t)seen[i].pc);
        o = put_str(o, ": ");
        o = put_u64(o, seen[i].count);
        o = put_str(o, "\n");
    }
    tc_capture_begin();
    int rc = np_blocks_dump();
    tc_capture_end();
    if (!tc_check(rc == NP_OK && tc_streq(tc_captured, want), what)) {
        tc_put(tc_captured);
        tc_put(want);
    }
}

static uint64_t table[NP_BLOCKS_BUF_BYTES(SLOTS) / 8];

NOPROF int main(void)
{
    /* no table yet: lost, and the dump says why */
    np_blocks_hit(FAKE(1));
    np_blocks_hit(FAKE(1));
    tc_check(np_blocks_lost() == 2 && np_blocks_capacity() == 0 && np_blocks_read(NULL, 0) == 0,
             "no table: 2 lost, no slot, no block");
    tc_capture_begin();
    np_blocks_dump();
    tc_capture_end();
    if (!tc_check(tc_streq(tc_captured, "blocks: 0 blocks, 0 executions, 2 lost, 0 slots\n(no table: a target's runtime "
                                        "counts in the one the program gives, np_blocks_init_buf)\n"),
                  "no table: the dump says so"))
        tc_put(tc_captured);
    tc_capture_begin();
    int small = np_blocks_init_buf(table, NP_BLOCKS_BUF_BYTES(1) - 1), odd = np_blocks_init_buf((char *)table + 4, 64);
    tc_capture_end();
    tc_check(small == NP_EINVAL && odd == NP_EINVAL && np_blocks_capacity() == 0, "a buffer too small or misaligned: refused");
    tc_check(np_blocks_init_buf(table, sizeof table) == NP_OK && np_blocks_capacity() == SLOTS,
             "the firmware's table: 64 slots");
    tc_check(np_blocks_lost() == 2, "the executions lost before it stay counted");
    tc_capture_begin();
    int again = np_blocks_init_buf(table, sizeof table);
    tc_capture_end();
    tc_check(again == NP_EALREADY && tc_streq(tc_captured, "nanoprof: np_blocks_init_buf: a table was given already\n"),
             "a second table: refused, one line");

    /* the host's dump_lines, and its exact text */
    np_blocks_clear();
    np_blocks_hit(FAKE(1));
    np_blocks_hit(FAKE(2));
    np_blocks_hit(FAKE(2));
    np_blocks_hit(FAKE(2));
    tc_check(np_blocks_count(FAKE(1)) == 1 && np_blocks_count(FAKE(2)) == 3 && np_blocks_count(FAKE(3)) == 0,
             "hits: exact counts");
    tc_capture_begin();
    np_blocks_dump();
    tc_capture_end();
    if (!tc_check(tc_streq(tc_captured, "blocks: 2 blocks, 4 executions, 0 lost, 64 slots\n0x100010: 1\n0x100020: 3\n") ||
                      tc_streq(tc_captured, "blocks: 2 blocks, 4 executions, 0 lost, 64 slots\n0x100020: 3\n0x100010: 1\n"),
                  "dump: the host test's lines"))
        tc_put(tc_captured);

    /* the coverage callback: the host test's counts */
    np_blocks_clear();
    tc_check(np_blocks_read(NULL, 0) == 0, "clear: no block ran");
    const void *taken = NULL;
    bb_loop(1000);
    tc_check_range(with_count(250, &taken), 1, 1, "bb_loop(1000): one block 250 times (the branch)");
    tc_check(with_count(1000, NULL) >= 1, "bb_loop(1000): bb_body's entry 1000 times");
    tc_check_range(with_count(1, NULL), 1, 2, "bb_loop(1000): its entry (and exit) once");
    tc_check_range(np_blocks_count(taken), 250, 250, "the branch: 250");
    bb_loop(1000);
    tc_check_range(np_blocks_count(taken), 500, 500, "the branch after a second call: 500");
    tc_check(np_blocks_disable() == 1, "disable: was on");
    bb_loop(1000);
    tc_check(np_blocks_enable() == 0, "enable: was off");
    tc_check_range(np_blocks_count(taken), 500, 500, "nothing counted while off");
    tc_check_range(np_blocks_lost(), 0, 0, "nothing lost");
    check_dump("dump: the covered blocks, each line as on the host");
    size_t covered = np_blocks_read(NULL, 0);

    /* the table fills: 2 made-up blocks and the covered ones hold slots
     * (clear keeps them); of 100 new blocks, the rest of the slots fit */
    np_blocks_clear();
    for (unsigned i = 0; i < 100; i++)
        np_blocks_hit(FAKE(100 + i));
    size_t fit = SLOTS - 2 - covered;
    tc_check_range(np_blocks_read(NULL, 0), fit, fit, "a full table: the free slots' blocks counted");
    tc_check_range(np_blocks_lost(), 100 - fit, 100 - fit, "a full table: the rest lost");
    check_dump("dump: a full table");
    static char want[128];
    header(want, fit, fit, 100 - fit);
    tc_check(tc_starts_with(tc_captured, want), "dump: a full table's header");
    return tc_finish();
}
