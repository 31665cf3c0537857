#!/bin/sh
# trace_import.sh CC QEMU SRC_DIR NANOPROF FILE... - the call trace recorded
# on a target and imported on the host (nanoprof/trace.h, `nanoprof
# import`). trace_fw.c, built with the core and the port (FILE..., relative
# to SRC_DIR/src), runs on mps2-an385 (M3), mps2-an386 (M4) and microbit
# (M0, 16 KiB of RAM), its trace mixed into semihosting's stdout with its
# own lines; the capture is imported and `nanoprof report` must give the
# exact call counts, the same that function cost counted on the target,
# and the same rows when it reads the capture as it is (--elf).
# Then the UART example (examples/cortex_m/uart) on both mps2 boards, its
# capture from QEMU's serial port; and bad input: a cut capture (imported
# up to the cut, and said), a damaged chunk (skipped, said, the rest read
# exactly: import resynchronises on the next chunk), random bits flipped
# (each said, or no change), the wrong ELF, no trace, a missing --elf: one
# line on stderr, exit 1 (2 for usage), nothing written. Every stream's
# opening in a capture is, byte for byte, what the host's encoder of those
# chunks makes for the firmware (EXPECT_OPENING, tests/expect_opening.c).
set -u
CC=$1
QEMU=$2
SRC=$3
NP=$4
shift 4
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
FW_DEFINES="-DNP_BLOCKS_SLOTS=64 -DNP_BINS_MAX=16"
. "$SRC/tests/port/fw_build.sh"

# calls NAME REPORT - the Calls column of NAME's row in a flat report
calls() {
    awk -v f="$1" '$NF == f { print $(NF-7) }' "$2"
}

# check_report DIR NAME=N... - `nanoprof report` of DIR/trace gives these
# counts
check_report() {
    d=$1
    shift
    if ! "$NP" report "$d/trace" > "$d/report" 2> "$d/report.err"; then
        say_fail "$d: report: $(cat "$d/report.err")"
        return
    fi
    for kv in "$@"; do
        got=$(calls "${kv%=*}" "$d/report")
        [ "$got" = "${kv#*=}" ] || say_fail "$(basename "$d"): ${kv%=*}: $got calls, want ${kv#*=}"
    done
}

