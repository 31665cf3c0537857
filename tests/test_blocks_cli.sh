#!/bin/sh
# test_blocks_cli.sh HOW NANOPROF BLOCKS_PROG GEN SOURCE - basic-block
# counts end to end (docs/blocks.md): tests/programs/blocks_prog.c (SOURCE;
# built with -fsanitize-coverage=trace-pc only) recorded, with HOW = env
# (NANOPROF_RECORD=DIR) or record (`nanoprof record`), then `nanoprof
# blocks`: exact counts on the lines marked BB_*, threads adding up, a
# table too small, and the traces test_analyze_gen writes (exact counts,
# a corrupt BLOCKS chunk, no blocks at all).
set -u
how=$1
np=$2
prog=$3
gen=$4
src=$5
np_cmd=blocks
. "$(dirname "$0")/cli_test.sh"
# rec DIR ARGS...: records blocks_prog ARGS into DIR (stderr in $tmp/rec_err)
rec() {
    d=$1
    shift
    rm -rf "$d"
    if [ "$how" = record ]; then
        "$np" record -o "$d" -- "$prog" "$@" 2>"$tmp/rec_err"
    else
        NANOPROF_RECORD=$d "$prog" "$@" 2>"$tmp/rec_err"
    fi
}
mark() { grep -n "$1" "$src" | grep -v '^[0-9]*: \*' | cut -d: -f1; }
# line_count FUNCTION LINE: the count of that line row in $tmp/out (CSV)
line_count() { awk -F, -v f="$1" -v l="$2" '$1 == "line" && $2 == f && $6 == l { print $3 }' "$tmp/out"; }
# the sum of the function rows' counts in $tmp/out (CSV)
total() { awk -F, '$1 == "function" { s += $3 } END { print s + 0 }' "$tmp/out"; }

entry=$(mark BB_ENTRY)
taken=$(mark BB_TAKEN)

# ---- one thread: 1000 calls, the branch taken 250 times ----
rec "$tmp/loop" loop 1000
if [ $? = 0 ] && ! grep -q "nothing was recorded" "$tmp/rec_err"; then ok "record a coverage-only program"; else
    bad "record a coverage-only program"; cat "$tmp/rec_err"; fi
run "$tmp/loop" --format=csv
status "csv: exit 0, quiet" 0
head -n 1 "$tmp/out" | grep -qx 'kind,function,count,blocks,file,line,address' && ok "csv: header" || bad "csv: header"
[ "$(line_count bb_body "$taken")" = 250 ] && ok "the branch's line ran 250 times" ||
    { bad "the branch's line ran 250 times"; cat "$tmp/out"; }
awk -F, '$1 == "line" && $2 == "bb_body" && $3 == 1000 { n++ } END { exit !n }' "$tmp/out" &&
    ok "a line of bb_body ran 1000 times" || bad "a line of bb_body ran 1000 times"
# GCC puts one block on each marked line (Clang counts edges instead)
if ! readelf -p .comment "$prog" 2>/dev/null | grep -q clang; then
    grep '^[a-z]*,bb_body,' "$tmp/out" | cut -d, -f1-4,6 >"$tmp/body"
    same "gcc: bb_body's rows" "$tmp/body" "function,bb_body,2250,3,$(mark 'void bb_body')
line,bb_body,1000,1,$entry
line,bb_body,250,1,$taken
line,bb_body,1000,1,$(mark BB_JOIN)"
fi
all=$(total)
run "$tmp/loop" --format=csv --functions
grep -q '^line,' "$tmp/out" && bad "--functions: no line rows" || ok "--functions: no line rows"
run "$tmp/loop" -F 'bb_b*' --format=csv
[ "$(grep -c '^function,' "$tmp/out")" = 1 ] && grep -q '^function,bb_body,' "$tmp/out" && ok "-F keeps bb_body alone" ||
    { bad "-F keeps bb_body alone"; cat "$tmp/out"; }
