#!/bin/sh
# flight.sh CC QEMU GDB SRC_DIR NANOPROF FILE... - the trace's flight
# recorder (np_trace_init_flight) read from the target's RAM as a debugger
# reads it: flight_fw.c (with the core and the port: FILE..., relative to
# SRC_DIR/src) runs on QEMU's mps2-an385 (M3), mps2-an386 (M4) and
# microbit (M0), stopped by gdb (GDB, gdb-multiarch, on QEMU's gdbstub) at
# flight_here, where gdb dumps the RAM (dump binary memory) from its start
# to the end of .bss; `nanoprof import` finds the control block in the
# image by its id and reads it as a capture:
# - a buffer that holds the whole run: every count exact, the threads
#   named;
# - a buffer the run wraps many times: said, and the newest calls (the
#   named threads', then last()) exact, the older fewer than were made;
# - an image without the hooks' write position (the buffer alone): one
#   line saying which addresses to dump, exit 1.
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
for tool in "$CC" "$QEMU" "$GDB"; do
    command -v "$tool" > /dev/null || { echo "FAIL: $tool is not installed (scripts/deps.sh installs it)"; exit 1; }
done
. "$SRC/tests/port/fw_build.sh"
fw="$SRC/tests/port/flight_fw.c $SRC/tests/target/check.c"

# sym DIR NAME - the address of DIR/fw.elf's symbol NAME, in hex
sym() {
    "${CC%gcc}nm" "$1/fw.elf" | awk -v s="$2" '$3 == s { print $1 }'
}

# dump BOARD DIR FROM TO - DIR/fw.elf run on QEMU's BOARD under gdb, which
# stops at flight_here and dumps the memory [FROM, TO) (gdb expressions)
# into DIR/ram.bin, then detaches (the firmware ends); 1 unless it passed
dump() {
    board=$1 dir=$2
    qemu_gdb "$dir" "$board"
    timeout 300 "$GDB" -nx -batch -ex 'set pagination off' -ex "file $dir/fw.elf" -ex "target remote $sock" \
        -ex 'break flight_here' -ex continue -ex "dump binary memory $dir/ram.bin $3 $4" -ex 'echo dumped\n' \
        -ex detach > "$dir/gdb.out" 2>&1
    grc=$?
    # (the firmware may end, and QEMU with it, before gdb has the answer
    # to its detach: gdb's status does not count once it has dumped)
    grep -qx dumped "$dir/gdb.out" && grc=0
    [ $grc = 0 ] || kill $qemu 2> /dev/null
    wait $qemu
    qrc=$?
    if [ $grc -ne 0 ] || [ $qrc -ne 0 ] || [ ! -s "$dir/ram.bin" ] || ! grep -aqx PASSED "$dir/out"; then
        say_fail "$(basename "$dir"): gdb exit $grc, firmware exit $qrc: $(tail -3 "$dir/gdb.out" | tr '\n' ' ')"
        grep -a '^FAIL ' "$dir/out" | sed 's/^/  /'
        return 1
    fi
    return 0
}

