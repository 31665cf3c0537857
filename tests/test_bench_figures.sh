#!/bin/sh
# test_bench_figures.sh SOURCE_DIR BUILD_DIR - every figure README.md and
# docs/*.md quote is the last `make bench`'s (scripts/bench_docs.sh).
#
# How the figures are made: `make bench` runs bench/run.sh, which prints
# its output and writes it to build/bench.out; then, from the whole run
# of a quiet machine, `sh scripts/bench_docs.sh update build/bench.out`
# puts that output in docs/performance.md (between <!-- bench:output -->
# and <!-- /bench:output -->) and rewrites every figure written
# <!-- bench:KEY -->VALUE<!-- /bench --> in README.md and docs/*.md, each
# KEY defined once in bench/figures.txt. This test runs
# `scripts/bench_docs.sh check` on the tree: it fails when a marked figure
# is not what its KEY gives from that block, when a KEY is unknown or
# gives nothing, and when the prose states a figure (a number and a unit)
# outside a marker and outside bench/figures.allow. Then it breaks a copy
# of the docs each of those ways and checks that each is caught and said
# with its file and line, that `update` rewrites the figures from a new
# output (and refuses a partial one), and that bench/run.sh writes its
# output, machine and run named, to its file (NP_BENCH_PARTS=none: no
# benchmark runs here; speed is measured only by make bench).
set -u
src=$1
build=$2
. "$(dirname "$0")/cli_test.sh"
docs=$src/scripts/bench_docs.sh
for t in awk sed grep git; do
    command -v "$t" >/dev/null 2>&1 || { bad "$t is not installed"; finish; }
done

# ---- the tree -----------------------------------------------------------
sh "$docs" check >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/out" ]; then
    ok "README.md and docs/: every figure is marked and is the block's"
else
    bad "scripts/bench_docs.sh check: exit $rc:"
    cat "$tmp/out"
fi
nkeys=$(sh "$docs" keys 2>"$tmp/err" | awk -F'\t' '$2 != ""' | wc -l)
ndef=$(grep -cv '^[[:space:]]*\(#\|$\)' "$src/bench/figures.txt")
if [ "$nkeys" = "$ndef" ] && [ "$ndef" -gt 40 ] && [ ! -s "$tmp/err" ]; then
    ok "each of the $ndef keys gives a value from the block"
else
    bad "keys: $nkeys of $ndef give a value"
    cat "$tmp/err"
fi

