#!/bin/sh
# test_filters_cli.sh NANOPROF REC_PROG - what every view says of its -F
# and -N patterns, and the one way every command reads its options:
#   - a pattern that looks like a regular expression is one (anchored at
#     both ends): exact counts in `report`, graph's FUNCTION alike;
#   - a pattern that matches no function is one warning line in every
#     view (report, graph, tree, replay, flame, dump), exit 0, 3 with
#     --strict; one that matches only functions the trace has no call of
#     is said too;
#   - the process tree keeps the real parent of a double fork's
#     grandchild, whose parent ended first (report --format=json, jq);
#   - every command: an unknown option, a missing value, a value given to
#     an option that takes none are one line each, status 2; --help and
#     -h print the usage on stdout, status 0.
# tests/programs/rec_prog.c records through NANOPROF_RECORD.
set -u
np=$(readlink -f "$1")
prog=$(readlink -f "$2")
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
command -v jq >/dev/null 2>&1 || { echo "FAIL jq is not installed (scripts/deps.sh installs it)"; exit 1; }

# tree: top calls a x3 (each: leaf x2), b x2 (each: leaf x1)
NANOPROF_RECORD=$tmp/tree "$prog" tree >/dev/null || { echo "FAIL recording rec_prog tree"; exit 1; }
t=$tmp/tree
# calls ARGS...: "function,calls" of every function of `report --format=csv
# ARGS`, sorted, in $tmp/c
calls() {
    "$np" report --format=csv "$@" 2>"$tmp/err" | tail -n +2 | cut -d, -f1,2 | sort >"$tmp/c"
}

# ---- regular expressions, anchored ----
calls "$t" -F '^(a|b)$'
same "regex -F: a and b, and what they call" "$tmp/c" "a,3
b,2
leaf,8"
calls "$t" --filter 'lea.*'
same "regex -F is anchored: lea.* is leaf only" "$tmp/c" "leaf,8"
calls "$t" -N '[ab]+'
same "regex -N: [ab]+ leaves a, b and their calls out" "$tmp/c" "main,1
top,1"
calls "$t" -F 't?p' -N 'b*'
same "glob -F: * and ? as fnmatch" "$tmp/c" "a,3
leaf,6
top,1"
run "$t" -F '^x['
status "a regular expression that does not compile: one line, 2" 2 \
    "^nanoprof report: -F: '^x\[' is not a valid regular expression: .* (see nanoprof report --help)$"
# graph's FUNCTION is such a pattern too
# (graph lists them by time, which a recorded run does not fix: sorted)
"$np" graph "$t" '^(a|b)$' 2>"$tmp/err" | sed -n 's/^\[[0-9]*\] .*  \([a-z]*\) \[[0-9]*\]$/\1/p' | sort >"$tmp/g"
same "graph FUNCTION: a regular expression, its entries only" "$tmp/g" "a
b"
np_cmd=graph
run "$t" 'le.?'
status "graph FUNCTION: anchored" 1 "^nanoprof graph: no function matches 'le.?'$"
run "$t" '(x'
status "graph FUNCTION: a glob, as no syntax says otherwise" 1 "^nanoprof graph: no function matches '(x'$"
run "$t" '^x['
status "graph FUNCTION: one that does not compile" 2 \
    "^nanoprof graph: FUNCTION '^x\[' is not a valid regular expression: .* (see nanoprof graph --help)$"
np_cmd=report

# ---- a pattern that matches no function, in every view ----
nfun=$("$np" report --format=csv "$t" | tail -n +2 | wc -l)
for view in report graph tree replay "flame -o $tmp/f.svg" "dump --format=folded"; do
    name=${view%% *}
    # shellcheck disable=SC2086
    "$np" $view "$t" -F 'nomatch_*' -N 'b' >"$tmp/out" 2>"$tmp/err"
    rc=$?
    status "$name: -F matching nothing: one warning, exit 0" 0 \
        "^nanoprof $name: warning: -F 'nomatch_\*': matches no function of the trace (searched: $nfun functions it holds, and the symbol tables of its [0-9]* ELF files)$"
    # shellcheck disable=SC2086
    "$np" $view "$t" --strict -N 'nomatch_*' >"$tmp/out" 2>"$tmp/err"
    rc=$?
    status "$name --strict: -N matching nothing: exit 3" 3 "^nanoprof $name: warning: -N 'nomatch_\*': matches no function of the trace"
