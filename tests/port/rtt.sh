#!/bin/sh
# rtt.sh CC QEMU GDB SRC_DIR NANOPROF FILE... - the trace streamed through
# the RTT ring (nanoprof/rtt.h) and read as a debug probe reads it: gdb
# (GDB, gdb-multiarch) attached to QEMU's gdbstub runs rtt_probe.py, which
# finds the control block by searching RAM for "SEGGER RTT" as OpenOCD does,
# and copies out what the firmware writes while it runs.
# rtt_fw.c (tests/port/rtt_fw.c, with the core and the port: FILE...,
# relative to SRC_DIR/src), on mps2-an385 (M3), mps2-an386 (M4) and microbit
# (M0, 16 KiB of RAM):
# - NP_RTT_BLOCK, a 256-byte ring and a trace of about 8 KB: the host
#   drains it while the calls run; `nanoprof import` of the capture gives
#   the exact call counts of the same firmware's trace through semihosting
#   (`report --format=csv`'s function and calls columns), nothing lost;
# - NP_RTT_SKIP, a 1 KiB ring and a burst of calls the host cannot keep up
#   with: import and report say exactly the events lost the firmware
#   counted (np_trace_lost), report --strict exits 3.
set -u
CC=$1
QEMU=$2
GDB=$3
SRC=$4
NP=$5
shift 5
FILES="$*"
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
if ! command -v "$GDB" > /dev/null 2>&1; then
    echo "FAIL: $GDB is missing: scripts/deps.sh installs it (Debian 12 package gdb-multiarch)"
    exit 1
fi
. "$SRC/tests/port/fw_build.sh"
fw="$SRC/tests/port/rtt_fw.c $SRC/tests/target/check.c"

# sym NAME - the address of DIR/fw.elf's symbol NAME, in hex
sym() {
    "${CC%gcc}nm" "$dir/fw.elf" | awk -v s="$1" '$3 == s { print $1 }'
}

# probe BOARD DIR POLL_MS - runs DIR/fw.elf on QEMU's BOARD, stopped at
# reset, while gdb reads its RTT ring every POLL_MS into DIR/capture (the
# firmware's semihosting output in DIR/out, gdb's in DIR/gdb.out); fails
# unless the firmware passed (exit status 0), gdb read to its end and
# found the block at the symbol _SEGGER_RTT
probe() {
    board=$1 dir=$2 poll=$3
    qemu_gdb "$dir" "$board"
    NP_RTT_REMOTE="$sock" NP_RTT_RAM_END=0x$(sym end) NP_RTT_CAPTURE="$dir/capture" NP_RTT_POLL_MS=$poll \
        timeout 600 "$GDB" -nx -batch -ex 'set pagination off' -x "$SRC/tests/port/rtt_probe.py" > "$dir/gdb.out" 2>&1
    grc=$?
    [ $grc = 0 ] || kill $qemu 2> /dev/null
    wait $qemu
    qrc=$?
    at=$(sed -n 's/^rtt: control block at //p' "$dir/gdb.out")
    want=$(printf '0x%x' "0x$(sym _SEGGER_RTT)")
    if [ $grc -ne 0 ] || [ $qrc -ne 0 ] || ! grep -q '^rtt: ended' "$dir/gdb.out" || ! grep -aqx PASSED "$dir/out"; then
        say_fail "$(basename "$dir"): gdb exit $grc, firmware exit $qrc: $(grep '^rtt: ' "$dir/gdb.out" | tr '\n' ' ')"
        grep -a '^FAIL \|^nanoprof' "$dir/out" | sed 's/^/  /'
        return 1
    fi
    [ "$at" = "$want" ] || say_fail "$(basename "$dir"): control block found at $at, _SEGGER_RTT is $want"
    return 0
}

