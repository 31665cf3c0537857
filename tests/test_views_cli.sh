#!/bin/sh
# test_views_cli.sh NANOPROF GEN REC_PROG REC_PLUGIN - `nanoprof graph`,
# `tree` and `replay` end to end: their exact output on the trace
# test_analyze_gen writes (tb_sample_trace; numbers explained in
# tests/trace_builder.h), the common filters, usage errors, one symbol in
# two modules in every view; then tests/programs/rec_prog.c recorded
# (NANOPROF_RECORD) and the calls of graph and tree checked against
# `nanoprof report`'s.
set -u
np=$(readlink -f "$1") # the test changes directory
gen=$(readlink -f "$2")
prog=$(readlink -f "$3")
plugin=$(readlink -f "$4") # a library with a static f1, as prog has
. "$(dirname "$0")/cli_test.sh"

# run CMD ARGS...: nanoprof CMD ARGS, stdout in $tmp/out (its first line, which
# names the trace, in $tmp/title, the rest in $tmp/body), stderr in $tmp/err,
# status in $rc
run() {
    "$np" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    head -n 1 "$tmp/out" >"$tmp/title"
    tail -n +2 "$tmp/out" >"$tmp/body"
}

"$gen" sample "$tmp/sample" || { echo "FAIL generating the sample"; exit 1; }
s=$tmp/sample

# ---- graph ----
run graph "$s"
status "graph: exit 0, quiet" 0
same "graph: title" "$tmp/title" "# $s: call graph of 7 functions, total time 280 ns, wall time"
same "graph: every entry" "$tmp/body" "index  % time        total         self        called  name
                     45 ns                          3      sample_fib [1]
                    100 ns                        1/4      <spontaneous>
[1]      35.7       100 ns       100 ns             4  sample_fib [1]
                     45 ns                          3      sample_fib [1]
-----------------------------------------------
                    100 ns                        1/1      <spontaneous>
[2]      35.7       100 ns        50 ns             1  sample_main [2]
                     50 ns                        1/1      sample_helper [3]
-----------------------------------------------
                     50 ns                        1/1      sample_main [2]
[3]      17.9        50 ns        20 ns             1  sample_helper [3]
                     30 ns                        1/1      sample_leaf [6]
-----------------------------------------------
                     10 ns                        1/2      sample_twice [5]
                     40 ns                        1/2      <spontaneous>
[4]      17.9        50 ns        40 ns             2  sample_square [4]
                     10 ns                        1/1      0x10 [7]
-----------------------------------------------
                     40 ns                        1/1      <spontaneous>
[5]      14.3        40 ns        30 ns             1  sample_twice [5]
                     10 ns                        1/2      sample_square [4]
-----------------------------------------------
                     30 ns                        1/1      sample_helper [3]
[6]      10.7        30 ns        30 ns             1  sample_leaf [6]
-----------------------------------------------
                     10 ns                        1/1      sample_square [4]
[7]       3.6        10 ns        10 ns             1  0x10 [7]
-----------------------------------------------"

run graph "$s" sample_helper
status "graph FUNCTION: exit 0" 0
same "graph FUNCTION: its entry alone, numbered as in the whole graph" "$tmp/body" "index  % time        total         self        called  name
                     50 ns                        1/1      sample_main [2]
[3]      17.9        50 ns        20 ns             1  sample_helper [3]
                     30 ns                        1/1      sample_leaf [6]
-----------------------------------------------"
run graph "$s" 'sample_[lm]*'
[ "$(grep -c '^\[' "$tmp/out")" = 2 ] && grep -q '^\[2\] .* sample_main \[2\]$' "$tmp/out" &&
    grep -q '^\[6\] .* sample_leaf \[6\]$' "$tmp/out" && ok "graph GLOB: the entries matching" ||
    { bad "graph GLOB"; cat "$tmp/out"; }
cp -r "$s" "$tmp/nanoprof.data"
(cd "$tmp" && "$np" graph sample_leaf >"$tmp/out" 2>"$tmp/err")
rc=$?
status "graph FUNCTION alone: the default trace" 0
grep -q '^\[6\] .* 1  sample_leaf \[6\]$' "$tmp/out" && ok "graph FUNCTION alone: its entry" ||
    { bad "graph FUNCTION alone"; cat "$tmp/out"; }