done
# f4 is a function of the program that the tree mode never calls
run "$t" -F f4
status "report: -F matching only a function never called: said" 0 \
    "^nanoprof report: warning: -F 'f4': matches 1 function of the trace's ELF files, but none the trace has calls of (it holds $nfun functions)$"
run "$t" -F '^(top|f4)$'
status "report: a pattern that matched a function of the trace: nothing said" 0

# ---- the process tree: a double fork's grandchild keeps its real parent ----
NANOPROF_RECORD=$tmp/df "$prog" doublefork >"$tmp/df.out" || { echo "FAIL recording rec_prog doublefork"; exit 1; }
child=$(sed -n 's/^child //p' "$tmp/df.out")
grandchild=$(sed -n 's/^grandchild //p' "$tmp/df.out")
i=0 # the grandchild goes on after its parent: until its file ends
until "$np" report --format=json "$tmp/df" >"$tmp/df.json" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
    [ "$(jq '.processes | length' "$tmp/df.json")" = 3 ]; do
    i=$((i + 1))
    [ $i -lt 1000 ] || break
    sleep 0.01
done
if jq -e --argjson c "$child" --argjson g "$grandchild" \
    '[.processes[] | select(.pid == $g) | .ppid] == [$c] and
     [.processes[] | select(.pid == $c) | .ppid] == [.processes[] | select(.pid != $c and .pid != $g) | .pid]' \
    "$tmp/df.json" >/dev/null; then
    ok "report --format=json: each process's real parent"
else
    bad "report --format=json: parents (child $child, grandchild $grandchild)"; jq -c '.processes' "$tmp/df.json"
fi

# ---- one way to read options, for every command ----
for cmd in record report graph tree replay flame dump blocks emu import; do
    np_cmd=$cmd
    run --bogus x
    status "$cmd: unknown long option" 2 "^nanoprof $cmd: unknown option '--bogus' (see nanoprof $cmd --help)$"
    run -Z x
    status "$cmd: unknown short option" 2 "^nanoprof $cmd: unknown option '-Z' (see nanoprof $cmd --help)$"
    run --help
    if [ "$rc" = 0 ] && head -n 1 "$tmp/out" | grep -q "^usage: nanoprof $cmd " && [ ! -s "$tmp/err" ]; then
        ok "$cmd --help"
    else
        bad "$cmd --help: exit $rc"; head -n 3 "$tmp/out" "$tmp/err"
    fi
    run -h
    if [ "$rc" = 0 ] && head -n 1 "$tmp/out" | grep -q "^usage: nanoprof $cmd "; then ok "$cmd -h"; else bad "$cmd -h: exit $rc"; fi
done
for cmd in record emu import dump flame; do
    np_cmd=$cmd
    run -o
    status "$cmd: -o without its value" 2 "^nanoprof $cmd: option '-o' needs a value (see nanoprof $cmd --help)$"
    run --output
    status "$cmd: --output without its value" 2 "^nanoprof $cmd: option '--output' needs a value (see nanoprof $cmd --help)$"
done
np_cmd=emu
run --real-time=1 x.elf
status "emu: a value to an option that takes none" 2 "^nanoprof emu: option '--real-time' takes no value"
np_cmd=import
run --elf
status "import: --elf without its value" 2 "^nanoprof import: option '--elf' needs a value"
np_cmd=tree
run --ascii=yes "$t"
status "tree: a value to an option that takes none" 2 "^nanoprof tree: option '--ascii' takes no value"
np_cmd=report
run --s "$t"
status "report: an ambiguous abbreviation" 2 "^nanoprof report: option '--s' is ambiguous"
run --so=calls --format=csv "$t"
status "report: an unambiguous abbreviation" 0
finish
