#!/bin/sh
# test_dump_cli.sh NANOPROF GEN            - `nanoprof dump` on the sample trace
# test_dump_cli.sh NANOPROF --record PROG  - on traces of a real program
#
# The sample (tb_sample_trace; numbers in tests/trace_builder.h): Chrome
# JSON that jq parses, whose B/E events balance and nest per thread, with
# B counts and E-B durations per function equal to report's; folded
# stacks exactly, adding up to report's self times and the threads'
# totals; callgrind exactly (paths aside), read back by callgrind_annotate
# whose self and inclusive times are report's; -o, errors, usage.
# With --record: PROG (tests/programs/rec_prog.c, instrumented) recorded
# with `nanoprof record` in two modes (threads; recursive fib), every
# exporter checked against report's calls, self and total times.
set -u
np=$1
np_cmd=dump
. "$(dirname "$0")/cli_test.sh"
need jq callgrind_annotate

# ---- checks every trace gets ----

# report_csv TRACE: "name,calls,total_ns,self_ns" per function, by name
report_csv() {
    "$np" report --format=csv "$1" | tail -n +2 | cut -d, -f1-4 | LC_ALL=C sort
}

# chrome_check FILE OUT: B/E balance and nesting per (pid, tid) with
# timestamps that never go back ("nesting ok" or what broke), then per
# function "name,B count,sum of E-B in ns" into OUT, by name
chrome_check() {
    jq -r '[.traceEvents | to_entries[] | .value + {i: .key} | select(.ph == "B" or .ph == "E")]
        | group_by([.pid, .tid])
        | map(sort_by(.i) | reduce .[] as $e ({stack: [], last: -1, bad: null, done: []};
            if .bad then .
            elif $e.ts < .last then .bad = "ts goes back at event \($e.i)"
            elif $e.ph == "B" then .stack += [$e] | .last = $e.ts
            elif (.stack | length) == 0 then .bad = "E without B at event \($e.i)"
            elif .stack[-1].name != $e.name then .bad = "E of \($e.name) closes \(.stack[-1].name)"
            else .done += [{name: $e.name, ns: (($e.ts * 1000 | round) - (.stack[-1].ts * 1000 | round))}]
                 | .stack |= .[:-1] | .last = $e.ts end)
            | if .bad then .bad elif (.stack | length) > 0 then "\(.stack | length) B without E"
              else .done end)
        | (map(select(type == "string")) | if length > 0 then .[0] else "nesting ok" end),
          (map(select(type == "array")) | add // [] | group_by(.name)
           | map("\(.[0].name),\(length),\(map(.ns) | add)") | .[])' "$1" >"$tmp/chrome.all" ||
        { echo "jq failed on $1"; return 1; }
    head -n 1 "$tmp/chrome.all"
    tail -n +2 "$tmp/chrome.all" | LC_ALL=C sort >"$2"
}

# folded_by_leaf FILE: "name,sum of values" per last frame, by name
folded_by_leaf() {
    awk '{ v = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s[f[n]] += v }
         END { for (k in s) printf "%s,%d\n", k, s[k] }' "$1" | LC_ALL=C sort
}

# annotate FILE [OPTIONS]: callgrind_annotate's "name,cost" per function, by name
annotate() {
    f=$1
    shift
    (cd / && callgrind_annotate --auto=no --threshold=100 "$@" "$f") >"$tmp/ann" 2>"$tmp/ann.err" ||
        { echo "callgrind_annotate failed:"; cat "$tmp/ann.err"; }
    awk '/^ *[0-9,]+ +\([^)]*\)  / && !/PROGRAM TOTALS$/ {
            cost = $1; gsub(/,/, "", cost); line = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", line)
            sub(/ \[[^]]*\]$/, "", line); sub(/.*:/, "", line); print line "," cost }' "$tmp/ann" | LC_ALL=C sort
    grep -q 'WARNING' "$tmp/ann.err" && { echo "callgrind_annotate warned:"; cat "$tmp/ann.err"; }
}
program_total() { awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1 }' "$tmp/ann"; }

# recursive FOLDED: the names of functions a stack holds twice, one a line
recursive() {
    awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); delete seen
           for (i = 1; i <= n; i++) { if (f[i] in seen) r[f[i]] = 1; seen[f[i]] = 1 } }
         END { for (k in r) print k }' "$1"
}

