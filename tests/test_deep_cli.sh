#!/bin/sh
# test_deep_cli.sh NANOPROF GEN - deep recursion in folded stacks, flame
# graphs and callgrind (src/analyze/stacks.h, docs/exporters.md), on the
# traces test_analyze_gen writes (one call per tick):
#   deepmix    main -> fib recursing 150 deep, leaf called at both ends:
#              the exact merged output of each format, and its notes;
#   deep-N     fib N deep: a run of 100 recursive calls stays as it is,
#              101 are merged; 100,000 and 200,000 deep: two frames;
#   deepab-N   fib and helper calling each other N deep: stacks end in one
#              frame at 500 levels.
# Sizes and line counts are checked exactly (times are bench/deep.sh's);
# callgrind_annotate's inclusive times are report's, recursion or not.
set -u
np=$1
gen=$2
. "$(dirname "$0")/cli_test.sh"
need xmllint callgrind_annotate
for kind in deepmix deep-101 deep-102 deepab-503 deep-100000 deep-200000 deepab-100000; do
    "$gen" "$kind" "$tmp/$kind" >/dev/null || { echo "FAIL generating $kind"; exit 1; }
done
run_note="nanoprof dump: note: a run of over 100 calls of a function by itself is one frame"
depth_note="stacks over 500 levels deep end in one frame holding the rest"

# dump FORMAT TRACE [ARGS]: stdout in $tmp/out, stderr in $tmp/err, status in $rc
dump() {
    f=$1
    shift
    "$np" dump --format="$f" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# titles SVG: the tooltip of every frame, one a line
titles() { sed -n 's/^<g class="frame".*<title>\([^<]*\)<\/title>.*/\1/p' "$1"; }
# inclusive CG: callgrind_annotate's "name,inclusive ns" per function, by name
inclusive() {
    (cd / && callgrind_annotate --auto=no --threshold=100 --inclusive=yes "$1") 2>&1 |
        awk '/^ *[0-9,]+ +\([^)]*\)  / && !/PROGRAM TOTALS$/ {
            cost = $1; gsub(/,/, "", cost); line = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", line)
            sub(/ \[[^]]*\]$/, "", line); sub(/.*:/, "", line); if (line != "(root)") print line "," cost }' |
        LC_ALL=C sort
}
# totals TRACE: report's "name,total ns" per function, by name
totals() { "$np" report --format=csv "$1" | tail -n +2 | cut -d, -f1,3 | LC_ALL=C sort; }

# ---- a 150-deep recursion inside main: exactly ----
dump folded "$tmp/deepmix"
same "deepmix folded: the run above fib's first call is one frame" "$tmp/out" "sample_main 2
sample_main;sample_fib 3
sample_main;sample_fib;sample_fib [recursion x149] 298
sample_main;sample_fib;sample_fib [recursion x149];sample_leaf 1
sample_main;sample_fib;sample_leaf 1"
same "deepmix folded: one note on stderr" "$tmp/err" "$run_note (1 run: sample_fib [recursion x149])"
[ "$rc" = 0 ] && ok "deepmix folded: exit 0" || bad "deepmix folded: exit $rc"
dump folded "$tmp/deepmix" --value=calls --per-thread
same "deepmix folded --value=calls --per-thread: the run's 149 calls" "$tmp/out" "tid-8;sample_main 1
tid-8;sample_main;sample_fib 1
tid-8;sample_main;sample_fib;sample_fib [recursion x149] 149
tid-8;sample_main;sample_fib;sample_fib [recursion x149];sample_leaf 1
tid-8;sample_main;sample_fib;sample_leaf 1"
"$np" flame "$tmp/deepmix" -o "$tmp/mix.svg" --width=405 2>"$tmp/err"
same "deepmix flame: one note on stderr" "$tmp/err" \
    "nanoprof flame: note: a run of over 100 calls of a function by itself is one frame (1 run: sample_fib [recursion x149])"
xmllint --noout "$tmp/mix.svg" && ok "deepmix flame: valid XML" || bad "deepmix flame: valid XML"
titles "$tmp/mix.svg" >"$tmp/got"
same "deepmix flame: the frames" "$tmp/got" "all (calls 1, total 305 ns, self 0 ns, 100.00%)
8/8 (calls 1, total 305 ns, self 0 ns, 100.00%)
sample_main (calls 1, total 305 ns, self 2 ns, 100.00%)
sample_fib (calls 1, total 303 ns, self 3 ns, 99.34%)
sample_fib [recursion x149] (calls 149, total 299 ns, self 298 ns, 98.03%)
sample_leaf (calls 1, total 1 ns, self 1 ns, 0.33%)
sample_leaf (calls 1, total 1 ns, self 1 ns, 0.33%)"
[ "$(xmllint --xpath 'string(//*[@id="merged"])' "$tmp/mix.svg")" = \
    "a run of over 100 calls of a function by itself is one frame (1 run: sample_fib [recursion x149])" ] &&
    ok "deepmix flame: the note on a line of its own" || bad "deepmix flame: the note line"
grep -q '^<!-- flame graph written by nanoprof: 7 frames, 0 omitted, deep recursion merged -->$' "$tmp/mix.svg" &&
    ok "deepmix flame: the comment says so" || bad "deepmix flame: comment"
# 52 + the note's 16 + 6 levels of 16 + 28
[ "$(xmllint --xpath 'string(/*/@height)' "$tmp/mix.svg")" = 192 ] && ok "deepmix flame: six levels high" ||
    bad "deepmix flame: height $(xmllint --xpath 'string(/*/@height)' "$tmp/mix.svg")"
