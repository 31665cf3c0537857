#!/bin/sh
# run.sh BUILD_DIR - runs the nanoprof benchmarks (what `make bench` runs after
# building) and prints, per workload, the time of every variant next to the
# uninstrumented baseline, the two floors (empty hooks, two clock reads) and
# uftrace, then the targets as ratios with PASS/MISS. docs/performance.md
# explains the table.
#
# Workloads: fib and wordfreq (bench/, built by CMake), and SQLite, which
# nobody here wrote (bench/sqlite.sh fetches and builds it, once per build
# directory; without npm or the network its rows are missing and its
# targets say MISS).
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
# Function cost is timed all-in: each run ends with np_stats_calc, inside
# the timed region, with the README's 1 MiB measurement buffer, so every
# merge it needs is in the figure; the set-up (np_stats_init,
# np_cost_init), once per process, is shown beside. Every mechanism is
# timed through libnanoprof.a and through libnanoprof.so as pkg-config and
# the CMake package link it (libnanoprof-hooks.a in the program), and,
# for information, libnanoprof.so alone (-lnanoprof).
#
# Then one NP_SECTION_BEGIN/END pair against two counter reads
# (bench_sections, NP_BENCH_PROCS processes, the best ratio), the start-up
# of `nanoprof record` (startup.sh), the recording figures (record.sh),
# the memory of the streaming views (stream.sh) and the speed of
# `nanoprof import` on a 100 MB capture (capture.sh).
#
# Overhead per call = (time of the variant - time uninstrumented) / calls,
# where calls is counted by bench_<w>_count (hooks that count entries); for
# the builds with -pg (fib and wordfreq), by function cost's table, since
# GCC makes loops of part of their recursion (the calls uftrace counts on
# the same binaries, checked).
#
# NP_BENCH_PARTS (default all) runs only some parts, e.g. "calls startup":
# calls sections startup record stream capture sample accuracy loss deep emu
# target
# ("none": only the lines that open and end the output).
#
# The whole output, stderr included, goes to the terminal and to
# NP_BENCH_OUT (default BUILD_DIR/bench.out). It opens with the machine
# (CPU, nproc, architecture, kernel, compiler, C library) and the run
# (date, commit, parts, load average) and ends with an "end:" line once
# every part ran: scripts/bench_docs.sh takes the figures the docs quote
# from it (docs/performance.md, "How the figures are made").
set -eu

BUILD=${1:-build}
OUT=${NP_BENCH_OUT:-$BUILD/bench.out}
if [ "${NP_BENCH_TEED:-}" != 1 ]; then
    # run again with the output through tee; the status is the run's
    rc=$(mktemp "${TMPDIR:-/tmp}/npbench-rc.XXXXXX")
    { NP_BENCH_TEED=1 sh "$0" "$@" 2>&1; echo $? >"$rc"; } | tee "$OUT"
    s=$(cat "$rc")
    rm -f "$rc"
    exit "${s:-1}"
fi
B=$BUILD/bench
PROCS=${NP_BENCH_PROCS:-6}
REPS=${NP_BENCH_REPS:-2}
OFFSETS=${NP_BENCH_OFFSETS:-8}
UPROCS=${NP_BENCH_UFTRACE_PROCS:-2}
UOFFSETS=${NP_BENCH_UFTRACE_OFFSETS:-4}
STAT=${NP_BENCH_STAT:-min}
UFTRACE=${UFTRACE:-uftrace}
UFTRACE_OPTS="--no-libcall --no-sched"
WORKLOADS=${NP_BENCH_WORKLOADS:-"fib wordfreq sqlite"}
PARTS=${NP_BENCH_PARTS:-all}
part() { # part NAME: whether this run includes it
    case " $PARTS " in *" all "* | *" $1 "*) return 0 ;; esac
    return 1
}

if [ "$PARTS" != none ] && [ ! -x "$B/bench_fib_base" ]; then
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

# cost_checks: the cost run just made counted every call, lost none; notes
# its np_stats_calc and set-up times
cost_checks() {
    sc=$(field stats_calls "$LAST")
    if [ "$sc" != "$CALLS" ] || [ "$(field lost "$LAST")" != 0 ]; then
        echo "run.sh: $w cost mode: $LAST (expected stats_calls=$CALLS lost=0)" >&2
        exit 1
    fi
    echo "calc $(field calc_ns "$LAST")" >>"$RES"
    echo "setup $(field setup_ns "$LAST")" >>"$RES"
    clock=$(field clock "$LAST")
}