run graph "$s" nothing_here
status "graph: unknown function" 1 "^nanoprof graph: no function matches 'nothing_here'$"
[ -s "$tmp/out" ] && bad "graph: unknown function prints nothing" || ok "graph: unknown function prints nothing"

# filters reach the graph through the model
run graph "$s" --tid=101
grep '^\[' "$tmp/out" >"$tmp/primary"
same "graph --tid" "$tmp/primary" "[1]      62.5        50 ns        40 ns             2  sample_square [1]
[2]      50.0        40 ns        30 ns             1  sample_twice [2]
[3]      12.5        10 ns        10 ns             1  0x10 [3]"
run graph "$s" -N sample_helper sample_main
same "graph -N: the callee gone, its time in main's self" "$tmp/body" "index  % time        total         self        called  name
                    100 ns                        1/1      <spontaneous>
[2]      35.7       100 ns       100 ns             1  sample_main [2]
-----------------------------------------------"

# ---- tree ----
run tree "$s"
status "tree: exit 0, quiet" 0
same "tree: title" "$tmp/title" "# $s: call tree of 2 threads, wall time"
same "tree: both threads" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2       200 ns               100.0%  thread 100 \"main\" (pid 4242)
         1       100 ns        50 ns   50.0%  ├─ sample_main
         1        50 ns        20 ns   25.0%  │  └─ sample_helper
         1        30 ns        30 ns   15.0%  │     └─ sample_leaf
         1       100 ns        65 ns   50.0%  └─ sample_fib
         2        35 ns        25 ns   17.5%     └─ sample_fib
         1        10 ns        10 ns    5.0%        └─ sample_fib
         2        80 ns               100.0%  thread 101 \"worker\" (pid 4242)
         1        40 ns        30 ns   50.0%  ├─ sample_square
         1        10 ns        10 ns   12.5%  │  └─ 0x10
         1        40 ns        30 ns   50.0%  └─ sample_twice
         1        10 ns        10 ns   12.5%     └─ sample_square"
