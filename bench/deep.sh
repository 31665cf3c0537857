#!/bin/sh
# deep.sh BUILD_DIR - the deep-recursion figures (run by run.sh): on traces
# of a recursion 100,000 and 200,000 calls deep, of one function calling
# itself and of two functions calling each other (written by the tests'
# generator, test_analyze_gen deep-N and deepab-N: one call per tick), the
# wall time and the size of `nanoprof dump --format=folded` and of
# `nanoprof flame`, together against the target (under 10 s and 20 MB),
# and the same of `dump --format=callgrind` for information.
# docs/performance.md explains the table.
set -eu
BUILD=${1:-build}
NP=$BUILD/src/nanoprof
GEN=$BUILD/tests/test_analyze_gen
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npdeep.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

echo
echo "== deep recursion: folded stacks and flame graph (target: together < 10 s, < 20 MB)"
if [ ! -x "$GEN" ]; then
    echo "deep.sh: no $GEN (build with -DNP_BUILD_TESTS=ON): n/a"
    exit 0
fi

# wall COMMAND...: its wall seconds; its output in $TMP/out
wall() {
    s=$(date +%s.%N)
    "$@" >"$TMP/out" 2>/dev/null || { echo "deep.sh: failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
}
size() { wc -c <"$1" | tr -d ' '; }

printf '%-34s %9s %11s %9s %11s %9s %11s %-6s %9s %11s\n' recursion "folded s" "folded B" "flame s" \
    "flame B" "sum s" "sum B" "" "cg s" "cg B"
for kind in deep-100000 deep-200000 deepab-100000 deepab-200000; do
    "$GEN" "$kind" "$TMP/$kind" >/dev/null
    tf=$(wall "$NP" dump --format=folded "$TMP/$kind")
    bf=$(size "$TMP/out")
    tg=$(wall "$NP" flame "$TMP/$kind" -o "$TMP/flame.svg")
    bg=$(size "$TMP/flame.svg")
    tc=$(wall "$NP" dump --format=callgrind "$TMP/$kind")
    bc=$(size "$TMP/out")
    case $kind in
    deep-*) what="${kind#deep-} deep, f -> f" ;;
    *) what="${kind#deepab-} deep, f -> g -> f" ;;
    esac
    awk -v w="$what" -v tf="$tf" -v bf="$bf" -v tg="$tg" -v bg="$bg" -v tc="$tc" -v bc="$bc" 'BEGIN {
        t = tf + tg; b = bf + bg
        printf "%-34s %9.3f %11d %9.3f %11d %9.3f %11d %-6s %9.3f %11d\n", w, tf, bf, tg, bg, t, b,
               (t < 10 && b < 20 * 1024 * 1024 ? "PASS" : "MISS"), tc, bc
    }'
    rm -rf "${TMP:?}/$kind"
done
