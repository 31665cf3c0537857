#!/bin/sh
# test_loss_cli.sh NANOPROF GEN - any loss is loud, in every view and
# exporter. On tb_lossy_trace (numbers in tests/trace_builder.h): one
# warning line on stderr, exactly; the note in the header of the text
# views; in callgrind's desc: (read back by callgrind_annotate), chrome's
# otherData.loss (jq) and the flame graph's note line (xmllint); the
# thread counts every view gives; --strict's exit status 3 with the
# output still written. Then a file cut short, lost block executions,
# --tid, and a trace that lost nothing, which says nothing.
set -u
np=$1
gen=$2
. "$(dirname "$0")/cli_test.sh"
# the tools that read the formats back: a missing one fails the test
need jq xmllint callgrind_annotate

for kind in lossy sample noend blocks before; do
    "$gen" "$kind" "$tmp/$kind" >/dev/null || { echo "FAIL generating $kind"; exit 1; }
done
L=$tmp/lossy
warning="warning: 270 events lost in 2 of 4 threads (tids 300, 302); calls around the losses are closed at the loss points"
note="270 events lost in 2 threads: counts and times around the losses are incomplete"
threads="4 threads (2 with no calls recorded)"

# view NAME CMD ARGS...: nanoprof CMD ARGS on the lossy trace: exit 0 and
# exactly the warning on stderr
view() {
    name=$1
    cmd=$2
    shift 2
    "$np" "$cmd" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    printf 'nanoprof %s: %s\n' "$cmd" "$warning" >"$tmp/want.err"
    if [ "$rc" = 0 ] && cmp -s "$tmp/want.err" "$tmp/err"; then ok "$name: exit 0, one warning line"; else
        bad "$name: exit $rc, stderr:"; cat "$tmp/err"; fi
}
# line N FILE: its Nth line
line() { sed -n "$1p" "$2"; }