run tree "$s" --ascii --tid=101
same "tree --ascii --tid" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2        80 ns               100.0%  thread 101 \"worker\" (pid 4242)
         1        40 ns        30 ns   50.0%  |- sample_square
         1        10 ns        10 ns   12.5%  |  \`- 0x10
         1        40 ns        30 ns   50.0%  \`- sample_twice
         1        10 ns        10 ns   12.5%     \`- sample_square"
same "tree --tid: one thread in the title" "$tmp/title" "# $s: call tree of 1 thread, wall time"
run tree "$s" --ascii -F sample_helper
same "tree -F: the helper as the root's only child" "$tmp/body" "     Calls        Total         Self  Total%  Function
         1        50 ns               100.0%  thread 100 \"main\" (pid 4242)
         1        50 ns        20 ns  100.0%  \`- sample_helper
         1        30 ns        30 ns   60.0%     \`- sample_leaf"
run tree "$s" --ascii -N 'sample_[ht]*' --tid 100
same "tree -N: the helper's time in main's self" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2       200 ns               100.0%  thread 100 \"main\" (pid 4242)
         1       100 ns       100 ns   50.0%  |- sample_main
         1       100 ns        65 ns   50.0%  \`- sample_fib
         2        35 ns        25 ns   17.5%     \`- sample_fib
         1        10 ns        10 ns    5.0%        \`- sample_fib"
run tree "$s" --ascii --depth=2 --tid=100
same "tree --depth" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2       200 ns               100.0%  thread 100 \"main\" (pid 4242)
         1       100 ns        50 ns   50.0%  |- sample_main
         1        50 ns        50 ns   25.0%  |  \`- sample_helper
         1       100 ns        65 ns   50.0%  \`- sample_fib
         2        35 ns        35 ns   17.5%     \`- sample_fib"
run tree "$s" --ascii --min-duration=30ns
same "tree --min-duration" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2       200 ns               100.0%  thread 100 \"main\" (pid 4242)
         1       100 ns        50 ns   50.0%  |- sample_main
         1        50 ns        20 ns   25.0%  |  \`- sample_helper
         1        30 ns        30 ns   15.0%  |     \`- sample_leaf
         1       100 ns        70 ns   50.0%  \`- sample_fib
         1        30 ns        30 ns   15.0%     \`- sample_fib
         2        80 ns               100.0%  thread 101 \"worker\" (pid 4242)
         1        40 ns        40 ns   50.0%  |- sample_square
         1        40 ns        40 ns   50.0%  \`- sample_twice"
run tree "$s" -F nothing_matches
status "tree: nothing kept, exit 0, the pattern said" 0 "^nanoprof tree: warning: -F 'nothing_matches': matches no function of the trace (searched: 7 functions it holds, and the symbol tables of its 1 ELF file)$"
same "tree: nothing kept, no thread drawn, every one counted" "$tmp/out" "# $s: call tree of 2 threads (2 with no calls kept), wall time
     Calls        Total         Self  Total%  Function"

# ---- replay: printed as read (thread 100's first chunk, thread 101's,
# thread 100's second); a call with callees in two lines ----
run replay "$s"
status "replay: exit 0, quiet" 0
same "replay: title" "$tmp/title" "# $s: every call, wall time"
same "replay: every call" "$tmp/body" "         Start     Duration  Function
# thread 100 \"main\" (pid 4242)
   0.000000000               sample_main {
   0.000000010                 sample_helper {
   0.000000020        30 ns      sample_leaf
# thread 101 \"worker\" (pid 4242)
   0.000001000               sample_square {
   0.000001010        10 ns    0x10
                      40 ns  } /* sample_square */
   0.000001060               sample_twice {
   0.000001090        10 ns    sample_square
# thread 100 \"main\" (pid 4242)
                      50 ns    } /* sample_helper */
                     100 ns  } /* sample_main */
   0.000000200               sample_fib {
   0.000000210                 sample_fib {
   0.000000220        10 ns      sample_fib
                      30 ns    } /* sample_fib */
   0.000000250         5 ns    sample_fib
                     100 ns  } /* sample_fib */
# thread 101 \"worker\" (pid 4242)
                      40 ns  } /* sample_twice */
# 11 calls in 2 threads"
run replay "$s" --tid=100 -F sample_helper
same "replay --tid -F" "$tmp/body" "         Start     Duration  Function
# thread 100 \"main\" (pid 4242)
   0.000000010               sample_helper {
   0.000000020        30 ns    sample_leaf
                      50 ns  } /* sample_helper */
# 2 calls in 1 thread"
run replay "$s" -N sample_fib -N sample_twice
same "replay -N" "$tmp/body" "         Start     Duration  Function
# thread 100 \"main\" (pid 4242)
   0.000000000               sample_main {
   0.000000010                 sample_helper {
   0.000000020        30 ns      sample_leaf
# thread 101 \"worker\" (pid 4242)
   0.000001000               sample_square {
   0.000001010        10 ns    0x10
                      40 ns  } /* sample_square */
# thread 100 \"main\" (pid 4242)
                      50 ns    } /* sample_helper */
                     100 ns  } /* sample_main */
# 5 calls in 2 threads"
# main's line waits for main's next call, which its end in the third chunk tells
run replay "$s" --depth=1
same "replay --depth" "$tmp/body" "         Start     Duration  Function
# thread 101 \"worker\" (pid 4242)
   0.000001000        40 ns  sample_square
# thread 100 \"main\" (pid 4242)
   0.000000000       100 ns  sample_main
   0.000000200       100 ns  sample_fib
# thread 101 \"worker\" (pid 4242)
   0.000001060        40 ns  sample_twice
# 4 calls in 2 threads"
# main and helper are known to last 31 ns at the first chunk's end (leaf's
# exit): their lines come then; leaf, 30 ns, is left out
run replay "$s" --min-duration=31
same "replay --min-duration" "$tmp/body" "         Start     Duration  Function
# thread 100 \"main\" (pid 4242)
   0.000000000               sample_main {
# thread 101 \"worker\" (pid 4242)
   0.000001000        40 ns  sample_square
# thread 100 \"main\" (pid 4242)
   0.000000010        50 ns    sample_helper
                     100 ns  } /* sample_main */
   0.000000200       100 ns  sample_fib
# thread 101 \"worker\" (pid 4242)
   0.000001060        40 ns  sample_twice
# 5 calls in 2 threads"
run replay "$s" -F nothing_matches
status "replay: nothing kept, exit 0, the pattern said" 0 "^nanoprof replay: warning: -F 'nothing_matches': matches no function of the trace (searched: 7 functions it holds, and the symbol tables of its 1 ELF file)$"
same "replay: nothing kept, no thread" "$tmp/out" "# $s: every call, wall time
         Start     Duration  Function
# 0 calls in 2 threads (2 with no calls kept)"

# ---- a call 1000 deep (test_analyze_gen deep): every level printed, the
# nesting drawn 100 levels deep at most (then each line says its depth) ----
"$gen" deep "$tmp/deep" || { echo "FAIL generating deep"; exit 1; }
run tree --ascii "$tmp/deep"
status "deep tree: exit 0" 0
[ "$(wc -l <"$tmp/out")" = 1003 ] && ok "deep tree: a line per level" || bad "deep tree: $(wc -l <"$tmp/out") lines"
sed -n '104p' "$tmp/out" >"$tmp/level"
same "deep tree: level 101, the deepest drawn" "$tmp/level" \
    "$(printf '%10s %12s %12s %7s  %300s%s' 1 '1.799 us' '2 ns' 90.0% '' '`- sample_fib')"
