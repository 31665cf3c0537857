#!/bin/sh
# run.sh BUILD_DIR - runs the nanoprof benchmarks (what `make bench` runs after
# building) and prints, per workload, the time of every variant next to the
# uninstrumented baseline, the two floors (empty hooks, two clock reads) and
# uftrace, then the targets as ratios with PASS/MISS. docs/performance.md
# explains the table.
#
# Each variant runs NP_BENCH_PROCS processes (default 6), interleaved with the
# other variants; each process times the workload NP_BENCH_REPS times (default
# 2) at each of NP_BENCH_OFFSETS stack placements (default 8; see
# bench/harness.h). A variant's time is the fastest of all those runs
# (NP_BENCH_STAT=min, the default: noise only ever adds time) or the lowest
# per-process median over the placements (NP_BENCH_STAT=typ). uftrace runs
# NP_BENCH_UFTRACE_PROCS processes (default 2) of 1 run at each of
# NP_BENCH_UFTRACE_OFFSETS placements (default 4): it keeps every call.
#
# Then one NP_SECTION_BEGIN/END pair against two counter reads
# (bench_sections, NP_BENCH_PROCS processes, the best ratio), the
# recording figures (record.sh) and the memory of the streaming views
# (stream.sh).
#
# Overhead per call = (time of the variant - time uninstrumented) / calls,
# where calls is counted by bench_<w>_count (hooks that count entries).
set -eu

BUILD=${1:-build}
B=$BUILD/bench
PROCS=${NP_BENCH_PROCS:-6}
REPS=${NP_BENCH_REPS:-2}
OFFSETS=${NP_BENCH_OFFSETS:-8}
UPROCS=${NP_BENCH_UFTRACE_PROCS:-2}
UOFFSETS=${NP_BENCH_UFTRACE_OFFSETS:-4}
STAT=${NP_BENCH_STAT:-min}
UFTRACE=${UFTRACE:-uftrace}
UFTRACE_OPTS="--no-libcall --no-sched"
WORKLOADS=${NP_BENCH_WORKLOADS:-"fib wordfreq"}

if [ ! -x "$B/bench_fib_base" ]; then
    echo "run.sh: no benchmarks in $B: build with -DNP_BUILD_BENCH=ON (make build)" >&2
    exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/npbench.XXXXXX")
# uftrace data goes to memory when it can: it keeps uftrace's disk writes
# out of the comparison (in its favour)
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    UDATA=$(mktemp -d /dev/shm/npbench-uftrace.XXXXXX)
else
    UDATA=$TMP/uftrace
    mkdir -p "$UDATA"
fi
trap 'rm -rf "$TMP" "$UDATA"' EXIT INT TERM

have_uftrace=0
if [ "$UPROCS" -gt 0 ] && command -v "$UFTRACE" >/dev/null 2>&1; then
    have_uftrace=1
fi

# field NAME LINE: the value of NAME=... in a harness output line
field() {
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# run LABEL CMD...: runs one process, appends "LABEL ns_min" to $RES
run() {
    label=$1
    shift
    out=$("$@") || { echo "run.sh: failed: $*" >&2; exit 1; }
    line=$(printf '%s\n' "$out" | grep '^bench=' | tail -n 1)
    res=$(field result "$line")
    if [ "$res" != "$RESULT" ]; then
        echo "run.sh: $label: result $res, expected $RESULT (not the same work)" >&2
        exit 1
    fi
    echo "$label $(field "ns_$STAT" "$line")" >>"$RES"
    LAST=$line
}

# best LABEL: the minimum time of LABEL, in ns
best() {
    awk -v l="$1" '$1 == l { if (m == "" || $2 < m) m = $2 } END { print m }' "$RES"
}

printf 'nanoprof benchmarks: %s, %s CPUs, %s\n' \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)" \
    "$(nproc 2>/dev/null || echo '?')" "$(uname -m)"
printf 'each figure: %s over %s processes x %s stack placements x %s runs (uftrace: %s x %s x 1)\n' \
    "$STAT" "$PROCS" "$OFFSETS" "$REPS" "$UPROCS" "$UOFFSETS"
if [ $have_uftrace = 1 ]; then
    printf 'peer: %s, %s record %s (data in %s)\n' "$("$UFTRACE" --version | head -n 1)" \
        "$UFTRACE" "$UFTRACE_OPTS" "${UDATA%/*}"
else
    printf 'peer: uftrace not found (or NP_BENCH_UFTRACE_PROCS=0): its rows are skipped\n'
fi

SUMMARY=$TMP/summary
: >"$SUMMARY"