# pg_checks VAR: the -pg cost run just made lost no call and counted as
# many as the first (then VAR holds them)
pg_checks() {
    sc=$(field stats_calls "$LAST")
    eval "want=\${$1:-$sc}"
    if [ "$sc" != "$want" ] || [ "$sc" = 0 ] || [ "$(field lost "$LAST")" != 0 ]; then
        echo "run.sh: $w -pg cost mode: $LAST (expected stats_calls=$want lost=0)" >&2
        exit 1
    fi
    eval "$1=$sc"
}

# best LABEL: the minimum time of LABEL, in ns
best() {
    awk -v l="$1" '$1 == l { if (m == "" || $2 < m) m = $2 } END { print m }' "$RES"
}

cpuinfo() { # cpuinfo FIELD: its value for the first CPU in /proc/cpuinfo
    sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo 2>/dev/null | head -n 1
}
printf 'nanoprof benchmarks: %s, %s CPUs, %s\n' \
    "$(cpuinfo 'model name')" "$(nproc 2>/dev/null || echo '?')" "$(uname -m)"
# the machine and the run, one line each (docs/performance.md quotes them)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[^=]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
printf 'machine: %s (family %s) at %s GHz; %s CPUs (nproc); %s; %s %s; %s; glibc %s\n' \
    "$(cpuinfo 'model name')" "$(cpuinfo 'cpu family')" \
    "$(cpuinfo 'cpu MHz' | awk '{ printf "%.1f", $1 / 1000 }')" \
    "$(nproc 2>/dev/null || echo '?')" "$(uname -m)" "$(uname -s)" "$(uname -r)" \
    "$("${cc:-cc}" --version 2>/dev/null | head -n 1)" \
    "$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc //')"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null; then
    commit="$commit with local changes"
fi
printf 'run: %s; commit %s; parts %s; load average %s at the start\n' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$commit" "$PARTS" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
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
if part calls; then

# SQLite: built here (compiled twice, about a minute and a half the first
# time); a workload that cannot be built is left out, and its targets MISS
RUN_WORKLOADS=""
for w in $WORKLOADS; do
    if [ "$w" = sqlite ] && ! sh "$(dirname "$0")/sqlite.sh" "$BUILD"; then
        echo "run.sh: sqlite: not built; its figures are missing" >&2
        continue
    fi
    RUN_WORKLOADS="$RUN_WORKLOADS $w"
done