tail -n 1 "$tmp/out" >"$tmp/last"
same "deep tree: the innermost call, its depth said" "$tmp/last" \
    "$(printf '%10s %12s %12s %7s  %300s%s' 1 '1 ns' '1 ns' 0.1% '' '[depth 1000] `- sample_fib')"
[ "$(awk 'length($0) > 400' "$tmp/out" | wc -l)" = 0 ] && ok "deep tree: no line over 400 characters" ||
    bad "deep tree: long lines"
run replay "$tmp/deep"
[ "$(wc -l <"$tmp/out")" = 2003 ] && ok "deep replay: two lines per level, one for the innermost" ||
    bad "deep replay: $(wc -l <"$tmp/out") lines"
sed -n '1003p' "$tmp/out" >"$tmp/last"
same "deep replay: the innermost call, its depth said" "$tmp/last" \
    "$(printf '%14s %12s  %200s%s' 0.000000999 '1 ns' '' '[depth 1000] sample_fib')"
sed -n '104p;1902p' "$tmp/out" >"$tmp/level"
same "deep replay: depth 101, the deepest drawn" "$tmp/level" "$(printf '%14s %12s  %200s%s\n' 0.000000100 '' '' 'sample_fib {' \
    '' '1.799 us' '' '} /* sample_fib */')"
sed -n '1004p' "$tmp/out" >"$tmp/level"
same "deep replay: its caller's end, its depth said" "$tmp/level" \
    "$(printf '%14s %12s  %200s%s' '' '3 ns' '' '[depth 999] } /* sample_fib */')"
[ "$(awk 'length($0) > 300' "$tmp/out" | wc -l)" = 0 ] && ok "deep replay: no line over 300 characters" ||
    bad "deep replay: long lines"
run graph "$tmp/deep"
grep 'sample_fib' "$tmp/out" | awk '{ print $(NF-2), $NF }' >"$tmp/arcs"
same "deep graph: the recursive arc" "$tmp/arcs" "999 [1]
1000 [1]
999 [1]"