for w in $WORKLOADS; do
    RES=$TMP/$w.res
    : >"$RES"
    # calls per run, and the checksum every variant must reproduce
    line=$("$B/bench_${w}_count" --reps=1 --offsets=1 | grep '^bench=')
    CALLS=$(field calls "$line")
    RESULT=$(field result "$line")
    checks=""

    i=0
    while [ $i -lt "$PROCS" ]; do
        run base "$B/bench_${w}_base" --offsets="$OFFSETS" --reps="$REPS"
        run empty "$B/bench_${w}_empty" --offsets="$OFFSETS" --reps="$REPS"
        run clock2 "$B/bench_${w}_clock" --offsets="$OFFSETS" --reps="$REPS"
        run plt "$B/bench_${w}_hookless" --offsets="$OFFSETS" --reps="$REPS"
        run stack "$B/bench_${w}_np" --mode=stack --offsets="$OFFSETS" --reps="$REPS"
        run log "$B/bench_${w}_np" --mode=log --offsets="$OFFSETS" --reps="$REPS"
        run cost "$B/bench_${w}_np" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
        sc=$(field stats_calls "$LAST")
        if [ "$sc" != "$CALLS" ] || [ "$(field lost "$LAST")" != 0 ] || [ "$(field autosum "$LAST")" != 0 ]; then
            echo "run.sh: $w cost mode: $LAST (expected stats_calls=$CALLS lost=0 autosum=0)" >&2
            exit 1
        fi
        echo "calc $(field calc_ns "$LAST")" >>"$RES"
        clock=$(field clock "$LAST")
        run ct_stack "$B/bench_${w}_npct" --mode=stack --offsets="$OFFSETS" --reps="$REPS"
        run ct_log "$B/bench_${w}_npct" --mode=log --offsets="$OFFSETS" --reps="$REPS"
        run c_cost "$B/bench_${w}_npcost" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
        i=$((i + 1))
    done
    checks="cost mode ($clock clock): np_stats counted $CALLS calls per run, none lost, no summary while timed"

    if [ $have_uftrace = 1 ]; then
        i=0
        while [ $i -lt "$UPROCS" ]; do
            rm -rf "${UDATA:?}/$w"
            # shellcheck disable=SC2086
            run uftrace "$UFTRACE" record -d "$UDATA/$w" $UFTRACE_OPTS "$B/bench_${w}_hookless" --offsets="$UOFFSETS" --reps=1
            i=$((i + 1))
        done
        # uftrace really recorded every call: its report counts them
        got=$("$UFTRACE" report -d "$UDATA/$w" --no-pager 2>/dev/null |
              awk '$NF !~ /^linux:/ && $(NF-1) ~ /^[0-9]+$/ { n += $(NF-1) } END { print n + 0 }')
        want=$((CALLS * UOFFSETS))
        if [ "$got" != "$want" ]; then
            echo "run.sh: uftrace recorded $got calls in $UOFFSETS runs of $w, expected $want" >&2
            exit 1
        fi
        checks="$checks; uftrace report: $got calls = $UOFFSETS x $CALLS"
        rm -rf "${UDATA:?}/$w"
    fi

    BASE=$(best base)
    case $w in
    fib) what="recursive fib(29): a call that does almost nothing" ;;
    wordfreq) what="tokenize + hash-table word count + qsort + CRC-32 of 1 MB of text" ;;
    *) what=$w ;;
    esac
    echo
    printf '== %s: %s\n' "$w" "$what"
    awk -v c="$CALLS" -v b="$BASE" 'BEGIN {
        printf "   %d calls per run; uninstrumented %.3f ms = %.2f ns of work per call\n", c, b / 1e6, b / c }'
    printf '   checks: %s\n' "$checks"
    printf '%-44s %10s %14s %9s %9s %9s\n' "variant" "time ms" "overhead" "x empty" "x clock2" "x uftrace"
    printf '%-44s %10s %14s %9s %9s %9s\n' "" "" "ns/call" "" "" ""

    EMPTY=$(best empty)
    CLOCK=$(best clock2)
    UFT=$(best uftrace)
    row() { # row LABEL TEXT
        t=$(best "$1")
        [ -n "$t" ] || return 0
        awk -v t="$t" -v b="$BASE" -v c="$CALLS" -v e="$EMPTY" -v k="$CLOCK" -v u="${UFT:-}" \
            -v txt="$2" -v label="$1" -v w="$w" -v sum="$SUMMARY" 'BEGIN {
            o = (t - b) / c; oe = (e - b) / c; ok = (k - b) / c
            ou = (u == "") ? 0 : (u - b) / c
            if (label == "base") {
                printf "%-44s %10.3f %14s %9s %9s %9s\n", txt, t / 1e6, "-", "", "", ""
                exit
            }
            re = oe > 0 ? sprintf("%.2f", o / oe) : "n/a"
            rk = ok > 0 ? sprintf("%.2f", o / ok) : "n/a"
            ru = ou > 0 ? sprintf("%.2f", o / ou) : "n/a"
            printf "%-44s %10.3f %14.2f %9s %9s %9s\n", txt, t / 1e6, o, re, rk, ru
            printf "%s %s %.6f\n", w, label, o >> sum
        }'
    }
    row base "uninstrumented (baseline)"
    row empty "empty hooks (floor of any hook)"
    row plt "glibc no-op hooks via PLT (uftrace's binary)"
    row clock2 "two counter reads (floor of a timed hook)"
    row stack "nanoprof call trace, stack mode"
    row log "nanoprof call trace, log mode"
    row cost "nanoprof function cost"
    row ct_stack "  libnanoprof-calltrace.a, stack mode"
    row ct_log "  libnanoprof-calltrace.a, log mode"
    row c_cost "  libnanoprof-cost.a, function cost"
    row uftrace "uftrace record (in-process time)"
    calc=$(best calc)
    awk -v t="$calc" -v c="$CALLS" 'BEGIN {
        printf "%-44s %10.3f %14.2f   (np_stats_calc after the run, untimed above)\n",
               "  + summary of the cost records", t / 1e6, t / c }'
