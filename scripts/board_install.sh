#!/bin/sh
# board_install.sh CMAKE SRC BOARD DIR [CMAKE_ARGS...] - the runtime for a
# Cortex-M board, configured, built and installed as docs/porting.md
# ("Building for a board") says: DIR/build, into DIR/prefix. The steps'
# output goes to DIR/cmake.log, printed (indented) when one fails; exits 1
# then. Used by the tests and benchmarks that build firmware from an
# install (tests/port/, bench/target.sh).
set -u
CMAKE=$1
SRC=$2
BOARD=$3
DIR=$4
shift 4
mkdir -p "$DIR"
if { "$CMAKE" -S "$SRC" -B "$DIR/build" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/arm-none-eabi.cmake" \
         -DNP_BOARD="$BOARD" "$@" &&
     "$CMAKE" --build "$DIR/build" -j2 &&
     "$CMAKE" --install "$DIR/build" --prefix "$DIR/prefix"; } >"$DIR/cmake.log" 2>&1; then
    exit 0
fi
echo "FAIL: $BOARD: configure, build or install"
sed 's/^/  /' "$DIR/cmake.log"
exit 1