for board in mps2-an385:cortex-m3:mps2 mps2-an386:cortex-m4:mps2 microbit:cortex-m0:microbit; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    ld=${rest#*:}

    # the whole run in the buffer: every count exact
    dir=$TMP/$name-whole
    if ! fw_build "$dir" $cpu $ld -DRING_BYTES=4096 -DTOPS=10 $fw; then
        say_fail "$name: build"
        continue
    fi
    dump "$name" "$dir" 0x20000000 '&end' || continue
    block=$(printf '0x%08x' "0x$(sym "$dir" flight)")
    if ! "$NP" import "$dir/ram.bin" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"; then
        say_fail "$name: import: $(cat "$dir/import.err")"
        continue
    fi
    grep -q "^nanoprof import: a flight recorder's RAM (its block at $block): the newest calls, [0-9]* words of its ring of [0-9]*$" "$dir/import.err" &&
        grep -q "no END chunk (a flight recorder read while it ran)" "$dir/import.err" &&
        grep -q "^nanoprof import: 171 events of 3 threads, 0 lost, into " "$dir/import.err" ||
        say_fail "$name: import said: $(cat "$dir/import.err")"
    counts "$dir/trace" > "$dir/counts"
    printf 'last,1\nleaf,53\nmid,21\ntop,10\n' | cmp -s - "$dir/counts" || say_fail "$name: counts: $(cat "$dir/counts")"
    "$NP" tree "$dir/trace" > "$dir/tree" 2> /dev/null
    grep -q 'sensor' "$dir/tree" && grep -q 'logger' "$dir/tree" || say_fail "$name: thread names: $(cat "$dir/tree")"
    [ $fail = 0 ] && echo "ok: $name ($cpu): a flight recorder's whole run read from RAM, counts exact, threads named"

    # a buffer the run wraps: the newest calls whole
    dir=$TMP/$name-wrapped
    if ! fw_build "$dir" $cpu $ld -DRING_BYTES=2048 -DTOPS=500 $fw; then
        say_fail "$name: build (wrapped)"
        continue
    fi
    dump "$name" "$dir" 0x20000000 '&end' || continue
    if ! "$NP" import "$dir/ram.bin" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"; then
        say_fail "$name: import (wrapped): $(cat "$dir/import.err")"
        continue
    fi
    grep -q "words of its ring of [0-9]*, which wrapped: older calls were overwritten$" "$dir/import.err" ||
        say_fail "$name: import (wrapped) said: $(cat "$dir/import.err")"
    counts "$dir/trace" > "$dir/counts"
    leaf=$(sed -n 's/^leaf,//p' "$dir/counts")
    grep -qx 'last,1' "$dir/counts" && [ "${leaf:-0}" -gt 3 ] && [ "$leaf" -lt 2503 ] ||
        say_fail "$name: counts (wrapped): $(cat "$dir/counts")"
    # the named threads' calls, the newest: exact (ids: main 1, sensor 2, logger 3)
    [ "$(counts "$dir/trace" --tid=2 | tr '\n' ' ')" = "leaf,2 mid,1 " ] &&
        [ "$(counts "$dir/trace" --tid=3 | tr '\n' ' ')" = "leaf,1 " ] ||
        say_fail "$name: the threads' counts (wrapped): $(counts "$dir/trace" --tid=2,3 | tr '\n' ' ')"
    [ $fail = 0 ] && echo "ok: $name ($cpu): a wrapped flight recorder: said, its newest calls exact"
done

# the hooks' own path (the DWT clock: a Cortex-M4 under Unicorn with one,
# M4_UNICORN, m4_unicorn), the RAM dumped when the firmware ends: whole,
# and wrapped many times
[ -x "${M4_UNICORN:-}" ] || say_fail "M4_UNICORN: no m4_unicorn (tests/target/m4_unicorn.c) given"
# (wrapped: the runtime as libnanoprof-trace.a builds it, whose hooks try
# the ring's own path first)
for run in whole:10 wrapped:2000; do
    what=${run%%:*} tops=${run#*:}
    dir=$TMP/dwt-$what
    RT_TAG= RT_FLAGS=
    [ $what = wrapped ] && RT_TAG=-trace RT_FLAGS=-DNP_HOOKS_MECHANISMS=16
    if ! fw_build "$dir" cortex-m4 mps2 -DRING_BYTES=8192 -DTOPS=$tops $fw; then
        say_fail "dwt $what: build"
        continue
    fi
    size=$(($(printf '%d' "0x$(sym "$dir" end)") - 0x20000000))
    if ! M4_UNICORN_DUMP="$dir/ram.bin:$size" "$M4_UNICORN" "$dir/fw.elf" 1 > "$dir/out" 2>&1 ||
        ! grep -aqx PASSED "$dir/out"; then
        say_fail "dwt $what: under m4_unicorn: $(grep -a '^FAIL\|^m4_unicorn' "$dir/out")"
        continue
    fi
    if ! "$NP" import "$dir/ram.bin" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"; then
        say_fail "dwt $what: import: $(cat "$dir/import.err")"
        continue
    fi
    counts "$dir/trace" > "$dir/counts"
    if [ $what = whole ]; then
        grep -q "^nanoprof import: 171 events of 3 threads, 0 lost, into " "$dir/import.err" &&
            ! grep -q "wrapped" "$dir/import.err" || say_fail "dwt whole: import said: $(cat "$dir/import.err")"
        printf 'last,1\nleaf,53\nmid,21\ntop,10\n' | cmp -s - "$dir/counts" ||
            say_fail "dwt whole: counts: $(cat "$dir/counts")"
    else
        leaf=$(sed -n 's/^leaf,//p' "$dir/counts")
        grep -q "which wrapped: older calls were overwritten$" "$dir/import.err" &&
            grep -qx 'last,1' "$dir/counts" && [ "${leaf:-0}" -gt 3 ] && [ "$leaf" -lt 10003 ] ||
            say_fail "dwt wrapped: $(cat "$dir/import.err" "$dir/counts")"
        [ "$(counts "$dir/trace" --tid=2 | tr '\n' ' ')" = "leaf,2 mid,1 " ] &&
            [ "$(counts "$dir/trace" --tid=3 | tr '\n' ' ')" = "leaf,1 " ] ||
            say_fail "dwt wrapped: the threads' counts: $(counts "$dir/trace" --tid=2,3 | tr '\n' ' ')"
    fi
    [ $fail = 0 ] && echo "ok: the hooks' own path (DWT), $what: read from RAM, $(tr '\n' ' ' < "$dir/counts")"
done

# an image of the buffer alone: the hooks' write position is not in it
dir=$TMP/mps2-an385-buffer
if fw_build "$dir" cortex-m3 mps2 -DRING_BYTES=4096 -DTOPS=10 $fw && dump mps2-an385 "$dir" '&flight' '&flight[512]'; then
    "$NP" import "$dir/ram.bin" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"
    rc=$?
    [ $rc = 1 ] && [ "$(wc -l < "$dir/import.err")" = 1 ] &&
        grep -q "does not hold the hooks' write position; dump the RAM from 0x[0-9a-f]* to 0x[0-9a-f]* at least$" "$dir/import.err" ||
        say_fail "buffer alone: exit $rc: $(cat "$dir/import.err")"
    [ $fail = 0 ] && echo "ok: an image without the write position: $(cat "$dir/import.err")"
else
    say_fail "buffer alone: build or run"
fi
exit $fail