# ---- the text views: the warning, the note under the title, the threads ----
view "report" report "$L"
line 1 "$tmp/out" >"$tmp/got"
same "report: the title counts every thread" "$tmp/got" "# $L: 1 process, $threads, 5 calls of 4 functions, wall time"
line 2 "$tmp/out" >"$tmp/got"
same "report: the note under the title" "$tmp/got" "# $note"
view "tree" tree --ascii "$L"
same "tree: the title, the note, the calls kept" "$tmp/out" "# $L: call tree of $threads, wall time
# $note
     Calls        Total         Self  Total%  Function
         2        40 ns               100.0%  thread 300 \"main\" (pid 4646)
         1        30 ns        10 ns   75.0%  |- sample_main
         1        20 ns        15 ns   50.0%  |  \`- sample_helper
         1         5 ns         5 ns   12.5%  |     \`- sample_leaf
         1        10 ns        10 ns   25.0%  \`- sample_leaf
         1        10 ns               100.0%  thread 301 \"worker\" (pid 4646)
         1        10 ns        10 ns  100.0%  \`- sample_square"
view "graph" graph "$L"
line 2 "$tmp/out" >"$tmp/got"
same "graph: the note under the title" "$tmp/got" "# $note"
view "replay" replay "$L"
tail -n 2 "$tmp/out" >"$tmp/got"
# replay prints as it reads: the counts and the note close it
same "replay: the closing lines count every thread, then the note" "$tmp/got" "# 5 calls in $threads
# $note"
view "report --format=csv" report --format=csv "$L"
line 1 "$tmp/out" | grep -q '^function,calls,' && ok "report csv: no note in the data" || bad "report csv: first line"
view "report --format=json" report --format=json "$L"
jq -c .loss "$tmp/out" >"$tmp/got"
same "report json: the loss object" "$tmp/got" \
    "{\"events\":270,\"threads\":2,\"closed_calls\":2,\"files_cut\":0,\"too_deep\":0,\"blocks\":0,\"resynced\":0,\"damaged_chunks\":0,\"damaged_bytes\":0,\"note\":\"$note\"}"
jq -r '.threads[] | "\(.tid) \(.calls) \(.lost) \(.closed_at_loss) \(.closed_at_cut)"' "$tmp/out" >"$tmp/got"
same "report json: per thread, calls, lost, closed at a loss and at a cut" "$tmp/got" "300 4 20 2 0
301 1 0 0 0
302 0 150 0 0
303 0 0 0 0"
# the samples are read without the calls: the LOSTs still count
"$np" report --samples "$L" >/dev/null 2>"$tmp/err"
same "report --samples: the loss said all the same" "$tmp/err" \
    "nanoprof report: warning: 270 events lost in 2 of 4 threads (tids 300, 302)"

# ---- every format: the warning; the note where the format has room ----
view "dump folded" dump --format=folded "$L"
same "dump folded: the stacks as ever (no room for a note)" "$tmp/out" "sample_main 10
sample_main;sample_helper 15
sample_main;sample_helper;sample_leaf 5
sample_leaf 10
sample_square 10"
view "dump callgrind" dump --format=callgrind "$L"
grep -x "desc: Loss: $note" "$tmp/out" >/dev/null && ok "dump callgrind: a desc: line" || bad "dump callgrind: desc:"
cp "$tmp/out" "$tmp/cg"
(cd / && callgrind_annotate --auto=no "$tmp/cg") >"$tmp/ann" 2>&1
grep -x "Loss: $note" "$tmp/ann" >/dev/null && ok "dump callgrind: callgrind_annotate prints the note" ||
    { bad "dump callgrind: callgrind_annotate"; cat "$tmp/ann"; }
view "dump chrome" dump --format=chrome "$L"
[ "$(jq -r .otherData.loss "$tmp/out")" = "$note" ] && ok "dump chrome: otherData.loss" || bad "dump chrome: otherData.loss"
view "dump gmon" dump --format=gmon "$L" -o "$tmp/gmon.out"
[ -s "$tmp/gmon.out" ] && ok "dump gmon: written (no room for a note)" || bad "dump gmon: written"
view "flame" flame "$L" -o "$tmp/f.svg"
xmllint --noout "$tmp/f.svg" && ok "flame: valid XML" || bad "flame: valid XML"
[ "$(xmllint --xpath 'string(//*[@id="note"])' "$tmp/f.svg")" = "$note" ] && ok "flame: the note on a line of its own" ||
    bad "flame: the note"
# the note's line (16 px) above the frames: 52 + 16 + 5 levels of 16 + 28
[ "$(xmllint --xpath 'string(/*/@height)' "$tmp/f.svg")" = 176 ] && ok "flame: room for the note" ||
    bad "flame: height $(xmllint --xpath 'string(/*/@height)' "$tmp/f.svg")"

# ---- --strict: exit 3, the output written all the same ----
for cmd in report graph tree replay; do
    "$np" "$cmd" "$L" >"$tmp/plain" 2>/dev/null
    "$np" "$cmd" "$L" --strict >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 3 ] && cmp -s "$tmp/plain" "$tmp/out" && [ "$(wc -l <"$tmp/err")" = 1 ] &&
        ok "$cmd --strict: exit 3, the same output, the warning" || bad "$cmd --strict: exit $rc"
    "$np" "$cmd" "$tmp/sample" --strict >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && ok "$cmd --strict: nothing lost, exit 0" || bad "$cmd --strict: clean, exit $rc"
    "$np" "$cmd" --help | grep -q -- '--strict       exit with status 3 when the trace lost anything' &&
        ok "$cmd --help: --strict" || bad "$cmd --help: --strict"
done
for f in folded callgrind chrome; do
    rm -f "$tmp/x"
    "$np" dump --format=$f "$L" -o "$tmp/x" --strict 2>/dev/null
    rc=$?
    [ "$rc" = 3 ] && [ -s "$tmp/x" ] && ok "dump $f --strict -o: exit 3, the file written" || bad "dump $f --strict: exit $rc"
done
rm -f "$tmp/x"
"$np" flame "$L" -o "$tmp/x" --strict 2>/dev/null
rc=$?
[ "$rc" = 3 ] && [ -s "$tmp/x" ] && ok "flame --strict: exit 3, the file written" || bad "flame --strict: exit $rc"
"$np" blocks "$tmp/blocks" --strict >/dev/null 2>&1
rc=$?
[ "$rc" = 3 ] && ok "blocks --strict: executions not counted, exit 3" || bad "blocks --strict: exit $rc"
"$np" blocks --help | grep -q -- '--strict       exit with status 3 when the trace lost anything' &&
    ok "blocks --help: --strict" || bad "blocks --help: --strict"

# ---- thread counts: the same in every view, filters said ----
for cmd in report tree; do
    "$np" "$cmd" "$L" -F sample_square 2>/dev/null | head -n 1 | grep -q ' 4 threads (3 with no calls kept), ' &&
        ok "$cmd -F: 4 threads (3 with no calls kept)" || bad "$cmd -F: thread count"
done
"$np" replay "$L" -F sample_square 2>/dev/null | grep -qx '# 1 call in 4 threads (3 with no calls kept)' &&
    ok "replay -F: 4 threads (3 with no calls kept)" || bad "replay -F: thread count"
# --tid: the losses of the threads selected
"$np" tree "$L" --tid=301 --strict >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && line 1 "$tmp/out" | grep -q 'call tree of 1 thread, wall time$' &&
    ok "--tid: a thread that lost nothing, nothing said" || { bad "--tid: exit $rc"; cat "$tmp/err"; }
"$np" tree "$L" --tid=302 >"$tmp/out" 2>"$tmp/err"
same "--tid: the losses of the thread selected" "$tmp/err" \
    "nanoprof tree: warning: 150 events lost in 1 of 1 thread (tid 302)"

# ---- a file cut short (no END) ----
"$np" tree "$tmp/noend" >"$tmp/out" 2>"$tmp/err"
rc=$?
same "cut short: the reader's line, then the loss" "$tmp/err" \
"nanoprof tree: warning: $tmp/noend/4242.npt: no END chunk: the program did not exit normally; using what it recorded
nanoprof tree: warning: 1 of 1 trace file cut short in 2 of 2 threads (tids 100, 101); calls around the losses are closed at the loss points"
line 2 "$tmp/out" >"$tmp/got"
same "cut short: the note" "$tmp/got" \
    "# 1 of 1 trace file cut short in 2 threads: counts and times around the losses are incomplete"
[ "$rc" = 0 ] && ok "cut short: exit 0" || bad "cut short: exit $rc"
"$np" report "$tmp/noend" --strict >/dev/null 2>&1
rc=$?
[ "$rc" = 3 ] && ok "cut short --strict: exit 3" || bad "cut short --strict: exit $rc"

# ---- block executions the program's table could not hold ----
"$np" blocks "$tmp/blocks" >"$tmp/out" 2>"$tmp/err"
same "blocks: one warning" "$tmp/err" "nanoprof blocks: warning: 7 block executions were not counted (the program's table was full: raise NANOPROF_BLOCKS)"
line 2 "$tmp/out" >"$tmp/got"
same "blocks: the note" "$tmp/got" "# 7 block executions were not counted (the program's table was full: raise NANOPROF_BLOCKS): counts and times around the losses are incomplete"

# ---- returns of calls that began before recording: a note, not a loss ----
for cmd in report tree; do
    "$np" "$cmd" "$tmp/before" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    same "began before: $cmd says it once" "$tmp/err" \
"nanoprof $cmd: note: 2 returns without their call in the trace, in 1 thread: they began before the thread's recording (at a fork, a task's first switch, np_trace_init) and are not counted"
    [ "$rc" = 0 ] && ok "began before: $cmd exit 0" || bad "began before: $cmd exit $rc"
done
"$np" report --strict "$tmp/before" >/dev/null 2>&1
rc=$?
[ "$rc" = 0 ] && ok "began before --strict: exit 0 (nothing was lost)" || bad "began before --strict: exit $rc"
"$np" report --format=json "$tmp/before" 2>/dev/null | jq -e '.threads[0].unmatched_exits == 2' >/dev/null &&
    ok "began before: json threads[].unmatched_exits 2" || bad "began before: json unmatched_exits"

# ---- nothing lost: nothing said ----
for cmd in report graph tree replay; do
    "$np" "$cmd" "$tmp/sample" >"$tmp/out" 2>"$tmp/err"
    [ ! -s "$tmp/err" ] && ! grep -q 'lost\|cut short' "$tmp/out" && ok "$cmd: a trace that lost nothing, no word of it" ||
        bad "$cmd: clean trace"
done
"$np" dump --format=chrome "$tmp/sample" | jq -e '.otherData | has("loss") | not' >/dev/null &&
    ok "dump chrome: no loss, no otherData.loss" || bad "dump chrome: clean"
finish