# ---- a copy, broken each way ---------------------------------------------
copy() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/bench" "$tmp/t/docs"
    cp "$src/README.md" "$tmp/t/"
    cp "$src"/docs/*.md "$tmp/t/docs/"
    cp "$src/bench/figures.txt" "$src/bench/figures.allow" "$tmp/t/bench/"
}
check_copy() {
    NP_DOCS_ROOT=$tmp/t sh "$docs" check >"$tmp/out" 2>&1
    rc=$?
}
# fails NAME NEEDLE...: the copy's check exits 1 with a line holding each NEEDLE
fails() {
    name=$1
    shift
    check_copy
    if [ $rc != 1 ]; then
        bad "$name: exit $rc, want 1:"
        cat "$tmp/out"
        return
    fi
    for n in "$@"; do
        if ! grep -qF -- "$n" "$tmp/out"; then
            bad "$name: no line with '$n' in:"
            cat "$tmp/out"
            return
        fi
    done
    ok "$name"
}
passes() {
    check_copy
    if [ $rc = 0 ] && [ ! -s "$tmp/out" ]; then ok "$1"; else bad "$1: exit $rc:"; cat "$tmp/out"; fi
}
# line FILE NEEDLE: the number of FILE's first line holding NEEDLE
line() { grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1; }

copy
passes "an unchanged copy passes"

v=$(sh "$docs" value calls.cost_clock2)
m="<!-- bench:calls.cost_clock2 -->$v<!-- /bench -->"
n=$(line "$tmp/t/README.md" "$m")
sed "s|$m|<!-- bench:calls.cost_clock2 -->9$v<!-- /bench -->|" "$src/README.md" >"$tmp/t/README.md"
fails "a marked figure that is not the block's" \
    "README.md:$n: bench:calls.cost_clock2 says 9$v, the bench output gives $v"

copy
printf '\nIt takes <!-- bench:no.such_key -->1<!-- /bench --> ms.\n' >>"$tmp/t/docs/cost.md"
n=$(wc -l <"$tmp/t/docs/cost.md")
fails "an unknown key" "docs/cost.md:$n: bench:no.such_key is not a key of bench/figures.txt"

copy
printf '\nIt takes <!-- bench:calls.cost_clock2 -->%s ms.\n' "$v" >>"$tmp/t/docs/cost.md"
n=$(wc -l <"$tmp/t/docs/cost.md")
fails "a marker not closed on its line" "docs/cost.md:$n: a marker not closed on its line"

copy
printf '\nA call costs 3.5 ns here, and\nfib 1.2-1.4x and 12%% more,\n%s\n' \
    'in 2 KiB, 5 instructions, 40 MIPS and 7 MB.' >>"$tmp/t/docs/cost.md"
n=$(wc -l <"$tmp/t/docs/cost.md")
fails "figures outside a marker, said with their lines" \
    "docs/cost.md:$((n - 2)): a figure outside a bench marker: 3.5 ns" \
    "docs/cost.md:$((n - 1)): a figure outside a bench marker: 1.2-1.4x" \
    "docs/cost.md:$((n - 1)): a figure outside a bench marker: 12%" \
    "docs/cost.md:$n: a figure outside a bench marker: 2 KiB" \
    "docs/cost.md:$n: a figure outside a bench marker: 5 instructions" \
    "docs/cost.md:$n: a figure outside a bench marker: 40 MIPS" \
    "docs/cost.md:$n: a figure outside a bench marker: 7 MB"
if [ "$(grep -c 'a figure outside' "$tmp/out")" = 7 ]; then ok "and only those"; else bad "more than 7 lines:"; cat "$tmp/out"; fi

copy
printf '\nThe smallest buffer is 256 bytes and takes 3 ms.\n' >>"$tmp/t/docs/cost.md"
n=$(wc -l <"$tmp/t/docs/cost.md")
fails "an allowed text allows only the figures inside it" "docs/cost.md:$n: a figure outside a bench marker: 3 ms"
if grep -q 'marker: 256 bytes' "$tmp/out"; then bad "256 bytes (allowed) was said"; cat "$tmp/out"; else ok "the allowed figure is not said"; fi

copy
printf '\n```\n3.5 ns 12%% 2 KiB\n```\n\nCode `--time=3ms` and `20 us` and [a link](x.md#c-2-ms).\n\n    indented 3 ms\n' \
    >>"$tmp/t/docs/cost.md"
passes "figures in code blocks, code and link targets are not prose"

# the block: a key that gives no value, a value taken from it
copy
awk '/^== emulator/ { skip = 1 } /^== target: / { skip = 0 } !skip' "$src/docs/performance.md" >"$tmp/t/docs/performance.md"
fails "a key that gives no value from the block" \
    "docs/performance.md: block: emu.mips: no value from the bench output" \
    "README.md:$(line "$src/README.md" "bench:emu.mips"): bench:emu.mips gives no value from the bench output"
copy
echo 'calls.cost_clock2 rows x | one %g' >>"$tmp/t/bench/figures.txt"
fails "a key defined twice" \
    "bench/figures.txt:$(wc -l <"$tmp/t/bench/figures.txt"): calls.cost_clock2 defined twice"

# ---- update -------------------------------------------------------------
# a whole run's output: the block, fib's figure in a target row changed, ended
copy
awk '/^<!-- bench:output -->$/ { on = 1; next } /^<!-- \/bench:output -->$/ { on = 0 }
     on && /^```/ { fence = !fence; next } on && fence' "$src/docs/performance.md" >"$tmp/block"
awk '/^function cost all-in \/ two clock reads \(\.a\)/ { $(NF - 5) = "0.01" } { print }' \
    "$tmp/block" >"$tmp/new.out"
echo "end: 2026-01-01 00:00 UTC; load average 0.00 0.00 0.00 at the end" >>"$tmp/new.out"
cp -r "$tmp/t" "$tmp/before"
NP_DOCS_ROOT=$tmp/t sh "$docs" update "$tmp/new.out" >"$tmp/out" 2>&1
rc=$?
want=$(NP_DOCS_ROOT=$tmp/t sh "$docs" value calls.cost_clock2 "$tmp/new.out")
case $want in 0.01-*) ;; *) bad "the changed output gives $want for calls.cost_clock2" ;; esac
if [ $rc = 0 ] && grep -qF "<!-- bench:calls.cost_clock2 -->$want<!-- /bench -->" "$tmp/t/README.md" &&
    grep -q '^end: 2026-01-01 00:00 UTC' "$tmp/t/docs/performance.md" &&
    ! grep -q 'The next `sh$' "$tmp/t/docs/performance.md"; then
    ok "update writes the output in the block and its figures in the docs"
else
    bad "update: exit $rc"
    cat "$tmp/out"
fi
if grep -q '^bench_docs.sh: updated README.md$' "$tmp/out" && grep -q '^bench_docs.sh: updated docs/performance.md$' "$tmp/out" &&
    ! grep -q 'updated docs/api.md' "$tmp/out"; then
    ok "update names the files it changed, and only those"
else
    bad "update's lines:"
    cat "$tmp/out"
fi
passes "the updated copy passes"

grep -v '^end: ' "$tmp/new.out" >"$tmp/cut.out"
cp -r "$tmp/before/." "$tmp/t/"
NP_DOCS_ROOT=$tmp/t sh "$docs" update "$tmp/cut.out" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'the run did not end' "$tmp/out" && diff -r "$tmp/before" "$tmp/t" >/dev/null; then
    ok "update refuses an output that did not end, and changes nothing"
else
    bad "update of a cut output: exit $rc"
    cat "$tmp/out"
fi
sed 's/^\(run: .*; parts \)all;/\1target;/' "$tmp/new.out" >"$tmp/part.out"
NP_DOCS_ROOT=$tmp/t sh "$docs" update "$tmp/part.out" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'not a run of every part' "$tmp/out" && diff -r "$tmp/before" "$tmp/t" >/dev/null; then
    ok "update refuses the output of some parts, and changes nothing"
else
    bad "update of some parts' output: exit $rc"
    cat "$tmp/out"
fi

# ---- bench/run.sh writes its output, the machine and the run named --------
NP_BENCH_PARTS=none NP_BENCH_OUT=$tmp/bench.out sh "$src/bench/run.sh" "$build" >"$tmp/term" 2>&1
rc=$?
if [ $rc = 0 ] && cmp -s "$tmp/term" "$tmp/bench.out"; then
    ok "run.sh: the file holds what the terminal showed"
else
    bad "run.sh: exit $rc, or the file differs from the terminal"
    diff "$tmp/term" "$tmp/bench.out"
fi
if grep -Eq '^machine: .+ \(family [0-9]+\) at [0-9.]+ GHz; [0-9]+ CPUs \(nproc\); [a-z0-9_]+; [A-Za-z]+ [^;]+; [^;]+; glibc [0-9.]+$' "$tmp/bench.out" &&
    grep -Eq '^run: 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9:]+ UTC; commit [0-9a-f]+( with local changes)?; parts none; load average [0-9. ]+ at the start$' "$tmp/bench.out" &&
    grep -Eq '^end: 20[0-9][0-9]-.* at the end$' "$tmp/bench.out"; then
    ok "run.sh: the machine:, run: and end: lines"
else
    bad "run.sh's output:"
    cat "$tmp/bench.out"
fi
cpus=$(nproc)
mach=$(sh "$docs" value machine "$tmp/bench.out")
case $mach in
*", $cpus CPUs") ok "the machine key reads run.sh's line ($mach)" ;;
*) bad "value machine: '$mach', want it to end with ', $cpus CPUs'" ;;
esac
finish
