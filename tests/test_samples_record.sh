#!/bin/sh
# test_samples_record.sh NANOPROF SAMPLE_PROG_BARE - the views on a real
# program sampled by `nanoprof record --sample=997`: sample_prog (no
# instrumentation, frame pointers) in mode "shares", whose thread_a burns
# 75% of its CPU time in fa and 25% in fb, thread_b runs fc, main fm. The
# report, estimated from the samples on its own, gives fa and fb their
# shares within 7 points; tree shows every thread; both say the times are
# estimated.
set -u
np=$1
prog=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"

"$np" record --sample=997 -o "$tmp/t" -- "$prog" shares >"$tmp/rec.out" 2>"$tmp/rec.err" ||
    { echo "FAIL recording"; cat "$tmp/rec.err"; exit 1; }

run "$tmp/t" --format=csv
status "report: exit 0, quiet" 0
head -n 1 "$tmp/out" | grep -q '^function,calls,total_ns,self_ns,min_ns,max_ns,.*,source,time_unit,resynced$' &&
    ok "csv: header" || bad "csv: header"
share=$(awk -F, '$1 == "fa" { a = $4 } $1 == "fb" { b = $4 }
    END { if (a + b > 0) printf "%d", 100 * a / (a + b) + 0.5; else print "none" }' "$tmp/out")
echo "fa's share of fa + fb (self time): $share% (75% run)"
case $share in
    none) bad "fa and fb not in the report" ;;
    *) [ "$share" -ge 68 ] && [ "$share" -le 82 ] && ok "fa: $share% of thread_a's fa + fb, 75% run" ||
        bad "fa: $share%, want 75 +- 7" ;;
esac
grep -q ',samples,ns,0$' "$tmp/out" && ! grep -q ',calls,ns,0$' "$tmp/out" && ok "csv: source samples" ||
    bad "csv: source"
run "$tmp/t"
grep -Eq '^# times estimated from [0-9]+ samples at 997 Hz \(CPU time\)(; [0-9]+ periods? not sampled \(in a hook before it knew its function, or no buffer\))?$' "$tmp/out" &&
    grep -q ' Samples ' "$tmp/out" && ok "text: the label" || { bad "text: the label"; head -n 3 "$tmp/out"; }

np_cmd=tree
run "$tmp/t"
status "tree: exit 0, quiet" 0
[ "$(grep -c ' thread [0-9]* ' "$tmp/out")" = 3 ] && ok "tree: main, thread_a and thread_b" ||
    { bad "tree: want 3 threads"; cat "$tmp/out"; }
for f in thread_a fa fb thread_b fc fm; do
    grep -q "[^a-z_]$f\$" "$tmp/out" || { bad "tree: no $f"; cat "$tmp/out"; }
done
grep -q 'call tree of 3 threads, CPU time (estimated)' "$tmp/out" && ok "tree: the label" || bad "tree: the label"
finish
