/* threads.c - a tiny cooperative scheduler: main runs three tasks round
 * robin, each on its own stack, each calling its own functions a known
 * number of times and yielding back after each round. The switches are
 * calls of np_fw_switch (switch.S): the thread that calls it is not the
 * one it returns in. Per-thread counts: expected/threads.calls.
 * ARM code for the ARM7TDMI. */
#include "fw.h"

struct np_fw_ctx {
    unsigned r4_r11[8];
    unsigned sp, lr;
};
void np_fw_switch(struct np_fw_ctx *save, const struct np_fw_ctx *load);

#define TASKS 3
#define STACK_WORDS 512

static struct np_fw_ctx main_ctx, task_ctx[TASKS];
static unsigned stacks[TASKS][STACK_WORDS] __attribute__((aligned(8)));
static volatile int current;
static volatile int done[TASKS];
static unsigned total[TASKS];

NP_FW_FN void task_yield(void)
{
    np_fw_switch(&task_ctx[current], &main_ctx);
}

NP_FW_FN unsigned work_a(unsigned x)
{
    return x * 7 + 1;
}

NP_FW_FN unsigned work_b(unsigned x)
{
    return x ^ 0x5a5a;
}

NP_FW_FN unsigned work_common(unsigned x)
{
    return x + 3;
}

NP_FW_FN unsigned work_c(unsigned n)
{
    return n ? work_c(n - 1) + n : 0;
}

/* task 0: 3 rounds */
NP_FW_FN void task_a(void)
{
    for (unsigned i = 0; i < 3; i++) {
        total[0] += work_a(i);
        task_yield();
    }
}

/* task 1: 5 rounds of two calls */
NP_FW_FN void task_b(void)
{
    for (unsigned i = 0; i < 5; i++) {
        total[1] += work_b(i);
        total[1] += work_common(i);
        task_yield();
    }
}

/* task 2: 2 rounds of a recursion 4 deep */
NP_FW_FN void task_c(void)
{
    for (unsigned i = 0; i < 2; i++) {
        total[2] += work_c(3);
        task_yield();
    }
}

static void (*const task_fn[TASKS])(void) = { task_a, task_b, task_c };

/* Where each task starts, by np_fw_switch's return (no call): runs the
 * task, then yields for good. */
NP_FW_FN void task_start(void)
{
    task_fn[current]();
    done[current] = 1;
    task_yield();
}

int main(void)
{
    for (int i = 0; i < TASKS; i++) {
        task_ctx[i].sp = (unsigned)&stacks[i][STACK_WORDS];
        task_ctx[i].lr = (unsigned)task_start;
    }
    int alive = TASKS;
    while (alive) {
        alive = 0;
        for (int i = 0; i < TASKS; i++) {
            if (done[i])
                continue;
            current = i;
            np_fw_switch(&main_ctx, &task_ctx[i]);
            alive += !done[i];
        }
    }
    np_fw_put_uint("task_a", total[0]);
    np_fw_put_uint("task_b", total[1]);
    np_fw_put_uint("task_c", total[2]);
    return 0;
}
