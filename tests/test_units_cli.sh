#!/bin/sh
# test_units_cli.sh NANOPROF GEN_UNITS - the views on a trace in cycles and
# instructions (an emulated run, written by tests/gen_units.c with the
# trace writer; numbers there) whose two calls were closed by
# re-synchronisation: the unit labels and "(?)" marks of report, tree,
# graph, replay, dump (folded, callgrind read back by callgrind_annotate,
# chrome) and flame; --metric=count (instructions, Ir); --clock=HZ
# (time); the options a trace cannot take (exit 2, one line); --strict.
set -u
np=$1
gen=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
need jq callgrind_annotate xmllint

for kind in cycles nocount ns; do
    "$gen" "$kind" "$tmp/$kind.npt" || { echo "FAIL generating $kind"; exit 1; }
done
c=$tmp/cycles.npt
warning="warning: 2 calls closed by re-synchronisation (marked (?)) in 1 of 1 thread (tid 1)"
note="# 2 calls closed by re-synchronisation (marked (?)) in 1 thread: the ends of those calls are not exact"

# view CMD ARGS...: nanoprof CMD ARGS, as run does
view() {
    view_cmd=$1
    shift
    "$np" "$view_cmd" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# ---- report ----
run "$c"
status "report: exit 0, the warning" 0 "$warning"
same "report: cycles, the Resync column, (?)" "$tmp/out" "# $c: 1 process, 1 thread, 4 calls of 3 functions, cycles
$note
       Total         Self      Calls      Average          Min          Max    Resync  Function
  ==========   ==========   ========   ==========   ==========   ==========    ======  ========
   2.50 Mcyc    1.00 Mcyc          1    2.50 Mcyc    2.50 Mcyc    2.50 Mcyc         0  sample_main
   1.50 Mcyc     9000 cyc          1    1.50 Mcyc    1.50 Mcyc    1.50 Mcyc         1  sample_helper (?)
   1.49 Mcyc    1.49 Mcyc          2   745000 cyc    10000 cyc    1.48 Mcyc         1  sample_leaf (?)"
run "$c" --strict
status "report --strict: a call closed by re-synchronisation is a loss" 3 "$warning"
run "$c" --metric=count
status "report --metric=count: exit 0" 0 "$warning"
same "report --metric=count: instructions" "$tmp/out" "# $c: 1 process, 1 thread, 4 calls of 3 functions, instructions
$note
       Total         Self      Calls      Average          Min          Max    Resync  Function
  ==========   ==========   ========   ==========   ==========   ==========    ======  ========
  1.00 Minsn  400400 insn          1   1.00 Minsn   1.00 Minsn   1.00 Minsn         0  sample_main
 599600 insn    3600 insn          1  599600 insn  599600 insn  599600 insn         1  sample_helper (?)
 596000 insn  596000 insn          2  298000 insn    4000 insn  592000 insn         1  sample_leaf (?)"
run "$c" --clock=1MHz
status "report --clock: exit 0" 0 "$warning"
same "report --clock=1MHz: a cycle is a microsecond" "$tmp/out" "# $c: 1 process, 1 thread, 4 calls of 3 functions, time from cycles at 1 MHz
$note
       Total         Self      Calls      Average          Min          Max    Resync  Function
  ==========   ==========   ========   ==========   ==========   ==========    ======  ========
     2.500 s      1.001 s          1      2.500 s      2.500 s      2.500 s         0  sample_main
     1.499 s     9.000 ms          1      1.499 s      1.499 s      1.499 s         1  sample_helper (?)
     1.490 s      1.490 s          2   745.000 ms    10.000 ms      1.480 s         1  sample_leaf (?)"
run "$c" --format=csv
cut -d, -f1-4,12,13 "$tmp/out" >"$tmp/csv"
same "report csv: the same columns, time_unit and resynced at the end" "$tmp/csv" "function,calls,total_ns,self_ns,time_unit,resynced
sample_main,1,2500000,1001000,cycles,0
sample_helper,1,1499000,9000,cycles,1
sample_leaf,2,1490000,1490000,cycles,1"
run "$c" --format=csv --metric=count
cut -d, -f1-4,12,13 "$tmp/out" | tail -n 1 >"$tmp/csv"
same "report csv --metric=count: instructions" "$tmp/csv" "sample_leaf,2,596000,596000,instructions,1"
run "$c" --format=json --clock=250MHz
jq -r '[.time_unit, .loss.resynced, .processes[0].time_unit, .threads[0].closed_at_resync,
        (.functions[] | "\(.name)=\(.total_ns)/\(.resynced)")] | join(" ")' "$tmp/out" >"$tmp/json"
