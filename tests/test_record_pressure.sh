#!/bin/sh
# test_record_pressure.sh NANOPROF REC_PROG [REC_PROG_HOOKLESS STALL_PROG] - the
# recorder under pressure: 300 threads at once, buffers of 4k and one
# buffer allowed in the queue. By default nothing is lost: every call the
# program counts itself is in the trace, thread by thread. With dropping
# asked for (NANOPROF_DROP=1, --drop) events are lost, and the trace and
# `nanoprof record` say so. REC_PROG is linked with libnanoprof (records
# with NANOPROF_RECORD, every build); REC_PROG_HOOKLESS goes through
# `nanoprof record` (not in sanitizer builds, whose runtime cannot be
# preloaded). STALL_PROG holds a lock that the writer needs while it waits
# for the writer: the recorder goes on, past the queue's limit, and loses
# nothing.
np=$1
prog=$2
hookless=${3:-}
stall=${4:-}
np_cmd=report
. "$(dirname "$0")/cli_test.sh"

threads=300
calls=2000
pressure="NANOPROF_BUFFER=4k NANOPROF_QUEUE=1"

# field CSV FUNCTION COLUMN: a column of FUNCTION's row in report's CSV
field() {
    awk -F, -v f="$2" -v c="$3" '$1 == f { print $c }' "$1"
}
# lost JSON: the events the trace says were lost, over every thread
lost() {
    jq '[.threads[].lost] | add' "$1"
}

# -- nothing lost by default ---------------------------------------------
env $pressure NANOPROF_RECORD="$tmp/wait" "$prog" many $threads $calls >"$tmp/prog.out" 2>"$tmp/prog.err"
counted=$(awk '$1 == "calls" { print $2 }' "$tmp/prog.out")
[ "$counted" = $((threads * calls)) ] && ok "the program counted its calls" ||
    bad "the program counted '$counted' calls"
"$np" report --format=csv "$tmp/wait" >"$tmp/wait.csv" 2>"$tmp/wait.err"
[ "$(field "$tmp/wait.csv" many_leaf 2)" = "$counted" ] && ok "wait: every many_leaf call recorded" ||
    { bad "wait: many_leaf calls $(field "$tmp/wait.csv" many_leaf 2), the program counted $counted"; cat "$tmp/wait.err"; }
[ "$(field "$tmp/wait.csv" many_worker 2)" = $threads ] && ok "wait: every many_worker call recorded" ||
    bad "wait: many_worker calls $(field "$tmp/wait.csv" many_worker 2)"
"$np" report --format=json "$tmp/wait" >"$tmp/wait.json" 2>/dev/null
[ "$(lost "$tmp/wait.json")" = 0 ] && ok "wait: nothing lost" || bad "wait: $(lost "$tmp/wait.json") events lost"
# each worker thread has exactly its calls: many_worker once, many_leaf N times
per=$(jq -r --argjson n $((calls + 1)) '[.threads[] | select(.calls == $n)] | length' "$tmp/wait.json")
[ "$per" = $threads ] && ok "wait: $threads threads of $((calls + 1)) calls each" ||
    bad "wait: $per threads with $((calls + 1)) calls"
[ "$(jq '.threads | length' "$tmp/wait.json")" = $((threads + 1)) ] && ok "wait: $((threads + 1)) threads" ||
    bad "wait: $(jq '.threads | length' "$tmp/wait.json") threads"

# -- dropping, asked for -------------------------------------------------
env $pressure NANOPROF_DROP=1 NANOPROF_RECORD="$tmp/drop" "$prog" many $threads $calls >/dev/null 2>&1
"$np" report --format=json "$tmp/drop" >"$tmp/drop.json" 2>/dev/null
"$np" report --format=csv "$tmp/drop" >"$tmp/drop.csv" 2>/dev/null
dropped=$(lost "$tmp/drop.json")
got=$(field "$tmp/drop.csv" many_leaf 2)
[ "${dropped:-0}" -gt 0 ] && [ "${got:-0}" -lt $((threads * calls)) ] &&
    ok "drop: $dropped events lost, $got of $((threads * calls)) calls recorded" ||
    bad "drop: lost '$dropped', recorded '$got'"
