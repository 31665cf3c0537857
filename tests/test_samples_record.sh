#!/bin/sh
# test_samples_record.sh NANOPROF SAMPLE_PROG_BARE - the views on a real
# program sampled by `nanoprof record --sample=997`: sample_prog (no
# instrumentation, frame pointers) in mode "shares", whose thread_a burns
# some 75% of its CPU time in fa and 25% in fb and prints what it measured
# of each, thread_b runs fc, main fm. The report, estimated from the
# samples on its own, gives fa and fb their shares of the samples within
# the binomial spread of their number, and times in whole periods; tree
# shows every thread; both say the times are estimated. (test_sample_cli
# checks the same recording sample by sample.)
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
# fa's share of the samples in fa and fb: each falls in fa with the
# probability p, fa's share of the CPU time the program measured in the
# two; within 4 standard deviations of the binomial (sqrt(p (1 - p) / n)
# of n samples), plus 0.005 for how the program splits the time it
# measured (test_sample.c, expect_share)
awk -F'[ ,]' '
    FNR == NR { if ($1 == "cpu") cpu[$2] = $3; next }
    $1 == "fa" || $1 == "fb" { n[$1] = $2; self[$1] = $4 }
    END {
        if (!cpu["fa"] || !cpu["fb"]) { print "FAIL sample_prog printed no cpu fa or cpu fb line"; exit }
        if (!n["fa"] || !n["fb"]) { print "FAIL fa or fb has no samples in the report"; exit }
        p = cpu["fa"] / (cpu["fa"] + cpu["fb"]); all = n["fa"] + n["fb"]
        got = n["fa"] / all; tol = 4 * sqrt(p * (1 - p) / all) + 0.005
        d = got - p; if (d < 0) d = -d
        printf "%s fa: %.3f of the %d samples in fa and fb, %.3f +- %.3f measured\n", (d <= tol ? "ok  " : "FAIL"), got, all, p, tol
        # a sample is whole periods of 1003009 ns (997 Hz), at least one
        for (f in n) {
            periods = self[f] / 1003009
            whole = periods == int(periods) && periods >= n[f]
            printf "%s %s: %d samples, %s ns of self time: %s\n", (whole ? "ok  " : "FAIL"), f, n[f], self[f],
                   (whole ? "whole periods, one or more a sample" : "not whole periods, one or more a sample")
        }
    }' "$tmp/rec.out" "$tmp/out" >"$tmp/shares"
cat "$tmp/shares"
pass=$((pass + $(grep -c '^ok ' "$tmp/shares")))
fail=$((fail + $(grep -c '^FAIL' "$tmp/shares")))
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
