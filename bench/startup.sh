#!/bin/sh
# startup.sh BUILD_DIR - what `nanoprof record` costs before and after the
# program it runs (run by run.sh): `nanoprof record -- /bin/true` against
# /bin/true itself, beside `uftrace record` and `perf record` doing the
# same, and `nanoprof record --sample`. Each command runs NP_START_RUNS
# times (default 41; perf record, which takes a second, one time in four),
# one of each in turn so that a slow spell of the machine slows all of
# them; bench_cputime times each whole process (fork, exec, run, exit,
# wait), to the nanosecond. Each run writes a new output directory (the
# old ones are removed between runs, untimed): replacing an earlier trace
# is not starting. A figure is the fastest of its runs (noise only ever
# adds time, as for the per-call figures), the median beside; "over bare"
# is the difference from the bare program's. Targets: nanoprof's start-up
# at most 1 ms over the bare program, and below uftrace's.
#
# /bin/true is not instrumented: nothing is recorded, so this is the fixed
# price of starting (the command, the runtime preloaded into the program,
# the report at the end). With --sample the runtime also opens the trace,
# starts its writer thread and the sampling timer, and ends the trace.
set -eu
BUILD=${1:-build}
NP=$BUILD/src/nanoprof
CPUTIME=$BUILD/bench/bench_cputime
RUNS=${NP_START_RUNS:-41}
PROG=${NP_START_PROG:-/bin/true}
UFTRACE=${UFTRACE:-uftrace}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npstart.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

echo
echo "== start-up: $PROG under each recorder, whole process ($RUNS runs each, in turn)"
if [ ! -x "$CPUTIME" ] || [ ! -x "$NP" ]; then
    echo "startup.sh: $CPUTIME or $NP missing" >&2
    exit 1
fi
have_uf=0
command -v "$UFTRACE" >/dev/null 2>&1 && have_uf=1
have_perf=0
# perf record may be refused (perf_event_paranoid) or have no PMU: then
# its row is left out
if command -v perf >/dev/null 2>&1 && perf record -q -o "$TMP/perf.data" "$PROG" >/dev/null 2>&1; then
    have_perf=1
fi

i=0
while [ $i -lt "$RUNS" ]; do
    rm -rf "$TMP/np.data" "$TMP/nps.data" "$TMP/uf.data"
    "$CPUTIME" "$TMP/bare" "$PROG"
    "$CPUTIME" "$TMP/np" "$NP" record -o "$TMP/np.data" -- "$PROG" 2>/dev/null
    "$CPUTIME" "$TMP/np_sample" "$NP" record --sample -o "$TMP/nps.data" -- "$PROG" 2>/dev/null
    if [ $have_uf = 1 ]; then
        "$CPUTIME" "$TMP/uftrace" "$UFTRACE" record -d "$TMP/uf.data" "$PROG" >/dev/null 2>&1 || true
    fi
    # perf record takes about a second here: one run in four
    if [ $have_perf = 1 ] && [ $((i % 4)) = 0 ]; then
        "$CPUTIME" "$TMP/perf" perf record -q -o "$TMP/perf.data" "$PROG" >/dev/null 2>&1 || true
    fi
    i=$((i + 1))
done

stat() { # stat FILE: "min median" of its wall times, in us
    sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[1] / 1e3, v[int((NR + 1) / 2)] / 1e3 }'
}
set -- $(stat "$TMP/bare")
bare_min=$1 bare_med=$2
printf '%-36s %12s %14s %12s %14s\n' "command" "min us" "over bare us" "median us" "over bare us"
line() { # line LABEL FILE
    [ -s "$2" ] || return 0
    set -- "$1" $(stat "$2")
    awk -v l="$1" -v n="$2" -v m="$3" -v bm="$bare_med" -v bn="$bare_min" 'BEGIN {
        if (l == "bare") printf "%-36s %12.1f %14s %12.1f %14s\n", l, n, "-", m, "-"
        else printf "%-36s %12.1f %14.1f %12.1f %14.1f\n", l, n, n - bn, m, m - bm }'
}
line bare "$TMP/bare"
line "nanoprof record" "$TMP/np"
line "nanoprof record --sample" "$TMP/np_sample"
line "uftrace record" "$TMP/uftrace"
line "perf record" "$TMP/perf"

over() { # over FILE: its fastest run minus the bare program's, in us
    set -- $(stat "$1")
    awk -v n="$1" -v b="$bare_min" 'BEGIN { printf "%.1f", n - b }'
}
np_over=$(over "$TMP/np")
uf_over=""
[ -s "$TMP/uftrace" ] && uf_over=$(over "$TMP/uftrace")
echo
echo "== start-up target"
awk -v n="$np_over" -v u="$uf_over" 'BEGIN {
    ok = (n <= 1000) && (u == "" || n < u)
    printf "%-52s %18s %9.1f us %s\n", "nanoprof record start-up over the bare program",
           "<= 1000 us, < uftrace", n, (ok ? "PASS" : "MISS")
    if (u != "") printf "%-52s %18s %9.1f us\n", "  uftrace record start-up over the bare program", "(peer)", u
}'