FILES="$*"
# each board twice: the trace as EVENTS chunks (np_trace_init), and as raw
# words in a ring (np_trace_init_ring, the firmware's calls renamed), which
# import decodes into the same events; and the ring's hooks on their own
# path, which needs the DWT cycle counter QEMU's boards lack: on a
# Cortex-M4 under Unicorn with one (m4_unicorn, $M4_UNICORN), the runtime
# as libnanoprof-trace.a builds it; and that again with an instrumented
# interrupt every 211 cycles, whose records come between the hooks' and
# inside them (trace_fw.c's TICK_IRQ): the interrupts' calls and the
# events lost, both from the firmware's counts, make up the import's
# figure; and the firmware built with -pg alone, the runtime with
# NP_PG_EXITS (the exits from its trampoline): the same counts.
[ -x "${M4_UNICORN:-}" ] || say_fail "M4_UNICORN: no m4_unicorn (tests/target/m4_unicorn.c) given"
[ -x "${EXPECT_OPENING:-}" ] || say_fail "EXPECT_OPENING: no expect_opening (tests/expect_opening.c) given"
for mode in chunks ring dwt dwt-irq pg; do
for board in mps2-an385:cortex-m3:mps2 mps2-an386:cortex-m4:mps2 microbit:cortex-m0:microbit; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    ld=${rest#*:}
    dir=$TMP/$name
    flag=
    RT_TAG= RT_FLAGS=
    FW_INSTR=
    case $mode in
    ring)
        dir=$TMP/$name-ring
        flag=-Dnp_trace_init=np_trace_init_ring ;;
    pg)
        # built with -pg alone, the exits from the runtime's trampoline
        dir=$TMP/$name-pg
        RT_TAG=-pg RT_FLAGS=-DNP_PG_EXITS=16 FW_INSTR=-pg ;;
    dwt | dwt-irq)
        [ $name = mps2-an386 ] || continue
        dir=$TMP/$name-$mode
        # the runtime as libnanoprof-trace.a builds it: its hooks try the
        # ring's own path first, before the thread's flags
        RT_TAG=-trace RT_FLAGS=-DNP_HOOKS_MECHANISMS=16
        flag="-Dnp_trace_init=np_trace_init_ring -DTRACE_BUF=8192 -DTRACE_ALONE"
        if [ $mode = dwt-irq ]; then
            RT_TAG=-trace-irq RT_FLAGS="$RT_FLAGS -DNP_CM_SYSTICK_HANDLER=0"
            flag="$flag -DTICK_IRQ=211"
        fi ;;
    esac
    # far() 1.5 MiB away where the board has the room (trace_fw.c)
    far=
    [ $ld = mps2 ] && far=-Wl,--section-start=.far_text=0x180000
    # shellcheck disable=SC2086
    if ! FW_LDFLAGS=$far fw_build "$dir" $cpu $ld $flag "$SRC/tests/port/trace_fw.c" "$SRC/tests/target/check.c"; then
        say_fail "$name: build"
        continue
    fi
    if [ $mode = dwt ] || [ $mode = dwt-irq ]; then
        if ! "$M4_UNICORN" "$dir/fw.elf" 1 > "$dir/capture" 2>&1 || ! grep -aqx PASSED "$dir/capture"; then
            say_fail "$name: under m4_unicorn: $(grep -a '^FAIL' "$dir/capture")"
            continue
        fi
    else
        fw_run "$dir" "$name" "$dir/capture" || continue
    fi
    if ! "$NP" import "$dir/capture" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"; then
        say_fail "$name: import: $(cat "$dir/import.err")"
        continue
    fi
    # each stream's opening (header, INFO, MODULE): the bytes the host's
    # encoder makes for this firmware
    "$EXPECT_OPENING" "$dir/fw.elf" > "$dir/opening.want"
    nopen=0
    for at in $(grep -abo NPTRACE "$dir/capture" | cut -d: -f1); do
        nopen=$((nopen + 1))
        tail -c +$((at + 1)) "$dir/capture" | head -c "$(wc -c < "$dir/opening.want")" > "$dir/opening.got"
        cmp -s "$dir/opening.want" "$dir/opening.got" ||
            say_fail "$name: the opening at $at differs from the host encoder's: $(cmp "$dir/opening.want" "$dir/opening.got")"
    done
    [ $nopen -gt 0 ] || say_fail "$name: no stream opening in the capture"
    # the interrupts' calls (2 events each) and the events lost, which
    # are theirs, by the firmware's counts: every event is in the trace
    # or counted lost
    ticks=0 lost=0 nfn=6 spins=0
    if [ $mode = dwt ]; then
        # spin()'s durations in the trace: the firmware's own of its body,
        # and the hooks' cycles more (fewer than 1000; a time read with
        # the wrong high bits of the clock is 4096 or more out)
        spun=$(grep -a '^spun ' "$dir/capture" | cut -d' ' -f2-)
        traced=$("$NP" replay "$dir/trace" 2> /dev/null | awk '$NF == "spin" { print $2 }' | tr '\n' ' ')
        echo "$spun" | awk -v t="$traced" '{ n = split(t, d, " "); ok = n == 4 && NF == 4
                for (i = 1; i <= NF; i++) ok = ok && d[i] - $i >= 0 && d[i] - $i < 1000
                exit !ok }' || say_fail "$name: spin()'s durations: traced $traced, timed by the firmware $spun"
        spins=4 nfn=7
    fi
    if [ $mode = dwt-irq ]; then
        line=$(grep -ao 'ticks [0-9]* lost [0-9]*' "$dir/capture")
        ticks=$(echo "$line" | cut -d' ' -f2) lost=$(echo "$line" | cut -d' ' -f4)
        [ -n "$line" ] && [ "$lost" -gt 0 ] || say_fail "$name: no interrupts' count, or none lost: $line"
        nfn=7
    fi
    # GCC makes down()'s recursion a loop under -pg: one call, not 7
    ndown=7 fewer=0
    [ $mode = pg ] && ndown=1 fewer=6
    want="nanoprof import: $((476 + 2 * ticks + 2 * spins - 2 * fewer - lost)) events of 3 threads, $lost lost, into $dir/trace"
    [ "$(cat "$dir/import.err")" = "$want" ] || say_fail "$name: import said: $(cat "$dir/import.err"), want $want"
    check_report "$dir" leaf=217 mid=5 top=2 down=$ndown phase=3 far=3
    got=0 direct_err=
    if [ $mode = dwt-irq ]; then
        # an interrupt's call is lost whole, but for one whose exit alone
        # came while the trace was busy
        got=$(calls tick "$dir/report")
        [ "${got:-0}" -ge $((ticks - lost)) ] && [ "${got:-0}" -le $((ticks - lost / 2)) ] ||
            say_fail "$name: tick: $got calls of $ticks interrupts, $lost events lost"
        direct_err="nanoprof report: warning: $lost events lost"
    fi
    # the same counts as function cost's on the target
    for fn in leaf mid top down phase far; do
        case $mode in dwt*) break ;; esac # (no function cost beside the trace)
        target=$(grep -a "^cost $fn " "$dir/capture" | cut -d' ' -f3)
        [ "$target" = "$(calls $fn "$dir/report")" ] || say_fail "$name: $fn: target counted $target"
    done
    head -1 "$dir/report" | grep -q " 1 process, 3 threads, $((237 + got + spins - fewer)) calls of $nfn functions, cycles\$" ||
        say_fail "$name: report header: $(head -1 "$dir/report")"
    # a view reads the capture as it is, given --elf: the same rows
    if "$NP" report "$dir/capture" --elf "$dir/fw.elf" > "$dir/direct" 2> "$dir/direct.err"; then
        tail -n +2 "$dir/report" > "$dir/report.rows"
        tail -n +2 "$dir/direct" > "$dir/direct.rows"
        [ "$(cat "$dir/direct.err")" = "$direct_err" ] && cmp -s "$dir/report.rows" "$dir/direct.rows" ||
            say_fail "$name: report --elf differs: $(cat "$dir/direct.err" "$dir/direct")"
    else
        say_fail "$name: report --elf: $(cat "$dir/direct.err")"
    fi
    [ $fail = 0 ] && echo "ok: $name ($cpu), $mode: trace imported, counts exact"