same "report json --clock=250MHz: time_unit ns, resync counts" "$tmp/json" \
    "ns 2 ns 2 sample_main=10000000/0 sample_helper=5996000/1 sample_leaf=5960000/1"
run "$c" --format=json
[ "$(jq -r '.time_unit' "$tmp/out")" = cycles ] && ok "report json: time_unit cycles" || bad "report json: time_unit"

# ---- tree, graph, replay ----
view tree "$c"
status "tree: exit 0, the warning" 0 "$warning"
same "tree: cycles, (?) after the paths closed so" "$tmp/out" "# $c: call tree of 1 thread, cycles
$note
     Calls        Total         Self  Total%  Function
         1    2.50 Mcyc               100.0%  thread 1 \"main\" (pid 1)
         1    2.50 Mcyc    1.00 Mcyc  100.0%  └─ sample_main
         1    1.50 Mcyc     9000 cyc   60.0%     └─ sample_helper (?)
         2    1.49 Mcyc    1.49 Mcyc   59.6%        └─ sample_leaf (?)"
view tree "$c" --metric=count --ascii
head -n 1 "$tmp/out" >"$tmp/first"
same "tree --metric=count: instructions" "$tmp/first" "# $c: call tree of 1 thread, instructions"
grep -q '^         2  596000 insn  596000 insn   59.6%        `- sample_leaf (?)$' "$tmp/out" &&
    ok "tree --metric=count: the leaf's instructions" || { bad "tree --metric=count"; cat "$tmp/out"; }

view graph "$c"
status "graph: exit 0, the warning" 0 "$warning"
same "graph: cycles, (?) wherever the name is" "$tmp/out" "# $c: call graph of 3 functions, total time 2.50 Mcyc, cycles
$note
index  % time        total         self        called  name
                 2.50 Mcyc                        1/1      <spontaneous>
[1]     100.0    2.50 Mcyc    1.00 Mcyc             1  sample_main [1]
                 1.50 Mcyc                        1/1      sample_helper (?) [2]
-----------------------------------------------
                 1.50 Mcyc                        1/1      sample_main [1]
[2]      60.0    1.50 Mcyc     9000 cyc             1  sample_helper (?) [2]
                 1.49 Mcyc                        2/2      sample_leaf (?) [3]
-----------------------------------------------
                 1.49 Mcyc                        2/2      sample_helper (?) [2]
[3]      59.6    1.49 Mcyc    1.49 Mcyc             2  sample_leaf (?) [3]
-----------------------------------------------"
view graph "$c" --metric=count sample_leaf
grep -q '^\[3\]      59.6  596000 insn  596000 insn             2  sample_leaf (?) \[3\]$' "$tmp/out" &&
    head -n 1 "$tmp/out" | grep -q ', total time 1.00 Minsn, instructions$' &&
    ok "graph --metric=count: instructions" || { bad "graph --metric=count"; cat "$tmp/out"; }

view replay "$c"
status "replay: exit 0, the warning" 0 "$warning"
same "replay: starts in cycles, the closing lines marked" "$tmp/out" "# $c: every call, cycles
         Start     Duration  Function
# thread 1 \"main\" (pid 1)
             0               sample_main {
          1000                 sample_helper {
          2000    10000 cyc      sample_leaf
         20000    1.48 Mcyc      sample_leaf (?)
                  1.50 Mcyc    } /* sample_helper */ (?)
                  2.50 Mcyc  } /* sample_main */
# 4 calls in 1 thread
$note"
view replay "$c" --metric=count
same "replay --metric=count: starts in instructions" "$tmp/out" "# $c: every call, instructions
         Start     Duration  Function
# thread 1 \"main\" (pid 1)
             0               sample_main {
           400                 sample_helper {
           800    4000 insn      sample_leaf
          8000  592000 insn      sample_leaf (?)
                599600 insn    } /* sample_helper */ (?)
                 1.00 Minsn  } /* sample_main */
# 4 calls in 1 thread
$note"
view replay "$c" --clock=1MHz
same "replay --clock=1MHz: starts in seconds" "$tmp/out" "# $c: every call, time from cycles at 1 MHz
         Start     Duration  Function
# thread 1 \"main\" (pid 1)
   0.000000000               sample_main {
   0.001000000                 sample_helper {
   0.002000000    10.000 ms      sample_leaf
   0.020000000      1.480 s      sample_leaf (?)
                    1.499 s    } /* sample_helper */ (?)
                    2.500 s  } /* sample_main */
