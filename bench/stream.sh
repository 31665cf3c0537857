#!/bin/sh
# stream.sh BUILD_DIR - the memory of the views that walk every call (run
# by run.sh): the peak RSS and wall time of `nanoprof replay` and of
# `nanoprof dump --format=chrome`, their output to /dev/null, on traces
# tests/gen_calls writes (NP_BENCH_STREAM_SMALL calls, default 7M, and
# NP_BENCH_STREAM_CALLS, default 500M; 4 threads whose chunks interleave),
# each against the target (at most 64 MiB); then on the fib workload
# recorded by `nanoprof record`, beside `uftrace replay` of the same
# program recorded by `uftrace record`. tests/peak_rss measures (wait4's
# ru_maxrss). docs/performance.md explains the table.
set -eu
BUILD=${1:-build}
NP=$BUILD/src/nanoprof
GEN=$BUILD/tests/gen_calls
PEAK=$BUILD/tests/peak_rss
B=$BUILD/bench
SMALL=${NP_BENCH_STREAM_SMALL:-7000000}
LARGE=${NP_BENCH_STREAM_CALLS:-500000000}
UFTRACE=${UFTRACE:-uftrace}
LIMIT_KIB=65536

if [ ! -x "$GEN" ] || [ ! -x "$PEAK" ]; then
    echo "stream.sh: no $GEN or $PEAK: build the tests (-DNP_BUILD_TESTS=ON)" >&2
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npstream.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# measure LABEL CALLS CMD...: a row with CMD's peak RSS and wall time
# (its output to /dev/null), against the target unless LABEL is a peer's
measure() {
    label=$1 calls=$2
    shift 2
    "$PEAK" "$@" >/dev/null 2>"$TMP/err" || { echo "stream.sh: failed: $*" >&2; cat "$TMP/err" >&2; exit 1; }
    line=$(grep '^peak_rss: ' "$TMP/err" | tail -n 1)
    kib=$(echo "$line" | sed 's/^peak_rss: \([0-9]*\) KiB, \([0-9.]*\) s$/\1/')
    sec=$(echo "$line" | sed 's/^peak_rss: \([0-9]*\) KiB, \([0-9.]*\) s$/\2/')
    case $label in
    uftrace*) verdict="(peer)" target="" ;;
    *) target="<= 64 MiB"; verdict=$([ "$kib" -le $LIMIT_KIB ] && echo PASS || echo MISS) ;;
    esac
    printf '%-34s %11s %10.1f %9.2f %10s %s\n' "$label" "$calls" "$(echo "$kib" | awk '{ print $1 / 1024 }')" \
        "$sec" "$target" "$verdict"
}

echo
echo "== streaming views: peak RSS of replay and of the Chrome export (output to /dev/null)"
printf '%-34s %11s %10s %9s %10s\n' "trace, command" calls "RSS MiB" "time s" target
for n in $SMALL $LARGE; do
    calls=$("$GEN" "$TMP/gen" "$n" 4)
    measure "generated: nanoprof replay" "$calls" "$NP" replay "$TMP/gen"
    measure "generated: nanoprof dump chrome" "$calls" "$NP" dump --format=chrome -o /dev/null "$TMP/gen"
    rm -rf "$TMP/gen"
done

# the fib workload, as recorded by each tool (4 runs of fib(29))
args="--mode=none --offsets=4 --reps=1"
if [ -x "$B/bench_fib_hookless" ] && "$NP" record -o "$TMP/np.data" -- "$B/bench_fib_hookless" $args >/dev/null 2>&1
then
    calls=$("$NP" report "$TMP/np.data" | sed -n '1s/.* \([0-9]*\) calls of .*/\1/p')
    measure "fib: nanoprof replay" "$calls" "$NP" replay "$TMP/np.data"
    measure "fib: nanoprof dump chrome" "$calls" "$NP" dump --format=chrome -o /dev/null "$TMP/np.data"
    if command -v "$UFTRACE" >/dev/null 2>&1 &&
        "$UFTRACE" record -d "$TMP/uf.data" --no-libcall --no-sched "$B/bench_fib_hookless" $args >/dev/null 2>&1
    then
        measure "uftrace replay (uftrace record)" "$calls" "$UFTRACE" replay -d "$TMP/uf.data"
    fi
fi
