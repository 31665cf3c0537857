#!/bin/sh
# sample.sh BUILD_DIR - the sampling figure (run by run.sh after the
# recording figures): the wall time of the uninstrumented workload
# (bench_<w>_base, no runtime linked) run plainly and under
# `nanoprof record --sample=HZ`, which preloads the runtime and samples
# every thread. docs/performance.md explains the table.
#
# Sampling costs a fixed amount per sample, not per call, so the figure is
# the whole process's wall time over a long run (NP_SAMPLE_OFFSETS x
# NP_SAMPLE_REPS workload runs, about 2 s), start-up and the trace's end
# included: the median of NP_SAMPLE_PROCS processes of each, interleaved.
set -eu
BUILD=${1:-build}
B=$BUILD/bench
NP=$BUILD/src/nanoprof
HZ=${NP_SAMPLE_HZ:-1000}
PROCS=${NP_SAMPLE_PROCS:-7}
OFFSETS=${NP_SAMPLE_OFFSETS:-8}
REPS=${NP_SAMPLE_REPS:-48}
WORKLOADS=${NP_SAMPLE_WORKLOADS:-wordfreq}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npsample.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ ! -x "$NP" ] || ! "$NP" record --help | grep -q -- "--sample"; then
    echo "sample.sh: $NP cannot sample yet" >&2
    exit 0
fi
ms() { # ms COMMAND...: wall milliseconds of the command, output discarded
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "sample.sh: failed: $*" >&2; exit 1; }
    e=$(date +%s%N)
    echo $(((e - s) / 1000000))
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo
echo "== sampling: uninstrumented workload, plain and under nanoprof record --sample=$HZ"
printf '%-10s %10s %10s %10s %9s %10s %8s\n' workload "plain ms" "sampled ms" "overhead" "trace" "target" ""
for w in $WORKLOADS; do
    args="--mode=none --offsets=$OFFSETS --reps=$REPS"
    : >"$TMP/plain"
    : >"$TMP/sampled"
    i=0
    while [ $i -lt "$PROCS" ]; do
        ms "$B/bench_${w}_base" $args >>"$TMP/plain"
        ms "$NP" record --sample="$HZ" -o "$TMP/s.data" -- "$B/bench_${w}_base" $args >>"$TMP/sampled"
        i=$((i + 1))
    done
    bytes=$(du -sb "$TMP/s.data" | cut -f1)
    p=$(median "$TMP/plain")
    s=$(median "$TMP/sampled")
    over=$(echo "$s $p" | awk '{ printf "%.2f%%", ($1 - $2) * 100 / $2 }')
    pass=$(echo "$s $p" | awk '{ print (($1 - $2) * 100 <= $2 ? "PASS" : "MISS") }')
    printf '%-10s %10s %10s %10s %9s %10s %8s\n' "$w" "$p" "$s" "$over" "${bytes}B" "<= 1%" "$pass"
    rm -rf "$TMP/s.data" "$TMP/s.data.old"
done
