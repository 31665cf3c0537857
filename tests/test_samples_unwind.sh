#!/bin/sh
# test_samples_unwind.sh NANOPROF SAMPLE_PROG_NOFP - the unwinders on code
# built without frame pointers (-O2 -fomit-frame-pointer): sample_prog in
# mode "chain" burns some 600 ms of CPU in fdeep, called by main through
# chain_outer, chain_middle and chain_inner, and prints what it measured.
# `--unwind=dwarf` (libunwind, from the call-frame information) finds that
# whole chain above fdeep in nearly every sample; the default
# frame-pointer walk cannot (shown, not required). The timeline from the
# samples is bounded by what the program measured. The SAMPLING chunk says
# which unwinder took the samples.
set -u
np=$1
prog=$2
np_cmd=dump
. "$(dirname "$0")/cli_test.sh"
need jq

chain='main;chain_outer;chain_middle;chain_inner;fdeep'
# share PATH: the percentage of fdeep's estimated time whose stack has the
# whole chain above it
share() {
    "$np" dump --format=folded "$1" 2>/dev/null | awk -v chain="$chain" '
        { v = $NF; if (index($0, ";fdeep") || $0 ~ /^fdeep/) { all += v; if (index($0, chain)) whole += v } }
        END { if (all > 0) printf "%d", 100 * whole / all; else print "none" }'
}

for how in dwarf fp; do
    rm -rf "$tmp/$how"
    if ! "$np" record --sample=997 --unwind=$how -o "$tmp/$how" -- "$prog" chain >"$tmp/$how.out" 2>"$tmp/rec.err"; then
        bad "record --unwind=$how"; cat "$tmp/rec.err"; continue
    fi
    grep -q 'exited with status 0' "$tmp/rec.err" && [ "$(wc -l <"$tmp/rec.err")" = 1 ] &&
        ok "record --unwind=$how: one line on stderr" || { bad "record --unwind=$how: stderr"; cat "$tmp/rec.err"; }
done

s=$(share "$tmp/dwarf")
echo "dwarf: $s% of fdeep's samples have the whole chain above it"
case $s in
    none) bad "dwarf: no samples in fdeep" ;;
    *) [ "$s" -ge 90 ] && ok "dwarf: the whole chain in $s% of fdeep's samples" ||
        { bad "dwarf: the whole chain in only $s%"; "$np" dump --format=folded "$tmp/dwarf"; } ;;
esac
echo "fp: $(share "$tmp/fp")% (the frame-pointer walk, on code without frame pointers)"

# the timeline from the samples: B and E balance, and fdeep's calls (each
# from the start of its first sample's period to its last sample, cut where
# the thread did not run) add up to no less than the CPU time their
# samples hold but one period a sample (the periods between two samples
# are the CPU time between them, to one), and no more than the wall time
# the program measured around fdeep's calls plus the CPU time main ran
# before (where the first sample's periods may begin) and one period
"$np" dump --format=chrome "$tmp/dwarf" >"$tmp/chrome.json" 2>"$tmp/err"
balance=$(jq '([.traceEvents[] | select(.ph == "B")] | length) == ([.traceEvents[] | select(.ph == "E")] | length)' \
    "$tmp/chrome.json")
span=$(jq '[.traceEvents[] | select(.name == "fdeep")] | sort_by(.ts) as $e
           | [range(0; $e | length; 2) | $e[. + 1].ts - $e[.].ts] | add / 1000' "$tmp/chrome.json")
"$np" report --format=csv "$tmp/dwarf" 2>/dev/null | awk -F, '$1 == "fdeep" { print $2, $4 }' >"$tmp/fdeep"
read -r samples self <"$tmp/fdeep"
awk -v span="$span" -v balance="$balance" -v samples="${samples:-0}" -v self="${self:-0}" '
    $1 == "wall" && $2 == "fdeep" { wall = $3 } $1 == "cpu" && $2 == "fdeep" { cpu = $3 }
    $1 == "thread" && $2 == "main" { main_ms = $3 }
    END {
        period = 1000 / 997
        low = self / 1e6 - samples * period; high = wall + (main_ms - cpu) + period
        ok = balance == "true" && wall > 0 && span >= low && span <= high
        printf "%s chrome: B and E balance (%s); fdeep spans %.1f ms, %.1f to %.1f from %d samples and the %.1f ms measured\n",
               (ok ? "ok  " : "FAIL"), balance, span, low, high, samples, wall
    }' "$tmp/dwarf.out" >"$tmp/span"
cat "$tmp/span"
grep -q '^ok ' "$tmp/span" && pass=$((pass + 1)) || fail=$((fail + 1))
"$np" replay "$tmp/dwarf" >"$tmp/replay" 2>"$tmp/err"
awk '/ chain_inner( \{)?$/ { d = index($0, "chain_inner") } / fdeep( \{)?$/ && d { if (index($0, "fdeep") == d + 2) n++ }
     END { exit !(n >= 1) }' "$tmp/replay" && ok "replay: fdeep nested under chain_inner" ||
    { bad "replay: fdeep under chain_inner"; head -20 "$tmp/replay"; }

# the unwinder is in the trace: byte 12 of the SAMPLING chunk's payload
# (trace-format.md: chunk headers of 12 bytes), 2 for dwarf and 1 for fp
unwinder() {
    od -An -v -tu1 "$1"/*.npt | tr -s ' ' '\n' | awk '
        NF { b[n++] = $1 }
        END { p = 16
              while (p + 12 <= n) {
                  t = b[p] + 256 * b[p + 1]; len = b[p + 4] + 256 * b[p + 5] + 65536 * b[p + 6] + 16777216 * b[p + 7]
                  if (t == 8) { print b[p + 12 + 12]; exit }
                  p += 12 + len } }'
}
[ "$(unwinder "$tmp/dwarf")" = 2 ] && [ "$(unwinder "$tmp/fp")" = 1 ] && ok "SAMPLING: unwinder 2 (dwarf), 1 (fp)" ||
    bad "SAMPLING: unwinder $(unwinder "$tmp/dwarf") and $(unwinder "$tmp/fp"), want 2 and 1"

# a bad value is refused before the program runs
"$np" record --sample --unwind=frames -o "$tmp/bad" -- "$prog" chain >"$tmp/out" 2>"$tmp/err"
rc=$?
status "--unwind=frames: refused" 2 "not fp or dwarf"
[ ! -e "$tmp/bad" ] && ok "--unwind=frames: nothing run" || bad "--unwind=frames: a trace was written"
finish
