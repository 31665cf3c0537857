#!/bin/sh
# run.sh CC QEMU SRC FIRMWARE FILE... - one of the firmwares in tests/target
# (FIRMWARE.c with check.c and boards/cortex_m/startup.c), or the port's
# smoke firmware (tests/port/smoke.c), built with the core and the
# Cortex-M port (FILE..., relative to SRC/src), and run on QEMU's
# mps2-an385 (Cortex-M3), mps2-an386 (Cortex-M4) and, where its RAM holds
# the firmware, microbit (Cortex-M0, 16 KiB), or (dwt_gap) on m4_unicorn
# given as QEMU: every check passes and the
# firmware exits 0. -icount shift=0: one instruction is one nanosecond of
# virtual time and SysTick counts in it, so every figure is the same on
# every run. The variants (firmware: what differs):
#   smoke     tests/port/smoke.c (tests/port/run.sh)
#   rtos      the port's SysTick_Handler left out (NP_CM_SYSTICK_HANDLER=0):
#             the firmware's own calls np_cm_systick_isr
#   bins32    bins with 32-bit counters (the default)
#   bins16    bins with 16-bit counters (NP_BIN_COUNTER_BITS=16)
#   sections  sections
#   blocks    blocks: blocks_covered.c built with -fsanitize-coverage=trace-pc
#   badinput  bad input to every mechanism
#   clock     the clock over long calls, SysTick's period changed (clock.c)
#   clock_rtos  the same with SysTick and its handler the firmware's, as
#             an RTOS's (NP_CM_SYSTICK_HANDLER=0, TC_RTOS)
#   cost_irq  function cost with an instrumented interrupt, SysTick and
#             its handler the firmware's (NP_CM_SYSTICK_HANDLER=0)
#   ctargs    the call trace's r0-r3 (NP_CALLTRACE_ARGS): the firmware
#             built with -pg too, plain_leaf.c with -finstrument-functions
#             alone
#   ctargs_pg the same with the runtime's -pg exits on (NP_PG_EXITS):
#             one event per call still
#   pgexits   -pg alone (NP_PG_EXITS=8): exits from the trampoline
#             (pgexits.c), pg_shapes.c built with -pg at -O0
#   rtos_pg   rtos.c built with -pg alone (NP_PG_EXITS=8): each task's
#             calls on its own return stack, preempted anywhere, the
#             hooks and the trampoline included
#   dwt_gap   the DWT counter as the clock over calls of several wraps
#             (dwt_gap.c): a Cortex-M4 under Unicorn, QEMU being
#             m4_unicorn (tests/CMakeLists.txt builds it), whose counter
#             moves 4096 cycles an instruction
#   dwt_gap_rtos  the same with SysTick and its handler an RTOS's
set -u
CC=$1
QEMU=$2
SRC=$3
FW=$4
shift 4
HERE=$SRC/tests/target
BOARDS=$SRC/boards/cortex_m
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
fail=0
# small tables: the microbit has 16 KiB of RAM
CFLAGS="-mthumb -O2 -g -std=gnu11 -ffreestanding -Wall -Wextra -Werror -I$SRC/include -I$SRC/src \
-I$SRC/src/port/cortex_m -DNP_BINS_MAX=16"
RT_FLAGS="-DNP_REPORT_RECORDS=0" # the runtime's build choices: libnanoprof-text's (the firmwares check the text)
FW_FLAGS=""        # the firmware's own
FW_PATH=$HERE/$FW.c
COVERED=""         # a file built with the coverage callback
HOOKED=""          # a file built with -finstrument-functions alone
SHAPES=""          # a file built with -pg at -O0
INSTR="-finstrument-functions" # how the firmware's file is instrumented
BOARD_LIST="mps2-an385:cortex-m3:mps2:25000000 mps2-an386:cortex-m4:mps2:25000000 microbit:cortex-m0:microbit:16000000"
case $FW in
smoke) FW_PATH=$SRC/tests/port/smoke.c ;;
rtos | cost_irq) RT_FLAGS="$RT_FLAGS -DNP_CM_SYSTICK_HANDLER=0" ;;
bins32) FW_PATH=$HERE/bins.c; FW_FLAGS="-DTC_BIN_BITS=32" ;;
bins16) FW_PATH=$HERE/bins.c; FW_FLAGS="-DTC_BIN_BITS=16"; RT_FLAGS="$RT_FLAGS -DNP_BIN_COUNTER_BITS=16" ;;
blocks) COVERED=blocks_covered.c ;;
sections|badinput|clock) ;;
ctargs) CFLAGS="$CFLAGS -DNP_CALLTRACE_ARGS=1"; FW_FLAGS="-pg"; HOOKED=plain_leaf.c ;;
ctargs_pg) FW_PATH=$HERE/ctargs.c; CFLAGS="$CFLAGS -DNP_CALLTRACE_ARGS=1"; FW_FLAGS="-pg"; HOOKED=plain_leaf.c
    RT_FLAGS="$RT_FLAGS -DNP_PG_EXITS=8" ;;
