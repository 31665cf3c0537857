#!/bin/sh
# test_samples_cli.sh NANOPROF GEN - the views on a profile estimated from
# samples (docs/sampling.md), on the traces `test_analyze_gen samples` and
# `samples_calls` write (tb_samples_trace; numbers in tests/trace_builder.h):
# exact report (text, CSV, JSON), tree, graph and folded lines, the labels
# every view and exporter gives, and --samples on a trace with calls too.
set -u
np=$1
gen=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
need jq callgrind_annotate

"$gen" samples "$tmp/s" && "$gen" samples_calls "$tmp/c" || { echo "FAIL generating"; exit 1; }
label="# times estimated from 8 samples at 1000 Hz (CPU time); 5 periods not sampled (in a hook before it knew its function, or no buffer)"

# ---- report: samples only, so from the samples on its own ----
run "$tmp/s"
status "text: exit 0, quiet" 0
same "text: label, Samples column, no per-call times" "$tmp/out" "# $tmp/s: 1 process, 2 threads, 8 samples of 7 functions, CPU time (estimated)
$label
       Total         Self    Samples      Average          Min          Max  Function
  ==========   ==========   ========   ==========   ==========   ==========  ========
    6.000 ms         0 ns          5            -            -            -  sample_main
    4.000 ms         0 ns          3            -            -            -  sample_helper
    4.000 ms     4.000 ms          3            -            -            -  sample_leaf
    3.000 ms     3.000 ms          3            -            -            -  sample_square
    3.000 ms         0 ns          3            -            -            -  sample_twice
    1.000 ms     1.000 ms          1            -            -            -  0x10
    1.000 ms     1.000 ms          1            -            -            -  sample_fib"
run "$tmp/s" --format=csv
cut -d, -f1-7,11 "$tmp/out" >"$tmp/csv"
same "csv: calls are samples, no min/max/avg, source" "$tmp/csv" "function,calls,total_ns,self_ns,min_ns,max_ns,avg_ns,source
sample_main,5,6000000,0,,,,samples
sample_helper,3,4000000,0,,,,samples
sample_leaf,3,4000000,4000000,,,,samples
sample_square,3,3000000,3000000,,,,samples
sample_twice,3,3000000,0,,,,samples
0x10,1,1000000,1000000,,,,samples
sample_fib,1,1000000,1000000,,,,samples"
run "$tmp/s" --format=json
jq -r '[.source, .time, .estimate, .sampling.hz, .sampling.samples, .sampling.periods, .sampling.skipped,
        (.functions[] | select(.name == "sample_leaf") | .calls, .self_ns, .min_ns, .max_ns, .avg_ns)]
       | map(tostring) | join(" ")' "$tmp/out" >"$tmp/json"
same "json: source, sampling, null per-call times" "$tmp/json" \
    "samples cpu times estimated from 8 samples at 1000 Hz (CPU time); 5 periods not sampled (in a hook before it knew its function, or no buffer) 1000 8 9 5 3 4000000 null null null"

# ---- calls and samples: the exact calls, unless --samples ----
run "$tmp/c"
same "text: calls, and a line about the samples" "$tmp/out" "# $tmp/c: 1 process, 2 threads (1 with no calls recorded), 1 calls of 1 functions, wall time
# the trace also holds 8 samples: --samples shows the profile estimated from them
       Total         Self      Calls      Average          Min          Max  Function
  ==========   ==========   ========   ==========   ==========   ==========  ========
    5.500 us     5.500 us          1     5.500 us     5.500 us     5.500 us  sample_main"
run "$tmp/c" --format=csv
grep -q '^sample_main,1,5500,5500,5500,5500,5500,.*,calls,ns,0$' "$tmp/out" && ok "csv: source calls" || bad "csv: source calls"
run "$tmp/c" --samples --format=csv
cut -d, -f1-7,11 "$tmp/out" >"$tmp/csv2"
same "--samples: the same profile as samples alone" "$tmp/csv2" "$(cat "$tmp/csv")"
run "$tmp/c" --samples --tid=201 -N sample_square --format=csv
cut -d, -f1-4,11 "$tmp/out" >"$tmp/tid"
same "--samples --tid -N" "$tmp/tid" "function,calls,total_ns,self_ns,source
0x10,1,1000000,1000000,samples
sample_twice,1,1000000,0,samples"