run "$tmp/loop"
status "text: exit 0" 0
grep -q "^# .*: 1 process, [0-9]* blocks in [0-9]* functions, $all executions\$" "$tmp/out" && ok "text: header" ||
    { bad "text: header"; head -n 2 "$tmp/out"; }
grep -q "^ *250  *1    .*blocks_prog.c:$taken\$" "$tmp/out" && ok "text: the branch's line" ||
    { bad "text: the branch's line"; cat "$tmp/out"; }
"$np" report "$tmp/loop" --format=csv >"$tmp/report" 2>"$tmp/err"
[ $? = 0 ] && [ "$(wc -l <"$tmp/report")" = 1 ] && ok "report: blocks but no calls" || bad "report: blocks but no calls"

# ---- two threads: counts add exactly ----
rec "$tmp/threads" threads 50000
run "$tmp/threads" --format=csv
[ "$(line_count bb_body "$taken")" = 25000 ] && ok "threads: the branch ran 2 x 12500 times" ||
    { bad "threads: the branch ran 2 x 12500 times"; cat "$tmp/out"; }
awk -F, '$1 == "line" && $2 == "bb_body" && $3 == 100000 { n++ } END { exit !n }' "$tmp/out" &&
    ok "threads: a line of bb_body ran 2 x 50000 times" || bad "threads: a line of bb_body ran 2 x 50000 times"

# ---- a table of 2 slots: what it could not hold is reported lost ----
NANOPROF_BLOCKS=2 rec "$tmp/tiny" loop 1000
run "$tmp/tiny" --format=csv
lost=$(sed -n 's/.*warning: \([0-9]*\) block executions were not counted.*/\1/p' "$tmp/err")
[ -n "$lost" ] && [ "$lost" -gt 0 ] && [ "$(grep -c '' "$tmp/err")" = 1 ] && ok "tiny table: lost reported" ||
    { bad "tiny table: lost reported"; cat "$tmp/err"; }
[ "$(awk -F, '$1 == "line" { n += $4 } END { print n + 0 }' "$tmp/out")" -le 2 ] && ok "tiny table: at most 2 blocks" ||
    bad "tiny table: at most 2 blocks"
[ "$(($(total) + ${lost:-0}))" = "$all" ] && ok "tiny table: counted + lost = $all" ||
    bad "tiny table: counted $(total) + lost ${lost:-?} != $all"

# ---- written traces: exact counts, damage, none ----
"$gen" blocks "$tmp/gen" && "$gen" blocks_corrupt "$tmp/corrupt" && "$gen" sample "$tmp/sample" ||
    { echo "FAIL generating traces"; exit 1; }
run "$tmp/gen" --format=csv
status "generated: exit 0, one warning" 0 "warning: 7 block executions were not counted"
grep '^function,' "$tmp/out" | cut -d, -f1-4 >"$tmp/fns"
same "generated: function rows" "$tmp/fns" "function,sample_fib,10,1
function,sample_leaf,4,1
function,0x10,2,1"
run "$tmp/gen" --sort=name --format=csv --functions
grep '^function,' "$tmp/out" | cut -d, -f2 | paste -sd' ' >"$tmp/names"
same "--sort=name" "$tmp/names" "0x10 sample_fib sample_leaf"
run "$tmp/corrupt"
status_loss "corrupt BLOCKS: exit 1, the error, the loss" 1 "BLOCKS claims 3 blocks in 32 bytes" \
    "1 of 1 trace file cut short$"
run "$tmp/sample"
status "no blocks: exit 1, one line" 1 "no basic-block counts in the trace"
run "$tmp/gen" --format=xml
status "bad format: exit 2" 2 "unknown format 'xml'"
run --help
[ "$rc" = 0 ] && grep -q '^usage: nanoprof blocks' "$tmp/out" && ok "--help" || bad "--help"

echo "test_blocks_cli ($how): $pass passed, $fail failed"
[ $fail -eq 0 ]
