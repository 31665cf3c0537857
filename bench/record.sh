#!/bin/sh
# record.sh BUILD_DIR - the recording figures (run by run.sh after the hook
# figures): for each workload, in one run, the slowdown of `nanoprof record`
# and of `uftrace record` over the uninstrumented program, the bytes each
# trace takes per call, and the wall time of `nanoprof report` against
# `uftrace report` on those traces. docs/performance.md explains the table.
#
# The workloads time themselves (their own printed minimum over
# --offsets x --reps runs), so start-up and the final flush are left out of
# the slowdown; they are in the bytes and in the report times. The two
# reports run in turn, NP_REC_REPORT_RUNS (7) times each: their ratio is
# the median of the pairs' ratios, so that a slow spell of the machine
# (one run moves by 10% or more here) slows both sides of a pair; the
# times shown are each side's median.
set -eu
BUILD=${1:-build}
B=$BUILD/bench
NP=$BUILD/src/nanoprof
OFFSETS=${NP_REC_OFFSETS:-4}
REPS=${NP_REC_REPS:-1}
WORKLOADS=${NP_BENCH_WORKLOADS:-"fib wordfreq"}
REPORT_RUNS=${NP_REC_REPORT_RUNS:-7} # report times: this many runs of each, in turn
UFTRACE=${UFTRACE:-uftrace}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nprec.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