# check_against_report NAME TRACE: all three exporters against report
check_against_report() {
    name=$1
    trace=$2
    report_csv "$trace" >"$tmp/rep"
    "$np" dump --format=folded "$trace" >"$tmp/folded" || bad "$name: folded"
    recursive "$tmp/folded" >"$tmp/rec"

    "$np" dump --format=chrome "$trace" >"$tmp/chrome" || bad "$name: chrome"
    nest=$(chrome_check "$tmp/chrome" "$tmp/chrome.sum")
    [ "$nest" = "nesting ok" ] && ok "$name: chrome B/E balance and nest per thread" ||
        bad "$name: chrome nesting: $nest"
    cut -d, -f1,2 "$tmp/rep" >"$tmp/want.calls"
    cut -d, -f1,2 "$tmp/chrome.sum" >"$tmp/got.calls"
    same_files "$name: chrome B events per function = report's calls" "$tmp/want.calls" "$tmp/got.calls"
    # durations: every call's time once, so report's total where nothing recurses
    awk -F, 'NR == FNR { rec[$1] = 1; next } !($1 in rec) { print $1 "," $3 }' "$tmp/rec" "$tmp/rep" >"$tmp/want.tot"
    awk -F, 'NR == FNR { rec[$1] = 1; next } !($1 in rec) { print $1 "," $3 }' "$tmp/rec" "$tmp/chrome.sum" \
        >"$tmp/got.tot"
    same_files "$name: chrome E-B summed per function = report's total" "$tmp/want.tot" "$tmp/got.tot"

    # (a function of no self time may have no line, and annotate skips it)
    cut -d, -f1,4 "$tmp/rep" | grep -v ',0$' >"$tmp/want.self"
    folded_by_leaf "$tmp/folded" | grep -v ',0$' >"$tmp/got.self"
    same_files "$name: folded per last frame = report's self" "$tmp/want.self" "$tmp/got.self"
    threads=$("$np" report --format=json "$trace" | jq '[.threads[].total_ns] | add')
    sum=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/folded")
    [ "$sum" = "$threads" ] && ok "$name: folded adds up to the threads' total ($sum)" ||
        bad "$name: folded sum $sum, threads $threads"

    "$np" dump --format=callgrind "$trace" >"$tmp/cg" || bad "$name: callgrind"
    annotate "$tmp/cg" | grep -v ',0$' >"$tmp/got.self"
    same_files "$name: callgrind_annotate self = report's self" "$tmp/want.self" "$tmp/got.self"
    [ "$(program_total)" = "$threads" ] && ok "$name: callgrind_annotate total" ||
        bad "$name: callgrind_annotate total $(program_total), want $threads"
    annotate "$tmp/cg" --inclusive=yes | grep -v -e '^(root),' -e ',0$' >"$tmp/got.incl"
    cut -d, -f1,3 "$tmp/rep" | grep -v ',0$' >"$tmp/want.incl"
    same_files "$name: callgrind_annotate --inclusive=yes = report's total" "$tmp/want.incl" "$tmp/got.incl"
}

if [ "${2:-}" = "--record" ]; then
    # ---- a real program, recorded ----
    prog=$3
    "$np" record -o "$tmp/threads" -- "$prog" threads >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    "$np" record -o "$tmp/fib" -- "$prog" fib 12 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    check_against_report "threads" "$tmp/threads"
    [ "$(jq '[.traceEvents[] | select(.ph == "B") | .tid] | unique | length' "$tmp/chrome")" = 3 ] &&
        ok "threads: chrome has the 3 threads" || bad "threads: chrome threads"
    grep -q '^step,4000,' "$tmp/chrome.sum" && grep -q '^leaf,4010,' "$tmp/chrome.sum" &&
        ok "threads: chrome step x4000, leaf x4010" || bad "threads: chrome counts"
    check_against_report "fib" "$tmp/fib"
    [ "$(cat "$tmp/rec")" = fib ] && ok "fib: recursion seen in folded stacks" || bad "fib: recursive: $(cat "$tmp/rec")"
    grep -q '^fib,465,' "$tmp/chrome.sum" && ok "fib: chrome fib x465" || bad "fib: chrome count"
    finish
fi

gen=$2
for kind in sample corrupt ties; do
    "$gen" "$kind" "$tmp/$kind" || { echo "FAIL generating $kind"; exit 1; }