# 4 calls in 1 thread
$note"
view replay "$c" --min-duration=20000
grep -v '^#' "$tmp/out" | grep -c 'sample_leaf' >"$tmp/leaves" # (the title holds the path)
same "--min-duration=20000: counts cycles, the 10000-cycle call left out" "$tmp/leaves" 1
grep -q '^         20000    1.48 Mcyc      sample_leaf (?)$' "$tmp/out" && ok "--min-duration=20000: the long one kept" ||
    { bad "--min-duration=20000: the long one"; cat "$tmp/out"; }
view replay "$c" --min-duration=1us
status "--min-duration with a unit of time on a trace in cycles: exit 2" 2 \
    "replay: --min-duration: the times of this trace are cycles, not ns: give a number of them"

# ---- dump ----
view dump --format=folded "$c"
status "folded: exit 0, the warning" 0 "$warning"
same "folded: (?) in the frames" "$tmp/out" "sample_main 1001000
sample_main;sample_helper (?) 9000
sample_main;sample_helper (?);sample_leaf (?) 1490000"

view dump --format=callgrind -o "$tmp/c.cg" "$c"
status "callgrind: exit 0, the warning" 0 "$warning"
grep -q '^events: Cycles$' "$tmp/c.cg" && grep -q '^summary: 2500000$' "$tmp/c.cg" &&
    grep -q '^fn=sample_leaf (?)$' "$tmp/c.cg" && grep -q '^desc: Loss: 2 calls closed by re-synchronisation' "$tmp/c.cg" &&
    ok "callgrind: events: Cycles, (?) in the names, desc:" || { bad "callgrind: header"; head -12 "$tmp/c.cg"; }
(cd / && callgrind_annotate --auto=no --threshold=100 --inclusive=yes "$tmp/c.cg") >"$tmp/ann" 2>"$tmp/ann.err"
grep -q '^Events recorded:  Cycles$' "$tmp/ann" && grep -q '^2,500,000 (100.0%)  PROGRAM TOTALS$' "$tmp/ann" &&
    grep -q '^1,499,000 .*:sample_helper (?) ' "$tmp/ann" && [ ! -s "$tmp/ann.err" ] &&
    ok "callgrind_annotate: Cycles, totals, inclusive cycles" || { bad "callgrind_annotate Cycles"; cat "$tmp/ann" "$tmp/ann.err"; }
view dump --format=callgrind --metric=count -o "$tmp/i.cg" "$c"
(cd / && callgrind_annotate --auto=no --threshold=100 "$tmp/i.cg") >"$tmp/ann" 2>"$tmp/ann.err"
grep -q '^events: Ir$' "$tmp/i.cg" && grep -q '^Events recorded:  Ir$' "$tmp/ann" &&
    grep -q '^1,000,000 (100.0%)  PROGRAM TOTALS$' "$tmp/ann" && grep -q '^596,000 .*:sample_leaf (?) ' "$tmp/ann" &&
    ok "callgrind --metric=count: Ir, read by callgrind_annotate" || { bad "callgrind Ir"; cat "$tmp/ann" "$tmp/ann.err"; }

view dump --format=chrome "$c"
status "chrome: exit 0, the warning" 0 "$warning"
jq -r '[.otherData.time_unit, .otherData.ts_unit,
        ([.traceEvents[] | select(.ph == "E" and .args.resynced)] | map(.name) | join(",")),
        ([.traceEvents[] | select(.ph == "B")] | map(.ts) | map(tostring) | join(","))] | join(" | ")' \
    "$tmp/out" >"$tmp/chrome"
same "chrome: the unit in otherData, the ends closed by re-synchronisation" "$tmp/chrome" \
    "cycles | 1 us of ts is 1000 cycles | sample_leaf,sample_helper | 0,1,2,20"

# ---- flame ----
view flame "$c" -o "$tmp/c.svg"
status "flame: exit 0, the warning" 0 "$warning"
xmllint --xpath '//*[local-name()="g"][@class="frame"]/*[local-name()="title"]/text()' "$tmp/c.svg" >"$tmp/titles"
same "flame: tooltips in cycles, (?) in the names" "$tmp/titles" "all (calls 1, total 2.50 Mcyc, self 0 cyc, 100.00%)
1/1 main (calls 1, total 2.50 Mcyc, self 0 cyc, 100.00%)
sample_main (calls 1, total 2.50 Mcyc, self 1.00 Mcyc, 100.00%)
sample_helper (?) (calls 1, total 1.50 Mcyc, self 9000 cyc, 59.96%)
sample_leaf (?) (calls 2, total 1.49 Mcyc, self 1.49 Mcyc, 59.60%)"
[ "$(xmllint --xpath 'string(//*[@id="subtitle"])' "$tmp/c.svg")" = "$c, cycles" ] &&
    ok "flame: the subtitle says cycles" || bad "flame: subtitle"
