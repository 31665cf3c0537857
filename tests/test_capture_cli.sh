#!/bin/sh
# test_capture_cli.sh NANOPROF GEN_CAPTURE - a target's capture read by
# `nanoprof import` and by a view given --elf (the capture source,
# analyze/source_capture.h), on captures tests/gen_capture writes with the
# runtime's encoder (its own ELF is the firmware's): a whole one (every
# event, the same report both ways), then bad input, each said in one line
# naming what and where, nothing before the damage lost: a cut capture, a
# damaged chunk, a ring that wrapped (over the trace's start; its older
# chunks after its newer), the wrong ELF, a record of an unknown kind, no
# END, no trace, a header cut short.
set -u
np=$1
gen=$2
np_cmd=import
. "$(dirname "$0")/cli_test.sh"
need od dd head tail awk

# calls REPORT: the calls of a flat report's header line
calls() { sed -n '1s/.* \([0-9]*\) calls of .*/\1/p' "$1"; }
# map_at N: field F of line N of the chunk map (1 offset, 2 end, 3 events so far)
map_at() { sed -n "${1}p" "$tmp/map" | cut -d' ' -f"$2"; }

# ---- a whole capture ----------------------------------------------------------------
"$gen" --map "$tmp/map" "$tmp/cap" 300000 "$gen" >"$tmp/gen" || { bad "gen_capture"; finish; }
events=$(sed -n 's/^events \([0-9]*\) calls \([0-9]*\) .*/\1/p' "$tmp/gen")
ncalls=$(sed -n 's/^events \([0-9]*\) calls \([0-9]*\) .*/\2/p' "$tmp/gen")
run "$tmp/cap" --elf "$gen" -o "$tmp/t"
same "whole: import says what it wrote" "$tmp/err" "nanoprof import: $events events of 3 threads, 0 lost, into $tmp/t"
"$np" report "$tmp/t" >"$tmp/r.trace" 2>"$tmp/r.err"
[ "$(calls "$tmp/r.trace")" = "$ncalls" ] && [ ! -s "$tmp/r.err" ] && ok "whole: every call imported ($ncalls)" ||
    { bad "whole: report of the import:"; cat "$tmp/r.err" "$tmp/r.trace" | head -5; }
"$np" report "$tmp/cap" --elf "$gen" >"$tmp/r.cap" 2>"$tmp/r.err"
rc=$?
tail -n +2 "$tmp/r.trace" >"$tmp/rows.trace"
tail -n +2 "$tmp/r.cap" >"$tmp/rows.cap"
[ $rc = 0 ] && [ ! -s "$tmp/r.err" ] && same_files "whole: report --elf reads the capture as import writes it" \
    "$tmp/rows.trace" "$tmp/rows.cap" || { bad "whole: report --elf exit $rc"; cat "$tmp/r.err"; }

# ---- cut: the capture ends inside the 30th EVENTS chunk -----------------------------------
at=$(map_at 30 1)
head -c $((at + 100)) "$tmp/cap" >"$tmp/cut"
run "$tmp/cut" --elf "$gen" -o "$tmp/t.cut"
want=$(map_at 29 3)
if [ $rc = 0 ] && head -n 1 "$tmp/err" | grep -q "^nanoprof import: $want events of 3 threads, 0 lost, into " &&
    tail -n 1 "$tmp/err" | grep -q "^nanoprof import: the capture is cut: it ends 100 bytes into the [0-9]*-byte chunk at offset $at, with no END"; then
    ok "cut: imported up to the last whole chunk ($want events), the cut said with its offset"
else
    bad "cut: exit $rc:"; cat "$tmp/err"
fi
"$np" report --strict "$tmp/cut" --elf "$gen" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q "^nanoprof report: warning: $tmp/cut: the capture is cut: .* at offset $at" "$tmp/err" &&
    grep -q "trace file cut short" "$tmp/err" && ok "cut: report --elf says it, --strict exits 3" ||
    { bad "cut: report --elf --strict exit $rc:"; cat "$tmp/err"; }