for w in $RUN_WORKLOADS; do
    RES=$TMP/$w.res
    : >"$RES"
    # calls per run, and the checksum every variant must reproduce
    line=$("$B/bench_${w}_count" --reps=1 --offsets=1 | grep '^bench=')
    CALLS=$(field calls "$line")
    SETUP_CALLS=$(field setup_calls "$line")
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
        cost_checks
        run ct_stack "$B/bench_${w}_npct" --mode=stack --offsets="$OFFSETS" --reps="$REPS"
        run ct_log "$B/bench_${w}_npct" --mode=log --offsets="$OFFSETS" --reps="$REPS"
        run c_cost "$B/bench_${w}_npcost" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
        cost_checks
        run so_stack "$B/bench_${w}_npso" --mode=stack --offsets="$OFFSETS" --reps="$REPS"
        run so_log "$B/bench_${w}_npso" --mode=log --offsets="$OFFSETS" --reps="$REPS"
        run so_cost "$B/bench_${w}_npso" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
        cost_checks
        run soonly_log "$B/bench_${w}_npsoonly" --mode=log --offsets="$OFFSETS" --reps="$REPS"
        run soonly_cost "$B/bench_${w}_npsoonly" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
        cost_checks
        i=$((i + 1))
    done
    checks="cost mode ($clock clock): each run ends with np_stats_calc, timed, 1 MiB buffer; np_stats counted $CALLS calls per run, none lost"

    # the hooks of -pg: calls per run counted by function cost (GCC makes
    # loops of some of the recursion a -finstrument-functions build keeps)
    FE_CALLS=""
    PG_CALLS=""
    PF_CALLS=""
    if [ -x "$B/bench_${w}_fe_np" ]; then
        i=0
        while [ $i -lt "$PROCS" ]; do
            run fe_log "$B/bench_${w}_fe_np" --mode=log --offsets="$OFFSETS" --reps="$REPS"
            run fe_cost "$B/bench_${w}_fe_np" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
            pg_checks FE_CALLS
            # the same with every exit by the return-address trampoline, as
            # before calls of the hook became jumps to thunks
            run fe_log_tr env NANOPROF_PG_THUNKS=0 "$B/bench_${w}_fe_np" --mode=log --offsets="$OFFSETS" --reps="$REPS"
            run fe_cost_tr env NANOPROF_PG_THUNKS=0 "$B/bench_${w}_fe_np" --mode=cost --offsets="$OFFSETS" \
                --reps="$REPS"
            pg_checks FE_CALLS
            # the floors: a __fentry__ that only returns, one that only
            # sends the return through a trampoline, and the same exit with
            # calls and returns paired (bench/fentry_floor.c)
            run fe_floor "$B/bench_${w}_fe_floor" --mode=none --offsets="$OFFSETS" --reps="$REPS"
            run fe_ret "$B/bench_${w}_fe_ret" --mode=none --offsets="$OFFSETS" --reps="$REPS"
            run fe_thunk "$B/bench_${w}_fe_thunk" --mode=none --offsets="$OFFSETS" --reps="$REPS"
            run pg_log "$B/bench_${w}_pg_np" --mode=log --offsets="$OFFSETS" --reps="$REPS"
            run pg_cost "$B/bench_${w}_pg_np" --mode=cost --offsets="$OFFSETS" --reps="$REPS"
            pg_checks PG_CALLS
            # patchable entries: off (the program alone), and every function
            # switched on (np_trace_on, once per process: its time noted)
            run pf_off "$B/bench_${w}_pf_off" --mode=none --offsets="$OFFSETS" --reps="$REPS"
            # and by Clang (one five-byte NOP, not five one-byte ones),
            # beside Clang's uninstrumented build
            if [ -x "$B/bench_${w}_pf_off_clang" ]; then
                run pf_off_clang "$B/bench_${w}_pf_off_clang" --mode=none --offsets="$OFFSETS" --reps="$REPS"
                run base_clang "$B/bench_${w}_base_clang" --mode=none --offsets="$OFFSETS" --reps="$REPS"
            fi
            run pf_log "$B/bench_${w}_pf_np" --mode=log --trace-on --offsets="$OFFSETS" --reps="$REPS"
            run pf_cost "$B/bench_${w}_pf_np" --mode=cost --trace-on --offsets="$OFFSETS" --reps="$REPS"
            pg_checks PF_CALLS
            echo "pf_switch $(field patch_ns "$LAST")" >>"$RES"
            PF_PATCHED=$(field patched "$LAST")
            i=$((i + 1))
        done
        checks="$checks; -pg -mfentry build: $FE_CALLS calls per run, -pg build: $PG_CALLS, patchable build: $PF_CALLS (functions switched on: $PF_PATCHED), none lost"
        if [ $have_uftrace = 1 ]; then
            for k in fe pg pf; do
                eval "kc=\$$(echo $k | tr a-z A-Z)_CALLS"
                i=0
                while [ $i -lt "$UPROCS" ]; do
                    rm -rf "${UDATA:?}/$w$k"
                    # (a patchable build: uftrace patches every function, -P .)
                    if [ $k = pf ]; then bin=$B/bench_${w}_pf_off pat="-P ."; else bin=$B/bench_${w}_${k}_glibc pat=""; fi
                    # shellcheck disable=SC2086
                    run uf_$k "$UFTRACE" record -d "$UDATA/$w$k" $UFTRACE_OPTS $pat "$bin" \
                        --offsets="$UOFFSETS" --reps=1
                    i=$((i + 1))
                done
                got=$("$UFTRACE" report -d "$UDATA/$w$k" --no-pager 2>/dev/null |
                      awk '$NF !~ /^linux:/ && $(NF-1) ~ /^[0-9]+$/ { n += $(NF-1) } END { print n + 0 }')
                if [ "$got" != $((kc * UOFFSETS)) ]; then
                    echo "run.sh: uftrace recorded $got calls in $UOFFSETS runs of $w's $k build, expected $UOFFSETS x $kc" >&2
                    exit 1
                fi
                rm -rf "${UDATA:?}/$w$k"
            done
            checks="$checks; uftrace report on them: as many"
        fi
    fi

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
        want=$((CALLS * UOFFSETS + SETUP_CALLS))
        if [ "$got" != "$want" ]; then
            echo "run.sh: uftrace recorded $got calls in $UOFFSETS runs of $w, expected $want" >&2
            exit 1
        fi
        if [ "$SETUP_CALLS" = 0 ]; then
            checks="$checks; uftrace report: $got calls = $UOFFSETS x $CALLS"
        else
            checks="$checks; uftrace report: $got calls = $UOFFSETS x $CALLS + $SETUP_CALLS in the set-up"
        fi
        rm -rf "${UDATA:?}/$w"
    fi

    BASE=$(best base)
    case $w in
    fib) what="recursive fib(29): a call that does almost nothing" ;;
    wordfreq) what="tokenize + hash-table word count + qsort + CRC-32 of 1 MB of text" ;;
    sqlite) what="SQLite: 2000 inserts, an index, 40 range queries with LIKE, in memory" ;;
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
    row() { # row LABEL TEXT [CALLS]: overhead per call of CALLS (default $CALLS)
        t=$(best "$1")
        [ -n "$t" ] || return 0
        # (the floors' and uftrace's per call of their own build's calls)
        awk -v t="$t" -v b="$BASE" -v c="${3:-$CALLS}" -v C="$CALLS" -v e="$EMPTY" -v k="$CLOCK" -v u="${UFT:-}" \
            -v txt="$2" -v label="$1" -v w="$w" -v sum="$SUMMARY" 'BEGIN {
            o = (t - b) / c; oe = (e - b) / C; ok = (k - b) / C
            ou = (u == "") ? 0 : (u - b) / C
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
    row stack "libnanoprof.a: call trace, stack mode"
    row log "libnanoprof.a: call trace, log mode"
    row cost "libnanoprof.a: function cost, all-in"
    row so_stack "libnanoprof.so: call trace, stack mode"
    row so_log "libnanoprof.so: call trace, log mode"
    row so_cost "libnanoprof.so: function cost, all-in"
    row ct_stack "libnanoprof-calltrace.a, stack mode"
    row ct_log "libnanoprof-calltrace.a, log mode"
    row c_cost "libnanoprof-cost.a, function cost, all-in"
    row soonly_log "  -lnanoprof alone (hooks in the .so): log"
    row soonly_cost "  -lnanoprof alone (hooks in the .so): cost"
    row uftrace "uftrace record (in-process time)"
    if [ -n "$FE_CALLS" ]; then
        row fe_floor "-pg -mfentry floor: hook that only returns" "$FE_CALLS"
        row fe_ret "-pg -mfentry floor: return via trampoline" "$FE_CALLS"
        row fe_thunk "-pg -mfentry floor: call-through thunk" "$FE_CALLS"
        row fe_log "-pg -mfentry, libnanoprof.a: log mode" "$FE_CALLS"
        row fe_cost "-pg -mfentry, libnanoprof.a: cost, all-in" "$FE_CALLS"
        row fe_log_tr "  the same, exits by trampoline: log mode" "$FE_CALLS"
        row fe_cost_tr "  the same, exits by trampoline: cost" "$FE_CALLS"
        row uf_fe "-pg -mfentry, uftrace record" "$FE_CALLS"
        row pg_log "-pg, libnanoprof.a: log mode" "$PG_CALLS"
        row pg_cost "-pg, libnanoprof.a: cost, all-in" "$PG_CALLS"
        row uf_pg "-pg, uftrace record" "$PG_CALLS"
        row pf_off "patchable, off (the program alone)" "$PF_CALLS"
        row pf_log "patchable on, libnanoprof.a: log mode" "$PF_CALLS"
        row pf_cost "patchable on, libnanoprof.a: cost, all-in" "$PF_CALLS"
        row uf_pf "patchable, uftrace record -P ." "$PF_CALLS"
        awk -v t="$(best pf_switch)" 'BEGIN {
            printf "%-44s %10.4f %14s   (np_trace_on(NULL), once per process: not per call)\n",
                   "  switching every function on, once", t / 1e6, "-" }'
        # the run time ratio of the patchable build off (a target of its own)
        echo "$w pf_off_time $(best pf_off)" >>"$SUMMARY"
        echo "$w base_time $BASE" >>"$SUMMARY"
        echo "$w pf_off_clang_time $(best pf_off_clang)" >>"$SUMMARY"
        echo "$w base_clang_time $(best base_clang)" >>"$SUMMARY"
    fi
    calc=$(best calc)
    setup=$(best setup)
    awk -v t="$calc" -v s="$setup" -v c="$CALLS" 'BEGIN {
        printf "%-44s %10.4f %14.3f   (np_stats_calc, inside the all-in figures: %.1f us)\n",
               "  of which the run-ending merge", t / 1e6, t / c, t / 1e3
        printf "%-44s %10.4f %14s   (np_stats_init + np_cost_init, once per process: not per call)\n",
               "  set-up, once", s / 1e6, "-" }'