for board in mps2-an385:cortex-m3:mps2 mps2-an386:cortex-m4:mps2 microbit:cortex-m0:microbit; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    ld=${rest#*:}
    # the same firmware through semihosting: the counts to get
    semi=$TMP/$name-semihost
    if ! fw_build "$semi" $cpu $ld -DSEMIHOST $fw; then
        say_fail "$name: build (semihosting)"
        continue
    fi
    timeout 600 "$QEMU" -M "$name" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$semi/fw.elf" > "$semi/capture" 2>&1
    if ! grep -aqx PASSED "$semi/capture" ||
        ! "$NP" import "$semi/capture" --elf "$semi/fw.elf" -o "$semi/trace" 2> "$semi/import.err"; then
        say_fail "$name: semihosting run: $(cat "$semi/import.err")"
        continue
    fi
    counts "$semi/trace" > "$semi/counts"
    printf 'leaf,1500\nmid,600\ntop,300\n' | cmp -s - "$semi/counts" ||
        say_fail "$name: semihosting counts: $(cat "$semi/counts")"

    # block mode: a 256-byte ring, drained by the host while the calls run
    dir=$TMP/$name-block
    if ! fw_build "$dir" $cpu $ld -DRING_BYTES=256 $fw; then
        say_fail "$name: build (RTT)"
        continue
    fi
    probe "$name" "$dir" 20 || continue
    bytes=$(sed -n 's/^rtt: read \([0-9]*\) bytes in \([0-9]*\) polls$/\1/p' "$dir/gdb.out")
    polls=$(sed -n 's/^rtt: read \([0-9]*\) bytes in \([0-9]*\) polls$/\2/p' "$dir/gdb.out")
    # each poll reads at most 255 bytes: the ring was drained while it ran
    [ "$bytes" -gt 4000 ] && [ "$polls" -ge $((bytes / 255)) ] ||
        say_fail "$name: $bytes bytes in $polls polls"
    if ! "$NP" import "$dir/capture" --elf "$dir/fw.elf" -o "$dir/trace" > "$dir/reports" 2> "$dir/import.err"; then
        say_fail "$name: import: $(cat "$dir/import.err")"
        continue
    fi
    # the trace, and the one error the firmware made while the ring was
    # the writer (a second np_rtt_init), a record printed by import
    grep -qx "nanoprof import: 4800 events of 1 thread, 0 lost, 1 report, into $dir/trace" "$dir/import.err" &&
        [ "$(cat "$dir/reports")" = "nanoprof: np_rtt_init: the RTT ring is set already" ] ||
        say_fail "$name: import said: $(cat "$dir/import.err"); printed: $(cat "$dir/reports")"
    counts "$dir/trace" > "$dir/counts"
    cmp -s "$semi/counts" "$dir/counts" ||
        say_fail "$name: counts through RTT: $(cat "$dir/counts"), through semihosting: $(cat "$semi/counts")"
    [ $fail = 0 ] && echo "ok: $name ($cpu): $bytes bytes through a 256-byte RTT ring in $polls polls, counts exact"
done

# skip mode: a burst of calls far beyond what a 1 KiB ring holds between
# two polls (100 ms): chunks dropped, their events lost, said exactly
dir=$TMP/skip
if fw_build "$dir" cortex-m3 mps2 -DSKIP -DRING_BYTES=1024 $fw && probe mps2-an385 "$dir" 100; then
    lost=$(sed -n 's/^lost \([0-9]*\) dropped [0-9]*$/\1/p' "$dir/out")
    dropped=$(sed -n 's/^lost [0-9]* dropped \([0-9]*\)$/\1/p' "$dir/out")
    if ! "$NP" import "$dir/capture" --elf "$dir/fw.elf" -o "$dir/trace" > /dev/null 2> "$dir/import.err" ||
        ! grep -q " $lost lost, 1 report, into" "$dir/import.err"; then
        say_fail "skip: the firmware lost $lost events; import: $(cat "$dir/import.err")"
    else
        "$NP" report --strict "$dir/trace" > "$dir/report" 2> "$dir/report.err"
        rc=$?
        if [ $rc -ne 3 ] || ! grep -q "$lost events" "$dir/report.err"; then
            say_fail "skip: report --strict exit $rc: $(cat "$dir/report.err")"
        else
            echo "ok: skip mode: $dropped bytes dropped, $lost events lost, said by import and report"
        fi
    fi
else
    say_fail "skip: build or run"
fi
exit $fail
