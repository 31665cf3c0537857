#!/bin/sh
# sqlite.sh BUILD_DIR - builds the SQLite workload (bench/sqlite.c) in every
# variant CMake builds fib and wordfreq in (bench/CMakeLists.txt), as
# BUILD_DIR/bench/bench_sqlite_<variant>, for run.sh. The amalgamation comes
# from the npm registry (fetch_sources.sh) and is compiled twice, at -O2,
# with and without -finstrument-functions, once per build directory.
# Exit 1 (with a line) when the sources cannot be had.
set -eu
BUILD=$1
B=$BUILD/bench
SRC=$B/sources
OUT=$B/sqlite
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CC=${CC:-cc}
OPT="-O2 -g"

if ! sh "$HERE/fetch_sources.sh" "$SRC" >/dev/null 2>&1 || [ ! -f "$SRC/sqlite3/sqlite3.c" ]; then
    echo "sqlite.sh: the SQLite sources could not be fetched (bench/fetch_sources.sh needs npm)" >&2
    exit 1
fi
mkdir -p "$OUT"
SQL_DEFS="-DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=1"
# each object once, rebuilt when the source or this script is newer
obj() { # obj OUT SRC FLAGS...
    o=$1 s=$2
    shift 2
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$0" -nt "$o" ]; then
        echo "sqlite.sh: compiling $(basename "$o")..." >&2
        # shellcheck disable=SC2086
        $CC $OPT "$@" -c "$s" -o "$o.tmp" && mv "$o.tmp" "$o"
    fi
}
obj "$OUT/sqlite3_plain.o" "$SRC/sqlite3/sqlite3.c" $SQL_DEFS
obj "$OUT/sqlite3_instr.o" "$SRC/sqlite3/sqlite3.c" $SQL_DEFS -finstrument-functions
for h in empty clock count; do
    # hooks_clock.c reads the counter as the runtime does (port.h, and the
    # POSIX port's port_hot.h)
    obj "$OUT/hooks_$h.o" "$HERE/hooks_$h.c" -I"$ROOT/src/port/posix"
done
DRIVER="-I$SRC/sqlite3 -I$ROOT/include $HERE/sqlite.c"
LIBS="-lm -ldl -lpthread"
L=$(cd "$BUILD/src" && pwd)
exe() { # exe VARIANT ARGS...: links bench_sqlite_VARIANT
    v=$1
    shift
    # shellcheck disable=SC2086
    $CC $OPT -o "$B/bench_sqlite_$v" "$@" $LIBS
}
exe base $DRIVER "$OUT/sqlite3_plain.o"
exe hookless $DRIVER "$OUT/sqlite3_instr.o"
for h in empty clock count; do
    exe $h $DRIVER "$OUT/sqlite3_instr.o" "$OUT/hooks_$h.o"
done
NP="-DBENCH_NANOPROF $DRIVER $OUT/sqlite3_instr.o"
exe np $NP "$L/libnanoprof.a" -lelf -lzstd
exe npct $NP "$L/libnanoprof-calltrace.a" -lelf
exe npcost $NP "$L/libnanoprof-cost.a" -lelf
# as pkg-config links it: the hooks in the program, the rest shared
exe npso $NP -L"$L" -lnanoprof-hooks -lnanoprof -Wl,-rpath,"$L"
exe npsoonly $NP -L"$L" -lnanoprof -Wl,-rpath,"$L"
