/* report_fw.c - the ELF tests/test_capture_reports.c names a firmware's
 * report records from, cross-compiled for a Cortex-M (Thumb code: its
 * functions' symbols have bit 0 set): functions, a C++ one by its mangled
 * name, the program's strings in .rodata, and the runtime's messages in
 * .np_msg, placed as NP_MSG places them on a target built for records
 * (common/report_format.h). It never runs; the test finds everything by
 * its symbol. */
#include "common/report_format.h"

#define MSG(name, text) \
    __attribute__((section(NP_MSG_SECTION ",\"\",%progbits @"), used)) static const char name[] = text

MSG(msg_where, "np_stats_init");
MSG(msg_what, "buffer is NULL");
MSG(msg_cycles, "cycles");
MSG(msg_insns, "instructions");

const char section_name[] = "sensor loop"; /* an NP_SECTION's name */
const char region_name[] = "filter stage"; /* an NP_ENTER region's */

volatile int sink;

void worker(void)
{
    for (int i = 0; i < 4; i++)
        sink += i;
}

void helper(void)
{
    sink = sink * 3 + 1;
}

void sensor_read(int n) __asm__("_ZN6Sensor4readEi");
void sensor_read(int n)
{
    sink = n;
}

void _start(void)
{
    worker();
    helper();
    sensor_read(1);
    for (;;)
        ;
}