end_lost=$(jq '[.processes[].events_lost] | add' "$tmp/drop.json")
[ "$end_lost" = "$dropped" ] && ok "drop: END counts the same losses" || bad "drop: END $end_lost, threads $dropped"
# every view and exporter says so: one warning with the count, and text
# views a note (the first lines; replay's last, as it prints while reading)
warned=$(jq -r '.loss.threads' "$tmp/drop.json")
for v in "report" "graph" "tree" "replay" "flame -o $tmp/f.svg" "dump --format=folded" \
    "dump --format=chrome" "dump --format=callgrind" "dump --format=gmon -o $tmp/gmon.out"; do
    # shellcheck disable=SC2086
    "$np" $v "$tmp/drop" >"$tmp/view.out" 2>"$tmp/view.err"
    rc=$?
    cmd=${v%% *}
    if [ "$rc" = 0 ] && [ "$(wc -l <"$tmp/view.err")" = 1 ] &&
        grep -q "^nanoprof $cmd: warning: $dropped events lost in $warned of $((threads + 1)) threads (tids " "$tmp/view.err"
    then ok "drop: $v warns"; else bad "drop: $v: rc $rc"; cat "$tmp/view.err"; fi
    case $v in
    report | graph | tree) head -n 3 "$tmp/view.out" | grep -q "^# $dropped events lost in $warned threads: " &&
        ok "drop: $v notes it in its header" || bad "drop: $v: no note in the header" ;;
    replay) tail -n 1 "$tmp/view.out" | grep -q "^# $dropped events lost in $warned threads: " &&
        ok "drop: replay notes it last" || bad "drop: replay: no note" ;;
    esac
done
"$np" tree --strict "$tmp/drop" >/dev/null 2>&1
[ $? = 3 ] && ok "drop: tree --strict exits 3" || bad "drop: tree --strict"

# -- nanoprof record: --drop, the closing line and --strict ---------------
if [ -n "$hookless" ]; then
    np_cmd=record
    run -o "$tmp/r1" -b 4k -- env NANOPROF_QUEUE=1 "$hookless" many $threads $calls
    if [ "$rc" = 0 ] && grep -q "exited with status 0; trace in $tmp/r1: 1 file, [0-9]* bytes\$" "$tmp/err" &&
        ! grep -q LOST "$tmp/err"; then ok "record: nothing lost, said plainly"; else
        bad "record: rc $rc"; cat "$tmp/err"; fi
    run -o "$tmp/r2" -b 4k --drop -- env NANOPROF_QUEUE=1 "$hookless" many $threads $calls
    if [ "$rc" = 0 ] && grep -q "; LOST [1-9][0-9]* events in [1-9][0-9]* of $((threads + 1)) threads\$" "$tmp/err"; then
        ok "record --drop: the closing line says what was lost"; else bad "record --drop: rc $rc"; cat "$tmp/err"; fi
    run -o "$tmp/r3" -b 4k --drop --strict -- env NANOPROF_QUEUE=1 "$hookless" many $threads $calls
    [ "$rc" = 3 ] && ok "record --drop --strict: exit 3" || { bad "record --strict: rc $rc"; cat "$tmp/err"; }
    run -o "$tmp/r4" --strict -- "$hookless" many 4 100
    [ "$rc" = 0 ] && ok "record --strict, nothing lost: exit 0" || { bad "record --strict: rc $rc"; cat "$tmp/err"; }
    # killed: the file is cut short, and the lines say so
    run -o "$tmp/r6" -- "$hookless" signal kill
    if [ "$rc" = 137 ] && grep -q "killed by signal 9.*; 1 file cut short (the process did not end normally)\$" "$tmp/err" &&
        grep -q "nothing was recorded from .*: it was killed before its threads' buffers reached the file" "$tmp/err"; then
        ok "record: a killed program's trace is said to be cut short"; else bad "record: killed: rc $rc"; cat "$tmp/err"; fi
    # a bad variable is refused before the program runs
    NANOPROF_DROP=yes "$np" record -o "$tmp/r5" -- "$hookless" many 1 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    status "record: a bad NANOPROF_DROP is refused" 2 "NANOPROF_DROP=yes in the environment is not 0 or 1"
    [ ! -s "$tmp/out" ] && ok "record: the program did not run" || bad "record: the program ran"
fi
# -- a writer that cannot move: the threads go on without it ---------------
if [ -n "$stall" ]; then
    NANOPROF_BUFFER=64k NANOPROF_QUEUE=1 NANOPROF_RECORD="$tmp/stall" "$stall" 300000 >"$tmp/stall.out" 2>"$tmp/stall.err"
    rc=$?
    [ "$rc" = 0 ] && grep -qx "calls 300000" "$tmp/stall.out" && ok "stall: the program ran to its end" ||
        { bad "stall: rc $rc"; cat "$tmp/stall.err"; }
    "$np" report --format=csv "$tmp/stall" >"$tmp/stall.csv" 2>"$tmp/stall.err"
    [ "$(field "$tmp/stall.csv" leaf 2)" = 300000 ] && [ ! -s "$tmp/stall.err" ] &&
        ok "stall: every call recorded, nothing lost" ||
        { bad "stall: leaf calls $(field "$tmp/stall.csv" leaf 2)"; cat "$tmp/stall.err"; }
fi
finish
