#!/bin/sh
# capture.sh BUILD_DIR - the speed of `nanoprof import` (run by run.sh): a
# capture of NP_BENCH_CAPTURE_MB MB (default 100) as a Cortex-M firmware's
# output writer sends it, written by tests/gen_capture with the runtime's
# own encoder (chunks of about 500 bytes from a target's 512-byte buffer,
# 3 threads, the firmware's text lines between some chunks), imported
# NP_BENCH_CAPTURE_RUNS times (default 3) into a trace directory; the
# fastest run's wall time gives the MB/s, against the target (at least
# 100 MB/s). The CPU time (user + system, all threads) is beside it.
set -eu
BUILD=${1:-build}
NP=$BUILD/src/nanoprof
GEN=$BUILD/tests/gen_capture
MB=${NP_BENCH_CAPTURE_MB:-100}
RUNS=${NP_BENCH_CAPTURE_RUNS:-3}
TARGET=100

if [ ! -x "$GEN" ]; then
    echo "capture.sh: no $GEN: build the tests (-DNP_BUILD_TESTS=ON)" >&2
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npcapture.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# the calls are of gen_capture's own functions: its ELF is the firmware's
"$GEN" "$TMP/capture" $((MB * 1000000)) "$GEN" >"$TMP/gen" || { echo "capture.sh: gen_capture failed" >&2; exit 1; }
bytes=$(wc -c <"$TMP/capture")
events=$(sed -n 's/^events \([0-9]*\) .*/\1/p' "$TMP/gen")
best="" cpu=""
times >"$TMP/times0" # the generator's CPU, left out below
for i in $(seq "$RUNS"); do
    rm -rf "$TMP/trace" "$TMP/trace.old"
    t0=$(date +%s%N)
    # (the shell's times: the CPU the child used, in seconds)
    "$NP" import "$TMP/capture" --elf "$GEN" -o "$TMP/trace" 2>"$TMP/err" ||
        { echo "capture.sh: import failed:" >&2; cat "$TMP/err" >&2; exit 1; }
    t1=$(date +%s%N)
    grep -q "^nanoprof import: $events events of 3 threads, 0 lost, into " "$TMP/err" ||
        { echo "capture.sh: import said:" >&2; cat "$TMP/err" >&2; exit 1; }
    ns=$((t1 - t0))
    if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then best=$ns; fi
done
times >"$TMP/times" # (not in a subshell: its children are the imports)
secs() { tail -n 1 "$1" | awk '{ split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'; }
cpu=$(awk -v a="$(secs "$TMP/times0")" -v b="$(secs "$TMP/times")" -v n="$RUNS" 'BEGIN { printf "%.2f", (b - a) / n }')

echo
echo "== nanoprof import: a ${MB} MB capture (tests/gen_capture), best of $RUNS"
printf '%-34s %11s %9s %9s %9s %12s\n' "capture, command" events "MB" "time s" "MB/s" target
mbs=$(awk -v b="$bytes" -v ns="$best" 'BEGIN { printf "%.1f", b / 1e6 / (ns / 1e9) }')
verdict=$(awk -v m="$mbs" -v t="$TARGET" 'BEGIN { print (m + 0 >= t + 0 ? "PASS" : "MISS") }')
printf '%-34s %11s %9.1f %9.3f %9s %12s %s\n' "generated: nanoprof import" "$events" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$(awk -v ns="$best" 'BEGIN { print ns / 1e9 }')" "$mbs" \
    ">= $TARGET MB/s" "$verdict"
echo "(CPU time of an import, user and system, all threads: ${cpu} s)"