view flame "$c" --metric=count -o "$tmp/i.svg"
[ "$(xmllint --xpath 'string(//*[@id="subtitle"])' "$tmp/i.svg")" = "$c, instructions" ] &&
    ok "flame --metric=count: the subtitle says instructions" || bad "flame --metric=count: subtitle"

# ---- --clock in every view: time ----
view tree "$c" --clock=1MHz --ascii
grep -q '^         2      1.490 s      1.490 s   59.6%        `- sample_leaf (?)$' "$tmp/out" &&
    head -n 1 "$tmp/out" | grep -q ': call tree of 1 thread, time from cycles at 1 MHz$' &&
    ok "tree --clock: time" || { bad "tree --clock"; cat "$tmp/out"; }
view graph "$c" --clock=32.768kHz
head -n 1 "$tmp/out" | grep -q ': call graph of 3 functions, total time 76.294 s, time from cycles at 32.768 kHz$' &&
    ok "graph --clock=32.768kHz: time" || { bad "graph --clock"; cat "$tmp/out"; }
view dump --format=callgrind --clock=1GHz "$c"
grep -q '^events: ns$' "$tmp/out" && grep -q '^summary: 2500000$' "$tmp/out" &&
    ok "callgrind --clock=1GHz: ns" || { bad "callgrind --clock"; head -12 "$tmp/out"; }
view dump --format=chrome --clock=1GHz "$c"
[ "$(jq -r '.otherData.start_unix_ns, .otherData.time_unit' "$tmp/out" | tr '\n' ' ')" = "0 null " ] &&
    ok "chrome --clock: ns, as a trace in ns" || { bad "chrome --clock"; jq .otherData "$tmp/out"; }
view flame "$c" --clock=1GHz -o "$tmp/t.svg"
[ "$(xmllint --xpath 'string(//*[@id="subtitle"])' "$tmp/t.svg")" = "$c, time from cycles at 1 GHz" ] &&
    ok "flame --clock: the subtitle says time" || bad "flame --clock: subtitle"

# ---- options a trace cannot take: one line, exit 2, in every view ----
for cmd in report tree graph replay "dump --format=folded" "flame -o $tmp/x.svg"; do
    # shellcheck disable=SC2086
    view $cmd --clock=48MHz "$tmp/ns.npt"
    status "$cmd --clock on a trace in ns: exit 2" 2 \
        "ns.npt: a clock rate applies to a trace in cycles; this one's clock (monotonic) counts ns"
    # shellcheck disable=SC2086
    view $cmd --metric=count "$tmp/nocount.npt"
    status "$cmd --metric=count without a second counter: exit 2" 2 \
        "nocount.npt: no second counter to count with"
done
[ ! -e "$tmp/x.svg" ] && ok "flame: nothing written when refused" || bad "flame: a file written"
run --clock=fast "$c"
status "--clock=fast: a usage error" 2 "bad --clock 'fast'"
run --clock=0 "$c"
status "--clock=0: a usage error" 2 "bad --clock '0'"
run --metric=cycles "$c"
status "--metric=cycles: a usage error" 2 "unknown metric 'cycles'"
run --clock=1MHz --metric=count "$c"
status "--clock with --metric=count: exit 2" 2 "not the second counter (instructions)"
run "$tmp/nocount.npt"
status "a trace in cycles without a second counter: report" 0 "$warning"
head -n 1 "$tmp/out" | grep -q ', cycles$' && ok "nocount: cycles" || bad "nocount: cycles"
run "$tmp/ns.npt"
head -n 1 "$tmp/out" | grep -q ', wall time$' && grep -q '^    2.500 ms     1.001 ms ' "$tmp/out" &&
    ok "the same run in ns: wall time" || { bad "ns: wall time"; cat "$tmp/out"; }

# ---- every view's help names the options ----
for cmd in report tree graph replay dump flame; do
    "$np" $cmd --help >"$tmp/help"
    grep -q -- '--clock=HZ' "$tmp/help" && grep -q -- '--metric=WHAT' "$tmp/help" &&
        ok "$cmd --help: --clock and --metric" || bad "$cmd --help"
done

finish
