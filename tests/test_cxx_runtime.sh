#!/bin/sh
# test_cxx_runtime.sh NANOPROF LIBNANOPROF INCLUDE_DIR CXX_THROW_SOURCE -
# the runtime inside a C++ program whose exceptions leave instrumented
# frames: tests/programs/cxx_throw.cc, built with g++ and with clang++, at
# -O0 and -O2 (thrown through three calls, rethrown, thrown and caught in
# a destructor while another unwinds, caught by a recursive function's
# outer call). Clang's -finstrument-functions
# runs no exit hook for a frame an exception leaves (GCC's does); the
# runtime closes those calls when a landing pad or handler of an outer
# frame runs, and never twice. For each build:
# - built with NP_DUMPS and linked with the shared runtime, its dumps
#   (function cost, call trace: the API) name the functions demangled and
#   short (`Parser::parse`), with exact counts, and the calls open in the
#   last `twice` are twice and scale alone;
# - recorded by `nanoprof record` (with no filter, and with -F and -N),
#   its call tree has the exact calls and depths.
# The four builds give the same text.
set -u
np=$1
lib=$2
inc=$3
src=$4
np_cmd=tree
. "$(dirname "$0")/cli_test.sh"
need g++ clang++
export LC_ALL=C
libdir=$(dirname "$lib")

# paths <TREE: `nanoprof tree --ascii`'s calls as "/caller/callee CALLS"
# lines, sorted (siblings are in the order of their times)
paths() {
    awk 'NR > 3 { line = substr($0, index($0, "%") + 1); p = index(line, "- "); d = int(p / 3)
        path[d] = substr(line, p + 2); s = ""; for (i = 1; i <= d; i++) s = s "/" path[i]; print s, $1 }' | sort
}

for cxx in g++ clang++; do
    for opt in -O0 -O2; do
        b="$cxx $opt"
        d=$tmp/$cxx$opt
        mkdir -p "$d"
        if ! $cxx -g $opt -finstrument-functions -DNP_DUMPS -I"$inc" "$src" -o "$d/dumps" -L"$libdir" -lnanoprof \
            -Wl,-rpath,"$libdir" 2>"$d/cc_err" ||
            ! $cxx -g $opt -finstrument-functions "$src" -o "$d/prog" 2>"$d/cc_err"; then
            bad "$b: build: $(cat "$d/cc_err")"
            continue
        fi

        # ---- the dumps
        "$d/dumps" >"$d/out" 2>"$d/dump" || { bad "$b: the program failed: $(cat "$d/dump")"; continue; }
        same "$b: the program's output" "$d/out" "errors 7 sum 34"
        grep -q '_Z' "$d/dump" && bad "$b: mangled names in the dumps: $(grep _Z "$d/dump")" ||
            ok "$b: no mangled name in the dumps"
        grep -E '^[^ ]+: count ' "$d/dump" | sed 's/, cost .*//' | sort >"$d/cost"
        same "$b: function cost: names and counts" "$d/cost" "Guard::~Guard: count 1
Parser::parse: count 6
check: count 11
descend: count 4
guarded: count 1
inner: count 3
level1: count 6
level2: count 6
level3: count 6
middle: count 2
outer: count 2
scale: count 4
twice: count 4
unwound: count 1"
        awk 'on && !/: lr=0x/ { exit } on { sub(/: lr=0x[0-9a-f]*$/, ""); print }
            /^calltrace: .* records, 0 lost$/ { on = 1 }' "$d/dump" >"$d/open"
        same "$b: call trace in the last twice: the calls open" "$d/open" "  twice
scale"
        grep -q '^calltrace: stack mode, thread [0-9]*, lr=0x[0-9a-f]*, 0 records, 0 lost$' "$d/dump" &&
            ok "$b: call trace: no call open at the end" || bad "$b: call trace: $(grep calltrace "$d/dump")"

        # ---- the recording
        if ! "$np" record -o "$d/trace" -- "$d/prog" >"$d/out" 2>"$d/rec_err"; then
            bad "$b: record: $(cat "$d/rec_err")"
            continue
        fi
        "$np" tree --ascii "$d/trace" >"$d/tree_full" 2>"$d/tree_err"
        paths <"$d/tree_full" >"$d/tree"
        same "$b: recorded call tree: calls and depths" "$d/tree" "/main 1
/main/Parser::parse 6
/main/Parser::parse/level1 6
/main/Parser::parse/level1/level2 6
/main/Parser::parse/level1/level2/level3 6
/main/Parser::parse/level1/level2/level3/check 6
/main/descend 1
/main/descend/descend 1
/main/descend/descend/descend 1
/main/descend/descend/descend/descend 1
/main/descend/descend/descend/descend/check 1
/main/outer 2
/main/outer/middle 2
/main/outer/middle/inner 2
/main/outer/middle/inner/check 2
/main/scale 4
/main/scale/twice 4
/main/unwound 1
/main/unwound/guarded 1
/main/unwound/guarded/Guard::~Guard 1
/main/unwound/guarded/Guard::~Guard/check 1
/main/unwound/guarded/inner 1
/main/unwound/guarded/inner/check 1"
        [ ! -s "$d/tree_err" ] && ok "$b: tree: nothing to say" || bad "$b: tree: $(cat "$d/tree_err")"
        # the recorder's filtering writer (-F, -N) closes them too
        "$np" record -F 'Parser::parse' -F outer -F unwound -F descend -N check -o "$d/trace_f" -- "$d/prog" >/dev/null 2>&1
        "$np" tree --ascii "$d/trace_f" 2>/dev/null | paths >"$d/tree"
        same "$b: recorded with -F and -N: calls and depths" "$d/tree" "/Parser::parse 6
/Parser::parse/level1 6
/Parser::parse/level1/level2 6
/Parser::parse/level1/level2/level3 6
/descend 1
/descend/descend 1
/descend/descend/descend 1
/descend/descend/descend/descend 1
/outer 2
/outer/middle 2
/outer/middle/inner 2
/unwound 1
/unwound/guarded 1
/unwound/guarded/Guard::~Guard 1
/unwound/guarded/inner 1"
    done
done
finish
