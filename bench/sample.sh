#!/bin/sh
# sample.sh BUILD_DIR - the sampling figure (run by run.sh after the
# recording figures): the cost of `nanoprof record --sample=HZ` on the
# uninstrumented workload (bench_<w>_base, no runtime linked), which the
# command preloads the runtime into and samples every thread of.
# docs/performance.md explains the table.
#
# Sampling costs a fixed amount per sample, a fraction of a percent, while
# the time of one process on a shared host wanders by several percent
# (neighbours on the same cores: CPU time wanders as much as wall time):
# two medians of a few runs each cannot tell 1% from 0. So runs come in
# NP_SAMPLE_PAIRS pairs, one plain and one sampled run back to back (which
# goes first alternates, so a drift in the host's speed favours neither),
# and each figure is the median over the pairs of sampled / plain, with a
# 95% confidence interval of that median from the order statistics (no
# assumption on how the noise is distributed). A pair sees the same host
# conditions seconds apart, so slow drifts cancel in its ratio; the
# interval narrows as 1/sqrt(pairs): with a pair's ratio wandering by a few
# percent, 61 pairs resolve about +-0.9%. Two figures: the process's wall time and
# its CPU time (user + system of the whole process tree), start-up and the
# trace's end included, measured by bench_cputime (GNU time's hundredths
# of a second are too coarse). Each process runs NP_SAMPLE_OFFSETS x
# NP_SAMPLE_REPS workload runs, about 2 s: recording with sampling has a
# fixed cost per process (about 7 ms), which shorter runs magnify. The
# whole takes about 4 minutes.
set -eu
BUILD=${1:-build}
B=$BUILD/bench
NP=$BUILD/src/nanoprof
HZ=${NP_SAMPLE_HZ:-1000}
PAIRS=${NP_SAMPLE_PAIRS:-61}
OFFSETS=${NP_SAMPLE_OFFSETS:-8}
REPS=${NP_SAMPLE_REPS:-48}
WORKLOADS=${NP_SAMPLE_WORKLOADS:-wordfreq}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npsample.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ ! -x "$NP" ] || ! "$NP" record --help | grep -q -- "--sample"; then
    echo "sample.sh: $NP cannot sample yet" >&2
    exit 0
fi
# run OUT COMMAND...: appends "wall_ns cpu_us" of the command to OUT
run() {
    "$B/bench_cputime" "$@" >"$TMP/o" 2>&1 || { echo "sample.sh: failed: $*" >&2; cat "$TMP/o" >&2; exit 1; }
}
# summary PLAIN SAMPLED COLUMN SCALE: "median_plain median_ratio_% lo_%
# hi_%" of the pairs' ratios (the two files' lines pair up), the plain
# median divided by SCALE, the ratios in percent over 1
summary() {
    paste -d' ' "$1" "$2" | awk -v c="$3" -v scale="$4" '
        { p[NR] = $c / scale; r[NR] = $(c + 2) / $c }
        function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
        function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        END {
            n = NR; sort(p, n); sort(r, n)
            # ranks of a 95% interval of the median: n/2 -+ 1.96 sqrt(n)/2
            lo = int((n - 1.96 * sqrt(n)) / 2); if (lo < 1) lo = 1
            hi = n + 1 - lo
            printf "%d %.2f %.2f %.2f\n", med(p, n), (med(r, n) - 1) * 100, (r[lo] - 1) * 100, (r[hi] - 1) * 100
        }'
}

echo
echo "== sampling: uninstrumented workload, plain and under nanoprof record --sample=$HZ"
echo "   ($PAIRS pairs of runs; the median of the pairs' ratios, and its 95% interval)"
printf '%-10s %-5s %11s %10s %18s %9s %8s %6s\n' workload time plain overhead "95% interval" trace target ""
for w in $WORKLOADS; do
    args="--mode=none --offsets=$OFFSETS --reps=$REPS"
    : >"$TMP/plain"
    : >"$TMP/sampled"
    i=0
    while [ $i -lt "$PAIRS" ]; do
        if [ $((i % 2)) = 0 ]; then
            run "$TMP/plain" "$B/bench_${w}_base" $args
            run "$TMP/sampled" "$NP" record --sample="$HZ" -o "$TMP/s.data" -- "$B/bench_${w}_base" $args
        else
            run "$TMP/sampled" "$NP" record --sample="$HZ" -o "$TMP/s.data" -- "$B/bench_${w}_base" $args
            run "$TMP/plain" "$B/bench_${w}_base" $args
        fi
        i=$((i + 1))
    done
    bytes=$(du -sb "$TMP/s.data" | cut -f1)
    for col in 1 2; do
        case $col in
        1) kind=wall unit=ms scale=1000000 ;;
        2) kind=cpu unit=ms scale=1000 ;;
        esac
        set -- $(summary "$TMP/plain" "$TMP/sampled" $col $scale)
        # met when the whole interval is at most 1%, missed when all of it is over
        verdict=$(awk -v lo="$3" -v hi="$4" 'BEGIN { print (hi <= 1 ? "PASS" : (lo > 1 ? "MISS" : "UNSURE")) }')
        printf '%-10s %-5s %8s %2s %9s%% %8s%% to %5s%% %8sB %8s %6s\n' "$w" "$kind" "$1" "$unit" "$2" "$3" "$4" \
            "$bytes" "<= 1%" "$verdict"
    done
    rm -rf "$TMP/s.data" "$TMP/s.data.old"
done