# ---- damaged: a byte of the 40th EVENTS chunk's records -------------------------------------
at=$(map_at 40 1)
end=$(map_at 40 2)
lost=$(($(map_at 40 3) - $(map_at 39 3)))
cp "$tmp/cap" "$tmp/dmg"
# (the byte's bits flipped: the capture's bytes follow gen_capture's own
# build, so no fixed value is sure to differ from it)
byte=$(od -A n -t u1 -j $((at + 60)) -N 1 "$tmp/cap" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$tmp/dmg" bs=1 seek=$((at + 60)) conv=notrunc 2>/dev/null
run "$tmp/dmg" --elf "$gen" -o "$tmp/t.dmg"
if [ $rc = 0 ] && [ "$(wc -l <"$tmp/err")" = 2 ] &&
    head -n 1 "$tmp/err" | grep -qx "nanoprof import: warning: $tmp/dmg: offset $at: damaged EVENTS chunk (checksum mismatch): skipped $((end - at)) bytes" &&
    tail -n 1 "$tmp/err" | grep -qx "nanoprof import: $((events - lost)) events of 3 threads, 0 lost, 1 damaged chunk skipped ($((end - at)) bytes), into $tmp/t.dmg"; then
    ok "damaged: the chunk skipped and said with its offset, every other event imported"
else
    bad "damaged: exit $rc:"; cat "$tmp/err"
fi
for what in "$tmp/t.dmg" "$tmp/dmg --elf $gen"; do
    # shellcheck disable=SC2086
    "$np" report --strict $what >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 3 ] && grep -q "damaged EVENTS chunk" "$tmp/err" &&
        grep -q "warning: 1 damaged chunk skipped ($((end - at)) bytes)" "$tmp/err" &&
        ok "damaged: report --strict $(basename "${what%% *}") says it, exits 3" ||
        { bad "damaged: report --strict $what: exit $rc:"; cat "$tmp/err"; }
done

# ---- a ring that wrapped: its bytes from the 5th EVENTS chunk on, no header ------------------
at=$(map_at 5 1)
tail -c +$((at + 1)) "$tmp/cap" >"$tmp/ring"
run "$tmp/ring" --elf "$gen" -o "$tmp/t.ring"
status "ring wrapped: one line, exit 1" 1 "$tmp/ring: no NPTRACE header, but a whole trace chunk at offset 0: the capture lost the trace's start"
[ -e "$tmp/t.ring" ] && bad "ring wrapped: a directory was written" || ok "ring wrapped: nothing written"
np_cmd=report
run "$tmp/ring" --elf "$gen"
np_cmd=import
status "ring wrapped: report --elf, one line, exit 1" 1 "no NPTRACE header, but a whole trace chunk"

# a ring that wrapped with its start kept: the chunks from the 60th on,
# then the older ones from the 1st (the header, INFO, MODULE and the
# first THREAD before them). Without END: read up to where a thread's time
# goes back, said there, exit 1; with END in the middle: read up to END,
# the chunks after it said
for end in no-end end; do
    opt=$([ $end = end ] || echo --no-end)
    # shellcheck disable=SC2086
    "$gen" $opt --map "$tmp/map.r" "$tmp/ring.src" 100000 "$gen" >/dev/null
    first=$(sed -n 1p "$tmp/map.r" | cut -d' ' -f1)
    mid=$(sed -n 60p "$tmp/map.r" | cut -d' ' -f1)
    before=$(sed -n 59p "$tmp/map.r" | cut -d' ' -f3)
    { head -c "$first" "$tmp/ring.src"; tail -c +$((mid + 1)) "$tmp/ring.src"
      head -c "$mid" "$tmp/ring.src" | tail -c +$((first + 1)); } >"$tmp/ring.$end"
    run "$tmp/ring.$end" --elf "$gen" -o "$tmp/t.ring.$end"
    n=$(($(sed -n '$p' "$tmp/map.r" | cut -d' ' -f3) - before))
    if [ $end = no-end ]; then
        # the first record of the oldest chunk: after its chunk header (12
        # bytes) and EVENTS fields (21)
        at=$(($(wc -c <"$tmp/ring.src") - mid + first + 33))
        if [ $rc = 1 ] && head -n 1 "$tmp/err" | grep -q "^nanoprof import: $tmp/ring.no-end: offset $at: events of thread 1 at [0-9]*, before its events so far (to [0-9]*): the chunks are out of order from here (a ring that wrapped?)$" &&
            grep -qx "nanoprof import: $n events of 3 threads, 0 lost, into $tmp/t.ring.no-end" "$tmp/err"; then
            ok "ring wrapped, no END: read up to where time goes back ($n events), said with its offset, exit 1"
        else
            bad "ring wrapped, no END: exit $rc:"; cat "$tmp/err"
        fi
    else
        if [ $rc = 0 ] && grep -qx "nanoprof import: $n events of 1 thread, 0 lost, into $tmp/t.ring.end" "$tmp/err" &&
            grep -q "^nanoprof import: whole chunks follow the trace's END, from offset [0-9]*: not read (a ring that wrapped" "$tmp/err"; then
            ok "ring wrapped, END in the middle: read to END ($n events), the chunks after it said"
        else
            bad "ring wrapped, END in the middle: exit $rc:"; cat "$tmp/err"
        fi
    fi