done

# ---- targets --------------------------------------------------------------
echo
echo "== targets (overhead ratios, all in this run; PASS when at or under the target)"
printf '%-52s %8s' "ratio" "target"
for w in $WORKLOADS; do printf ' %14s' "$w"; done
echo
target() { # target TEXT NUM DEN LIMIT [WORKLOADS]: only those (the others "-")
    printf '%-52s %8s' "$1" "<= $4"
    for w in $WORKLOADS; do
        case " ${5:-$WORKLOADS} " in *" $w "*) ;; *) printf ' %9s %-4s' - ""; continue ;; esac
        awk -v w="$w" -v n="$2" -v d="$3" -v lim="$4" '
            $1 == w && $2 == n { a = $3 } $1 == w && $2 == d { b = $3 }
            END {
                if (a == "" || b == "" || b <= 0) { printf " %9s MISS", "n/a"; exit }
                r = a / b
                printf " %9.2f %-4s", r, (r <= lim + 0 ? "PASS" : "MISS")
            }' "$SUMMARY"
    done
    echo
}
target "function cost all-in / two clock reads (.a)" cost clock2 1.15
target "function cost all-in / two clock reads (.so)" so_cost clock2 1.15
target "function cost all-in / two clock reads (-cost.a)" c_cost clock2 1.15
target "function cost all-in / uftrace record   (.a)" cost uftrace 0.3
target "function cost all-in / uftrace record   (.so)" so_cost uftrace 0.3
target "log mode / empty hooks                  (.a)" log empty 1.5
target "log mode / empty hooks                  (.so)" so_log empty 1.5
target "log mode / empty hooks          (-calltrace.a)" ct_log empty 1.5
target "-mfentry log mode / empty hooks         (.a)" fe_log empty 2.0 "fib wordfreq"
target "-mfentry function cost / two clock reads" fe_cost clock2 1.3 "fib wordfreq"
target "-mfentry function cost / uftrace record" fe_cost uf_fe 0.3 "fib wordfreq"
target "-pg function cost / uftrace record" pg_cost uf_pg 0.3 "fib wordfreq"
target "patchable off: run time / uninstrumented" pf_off_time base_time 1.02 "fib wordfreq"
target "patchable off, Clang: the same, Clang's builds" pf_off_clang_time base_clang_time 1.02 "fib wordfreq"
target "patchable on, log mode / -mfentry log mode" pf_log fe_log 1.2 "fib wordfreq"
target "patchable on, cost / -mfentry cost" pf_cost fe_cost 1.2 "fib wordfreq"
target "patchable on, cost / uftrace record -P ." pf_cost uf_pf 0.3 "fib wordfreq"
fi