dump callgrind "$tmp/deepmix"
grep -v -e '^c\?fl=' -e '^c\?ob=' -e '^creator:' "$tmp/out" |
    sed -e 's/^\(calls=[0-9]* \)[1-9][0-9]*$/\1L/' -e 's/^[1-9][0-9]* /L /' >"$tmp/got"
same "deepmix callgrind: recursive calls cost 0, the comment says so (lines generic)" "$tmp/got" "# callgrind format
# recursion: calls made while their function was already running cost 0 on their
# call lines (their time is in the outermost call's), so inclusive times are exact
version: 1
pid: 8
cmd:
positions: line
events: ns
summary: 305

fn=(root)
0 0
cfn=sample_main
calls=1 L
0 305

fn=sample_main
L 2
cfn=sample_fib
calls=1 L
L 303

fn=sample_fib
L 301
cfn=sample_leaf
calls=2 L
L 2
cfn=sample_fib
calls=149 L
L 0

fn=sample_leaf
L 2"

# ---- the limit: a run of 100 recursive calls stays, 101 are merged ----
dump folded "$tmp/deep-101"
[ "$(wc -l <"$tmp/out")" = 101 ] && [ ! -s "$tmp/err" ] && ok "101 deep: every level, no note" ||
    bad "101 deep: $(wc -l <"$tmp/out") lines"
dump folded "$tmp/deep-102"
same "102 deep: the first call, then the run of 101" "$tmp/out" "sample_fib 2
sample_fib;sample_fib [recursion x101] 201"

# ---- through two functions: stacks end at 500 levels ----
dump folded "$tmp/deepab-503"
[ "$(wc -l <"$tmp/out")" = 501 ] && ok "503 deep, f -> g -> f: 500 levels and one frame of the rest" ||
    bad "503 deep, f -> g -> f: $(wc -l <"$tmp/out") lines"
awk 'BEGIN { for (i = 1; i <= 500; i++) printf "%s;", i % 2 ? "sample_fib" : "sample_helper"
             print "[3 levels merged] 5" }' >"$tmp/want"
tail -n 1 "$tmp/out" >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" && ok "503 deep: the last line, the 3 deepest calls' 5 ns" ||
    { bad "503 deep: last line"; tail -c 100 "$tmp/got"; }
[ "$(awk '{ s += $NF } END { print s }' "$tmp/out")" = 1005 ] && ok "503 deep: the values add up to the total" ||
    bad "503 deep: sum"
same "503 deep: one note" "$tmp/err" "nanoprof dump: note: $depth_note (1 such frame)"

# ---- 100,000 and 200,000 deep: small, and exact ----
for n in 100000 200000; do
    t=$tmp/deep-$n
    dump folded "$t"
    same "$n deep folded: two lines" "$tmp/out" "sample_fib 2
sample_fib;sample_fib [recursion x$((n - 1))] $((2 * n - 3))"
    "$np" flame "$t" -o "$tmp/f.svg" 2>/dev/null
    frames=$(xmllint --xpath 'count(//*[local-name()="g"][@class="frame"])' "$tmp/f.svg")
    bytes=$(wc -c <"$tmp/f.svg")
    [ "$frames" = 4 ] && [ "$bytes" -lt 20000 ] && ok "$n deep flame: 4 frames, $bytes bytes" ||
        bad "$n deep flame: $frames frames, $bytes bytes"
    dump callgrind "$t"
    [ "$(wc -c <"$tmp/out")" -lt 2000 ] && grep -q "^calls=$((n - 1)) " "$tmp/out" && ok "$n deep callgrind: small" ||
        bad "$n deep callgrind"
    cp "$tmp/out" "$tmp/cg"
    totals "$t" >"$tmp/want"
    inclusive "$tmp/cg" >"$tmp/got"
    same_files "$n deep callgrind_annotate --inclusive=yes: report's total" "$tmp/want" "$tmp/got"
done
t=$tmp/deepab-100000
dump folded "$t"
bytes=$(wc -c <"$tmp/out")
[ "$(wc -l <"$tmp/out")" = 501 ] && [ "$bytes" -lt $((20 * 1024 * 1024)) ] &&
    ok "100000 deep, f -> g -> f, folded: 501 lines, $bytes bytes" || bad "f -> g -> f folded: $bytes bytes"
tail -n 1 "$tmp/out" | grep -q ';sample_helper;\[99500 levels merged\] 198999$' &&
    ok "100000 deep, f -> g -> f: the last frame merges 99,500 levels" || bad "f -> g -> f: last frame"
"$np" flame "$t" -o "$tmp/f.svg" 2>/dev/null
frames=$(xmllint --xpath 'count(//*[local-name()="g"][@class="frame"])' "$tmp/f.svg")
[ "$frames" = 503 ] && [ "$(wc -c <"$tmp/f.svg")" -lt $((1024 * 1024)) ] &&
    ok "100000 deep, f -> g -> f, flame: 503 frames" || bad "f -> g -> f flame: $frames frames"
dump callgrind "$t"
cp "$tmp/out" "$tmp/cg"
totals "$t" >"$tmp/want"
inclusive "$tmp/cg" >"$tmp/got"
same_files "100000 deep, f -> g -> f, callgrind_annotate --inclusive=yes: report's totals" "$tmp/want" "$tmp/got"
awk '/^calls=/ { getline; print $2 }' "$tmp/out" | sort -n | tail -n 1 >"$tmp/got"
same "100000 deep, f -> g -> f, callgrind: no call line costs more than the program" "$tmp/got" 199999
finish