pgexits) CFLAGS="$CFLAGS -DNP_CALLTRACE_ARGS=1"; INSTR="-pg"; SHAPES=pg_shapes.c; RT_FLAGS="$RT_FLAGS -DNP_PG_EXITS=8" ;;
rtos_pg) FW_PATH=$HERE/rtos.c; INSTR="-pg"; FW_FLAGS="-DTC_PG"; RT_FLAGS="$RT_FLAGS -DNP_CM_SYSTICK_HANDLER=0 -DNP_PG_EXITS=8" ;;
clock_rtos) FW_PATH=$HERE/clock.c; FW_FLAGS="-DTC_RTOS"; RT_FLAGS="$RT_FLAGS -DNP_CM_SYSTICK_HANDLER=0" ;;
dwt_gap) BOARD_LIST="unicorn:cortex-m4:mps2:25000000"; FW_FLAGS="-DTC_DWT_SCALE=4096" ;;
dwt_gap_rtos) FW_PATH=$HERE/dwt_gap.c; BOARD_LIST="unicorn:cortex-m4:mps2:25000000"
    FW_FLAGS="-DTC_DWT_SCALE=4096 -DTC_RTOS"; RT_FLAGS="$RT_FLAGS -DNP_CM_SYSTICK_HANDLER=0" ;;
*) echo "run.sh: no firmware $FW"; exit 2 ;;
esac

for board in $BOARD_LIST; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    rest=${rest#*:}
    ld=${rest%%:*}
    hz=${rest#*:}
    dir=$TMP/$name
    mkdir -p "$dir"
    objs=""
    for f in "$@"; do
        o=$dir/$(echo "$f" | tr / _).o
        "$CC" -mcpu=$cpu $CFLAGS $RT_FLAGS -c "$SRC/src/$f" -o "$o" || fail=1
        objs="$objs $o"
    done
    fp= # pgexits on the Cortex-M4: its FPU's registers in a prologue
    [ "$FW" = pgexits ] && [ "$cpu" = cortex-m4 ] && fp="-mfloat-abi=softfp -mfpu=fpv4-sp-d16"
    "$CC" -mcpu=$cpu $CFLAGS $FW_FLAGS $fp -DTC_CPU_HZ=${hz}u $INSTR -c "$FW_PATH" -o "$dir/fw.o" || fail=1
    "$CC" -mcpu=$cpu $CFLAGS -c "$HERE/check.c" -o "$dir/check.o" || fail=1
    if [ -n "$HOOKED" ]; then
        "$CC" -mcpu=$cpu $CFLAGS -finstrument-functions -c "$HERE/$HOOKED" -o "$dir/hooked.o" || fail=1
        objs="$objs $dir/hooked.o"
    fi
    if [ -n "$SHAPES" ]; then
        "$CC" -mcpu=$cpu $CFLAGS -O0 -pg -c "$HERE/$SHAPES" -o "$dir/shapes.o" || fail=1
        objs="$objs $dir/shapes.o"
    fi
    if [ -n "$COVERED" ]; then
        "$CC" -mcpu=$cpu $CFLAGS -fsanitize-coverage=trace-pc -c "$HERE/$COVERED" -o "$dir/covered.o" || fail=1
        objs="$objs $dir/covered.o"
    fi
    "$CC" -mcpu=$cpu $CFLAGS -c "$BOARDS/startup.c" -o "$dir/start.o" || fail=1
    "$CC" -mcpu=$cpu -mthumb -nostartfiles --specs=nano.specs -T "$BOARDS/$ld.ld" -T "$BOARDS/sections.ld" \
        -o "$dir/fw.elf" "$dir/start.o" "$dir/fw.o" "$dir/check.o" $objs -lc -lgcc ||
        { echo "FAIL: $FW on $name: link"; fail=1; continue; }
    if [ "$name" = unicorn ]; then
        timeout 300 "$QEMU" "$dir/fw.elf" 4096 > "$dir/out" 2>&1
    else
        timeout 120 "$QEMU" -M "$name" -icount shift=0 -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel "$dir/fw.elf" > "$dir/out" 2>&1
    fi
    rc=$?
    if [ $rc -ne 0 ] || ! grep -qx PASSED "$dir/out"; then
        echo "FAIL: $FW on $name ($cpu): exit status $rc"
        sed 's/^/  /' "$dir/out"
        fail=1
    else
        echo "ok: $FW on $name ($cpu): $(grep -c '^ok ' "$dir/out") checks"
        [ -z "${VERBOSE:-}" ] || sed 's/^/  /' "$dir/out"
    fi
done
exit $fail