# ---- one symbol in two modules: the module said, in every view ----
"$gen" twins "$tmp/twins" || { echo "FAIL generating twins"; exit 1; }
main_gen="sample_main [$(basename "$gen")]"
run report "$tmp/twins" --format=csv
cut -d, -f1-4 "$tmp/out" >"$tmp/got"
same "twins: report, one row each, told apart" "$tmp/got" "function,calls,total_ns,self_ns
$main_gen,1,40,20
sample_main [twin.elf],1,20,10
sample_helper,1,10,10
sample_leaf,1,10,10"
run tree --ascii "$tmp/twins"
same "twins: tree" "$tmp/body" "     Calls        Total         Self  Total%  Function
         2        50 ns               100.0%  thread 9 (pid 9)
         1        40 ns        20 ns   80.0%  |- $main_gen
         1        20 ns        10 ns   40.0%  |  \`- sample_main [twin.elf]
         1        10 ns        10 ns   20.0%  |     \`- sample_leaf
         1        10 ns        10 ns   20.0%  \`- sample_helper"
# replay and the Chrome export print each call as it is read, before the
# model has met every function: they show the symbol alone (analysis.md)
run replay "$tmp/twins"
awk 'NR > 3 && !/^#/ { sub(/^ *[0-9.]* +([0-9]+ ns)? +/, ""); print }' "$tmp/out" >"$tmp/got"
same "twins: replay" "$tmp/got" "sample_main {
sample_main {
sample_leaf
} /* sample_main */
} /* sample_main */
sample_helper"
run graph "$tmp/twins" sample_main
grep '^\[' "$tmp/out" | sed 's/.*  //' >"$tmp/got"
same "twins: graph FUNCTION matches the symbol, both shown" "$tmp/got" "$main_gen [1]
sample_main [twin.elf] [2]"
run dump --format=folded "$tmp/twins"
same "twins: folded" "$tmp/out" "$main_gen 20
$main_gen;sample_main [twin.elf] 10
$main_gen;sample_main [twin.elf];sample_leaf 10
sample_helper 10"
run dump --format=callgrind "$tmp/twins"
grep '^fn=' "$tmp/out" >"$tmp/got"
same "twins: callgrind" "$tmp/got" "fn=(root)
fn=$main_gen
fn=sample_main [twin.elf]
fn=sample_leaf
fn=sample_helper"
run dump --format=chrome "$tmp/twins"
sed -n 's/.*"ph":"B".*"name":"\([^"]*\)".*/\1/p' "$tmp/out" >"$tmp/got"
same "twins: chrome" "$tmp/got" "sample_main
sample_main
sample_leaf
sample_helper"
run flame "$tmp/twins" -o -
sed -n 's/.*<title>\(sample_main[^(]*\) (.*/\1/p' "$tmp/out" >"$tmp/got"
same "twins: flame" "$tmp/got" "$main_gen
sample_main [twin.elf]"

# ---- --depth=N: the outermost N levels, as --help says ----
run tree --help
grep -q -- "^  --depth=N      only the outermost N levels of calls (1: a thread's outermost$" "$tmp/out" &&
    ok "--help: --depth keeps the outermost N levels" || bad "--help: --depth"
run tree --ascii "$tmp/deep" --depth=3
same "tree --depth=3: three levels, the third's callees in its self time" "$tmp/body" \
"     Calls        Total         Self  Total%  Function
         1     1.999 us               100.0%  thread 8 (pid 8)
         1     1.999 us         2 ns  100.0%  \`- sample_fib
         1     1.997 us         2 ns   99.9%     \`- sample_fib
         1     1.995 us     1.995 us   99.8%        \`- sample_fib"
run replay "$tmp/deep" --depth=1
same "replay --depth=1: the outermost call only" "$tmp/body" "         Start     Duration  Function
# thread 8 (pid 8)
   0.000000000     1.999 us  sample_fib
# 1 call in 1 thread"
run tree --ascii "$s" -F sample_main --depth=2
same "tree -F --depth=2: levels count from the -F function" "$tmp/body" \
"     Calls        Total         Self  Total%  Function
         1       100 ns               100.0%  thread 100 \"main\" (pid 4242)
         1       100 ns        50 ns  100.0%  \`- sample_main
         1        50 ns        50 ns   50.0%     \`- sample_helper"

# ---- usage and failures, alike for the three ----
for cmd in graph tree replay; do
    run "$cmd" --help
    status "$cmd --help" 0
    grep -q "^usage: nanoprof $cmd \[PATH\]" "$tmp/out" && grep -q -- '--min-duration' "$tmp/out" &&
        ok "$cmd --help: usage and the common options" || bad "$cmd --help: usage"
    "$np" --help | grep -q "^  $cmd " && ok "nanoprof --help lists $cmd" || bad "nanoprof --help lists $cmd"
    run "$cmd" "$s" --bogus
    status "$cmd: unknown option" 2 "^nanoprof $cmd: unknown option '--bogus' (see nanoprof $cmd --help)$"
    run "$cmd" "$s" --depth=x
    status "$cmd: bad depth" 2 "^nanoprof $cmd: bad depth 'x'"
    run "$cmd" "$tmp/missing"
    status "$cmd: missing trace" 1 "^nanoprof $cmd: .*missing: cannot open: No such file or directory$"
    [ -s "$tmp/out" ] && bad "$cmd: missing trace prints nothing" || ok "$cmd: missing trace prints nothing"
done
run tree "$s" "$s"
status "tree: two paths" 2 "unexpected argument"
run replay "$s" "$s"
status "replay: two paths" 2 "unexpected argument"
run graph "$s" main extra
status "graph: three arguments" 2 "unexpected argument 'extra'"

# ---- a real program: graph and tree count the calls report counts ----
# calls per function: "name calls" lines, sorted
report_calls() { "$np" report "$1" --format=csv | tail -n +2 | cut -d, -f1-2 | tr , ' ' | sort; }
graph_calls() { "$np" graph "$1" | awk '/^\[/ { print $(NF-1), $(NF-2) }' | sort; }
tree_calls() {
    "$np" tree --ascii "$1" | awk 'NR > 2 && !/\(pid [0-9]+\)$/ { n[$NF] += $1 } END { for (f in n) print f, n[f] }' |
        sort
}
record() { # record DIR MODE...: rec_prog MODE... recorded into DIR
    dir=$1
    shift
    NANOPROF_RECORD="$dir" TSAN_OPTIONS=atexit_sleep_ms=0 "$prog" "$@" >/dev/null 2>"$tmp/rec.err" ||
        { bad "recording rec_prog $*"; cat "$tmp/rec.err"; }
}
record "$tmp/rec_tree" tree
record "$tmp/rec_threads" threads
record "$tmp/rec_fib" fib 12
record "$tmp/rec_named" named
record "$tmp/rec_dlopen" dlopen "$plugin"
for t in rec_tree rec_threads rec_fib; do
    report_calls "$tmp/$t" >"$tmp/report_calls"
    [ -s "$tmp/report_calls" ] || bad "$t: report lists functions"
    graph_calls "$tmp/$t" >"$tmp/graph_calls"
    tree_calls "$tmp/$t" >"$tmp/tree_calls"
    if cmp -s "$tmp/report_calls" "$tmp/graph_calls"; then ok "$t: graph's calls are report's"; else
        bad "$t: graph's calls are report's"; diff "$tmp/report_calls" "$tmp/graph_calls"; fi
    if cmp -s "$tmp/report_calls" "$tmp/tree_calls"; then ok "$t: tree's calls add up to report's"; else
        bad "$t: tree's calls add up to report's"; diff "$tmp/report_calls" "$tmp/tree_calls"; fi
    # a line per call: "name" alone, or "} /* name */" closing one with callees
    "$np" replay "$tmp/$t" | awk '/^#/ || NR <= 2 || / \{$/ { next }
        { n[/ \*\/$/ ? $(NF-1) : $NF]++ } END { for (f in n) print f, n[f] }' | sort >"$tmp/replay_calls"
    if cmp -s "$tmp/report_calls" "$tmp/replay_calls"; then ok "$t: replay has a line per call"; else
        bad "$t: replay has a line per call"; diff "$tmp/report_calls" "$tmp/replay_calls"; fi
done
# the counts rec_prog makes (tests/programs/rec_prog.c)
report_calls "$tmp/rec_tree" >"$tmp/calls"
same "tree mode: the calls rec_prog makes" "$tmp/calls" "a 3
b 2
leaf 8
main 1
top 1"
"$np" graph "$tmp/rec_tree" leaf | grep -E '^ .*[0-9]/8 ' | awk '{ print $(NF-2), $(NF-1) }' >"$tmp/leaf_callers"
same "graph leaf: its callers' shares" "$tmp/leaf_callers" "2/8 b
6/8 a"
"$np" tree --ascii "$tmp/rec_tree" | awk 'NR > 2 { print $1, (/\(pid [0-9]+\)$/ ? "thread" : $NF) }' >"$tmp/tree_paths"
same "tree mode: every path" "$tmp/tree_paths" "1 thread
1 main
1 top
3 a
6 leaf
2 b
2 leaf"
report_calls "$tmp/rec_threads" | grep -E '^(leaf|step|worker) ' >"$tmp/calls"
same "threads mode: the calls rec_prog makes" "$tmp/calls" "leaf 4010
step 4000
worker 2"
[ "$("$np" tree "$tmp/rec_threads" | grep -c '(pid [0-9]*)$')" = 3 ] && ok "threads mode: three roots" ||
    bad "threads mode: three roots"
"$np" replay "$tmp/rec_threads" --depth=1 >"$tmp/out"
[ "$(grep '^# thread ' "$tmp/out" | sort -u | wc -l)" = 3 ] && tail -n 1 "$tmp/out" | grep -q ' in 3 threads$' &&
    ok "threads mode: replay's three threads" || bad "threads mode: replay's three threads"
# the library's static f1 and the program's: one row each, with its module
report_calls "$tmp/rec_dlopen" | grep '^f1 ' >"$tmp/calls"
same "dlopen: f1 of the program and of the library told apart" "$tmp/calls" "f1 [$(basename "$plugin")] 3
f1 [$(basename "$prog")] 1"
# (siblings come largest first: the two at main's level may come either way)
"$np" tree --ascii "$tmp/rec_dlopen" >"$tmp/tree"
# (the tree's lines only: the title holds the trace's path, which may hold "f1")
sed -n 's/.*[|`]- \(f1 .*\|[a-z_]*work\)$/\1/p' "$tmp/tree" | LC_ALL=C sort >"$tmp/got"
same "dlopen: the tree, both f1 and plugin_work" "$tmp/got" "f1 [$(basename "$plugin")]
f1 [$(basename "$prog")]
plugin_work"
grep -A1 'plugin_work$' "$tmp/tree" | tail -n 1 | grep -qF -- "- f1 [$(basename "$plugin")]" &&
    ok "dlopen: plugin_work calls the library's f1" || { bad "dlopen: plugin_work's callee"; cat "$tmp/tree"; }
