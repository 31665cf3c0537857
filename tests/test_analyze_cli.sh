#!/bin/sh
# test_analyze_cli.sh NANOPROF GEN - `nanoprof report` end to end on the
# traces test_analyze_gen writes (tb_sample_trace; numbers explained in
# tests/trace_builder.h): exact CSV rows, JSON that jq parses and that
# agrees with the CSV, the text layout, filters, exit codes and one-line
# errors and warnings, every cut of a trace, the progress bar on a tty.
set -u
np=$1
gen=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
need jq script

mkdir -p "$tmp/home"
for kind in sample noend truncated version corrupt v1 damaged impossible; do
    "$gen" "$kind" "$tmp/$kind" || { echo "FAIL generating $kind"; exit 1; }
done

# ---- the sample trace: CSV exactly ----
run "$tmp/sample" --format=csv
status "csv: exit 0, quiet" 0
cut -d, -f1-7 "$tmp/out" >"$tmp/csv7"
same "csv: header and rows" "$tmp/csv7" "function,calls,total_ns,self_ns,min_ns,max_ns,avg_ns
sample_fib,4,100,100,5,100,36
sample_main,1,100,50,100,100,100
sample_helper,1,50,20,50,50,50
sample_square,2,50,40,10,40,25
sample_twice,1,40,30,40,40,40
sample_leaf,1,30,30,30,30,30
0x10,1,10,10,10,10,10"
head -n 1 "$tmp/out" | grep -q '^function,calls,total_ns,self_ns,min_ns,max_ns,' && ok "csv: header prefix" ||
    bad "csv: header prefix"
genpath=$(readlink -f "$gen")
grep "^sample_helper," "$tmp/out" | cut -d, -f8- >"$tmp/src"
if grep -q "^$genpath,.*trace_builder\.c,[0-9][0-9]*,calls,ns,0\$" "$tmp/src"; then ok "csv: module, file, line"; else
    bad "csv: module, file, line"; cat "$tmp/src"; fi
cp "$tmp/out" "$tmp/csv"

# ---- JSON: parses, and agrees with the CSV ----
run "$tmp/sample" --format=json
status "json: exit 0" 0
if jq -e '(.functions | length) == 7 and (.threads | length) == 2 and .processes[0].pid == 4242
          and .processes[0].complete and .processes[0].events_lost == 0 and .status == "ok"
          and .processes[0].command[2] == "a,b \"c\""' "$tmp/out" >/dev/null; then
    ok "json: parses, metadata"
else
    bad "json: parses, metadata"; cat "$tmp/out"
fi
jq -r '.functions[] | [.name, .calls, .total_ns, .self_ns, .min_ns, .max_ns, .avg_ns] | map(tostring) | join(",")' \
    "$tmp/out" >"$tmp/json7"
tail -n +2 "$tmp/csv7" | diff - "$tmp/json7" >/dev/null && ok "json: agrees with csv" || bad "json: agrees with csv"

# ---- text ----
run "$tmp/sample"
status "text: exit 0" 0
if sed -n 2p "$tmp/out" | grep -q 'Total.*Self.*Calls.*Average.*Min.*Max.*Function' &&
    grep -Eq '^ +100 ns +100 ns +4 +36 ns +5 ns +100 ns +sample_fib$' "$tmp/out" &&
    [ "$(grep -c ' ns ' "$tmp/out")" = 7 ]; then
    ok "text: header and rows"
else
    bad "text: header and rows"; cat "$tmp/out"
fi

# ---- sorting and filters ----
names() { "$np" report "$@" --format=csv | tail -n +2 | cut -d, -f1 | tr '\n' ' '; }
[ "$(names "$tmp/sample" --sort=name)" = "0x10 sample_fib sample_helper sample_leaf sample_main sample_square sample_twice " ] &&
    ok "sort=name" || bad "sort=name: $(names "$tmp/sample" --sort=name)"
[ "$(names "$tmp/sample" --sort=calls)" = "sample_fib sample_square 0x10 sample_helper sample_leaf sample_main sample_twice " ] &&
    ok "sort=calls" || bad "sort=calls: $(names "$tmp/sample" --sort=calls)"
[ "$(names "$tmp/sample" --sort=self | cut -d' ' -f1-2)" = "sample_fib sample_main" ] && ok "sort=self" || bad "sort=self"
[ "$(names "$tmp/sample" --sort max | cut -d' ' -f1)" = "sample_fib" ] && ok "sort max (separate value)" ||
    bad "sort max"