field() { # field NAME LINE
    echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
wall() { # wall COMMAND...: its wall seconds, output discarded
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "record.sh: failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }'; }

if [ ! -x "$NP" ] || ! "$NP" --help | grep -q "^  record"; then
    echo "record.sh: $NP has no record command yet" >&2
    exit 0
fi
have_uftrace=1
command -v "$UFTRACE" >/dev/null 2>&1 || have_uftrace=0

echo
echo "== recording: nanoprof record against uftrace record, same instrumented binary"
printf '%-10s %12s %12s %12s %9s %9s %10s %10s %10s %10s %8s\n' \
    workload "base ms" "np rec ms" "uf rec ms" "np x" "uf x" "np B/call" "uf B/call" "np rep s" "uf rep s" "rep x"
for w in $WORKLOADS; do
    args="--mode=none --offsets=$OFFSETS --reps=$REPS"
    calls=$(field calls "$("$B/bench_${w}_count" $args)")
    runs=$((OFFSETS * REPS))
    base=$(field ns_min "$("$B/bench_${w}_base" $args)")
    npline=$("$NP" record -o "$TMP/np.data" -- "$B/bench_${w}_hookless" $args 2>/dev/null | grep '^bench=')
    np=$(field ns_min "$npline")
    npbytes=$(du -sb "$TMP/np.data" | cut -f1)
    uf=0 ufbytes=0
    if [ $have_uftrace = 1 ]; then
        ufline=$("$UFTRACE" record -d "$TMP/uf.data" --no-libcall --no-sched "$B/bench_${w}_hookless" $args 2>/dev/null | grep '^bench=')
        uf=$(field ns_min "$ufline")
        ufbytes=$(du -sb "$TMP/uf.data" | cut -f1)
    fi
    : >"$TMP/pairs"
    i=0
    while [ $i -lt "$REPORT_RUNS" ]; do
        a=$(wall "$NP" report "$TMP/np.data")
        b=0
        if [ $have_uftrace = 1 ]; then b=$(wall "$UFTRACE" report -d "$TMP/uf.data"); fi
        echo "$a $b" >>"$TMP/pairs"
        i=$((i + 1))
    done
    nprep=$(cut -d' ' -f1 "$TMP/pairs" | median)
    ufrep=$(cut -d' ' -f2 "$TMP/pairs" | median)
    reprx=$(awk '{ printf "%.4f\n", ($1 > 0 ? $2 / $1 : 0) }' "$TMP/pairs" | median | awk '{ printf "%.2f", $1 }')
    percall() { echo "$1 $calls $runs" | awk '{ printf "%.2f", $1 / ($2 * $3) }'; }
    printf '%-10s %12.3f %12.3f %12.3f %9s %9s %10s %10s %10s %10s %8s\n' "$w" \
        "$(echo "$base" | awk '{print $1/1e6}')" "$(echo "$np" | awk '{print $1/1e6}')" \
        "$(echo "$uf" | awk '{print $1/1e6}')" "$(ratio "$np" "$base")" "$(ratio "$uf" "$base")" \
        "$(percall "$npbytes")" "$(percall "$ufbytes")" "$nprep" "$ufrep" "$reprx"
    over_np=$(echo "$np $base $calls" | awk '{ printf "%.2f", ($1 - $2) / $3 }')
    over_uf=$(echo "$uf $base $calls" | awk '{ printf "%.2f", ($1 - $2) / $3 }')
    echo "$w" "$over_np" "$over_uf" "$(percall "$npbytes")" "$reprx" >>"$TMP/targets"
    rm -rf "$TMP/np.data" "$TMP/uf.data"
done

# argument capture: the same record with -A reading four arguments of
# every function, on the -pg -mfentry build (whose hook sees the argument
# registers); calls per run counted by function cost on that build. The
# three runs (plain, recorded, recorded with -A) go in turn,
# NP_REC_ARG_PAIRS (7) times: the ratio is the median of the turns'
# ratios, so that a slow spell of the machine slows both sides of a turn;
# the times shown are each side's median.
ARG_PAIRS=${NP_REC_ARG_PAIRS:-7}
echo
echo "== argument capture: nanoprof record -A '*@arg1,arg2,arg3,arg4' against nanoprof record, -pg -mfentry build"
echo "   ($ARG_PAIRS turns of the three runs; the median of the turns' ratios)"
printf '%-10s %12s %12s %12s %12s %12s\n' workload "base ms" "np rec ms" "np -A ms" "ns/call" "-A ns/call"
: >"$TMP/argtargets"
for w in $WORKLOADS; do
    bin=$B/bench_${w}_fe_glibc
    [ -x "$bin" ] || continue
    args="--mode=none --offsets=$OFFSETS --reps=$REPS"
    calls=$(field stats_calls "$("$B/bench_${w}_fe_np" --mode=cost --offsets=1 --reps=1)")
    timed() { # timed COMMAND...: its own ns_min
        rm -rf "$TMP/a.data"
        field ns_min "$("$@" 2>/dev/null | grep '^bench=')"
    }
    : >"$TMP/turns"
    for k in $(seq "$ARG_PAIRS"); do
        base=$(timed "$bin" $args)
        rec=$(timed "$NP" record -o "$TMP/a.data" -- "$bin" $args)
        reca=$(timed "$NP" record -A '*@arg1,arg2,arg3,arg4' -o "$TMP/a.data" -- "$bin" $args)
        echo "$base $rec $reca" | awk -v c="$calls" '{ o1 = ($2 - $1) / c; o2 = ($3 - $1) / c;
            printf "%s %s %s %.4f %.4f %.4f\n", $1, $2, $3, o1, o2, (o1 > 0 ? o2 / o1 : 0) }' >>"$TMP/turns"
    done
    med() { cut -d' ' -f"$1" "$TMP/turns" | median; }
    base=$(med 1) rec=$(med 2) reca=$(med 3) o1=$(med 4) o2=$(med 5) r=$(med 6)
    printf '%-10s %12.3f %12.3f %12.3f %12.2f %12.2f\n' "$w" "$(echo "$base" | awk '{print $1/1e6}')" \
        "$(echo "$rec" | awk '{print $1/1e6}')" "$(echo "$reca" | awk '{print $1/1e6}')" "$o1" "$o2"
    printf '%s %.2f %.2f %s\n' "$w" "$o1" "$o2" "$r" >>"$TMP/argtargets"
    rm -rf "$TMP/a.data"
done

echo
echo "== recording targets"
printf '%-10s %-44s %10s %10s %6s\n' workload ratio value target ""
while read -r w onp ouf bpc rx; do
    r=$(ratio "$onp" "$ouf")
    printf '%-10s %-44s %10s %10s %6s\n' "$w" "record overhead/call vs uftrace ($onp/$ouf ns)" "$r" "<= 0.4" \
        "$(echo "$r" | awk '{ print ($1 <= 0.4 ? "PASS" : "MISS") }')"
    printf '%-10s %-44s %10s %10s %6s\n' "$w" "bytes per call" "$bpc" "<= 4" \
        "$(echo "$bpc" | awk '{ print ($1 <= 4 ? "PASS" : "MISS") }')"
    printf '%-10s %-44s %10s %10s %6s\n' "$w" "uftrace report / nanoprof report, by pairs" "$rx" ">= 10" \
        "$(echo "$rx" | awk '{ print ($1 >= 10 ? "PASS" : "MISS") }')"
done <"$TMP/targets"
while read -r w o1 o2 r; do
    r=$(printf '%.2f' "$r")
    printf '%-10s %-44s %10s %10s %6s\n' "$w" "argument capture, 4 args / none ($o2/$o1 ns)" "$r" "<= 1.3" \
        "$(echo "$r" | awk '{ print ($1 <= 1.3 ? "PASS" : "MISS") }')"
done <"$TMP/argtargets"
