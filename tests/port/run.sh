#!/bin/sh
# run.sh CC QEMU SRC_DIR FILE... - the Cortex-M port's smoke firmware
# (smoke.c, with boards/cortex_m/startup.c) built with the core and the
# port (FILE..., relative to SRC_DIR/src) for each of QEMU's boards, mps2-an385 (Cortex-M3, no DWT
# counter in QEMU: SysTick is the clock), mps2-an386 (Cortex-M4) and
# microbit (Cortex-M0, 16 KiB of RAM), and run there: every check passes
# and the firmware exits 0. -icount: SysTick then runs on the instructions
# executed, not on the host's clock, whose stalls on a loaded machine
# stop QEMU's SysTick for milliseconds. The build and the run are
# tests/target/run.sh's, shared with the firmwares there.
CC=$1
QEMU=$2
SRC=$3
shift 3
exec sh "$SRC/tests/target/run.sh" "$CC" "$QEMU" "$SRC" smoke "$@"
