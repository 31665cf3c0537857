#!/bin/sh
# run.sh CC QEMU SRC_DIR FILE... - the Cortex-M port's smoke firmware
# (smoke.c, with boards/cortex_m/startup.c) built with the core and the
# port (FILE..., relative to SRC_DIR/src) for each of QEMU's boards, mps2-an385 (Cortex-M3, no DWT
# counter in QEMU: SysTick is the clock), mps2-an386 (Cortex-M4) and
# microbit (Cortex-M0, 16 KiB of RAM), and run there: every check passes
# and the firmware exits 0. -icount: SysTick then runs on the instructions
# executed, not on the host's clock, whose stalls on a loaded machine
# stop QEMU's SysTick for milliseconds.
set -u
CC=$1
QEMU=$2
SRC=$3
shift 3
HERE=$SRC/tests/port
BOARDS=$SRC/boards/cortex_m # startup.c and the linker scripts the boards install
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
fail=0
# small tables: the microbit has 16 KiB of RAM
CFLAGS="-mthumb -O2 -g -std=gnu11 -ffreestanding -Wall -Wextra -Werror -I$SRC/include -I$SRC/src \
-I$SRC/src/port/cortex_m -DNP_BLOCKS_SLOTS=64 -DNP_BINS_MAX=16"

for board in mps2-an385:cortex-m3:mps2 mps2-an386:cortex-m4:mps2 microbit:cortex-m0:microbit; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    ld=${rest#*:}
    dir=$TMP/$name
    mkdir -p "$dir"
    objs=""
    for f in "$@"; do
        o=$dir/$(echo "$f" | tr / _).o
        "$CC" -mcpu=$cpu $CFLAGS -c "$SRC/src/$f" -o "$o" || fail=1
        objs="$objs $o"
    done
    "$CC" -mcpu=$cpu $CFLAGS -finstrument-functions -c "$HERE/smoke.c" -o "$dir/smoke.o" || fail=1
    "$CC" -mcpu=$cpu $CFLAGS -c "$BOARDS/startup.c" -o "$dir/start.o" || fail=1
    "$CC" -mcpu=$cpu -mthumb -nostartfiles --specs=nano.specs -T "$BOARDS/$ld.ld" -T "$BOARDS/sections.ld" -o "$dir/smoke.elf" \
        "$dir/start.o" "$dir/smoke.o" $objs -lc -lgcc || { echo "FAIL: $name: link"; fail=1; continue; }
    timeout 120 "$QEMU" -M "$name" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$dir/smoke.elf" > "$dir/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -qx PASSED "$dir/out"; then
        echo "FAIL: $name ($cpu): exit status $rc"
        sed 's/^/  /' "$dir/out"
        fail=1
    else
        echo "ok: $name ($cpu): $(grep -c '^ok ' "$dir/out") checks"
    fi
done
exit $fail
