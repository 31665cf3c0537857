#!/bin/sh
# dwt_clock.sh CMAKE ARM_CC SRC_DIR TARGET_INSNS - the Cortex-M4's DWT
# cycle counter as the runtime's clock, which QEMU's boards do not run
# (it reads 0 there: the other target tests run on SysTick). The runtime
# for mps2-an386 from a fresh install, bench/target/insns.c's firmware
# built against it, run by bench's target_insns under Unicorn, whose
# counter moves 17 cycles a read and wraps inside a call. The firmware
# checks each mechanism (call trace, function cost's exact counts and
# every call's 17 cycles across the wrap, sections, the trace) and says
# which step failed; the test fails on any.
set -u
CMAKE=$1 CC=$2 SRC=$3 INSNS=$4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sh "$SRC/scripts/board_install.sh" "$CMAKE" "$SRC" mps2-an386 "$TMP/rt" -DNP_WERROR=ON || exit 1
P=$TMP/rt/prefix
B=$P/share/nanoprof/boards/mps2-an386
if ! "$CC" -mcpu=cortex-m4 -mthumb -O2 -finstrument-functions -I "$P/include" "$SRC/bench/target/insns.c" \
        "$B/startup.c" -T "$B/link.ld" -L "$P/lib" -lnanoprof -nostartfiles --specs=nano.specs \
        --specs=nosys.specs -Wl,--gc-sections -Wl,--build-id -o "$TMP/insns.elf"; then
    echo "FAIL: the firmware does not build"
    exit 1
fi
if ! "$INSNS" "$TMP/insns.elf" >"$TMP/out"; then
    echo "FAIL: target_insns (above: the step that failed)"
    exit 1
fi
for p in 2 3 4 6 7; do
    grep -q "^phase $p insns [0-9]* calls [0-9]*$" "$TMP/out" || { echo "FAIL: phase $p did not run"; cat "$TMP/out"; exit 1; }
done
echo "ok: every mechanism on the DWT clock, across its wrap"