# ---- sections: a begin/end pair against two counter reads -----------------
# each figure the fastest over the processes, as above
if part sections && [ -x "$B/bench_sections" ]; then
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

# The start-up of `nanoprof record` against the bare program, uftrace
# record and perf record (startup.sh).
if part startup; then sh "$(dirname "$0")/startup.sh" "$BUILD"; fi
# The recording figures (nanoprof record / report against uftrace).
if part record; then sh "$(dirname "$0")/record.sh" "$BUILD"; fi
# The memory of replay and the Chrome export, which stream (stream.sh).
if part stream; then sh "$(dirname "$0")/stream.sh" "$BUILD"; fi
# `nanoprof import` on a 100 MB capture, in MB/s (capture.sh).
if part capture; then sh "$(dirname "$0")/capture.sh" "$BUILD"; fi
# The sampling figure (nanoprof record --sample on the uninstrumented build).
if part sample; then sh "$(dirname "$0")/sample.sh" "$BUILD"; fi
# How close the sampled shares come to the true ones (sample_accuracy.sh).
if part accuracy; then sh "$(dirname "$0")/sample_accuracy.sh" "$BUILD"; fi
# Recording programs that run many threads at once: nothing lost, and the
# slowdown beside uftrace's (record_loss.sh).
if part loss; then sh "$(dirname "$0")/record_loss.sh" "$BUILD"; fi
# Folded stacks and flame graph of a deep recursion (deep.sh).
if part deep; then sh "$(dirname "$0")/deep.sh" "$BUILD"; fi
# The emulator's instructions per second beside Unicorn, qemu-arm and
# callgrind (emu.sh).
if part emu; then sh "$(dirname "$0")/emu.sh" "$BUILD"; fi
# The runtime on a Cortex-M: each mechanism's ROM and RAM, instructions
# per event (target.sh).
if part target; then sh "$(dirname "$0")/target.sh" "$BUILD"; fi

echo
printf 'end: %s; load average %s at the end\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