done
s=$tmp/sample

# ---- chrome ----
run "$s" --format=chrome
status "chrome: exit 0, quiet" 0
cp "$tmp/out" "$tmp/chrome"
jq -e '.displayTimeUnit == "ns" and (.traceEvents | length) == 25 and .otherData.start_unix_ns == 1000000000
       and ([.traceEvents[] | select(.ph == "M")] == [
         {ph: "M", pid: 4242, tid: 0, name: "process_name", args: {name: "./sample"}},
         {ph: "M", pid: 4242, tid: 100, name: "thread_name", args: {name: "main"}},
         {ph: "M", pid: 4242, tid: 101, name: "thread_name", args: {name: "worker"}}])
       and ([.traceEvents[] | select(.ph == "B" or .ph == "E") | .cat] | unique == ["function"])' \
    "$tmp/chrome" >/dev/null && ok "chrome: parses, metadata" || { bad "chrome: parses, metadata"; cat "$tmp/chrome"; }
nest=$(chrome_check "$tmp/chrome" "$tmp/chrome.sum")
[ "$nest" = "nesting ok" ] && ok "chrome: B/E balance and nest per thread" || bad "chrome: $nest"
same "chrome: B count and E-B ns per function" "$tmp/chrome.sum" "0x10,1,10
sample_fib,4,145
sample_helper,1,50
sample_leaf,1,30
sample_main,1,100
sample_square,2,50
sample_twice,1,40"
# exact events of thread 100: times in us with ns kept, fib's recursion nested
jq -r '.traceEvents[] | select(.tid == 100 and .ph != "M") | "\(.ph) \(.ts) \(.name)"' "$tmp/chrome" >"$tmp/t100"
same "chrome: thread 100 exactly" "$tmp/t100" "B 0 sample_main
B 0.01 sample_helper
B 0.02 sample_leaf
E 0.05 sample_leaf
E 0.06 sample_helper
E 0.1 sample_main
B 0.2 sample_fib
B 0.21 sample_fib
B 0.22 sample_fib
E 0.23 sample_fib
E 0.24 sample_fib
B 0.25 sample_fib
E 0.255 sample_fib
E 0.3 sample_fib"
grep -q '"ts":0.255,' "$tmp/chrome" && grep -q '"ts":1.100,' "$tmp/chrome" && ok "chrome: ts printed with 3 decimals" ||
    bad "chrome: ts format"
# twice and its square end at the same time: E of the inner one first
jq -r '.traceEvents[] | select(.tid == 101 and .ph == "E") | "\(.ts) \(.name)"' "$tmp/chrome" | tail -n 2 >"$tmp/t101"
same "chrome: equal end times close inner first" "$tmp/t101" "1.1 sample_square
1.1 sample_twice"
# calls of zero length at equal times: still balanced, nested, counted
run "$tmp/ties" --format=chrome
status "chrome, equal times: exit 0" 0
nest=$(chrome_check "$tmp/out" "$tmp/ties.sum")
[ "$nest" = "nesting ok" ] && ok "chrome, equal times: B/E balance and nest" || bad "chrome, equal times: $nest"
same "chrome, equal times: B count and E-B ns per function" "$tmp/ties.sum" "sample_fib,3,5
sample_helper,1,5
sample_leaf,3,2
sample_main,1,0"
check_against_report "equal times" "$tmp/ties"

# ---- folded ----
run "$s" --format=folded
status "folded: exit 0, quiet" 0
cp "$tmp/out" "$tmp/folded"
same "folded: exact lines" "$tmp/folded" "sample_main 50
sample_main;sample_helper 20
sample_main;sample_helper;sample_leaf 30
sample_fib 65
sample_fib;sample_fib 25
sample_fib;sample_fib;sample_fib 10
sample_square 30
sample_square;0x10 10
sample_twice 30
sample_twice;sample_square 10"
run "$s" --format=folded --per-thread --value=calls
status "folded --per-thread --value=calls: exit 0" 0
same "folded --per-thread --value=calls: exact lines" "$tmp/out" "main-100;sample_main 1
main-100;sample_main;sample_helper 1
main-100;sample_main;sample_helper;sample_leaf 1
main-100;sample_fib 1
main-100;sample_fib;sample_fib 2
main-100;sample_fib;sample_fib;sample_fib 1
worker-101;sample_square 1
worker-101;sample_square;0x10 1
worker-101;sample_twice 1
worker-101;sample_twice;sample_square 1"
run "$s" --format=folded --tid=101 -N '*square'
status "folded with filters: exit 0" 0
same "folded with --tid and -N: exact lines" "$tmp/out" "sample_twice 40"
run "$s" --format=folded --min-duration=30
same "folded --min-duration: dropped calls' time in their callers" "$tmp/out" "sample_main 50
sample_main;sample_helper 20
sample_main;sample_helper;sample_leaf 30
sample_fib 70
sample_fib;sample_fib 30
sample_square 40
sample_twice 40"