# ---- tree, graph ----
np_cmd=tree
run "$tmp/s" --ascii
status "tree: exit 0" 0
same "tree: every thread, Samples column, label" "$tmp/out" "# $tmp/s: call tree of 2 threads, CPU time (estimated)
$label
   Samples        Total         Self  Total%  Function
         5     6.000 ms               100.0%  thread 200 \"main\" (pid 4545)
         5     6.000 ms         0 ns  100.0%  \`- sample_main
         3     4.000 ms         0 ns   66.7%     |- sample_helper
         3     4.000 ms     4.000 ms   66.7%     |  \`- sample_leaf
         1     1.000 ms     1.000 ms   16.7%     |- sample_square
         1     1.000 ms         0 ns   16.7%     \`- sample_fib
         1     1.000 ms     1.000 ms   16.7%        \`- sample_fib
         3     3.000 ms               100.0%  thread 201 \"worker\" (pid 4545)
         3     3.000 ms         0 ns  100.0%  \`- sample_twice
         2     2.000 ms     2.000 ms   66.7%     |- sample_square
         1     1.000 ms     1.000 ms   33.3%     \`- 0x10"
np_cmd=graph
run "$tmp/s" sample_square
same "graph: label, samples column, arcs" "$tmp/out" "# $tmp/s: call graph of 7 functions, total time 9.000 ms, CPU time (estimated)
$label
index  % time        total         self       samples  name
                  1.000 ms                        1/3      sample_main [1]
                  2.000 ms                        2/3      sample_twice [5]
[4]      33.3     3.000 ms     3.000 ms             3  sample_square [4]
-----------------------------------------------"

# ---- exporters ----
np_cmd=dump
run --format=folded "$tmp/s"
status "folded: the label on stderr" 0 "folded: times estimated from 8 samples at 1000 Hz (CPU time)"
same "folded: one line per sampled path, self ns" "$tmp/out" "sample_main;sample_helper;sample_leaf 4000000
sample_main;sample_square 1000000
sample_main;sample_fib;sample_fib 1000000
sample_twice;sample_square 2000000
sample_twice;0x10 1000000"
run --format=folded --value=calls "$tmp/s"
same "folded: --value=calls, the samples through each path" "$tmp/out" "sample_main 5
sample_main;sample_helper 3
sample_main;sample_helper;sample_leaf 3
sample_main;sample_square 1
sample_main;sample_fib 1
sample_main;sample_fib;sample_fib 1
sample_twice 3
sample_twice;sample_square 2
sample_twice;0x10 1"
run --format=callgrind "$tmp/s"
status "callgrind: exit 0, quiet" 0
grep -qx 'desc: Estimate: times estimated from 8 samples at 1000 Hz (CPU time); 5 periods not sampled (in a hook before it knew its function, or no buffer), calls are samples' "$tmp/out" &&
    grep -qx 'summary: 9000000' "$tmp/out" && ok "callgrind: desc line, summary" || bad "callgrind: desc line"
cp "$tmp/out" "$tmp/callgrind.out"
callgrind_annotate "$tmp/callgrind.out" >"$tmp/ann" 2>&1 && grep -q 'Estimate: times estimated' "$tmp/ann" &&
    ok "callgrind_annotate reads it, shows the estimate" || { bad "callgrind_annotate"; cat "$tmp/ann"; }
# the timeline from successive samples: a frame that stays on the stack
# is one call, from the start of its first sample's period (a sample at t
# stands for the 1 ms, or 2 with an overrun, before t) to its last sample;
# a frame that leaves ends at the sample before
run --format=chrome "$tmp/s"
status "chrome: exit 0, quiet (the estimate is in otherData)" 0
jq -r '.otherData.estimate, .otherData.events, (.traceEvents[] | select(.ph != "M") | "\(.ph) \(.tid) \(.ts) \(.name)")' \
    "$tmp/out" >"$tmp/chrome"
same "chrome: calls estimated from successive samples" "$tmp/chrome" "times estimated from 8 samples at 1000 Hz (CPU time); 5 periods not sampled (in a hook before it knew its function, or no buffer)
each call spans the successive samples its frame was on the stack in
B 200 0 sample_main
B 200 0 sample_helper
B 200 0 sample_leaf
E 200 1002 sample_leaf
E 200 1002 sample_helper
B 200 1002 sample_square
E 200 1003 sample_square
B 200 1003 sample_fib
B 200 1003 sample_fib
E 200 1004 sample_fib
E 200 1004 sample_fib
E 200 1004 sample_main
B 201 0.5 sample_twice
B 201 0.5 sample_square
E 201 1001.5 sample_square
B 201 1001.5 0x10
E 201 1002.5 0x10
E 201 1002.5 sample_twice"
np_cmd=flame
run "$tmp/s" -o "$tmp/f.svg"
status "flame: exit 0" 0
grep -q "times estimated from 8 samples at 1000 Hz (CPU time)" "$tmp/f.svg" &&
    grep -q '<title>sample_leaf (samples 3, total 4.000 ms' "$tmp/f.svg" &&
    ok "flame: subtitle and tooltips say samples" || bad "flame: labels"
np_cmd=replay
run "$tmp/s"
status "replay: exit 0" 0
same "replay: the same calls, labelled" "$tmp/out" "# $tmp/s: every call, CPU time (estimated)
# each call spans the successive samples its frame was on the stack in
$label
         Start     Duration  Function
# thread 200 \"main\" (pid 4545)
  -0.000999000               sample_main {
  -0.000999000                 sample_helper {
  -0.000999000     1.002 ms      sample_leaf
                   1.002 ms    } /* sample_helper */
   0.000003000     1.000 us    sample_square
   0.000004000                 sample_fib {
   0.000004000     1.000 us      sample_fib
                   1.000 us    } /* sample_fib */
                   1.004 ms  } /* sample_main */
# thread 201 \"worker\" (pid 4545)
  -0.000998500               sample_twice {
  -0.000998500     1.001 ms    sample_square
   0.000002500     1.000 us    0x10
                   1.002 ms  } /* sample_twice */
# 9 calls in 2 threads"
run "$tmp/s" --tid=201 -N 0x10
same "replay: --tid, -N (a sample left out ends the calls open)" "$tmp/out" "# $tmp/s: every call, CPU time (estimated)
# each call spans the successive samples its frame was on the stack in
# times estimated from 2 samples at 1000 Hz (CPU time); 3 periods not sampled (in a hook before it knew its function, or no buffer)
         Start     Duration  Function
# thread 201 \"worker\" (pid 4545)
  -0.000998500               sample_twice {
  -0.000998500     1.001 ms    sample_square
                   1.001 ms  } /* sample_twice */
# 2 calls in 1 thread"
finish
