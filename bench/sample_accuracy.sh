#!/bin/sh
# sample_accuracy.sh BUILD_DIR - the sampling accuracy figure (run by
# run.sh after sample.sh): bench_sample_split, whose threads burn a known
# split of their CPU time between five functions (and measure it: the
# truth), sampled by `nanoprof record --sample=HZ` until about
# NP_ACCURACY_SAMPLES samples (10,000: the CPU time this takes follows from
# the kernel's tick, measured by a short first run); then each function's
# share of the sampled time, from `nanoprof report --format=csv` (the
# profile estimated from the samples), next to its true share, and the
# largest error in percentage points. Target: <= 2 points. Shares are of
# the five functions' time (their total in the report; the loop's clock
# reads between calls are in neither).
set -eu
BUILD=${1:-build}
PROG=$BUILD/bench/bench_sample_split
NP=$BUILD/src/nanoprof
HZ=${NP_SAMPLE_HZ:-997}
WANT=${NP_ACCURACY_SAMPLES:-10000}
THREADS=${NP_ACCURACY_THREADS:-2}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npaccuracy.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ ! -x "$NP" ] || [ ! -x "$PROG" ]; then
    echo "sample_accuracy.sh: $NP or $PROG missing" >&2
    exit 0
fi
samples() { "$NP" report "$1" | sed -n 's/^# times estimated from \([0-9]*\) samples.*/\1/p'; }

# samples per CPU second, from one second per thread
"$NP" record --sample="$HZ" -o "$TMP/probe" -- "$PROG" 1 "$THREADS" >/dev/null 2>&1
per_s=$(($(samples "$TMP/probe") / THREADS))
[ "$per_s" -gt 0 ] || { echo "sample_accuracy.sh: no samples" >&2; exit 1; }
cpu_s=$(awk -v w="$WANT" -v p="$per_s" -v t="$THREADS" 'BEGIN { printf "%.1f", w / p / t }')

"$NP" record --sample="$HZ" -o "$TMP/t" -- "$PROG" "$cpu_s" "$THREADS" >"$TMP/truth" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; exit 1; }
"$NP" report --format=csv "$TMP/t" >"$TMP/csv"
n=$(samples "$TMP/t")

echo
echo "== sampling accuracy: $n samples at $HZ Hz ($per_s per CPU second), $THREADS threads x $cpu_s s of CPU"
awk -F'[ ,]' -v n="$n" '
    FNR == NR { names[++nn] = $2; truth[$2] = $3; tsum += $3; next }
    $1 in truth { est[$1] = $3; esum += $3 }
    END {
        printf "%-10s %10s %10s %10s\n", "function", "true %", "sampled %", "error pp"
        max = 0
        for (i = 1; i <= nn; i++) {
            f = names[i]
            t = 100 * truth[f] / tsum
            s = esum ? 100 * est[f] / esum : 0
            e = s > t ? s - t : t - s
            if (e > max) max = e
            printf "%-10s %10.2f %10.2f %10.2f\n", f, t, s, e
        }
        printf "%-52s %8s %9.2f %-4s\n", "max error of the sampled shares (pp, " n " samples)", "<= 2", max,
               (max <= 2 ? "PASS" : "MISS")
    }' "$TMP/truth" "$TMP/csv"