# ---- callgrind ----
run "$s" --format=callgrind
status "callgrind: exit 0, quiet" 0
cp "$tmp/out" "$tmp/cg"
module=$(readlink -f "$gen")
sed -e "s|=$module\$|=MODULE|" -e 's|=/.*/tests/trace_builder\.c$|=SRC|' \
    -e 's/^\(calls=[0-9]* \)[1-9][0-9]*$/\1L/' -e 's/^[1-9][0-9]* /L /' "$tmp/cg" >"$tmp/cg.generic"
same "callgrind: exact (module, source and lines generic)" "$tmp/cg.generic" "# callgrind format
# recursion: calls made while their function was already running cost 0 on their
# call lines (their time is in the outermost call's), so inclusive times are exact
version: 1
creator: nanoprof 0.1.0
pid: 4242
cmd: ./sample --flag a,b \"c\"
positions: line
events: ns
summary: 280

ob=???
fl=???
fn=(root)
0 0
cob=MODULE
cfl=SRC
cfn=sample_square
calls=1 L
0 40
cob=MODULE
cfl=SRC
cfn=sample_main
calls=1 L
0 100
cob=MODULE
cfl=SRC
cfn=sample_fib
calls=1 L
0 100
cob=MODULE
cfl=SRC
cfn=sample_twice
calls=1 L
0 40

ob=MODULE
fl=SRC
fn=sample_main
L 50
cob=MODULE
cfl=SRC
cfn=sample_helper
calls=1 L
L 50

ob=MODULE
fl=SRC
fn=sample_helper
L 20
cob=MODULE
cfl=SRC
cfn=sample_leaf
calls=1 L
L 30

ob=MODULE
fl=SRC
fn=sample_leaf
L 30

ob=MODULE
fl=SRC
fn=sample_square
L 40
cob=???
cfl=???
cfn=0x10
calls=1 0
L 10

ob=???
fl=???
fn=0x10
0 10

ob=MODULE
fl=SRC
fn=sample_twice
L 30
cob=MODULE
cfl=SRC
cfn=sample_square
calls=1 L
L 10

ob=MODULE
fl=SRC
fn=sample_fib
L 100
cob=MODULE
cfl=SRC
cfn=sample_fib
calls=3 L
L 0"
# positions: each function's own DWARF line, the same on its calls
helper_line=$("$np" report --format=csv "$s" | grep '^sample_helper,' | awk -F, '{ print $10 }')
grep -A1 '^fn=sample_helper$' "$tmp/cg" | tail -n 1 | grep -q "^$helper_line 20\$" &&
    grep -B1 -A1 '^cfn=sample_helper$' "$tmp/cg" | grep -q "^calls=1 $helper_line\$" &&
    ok "callgrind: positions are DWARF lines ($helper_line)" || bad "callgrind: positions"
annotate "$tmp/cg" >"$tmp/got"
same "callgrind_annotate: self per function" "$tmp/got" "0x10,10
sample_fib,100
sample_helper,20
sample_leaf,30
sample_main,50
sample_square,40
sample_twice,30"
[ "$(program_total)" = 280 ] && ok "callgrind_annotate: program total 280" || bad "callgrind_annotate total"
annotate "$tmp/cg" --inclusive=yes >"$tmp/got"
same "callgrind_annotate --inclusive=yes: report's totals, (root) the threads'" "$tmp/got" "(root),280
0x10,10
sample_fib,100
sample_helper,50
sample_leaf,30
sample_main,100
sample_square,50
sample_twice,40"

# the same checks as for a recorded program
check_against_report "sample" "$s"