[ "$(names "$tmp/sample" --tid=101)" = "sample_square sample_twice 0x10 " ] && ok "--tid" ||
    bad "--tid: $(names "$tmp/sample" --tid=101)"
[ "$(names "$tmp/sample" -N '*helper')" = "sample_fib sample_main sample_square sample_twice 0x10 " ] &&
    ok "-N" || bad "-N: $(names "$tmp/sample" -N '*helper')"
[ "$(names "$tmp/sample" -F sample_helper -F 'sample_tw*')" = "sample_helper sample_twice sample_leaf sample_square " ] &&
    ok "-F" || bad "-F: $(names "$tmp/sample" -F sample_helper -F 'sample_tw*')"
[ "$(names "$tmp/sample" --depth=1)" = "sample_fib sample_main sample_square sample_twice " ] && ok "--depth" ||
    bad "--depth: $(names "$tmp/sample" --depth=1)"

# ---- the default path ----
cp -r "$tmp/sample" "$tmp/home/nanoprof.data"
(cd "$tmp/home" && "$np" report --format=csv >"$tmp/out" 2>"$tmp/err")
rc=$?
status "default path nanoprof.data" 0
cmp -s "$tmp/out" "$tmp/csv" && ok "default path: same report" || bad "default path: same report"

# ---- damaged and missing traces ----
run "$tmp/noend" --format=csv
status_loss "no END: a warning, then the loss" 0 "warning: .*no END chunk" "1 of 1 trace file cut short in 2 of 2 threads"
[ "$(wc -l <"$tmp/out")" = 8 ] && ok "no END: reported" || bad "no END: reported"
run "$tmp/truncated" --format=csv
status_loss "truncated: a warning, then the loss" 0 "warning: .*offset [0-9]*: file cut short" \
    "1 of 1 trace file cut short in 2 of 2 threads"
[ "$(wc -l <"$tmp/out")" -gt 1 ] && ok "truncated: prefix reported" || bad "truncated: prefix reported"
run "$tmp/version"
status "unknown version: error" 1 "1.npt: offset 8: trace format version 3"
[ -s "$tmp/out" ] && bad "unknown version: no report" || ok "unknown version: no report"
# version 1: read as ever, one note; a damaged chunk: said with its
# offset, skipped, counted among the losses (--strict: 3); a loss count
# no thread can have had (a bit of END's flipped, in version 1 which has
# no checksum to find it): damage, not 72057594037927936 events lost
run "$tmp/v1" --format=csv
status "version 1: read, and a note" 0 "note: .*/4242.npt: trace format version 1: chunks carry no checksums, damage may go unseen$"
cmp -s "$tmp/out" "$tmp/csv" && ok "version 1: the same report" || bad "version 1: the same report"
run "$tmp/damaged" --strict --format=csv
status_loss "damaged chunk: said, then the loss, exit 3" 3 \
    "warning: .*/4242.npt: offset [0-9]*: damaged EVENTS chunk of thread 100 (checksum mismatch): skipped its [0-9]* bytes$" \
    "1 damaged chunk skipped ([0-9]* bytes) in 1 of 2 threads (tid 100); calls around the losses are closed at the loss points$"
grep -q '^sample_square,2,50,40,' "$tmp/out" && ! grep -q '^sample_fib,' "$tmp/out" &&
    ok "damaged chunk: the rest read exactly" || { bad "damaged chunk: the rest"; cat "$tmp/out"; }
run "$tmp/impossible" --strict --format=csv
if [ "$rc" = 3 ] && [ "$(wc -l <"$tmp/err")" = 3 ] &&
    sed -n 2p "$tmp/err" | grep -q "warning: .*: offset [0-9]*: damaged END chunk: 72057594037927936 events lost, more than its 2 threads can have written: not counted$" &&
    sed -n 3p "$tmp/err" | grep -q "warning: 1 damaged chunk skipped (32 bytes)$"; then
    ok "impossible loss count: damage, said, not counted"
else
    bad "impossible loss count: exit $rc"; cat "$tmp/err"
fi
run "$tmp/corrupt" --format=csv
status_loss "corrupt: error, and the loss" 1 "1.npt: offset [0-9]*: corrupt varint in VALUES event" \
    "1 of 1 trace file cut short in 1 of 1 thread (tid 1)$"