done

# ---- the wrong ELF: nanoprof's own ---------------------------------------------------------
run "$tmp/cap" --elf "$np" -o "$tmp/t.elf"
status "wrong ELF: one line, exit 1" 1 "is not the firmware that recorded the trace: its build-id is "
[ -e "$tmp/t.elf" ] && bad "wrong ELF: a directory was written" || ok "wrong ELF: nothing written"

# ---- a record cut short (VALUES, nothing after its kind), the 20th chunk's last, its checksum good ------------------
"$gen" --unknown-kind 20 --map "$tmp/map.u" "$tmp/kind" 300000 "$gen" >"$tmp/gen.u"
before=$(sed -n 's/.* before \([0-9]*\)$/\1/p' "$tmp/gen.u")
bad_at=$(($(sed -n 20p "$tmp/map.u" | cut -d' ' -f2) - 1))
run "$tmp/kind" --elf "$gen" -o "$tmp/t.kind"
if [ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 2 ] &&
    head -n 1 "$tmp/err" | grep -q "^nanoprof import: $tmp/kind: offset $bad_at: corrupt varint in VALUES event [0-9]* of " &&
    tail -n 1 "$tmp/err" | grep -qx "nanoprof import: $before events of 3 threads, 0 lost, into $tmp/t.kind"; then
    ok "unknown kind: said with its offset, exit 1, the $before events before it imported"
else
    bad "unknown kind: exit $rc:"; cat "$tmp/err"
fi
"$np" report --strict "$tmp/t.kind" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q "no END chunk" "$tmp/err" && ok "unknown kind: the imported trace says it is cut short there" ||
    { bad "unknown kind: report --strict of the import: exit $rc:"; cat "$tmp/err"; }
np_cmd=report
run "$tmp/kind" --elf "$gen"
np_cmd=import
[ $rc = 1 ] && grep -q "^nanoprof report: $tmp/kind: offset $bad_at: corrupt varint in VALUES event" "$tmp/err" &&
    [ -s "$tmp/out" ] && ok "unknown kind: report --elf shows what came before, says it, exit 1" ||
    { bad "unknown kind: report --elf exit $rc:"; cat "$tmp/err"; }

# ---- no END: the firmware did not call np_trace_stop ----------------------------------------
"$gen" --no-end "$tmp/noend" 100000 "$gen" >"$tmp/gen.n"
n=$(sed -n 's/^events \([0-9]*\) .*/\1/p' "$tmp/gen.n")
run "$tmp/noend" --elf "$gen" -o "$tmp/t.noend"
same "no END: imported, said" "$tmp/err" "nanoprof import: $n events of 3 threads, 0 lost, into $tmp/t.noend
nanoprof import: the trace has no END chunk (the firmware did not call np_trace_stop): its lost events are not known"
"$np" report --strict "$tmp/noend" --elf "$gen" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q "warning: $tmp/noend: the trace has no END chunk" "$tmp/err" &&
    ok "no END: report --elf says it, --strict exits 3" || { bad "no END: report exit $rc:"; cat "$tmp/err"; }

# ---- no trace; a header cut short -------------------------------------------------------------
printf 'boot\nok 1\n' >"$tmp/text"
run "$tmp/text" --elf "$gen" -o "$tmp/t.text"
status "no trace: one line, exit 1" 1 "$tmp/text: no trace in it (no NPTRACE header"
head -c $((18 + 10)) "$tmp/cap" >"$tmp/head"
run "$tmp/head" --elf "$gen" -o "$tmp/t.head"
status "header cut: one line, exit 1" 1 "$tmp/head: the capture ends inside the trace's header"
[ -e "$tmp/t.text" ] || [ -e "$tmp/t.head" ] && bad "no trace: a directory was written" || ok "no trace: nothing written"
finish
