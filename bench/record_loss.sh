#!/bin/sh
# record_loss.sh BUILD_DIR - what recording loses and costs on programs
# that run many threads at once (run by run.sh): SQLite in 4 threads, 300
# threads x 100,000 calls, zstd's library compressing with 2 workers (as
# `zstd -T2`). For each: the calls `nanoprof record` kept and the events
# it lost (target 0), the calls `uftrace record` kept (they must agree),
# and the slowdown of each over the uninstrumented-speed run of the same
# binary (the median wall time of NP_LOSS_RUNS runs, whole process:
# start-up and the final flush included; target: nanoprof's at most
# uftrace's). SQLite and zstd come from the npm registry
# (fetch_sources.sh) and are built here, instrumented, once.
set -eu
BUILD=${1:-build}
NP=$BUILD/src/nanoprof
RUNS=${NP_LOSS_RUNS:-3}
UFTRACE=${UFTRACE:-uftrace}
SRC=$BUILD/bench/sources
PROGS=$BUILD/bench/loss
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nploss.XXXXXX")
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    UDATA=$(mktemp -d /dev/shm/nploss-uftrace.XXXXXX)
else
    UDATA=$TMP/uftrace
    mkdir -p "$UDATA"
fi
trap 'rm -rf "$TMP" "$UDATA"' EXIT INT TERM

echo
echo "== recording many threads: calls lost (target 0) and slowdown beside uftrace's"
if ! sh "$HERE/fetch_sources.sh" "$SRC"; then
    echo "record_loss.sh: MISS: the SQLite and zstd sources could not be fetched" >&2
    exit 1
fi
mkdir -p "$PROGS"
CC=${CC:-cc}
FLAGS="-O2 -g -finstrument-functions -pthread"
build() { # build NAME SOURCES...: instrumented, once
    name=$1
    shift
    [ -x "$PROGS/$name" ] && return 0
    echo "building $name (instrumented)..."
    $CC $FLAGS "$@" -o "$PROGS/$name" -lm
}
build many_threads "$HERE/programs/many_threads.c"
build sqlite_threads -DSQLITE_OMIT_LOAD_EXTENSION -I "$SRC/sqlite3" "$HERE/programs/sqlite_threads.c" \
    "$SRC/sqlite3/sqlite3.c"
build zstd_mt -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -I "$SRC/zstd/lib" "$HERE/programs/zstd_mt.c" \
    "$SRC"/zstd/lib/common/*.c "$SRC"/zstd/lib/compress/*.c "$SRC"/zstd/lib/decompress/*.c

wall() { # wall COMMAND...: its wall seconds, output discarded
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "record_loss.sh: failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }

have_uftrace=0
command -v "$UFTRACE" >/dev/null 2>&1 && have_uftrace=1
printf '%-22s %10s %8s %10s %8s %9s %9s %9s  %s\n' workload calls lost uftrace plain nanoprof uftrace "np/uf" verdict
for w in "sqlite-4-threads:sqlite_threads 4 5000" "300-threads-x100k:many_threads 300 100000" \
    "zstd-T2:zstd_mt 4"; do
    label=${w%%:*}
    set -- ${w#*:}
    prog=$PROGS/$1
    shift
    : >"$TMP/plain" && : >"$TMP/np" && : >"$TMP/uf"
    i=0
    while [ $i -lt "$RUNS" ]; do
        wall "$prog" "$@" >>"$TMP/plain"
        rm -rf "$TMP/trace"
        wall "$NP" record -o "$TMP/trace" -- "$prog" "$@" >>"$TMP/np"
        if [ $have_uftrace = 1 ]; then
            rm -rf "$UDATA/u"
            wall "$UFTRACE" record --no-libcall --no-sched -d "$UDATA/u" "$prog" "$@" >>"$TMP/uf"
        fi
        i=$((i + 1))
    done
    "$NP" report --format=json "$TMP/trace" >"$TMP/json" 2>/dev/null
    calls=$(jq '[.threads[].calls] | add' "$TMP/json")
    lost=$(jq '[.threads[].lost] | add' "$TMP/json")
    ucalls=n/a
    if [ $have_uftrace = 1 ]; then
        ucalls=$("$UFTRACE" report -d "$UDATA/u" 2>/dev/null | awk 'NR > 2 { s += $(NF - 1) } END { print s }')
    fi
    plain=$(median <"$TMP/plain")
    np=$(median <"$TMP/np")
    uf=$( [ $have_uftrace = 1 ] && median <"$TMP/uf" || echo 0)
    echo "$plain $np $uf $lost $calls $ucalls" | awk -v l="$label" '{
        nps = $2 / $1; ufs = ($3 > 0 ? $3 / $1 : 0)
        ok = ($4 == 0 && (ufs == 0 || nps <= ufs))
        printf "%-22s %10s %8s %10s %7.3fs %8.2fx %8.2fx %9.2f  %s\n", l, $5, $4, $6, $1, nps, ufs,
               (ufs > 0 ? nps / ufs : 0), (ok ? "PASS" : "MISS")
        exit !ok
    }' || true
done
echo "(calls: kept by nanoprof record and by uftrace record, each in its own last run: SQLite's"
echo " vary by a few dozen between runs (pthreadMutexAlloc and pthreadMutexEnter, as its threads"
echo " race), the others agree call for call; slowdown: median wall time of $RUNS runs over the"
echo " plain run of the same instrumented binary, whose hooks are glibc's empty ones, start-up and"
echo " final flush included; nanoprof loses nothing by default: threads wait for its writer)"