grep -q '^0x1234,1,10,' "$tmp/out" && ok "corrupt: what came before is reported" || bad "corrupt: prefix"
run "$tmp/missing"
status "missing path" 1 "missing: cannot open: No such file or directory"
mkdir -p "$tmp/empty"
run "$tmp/empty"
status "empty directory" 1 "no .npt trace files"
# an empty file: nothing was written, which is no cut: one line, exit 1
: >"$tmp/empty.npt"
run "$tmp/empty.npt"
status "empty file: one clear line, exit 1" 1 \
    "^nanoprof report: $tmp/empty.npt: empty trace file: the program wrote nothing (killed before its first event?)$"
[ -s "$tmp/out" ] && bad "empty file: no report" || ok "empty file: no report"
mkdir -p "$tmp/withempty"
cp "$tmp/sample/4242.npt" "$tmp/withempty/"
: >"$tmp/withempty/4243.npt"
run "$tmp/withempty" --format=csv
status "a directory with an empty file: exit 1, that line" 1 "^nanoprof report: $tmp/withempty/4243.npt: empty trace file: "
[ "$(wc -l <"$tmp/out")" = 8 ] && ok "a directory with an empty file: the other file reported" ||
    bad "a directory with an empty file: the other file reported"

# ---- usage ----
run "$tmp/sample" --sort=bogus
status "bad sort key" 2 "unknown sort key 'bogus'"
run "$tmp/sample" --format=xml
status "bad format" 2 "unknown format 'xml'"
run "$tmp/sample" --bogus
status "unknown option" 2 "unknown option '--bogus'"
run "$tmp/sample" --depth=0
status "bad depth" 2 "bad depth '0'"
run "$tmp/sample" --tid=1,x
status "bad tid list" 2 "bad thread list"
run "$tmp/sample" -F
status "missing value" 2 "needs a value"
run "$tmp/sample" "$tmp/sample"
status "two paths" 2 "unexpected argument"
run --help
status "--help" 0
head -n 1 "$tmp/out" | grep -q '^usage: nanoprof report' && ok "--help: usage" || bad "--help: usage"
"$np" --help | grep -q '^  report ' && ok "nanoprof --help lists report" || bad "nanoprof --help lists report"

# ---- every cut of the sample: a warning or an error, never a crash ----
size=$(wc -c <"$tmp/sample/4242.npt")
mkdir -p "$tmp/cut"
n=0
cutfail=0
while [ "$n" -lt "$size" ]; do
    head -c "$n" "$tmp/sample/4242.npt" >"$tmp/cut/4242.npt"
    run "$tmp/cut" --format=csv
    if [ "$rc" = 0 ]; then
        grep -q 'warning: ' "$tmp/err" || { cutfail=1; echo "cut at $n: exit 0 without a warning"; }
    elif [ "$rc" != 1 ]; then
        cutfail=1; echo "cut at $n: exit $rc"; cat "$tmp/err"
    fi
    n=$((n + 1))
done
[ "$cutfail" = 0 ] && ok "every cut ($size offsets)" || bad "every cut"

# ---- progress bar: on a terminal for 8 MiB and more, never otherwise ----
"$gen" big "$tmp/big" || exit 1
run "$tmp/big"
if [ "$rc" = 0 ] && ! grep -q 'reading \[' "$tmp/err"; then ok "no progress bar off a terminal"; else
    bad "progress off a terminal"; fi
script -qec "'$np' report '$tmp/big' >/dev/null" /dev/null >"$tmp/tty" 2>&1
grep -q 'reading \[#*' "$tmp/tty" && ok "progress bar on a terminal" || { bad "progress bar on a terminal"; cat "$tmp/tty"; }
script -qec "'$np' report '$tmp/sample' >/dev/null" /dev/null >"$tmp/tty" 2>&1
grep -q 'reading' "$tmp/tty" && bad "no progress bar for a small trace" || ok "no progress bar for a small trace"

# the header says which time: wall, or wall less the switched-out time
run "$tmp/sample"
head -n 1 "$tmp/out" | grep -q ', wall time$' && ok "header: wall time" || bad "header: wall time"
run "$tmp/sample" --exclude-switched --format=csv
grep -q '^sample_square,2,45,35,' "$tmp/out" && ok "--exclude-switched: square's 5 ns out" || { bad "--exclude-switched"; cat "$tmp/out"; }
run "$tmp/sample" --exclude-switched
head -n 1 "$tmp/out" | grep -q ', wall time less switched-out time$' && ok "header: switched-out time excluded" ||
    bad "header: switched-out time excluded"
finish