done

# ---- targets --------------------------------------------------------------
echo
echo "== targets (overhead ratios; PASS when at or under the target)"
printf '%-52s %8s' "ratio" "target"
for w in $WORKLOADS; do printf ' %14s' "$w"; done
echo
target() { # target TEXT NUM DEN LIMIT
    printf '%-52s %8s' "$1" "<= $4"
    for w in $WORKLOADS; do
        awk -v w="$w" -v n="$2" -v d="$3" -v lim="$4" '
            $1 == w && $2 == n { a = $3 } $1 == w && $2 == d { b = $3 }
            END {
                if (a == "" || b == "" || b <= 0) { printf " %14s", "n/a"; exit }
                r = a / b
                printf " %9.2f %-4s", r, (r <= lim + 0 ? "PASS" : "MISS")
            }' "$SUMMARY"
    done
    echo
}
target "log mode / empty hooks         (libnanoprof.a)" log empty 1.5
target "log mode / empty hooks         (-calltrace.a)" ct_log empty 1.5
target "function cost / two clock reads (libnanoprof.a)" cost clock2 1.15
target "function cost / two clock reads (-cost.a)" c_cost clock2 1.15
target "function cost / uftrace        (libnanoprof.a)" cost uftrace 0.4
target "function cost / uftrace        (-cost.a)" c_cost uftrace 0.4

# ---- sections: a begin/end pair against two counter reads -----------------
# each figure the fastest over the processes, as above
if [ -x "$B/bench_sections" ]; then
    echo
    echo "== sections: one NP_SECTION_BEGIN/END pair against two counter reads (floor)"
    RES=$TMP/sections.res
    : >"$RES"
    i=0
    while [ $i -lt "$PROCS" ]; do
        line=$("$B/bench_sections" | grep '^bench=') || { echo "run.sh: bench_sections failed" >&2; exit 1; }
        echo "pair $(field pair_ns "$line")" >>"$RES"
        echo "clock2 $(field clock2_ns "$line")" >>"$RES"
        i=$((i + 1))
    done
    awk -v p="$(best pair)" -v c="$(best clock2)" -v k="$(field clock "$line")" 'BEGIN {
        r = p / c
        printf "section pair %.2f ns, two counter reads %.2f ns (%s clock)\n", p, c, k
        printf "%-52s %8s %9.2f %-4s\n", "section pair / two clock reads", "<= 1.25", r, (r <= 1.25 ? "PASS" : "MISS")
    }'
fi

# The recording figures (nanoprof record / report against uftrace).
sh "$(dirname "$0")/record.sh" "$BUILD"
# The memory of replay and the Chrome export, which stream (stream.sh).
sh "$(dirname "$0")/stream.sh" "$BUILD"
# The sampling figure (nanoprof record --sample on the uninstrumented build).
sh "$(dirname "$0")/sample.sh" "$BUILD"
# How close the sampled shares come to the true ones (sample_accuracy.sh).
sh "$(dirname "$0")/sample_accuracy.sh" "$BUILD"
# Recording programs that run many threads at once: nothing lost, and the
# slowdown beside uftrace's (record_loss.sh).
sh "$(dirname "$0")/record_loss.sh" "$BUILD"
# Folded stacks and flame graph of a deep recursion (deep.sh).
sh "$(dirname "$0")/deep.sh" "$BUILD"