done
done
RT_TAG= RT_FLAGS= FW_INSTR= # (the default runtime from here on)

# ---- the UART example, on QEMU's serial port ------------------------------------
for board in mps2-an385:cortex-m3 mps2-an386:cortex-m4; do
    name=${board%%:*}
    cpu=${board#*:}
    dir=$TMP/uart-$name
    ex=$SRC/examples/cortex_m/uart
    if ! fw_build "$dir" $cpu mps2 "$ex/main.c" "$ex/uart.c"; then
        say_fail "uart $name: build"
        continue
    fi
    timeout 120 "$QEMU" -M "$name" -icount shift=0 -nographic -monitor none -serial "file:$dir/capture" \
        -semihosting-config enable=on,target=native -kernel "$dir/fw.elf" > "$dir/out" 2>&1
    rc=$?
    grep -aq 'uart example: done' "$dir/capture" || say_fail "uart $name: exit status $rc, no end message"
    if ! "$NP" import "$dir/capture" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err"; then
        say_fail "uart $name: import: $(cat "$dir/import.err")"
        continue
    fi
    check_report "$dir" read_sensor=64 filter=64 check_limits=8
    [ $fail = 0 ] && echo "ok: uart $name ($cpu): trace imported from the UART, counts exact"
done

# ---- a chunk the writer refused: lost, and said ---------------------------------------
dir=$TMP/lossy
if fw_build "$dir" cortex-m3 mps2 -DLOSSY "$SRC/tests/port/trace_fw.c" "$SRC/tests/target/check.c"; then
    timeout 120 "$QEMU" -M mps2-an385 -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$dir/fw.elf" > "$dir/capture" 2>&1
    rc=$?
    lost=$(grep -a '^lost ' "$dir/capture" | cut -d' ' -f2)
    refused=$(grep -a '^lost ' "$dir/capture" | cut -d' ' -f4)
    if [ $rc -ne 0 ] || [ -z "$lost" ]; then
        say_fail "lossy: the firmware's checks, exit status $rc"
        grep -a '^ok \|^FAIL ' "$dir/capture" | sed 's/^/  /'
    elif ! "$NP" import "$dir/capture" --elf "$dir/fw.elf" -o "$dir/trace" 2> "$dir/import.err" ||
        ! grep -q " $lost lost, into" "$dir/import.err"; then
        say_fail "lossy: import: $(cat "$dir/import.err")"
    else
        "$NP" report --strict "$dir/trace" > "$dir/report" 2> "$dir/report.err"
        rc=$?
        # the refused chunk is the first of the 200 calls' loop (the trace
        # was flushed before it): it starts with an entry of leaf, and the
        # calls it holds an entry of are missing (one whose exit is in the
        # next chunk too), and the one made while the trace was in use; the
        # rest exact. The view says what was lost, --strict exits 3.
        leaf=$(calls leaf "$dir/report")
        if [ $rc -ne 3 ] || ! grep -q "$lost events" "$dir/report.err" || [ "$leaf" != $((217 - (refused + 1) / 2)) ] ||
            [ "$(calls top "$dir/report")" != 2 ] || [ "$(calls down "$dir/report")" != 7 ]; then
            say_fail "lossy: report --strict exit $rc: $(cat "$dir/report.err" "$dir/report")"
        else
            echo "ok: a refused chunk ($refused events) and a switch inside the writer: $lost events lost, said"
        fi
    fi
else
    say_fail "lossy: build"
fi

# ---- bad input ------------------------------------------------------------------------
good=$TMP/mps2-an385
bad=$TMP/bad
mkdir -p "$bad"
# refused WHAT WANT SAYS ARGS... - `nanoprof import ARGS` writes one line
# holding SAYS on stderr, exits WANT, and writes no directory
refused() {
    what=$1 want=$2 says=$3
    shift 3
    "$NP" import "$@" -o "$bad/out" 2> "$bad/err"
    rc=$?
    if [ $rc -ne $want ] || [ "$(wc -l < "$bad/err")" -ne 1 ] || [ -e "$bad/out" ] ||
        ! grep -q "$says" "$bad/err"; then
        say_fail "$what: exit status $rc (want $want), stderr: $(cat "$bad/err")"
    else
        echo "ok: $what: $(cat "$bad/err")"
    fi
}
if [ -f "$good/capture" ]; then
    # the first chunk after "ok trace flush": 200 calls of leaf fill chunks
    # of about 500 bytes there, with nothing between them
    at=$(grep -abo 'ok trace flush' "$good/capture" | head -1 | cut -d: -f1)
    chunk=$((at + 15))
    # cut 100 bytes into that chunk: the chunks before it are read
    head -c $((chunk + 100)) "$good/capture" > "$bad/cut"
    if "$NP" import "$bad/cut" --elf "$good/fw.elf" -o "$bad/cut.trace" 2> "$bad/cut.err"; then
        grep -q "^nanoprof import: the capture is cut: it ends 100 bytes into the [0-9]*-byte chunk at offset $chunk," \
            "$bad/cut.err" || say_fail "cut capture: said: $(cat "$bad/cut.err")"
        "$NP" report "$bad/cut.trace" > "$bad/cut.report" 2>&1 || say_fail "cut capture: report fails"
        # what is before the cut: top twice (leaf 10, mid 4), 0 down
        [ "$(calls top "$bad/cut.report")" = 2 ] && [ "$(calls leaf "$bad/cut.report")" = 10 ] &&
            [ -z "$(calls down "$bad/cut.report")" ] || say_fail "cut capture: $(cat "$bad/cut.report")"
        grep -q 'no END' "$bad/cut.report" || say_fail "cut capture: the report does not say it is cut"
        [ $fail = 0 ] && echo "ok: cut capture: imported up to the cut"
    else
        say_fail "cut capture: $(cat "$bad/cut.err")"
    fi
    # damaged: one bit of that chunk (its event count; its length): the
    # chunk's checksum fails, import skips it and says so, goes on with
    # the next chunk; the report of the trace says it too, --strict exits
    # 3, and the counts are exact but for the calls of that chunk
    u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
    events=$(u32 "$good/capture" $((chunk + 24)))
    len=$(u32 "$good/capture" $((chunk + 4)))
    # the bytes skipped: the chunk's; with its length made a few bytes
    # longer (its lowest clear bit of 1 to 8 set), as many as it claims:
    # it then ends in the firmware's text after the chunk, and no other
    # length shows
    for b in 1 2 4 8; do [ $((len & b)) = 0 ] && break; done
    for spot in count:$((chunk + 25)):$((len + 12)):1 length:$((chunk + 4)):$(((len | b) + 12)):$b; do
        what=${spot%%:*} rest=${spot#*:}
        at=${rest%%:*} rest=${rest#*:}
        size=${rest%%:*} bit=${rest#*:}
        cp "$good/capture" "$bad/$what"
        byte=$(od -An -tu1 -j "$at" -N1 "$bad/$what" | tr -d ' ')
        printf "\\$(printf %o $((byte ^ bit)))" | dd of="$bad/$what" bs=1 seek="$at" conv=notrunc 2> /dev/null
        rm -rf "$bad/$what.trace"
        if ! "$NP" import "$bad/$what" --elf "$good/fw.elf" -o "$bad/$what.trace" 2> "$bad/$what.err"; then
            say_fail "damaged $what: import: $(cat "$bad/$what.err")"
            continue
        fi
        head -1 "$bad/$what.err" | grep -qx "nanoprof import: warning: $bad/$what: offset $chunk: damaged EVENTS chunk (checksum mismatch): skipped $size bytes" &&
            tail -1 "$bad/$what.err" | grep -q " 1 damaged chunk skipped ($size bytes), into " ||
            say_fail "damaged $what: import said: $(cat "$bad/$what.err")"
        "$NP" report --strict "$bad/$what.trace" > "$bad/$what.report" 2> "$bad/$what.rerr"
        rc=$?
        [ $rc = 3 ] && grep -q "damaged EVENTS chunk of thread 1 " "$bad/$what.rerr" &&
            grep -q "warning: 1 damaged chunk skipped ($size bytes)" "$bad/$what.rerr" &&
            [ "$(calls leaf "$bad/$what.report")" = $((217 - (events + 1) / 2)) ] &&
            [ "$(calls top "$bad/$what.report")" = 2 ] &&
            [ "$(calls mid "$bad/$what.report")" = 5 ] && [ "$(calls down "$bad/$what.report")" = 7 ] &&
            [ "$(calls phase "$bad/$what.report")" = 3 ] ||
            say_fail "damaged $what: report --strict exit $rc: $(cat "$bad/$what.rerr" "$bad/$what.report")"
    done
    [ $fail = 0 ] && echo "ok: a damaged chunk ($events events) in a capture: skipped, said, the rest exact"
    # a bit flipped anywhere in the capture, 200 times (seeded, the seed
    # said), in the EVENTS chunks' capture and in the RING chunks' one: the
    # report read from it with --elf is the undamaged one at exit 0 with
    # nothing said, or the status is not 0 and a line says why
    seed=${NP_BITFLIP_SEED:-$(date +%s)}
    for fg in "$good" "$TMP/mps2-an385-ring"; do
        cp "$fg/capture" "$bad/flip" # its name is in the report's title
        "$NP" report --strict "$bad/flip" --elf "$fg/fw.elf" > "$bad/flip.good" 2> /dev/null
        n=$(wc -c < "$fg/capture")
        same=0 said=0
        for bit in $(awk -v s="$seed" -v n="$n" 'BEGIN { srand(s); for (i = 0; i < 200; i++) printf "%d ", int(rand() * 8 * n) }'); do
            cp "$fg/capture" "$bad/flip"
            at=$((bit / 8))
            byte=$(od -An -tu1 -j "$at" -N1 "$bad/flip" | tr -d ' ')
            printf "\\$(printf %o $((byte ^ (1 << (bit % 8)))))" | dd of="$bad/flip" bs=1 seek="$at" conv=notrunc 2> /dev/null
            "$NP" report --strict "$bad/flip" --elf "$fg/fw.elf" > "$bad/flip.out" 2> "$bad/flip.err"
            rc=$?
            if [ $rc = 0 ] && [ ! -s "$bad/flip.err" ] && cmp -s "$bad/flip.out" "$bad/flip.good"; then
                same=$((same + 1))
            elif [ $rc != 0 ] && [ -s "$bad/flip.err" ] && [ "$(grep -vc '^nanoprof report: ' "$bad/flip.err")" = 0 ]; then
                said=$((said + 1))
            else
                say_fail "capture bit $bit flipped (seed $seed): report --strict exit $rc: $(cat "$bad/flip.err")"
                break
            fi
        done
        [ $fail = 0 ] && echo "ok: 200 bits flipped in the $(basename "$fg") capture (seed $seed): $said said, $same the same report at exit 0"
    done
    # the M4 firmware's ELF for the M3's capture
    refused "wrong ELF" 1 "is not the firmware that recorded the trace" "$good/capture" \
        --elf "$TMP/mps2-an386/fw.elf"
    grep -a '^ok \|^cost ' "$good/capture" > "$bad/text"
    refused "no trace" 1 "no trace in it" "$bad/text" --elf "$good/fw.elf"
    refused "no --elf" 2 "required" "$good/capture"
fi
exit $fail
