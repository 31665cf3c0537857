#!/bin/sh
# test_gdb_bt.sh LIBNANOPROF SCRIPT PROGRAM_SRC - gdb's backtrace of a -pg
# and a -pg -mfentry program (x86-64) run with nanoprof's hooks, stopped
# in leaf (main -> top -> mid -> leaf): with scripts/nanoprof-gdb.py
# sourced, `bt` holds leaf, mid, top and main in that order and no frame
# without a name, through the thunks and through the trampoline
# (NANOPROF_PG_THUNKS=0); without it, gdb's own stops short of main (so
# that the check means something).
set -u
lib=$1
script=$2
src=$3
. "$(dirname "$0")/cli_test.sh"
need gcc gdb-multiarch
export LC_ALL=C

# bt BIN THUNKS [SCRIPT]: the function of each frame of `bt` at leaf, one a line
bt() {
    rm -rf "$tmp/t"
    src_cmd=
    [ -n "${3:-}" ] && src_cmd="source $3"
    gdb-multiarch -nx -batch -ex "set startup-with-shell off" -ex "set environment LD_PRELOAD=$lib" \
        -ex "set environment NANOPROF_RECORD=$tmp/t" -ex "set environment NANOPROF_PG_THUNKS=$2" \
        -ex "$src_cmd" -ex "break leaf" -ex "run" -ex "bt" -ex "kill" \
        --args "$1" calls >"$tmp/gdb.out" 2>&1
    sed -n 's/^#[0-9]*  *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\) (.*/\2/p' "$tmp/gdb.out"
}

for flags in "-pg" "-pg -mfentry"; do
    tag=$(echo "$flags" | tr -d ' ')
    bin=$tmp/prog$tag
    gcc -O0 $flags -g -pthread "$src" -o "$bin" || { bad "$tag: build"; continue; }
    for thunks in 1 0; do
        what="$tag, NANOPROF_PG_THUNKS=$thunks"
        frames=$(bt "$bin" $thunks "$script" | tr '\n' ' ')
        case "$frames" in
        "leaf mid top main "*)
            if echo "$frames" | grep -q '??'; then bad "$what: a frame with no name: $frames"; else ok "$what: $frames"; fi ;;
        *) bad "$what: bt is '$frames'"; cat "$tmp/gdb.out" ;;
        esac
        frames=$(bt "$bin" $thunks | tr '\n' ' ')
        case "$frames" in
        "leaf mid top main "*) bad "$what: gdb alone reaches main ($frames): the check means nothing" ;;
        leaf*) ok "$what, without the script: $frames" ;;
        *) bad "$what, without the script: bt is '$frames'"; cat "$tmp/gdb.out" ;;
        esac
    done
done
finish