# ---- -o: the same bytes, written whole or not at all ----
for f in chrome folded callgrind; do
    run "$s" --format=$f -o "$tmp/dump.$f"
    status "-o $f: exit 0, quiet" 0
    [ ! -s "$tmp/out" ] && cmp -s "$tmp/dump.$f" "$tmp/$( [ $f = callgrind ] && echo cg || echo $f)" &&
        ok "-o $f: the same bytes as stdout" || bad "-o $f: the same bytes as stdout"
done
umask 022
echo old >"$tmp/keep"
run "$s" --format=folded --output="$tmp/keep"
[ "$rc" = 0 ] && cmp -s "$tmp/keep" "$tmp/folded" && ok "--output replaces a file" || bad "--output replaces a file"
[ "$(stat -c %a "$tmp/keep")" = 644 ] && ok "-o: the mode umask gives" || bad "-o: mode $(stat -c %a "$tmp/keep")"
echo old >"$tmp/keep"
run "$tmp/corrupt" --format=folded -o "$tmp/keep"
status_loss "-o, damaged trace: exit 1, the error, the loss" 1 "corrupt varint in VALUES event" "1 of 1 trace file cut short"
[ "$(cat "$tmp/keep")" = old ] && ok "-o, damaged trace: the file is left as it was" || bad "-o, damaged trace: file changed"
run "$tmp/missing" --format=folded -o "$tmp/new"
status "-o, missing trace: exit 1, one line" 1 "missing: cannot open"
[ -e "$tmp/new" ] && bad "-o, missing trace: no file" || ok "-o, missing trace: no file"
run "$s" --format=chrome -o "$tmp/nodir/out.json"
status "-o in a missing directory: exit 1, one line" 1 "cannot write .*nodir/out.json: No such file or directory"
mkdir -p "$tmp/isdir/sub"
run "$s" --format=chrome -o "$tmp/isdir/sub"
status "-o onto a directory: exit 1, one line" 1 "cannot write .*isdir/sub: Is a directory"
[ "$(ls "$tmp/isdir")" = sub ] && ok "-o onto a directory: no file left behind" || bad "-o: left $(ls "$tmp/isdir")"
run "$s" --format=folded -o "$tmp/chrome/x"
status "-o below a file: exit 1, one line" 1 "cannot write .*: Not a directory"

# ---- damaged and missing traces, usage ----
run "$tmp/corrupt" --format=folded
status_loss "damaged trace: exit 1, the error, the loss" 1 "corrupt varint in VALUES event" "1 of 1 trace file cut short"
grep -q '^0x1234 10$' "$tmp/out" && ok "damaged trace: what was read goes to stdout" || bad "damaged trace: stdout"
run "$tmp/missing" --format=chrome
status "missing trace: exit 1, one line" 1 "missing: cannot open: No such file or directory"
run "$s" --format=xml
status "unknown format: exit 2, one line" 2 "unknown format 'xml'"
run "$s"
status "no format: exit 2, one line" 2 "--format=FORMAT is required"
run "$s" --format=chrome --value=calls
status "--value with chrome: exit 2" 2 "--value does not apply to format chrome"
run "$s" --format=chrome --exclude-switched
status "--exclude-switched with chrome: exit 2" 2 "--exclude-switched does not apply to format chrome"
run "$s" --format=callgrind --exclude-switched
[ "$rc" = 0 ] && grep -q '^summary: 275$' "$tmp/out" && ok "callgrind --exclude-switched: 5 ns less" ||
    bad "callgrind --exclude-switched"
run "$s" --format=callgrind --per-thread
status "--per-thread with callgrind: exit 2" 2 "--per-thread does not apply to format callgrind"
run "$s" --format=folded --value=bogus
status "bad --value: exit 2" 2 "unknown value 'bogus'"
run "$s" --format=folded -o
status "-o without a value: exit 2" 2 "needs a value"
run "$s" "$s" --format=folded
status "two paths: exit 2" 2 "unexpected argument"
run --help
status "--help: exit 0" 0
head -n 1 "$tmp/out" | grep -q '^usage: nanoprof dump' && ok "--help: usage" || bad "--help: usage"
for f in chrome folded callgrind; do
    grep -q "^  $f  " "$tmp/out" && ok "--help lists $f" || bad "--help lists $f"
done
"$np" --help | grep -q '^  dump ' && ok "nanoprof --help lists dump" || bad "nanoprof --help lists dump"

finish