# NP_ENTER regions: named as marked (NAME chunks), nested as called
report_calls "$tmp/rec_named" | grep -v '^main ' >"$tmp/calls"
same "named regions: their names and calls" "$tmp/calls" "f1 6
f2 1
phase one 3
phase two 1"
"$np" tree --ascii "$tmp/rec_named" | tail -n +5 | sed -E 's/^ *([0-9]+) .*%  /\1 /' >"$tmp/named_tree"
same "named regions: the tree" "$tmp/named_tree" "3    |- phase one
6    |  \`- f1
1    \`- phase two
1       \`- f2"
# samples taken while a user-level thread runs are that thread's
NANOPROF_SAMPLE=997 REC_PROG_BURN=1 record "$tmp/rec_usample" uthreads
"$np" tree --samples --ascii "$tmp/rec_usample" >"$tmp/usample_tree" 2>&1
# (its stack is not the OS thread's: the PC only, mostly in the vDSO's clock)
awk '/ thread 1073741825 "uthread 1" / && $1 > 0 { found = 1 } END { exit !found }' \
    "$tmp/usample_tree" && ok "samples of a user-level thread: in its tree" ||
    { bad "samples of a user-level thread: in its tree"; cat "$tmp/usample_tree"; }
report_calls "$tmp/rec_fib" | grep '^fib ' >"$tmp/calls"
same "fib 12: the calls rec_prog makes" "$tmp/calls" "fib 465"
"$np" graph "$tmp/rec_fib" fib | grep -E '^ +[0-9.]+ [num]?s +464 +fib \[' >/dev/null && ok "fib 12: recursive arc" ||
    { bad "fib 12: recursive arc"; "$np" graph "$tmp/rec_fib" fib; }

finish
