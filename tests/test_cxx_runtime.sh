#!/bin/sh
# test_cxx_runtime.sh LIBNANOPROF INCLUDE_DIR CXX_THROW_SOURCE - what the
# runtime prints inside a C++ program (function cost and call trace,
# through its API: tests/programs/cxx_throw.cc built with NP_DUMPS and
# linked with the shared runtime) names its functions as every view
# does, demangled and short (`Parser::parse`, not `_ZNK6Parser5parseEi`),
# with exact call counts.
set -u
lib=$1
inc=$2
src=$3
np=true np_cmd=true
. "$(dirname "$0")/cli_test.sh"
need g++ clang++
export LC_ALL=C
libdir=$(dirname "$lib")

# dumps CXX: the program built by CXX with NP_DUMPS, run; its output in
# $tmp/CXX/dump
dumps() {
    d=$tmp/$1
    mkdir -p "$d"
    if ! $1 -g -O0 -finstrument-functions -DNP_DUMPS -I"$inc" "$src" -o "$d/prog" -L"$libdir" -lnanoprof \
        -Wl,-rpath,"$libdir" 2>"$d/cc_err"; then
        bad "$1: build: $(cat "$d/cc_err")"
        return 1
    fi
    "$d/prog" >"$d/dump" 2>&1 || { bad "$1: the program failed: $(cat "$d/dump")"; return 1; }
}

if dumps g++; then
    d=$tmp/g++
    grep -q '_Z' "$d/dump" && bad "g++: mangled names in the dumps: $(grep _Z "$d/dump")" ||
        ok "g++: no mangled name in the dumps"
    grep -E '^[^ ]+: count ' "$d/dump" | sed 's/, cost .*//' | sort >"$d/cost"
    same "g++: function cost: names and counts" "$d/cost" "Parser::parse: count 6
check: count 6
level1: count 6
level2: count 6
level3: count 6
scale: count 4
twice: count 4"
    awk 'on && !/: lr=0x/ { exit } on { sub(/: lr=0x[0-9a-f]*$/, ""); print } /^calltrace: .* 2 records, 0 lost$/ { on = 1 }' \
        "$d/dump" >"$d/open"
    same "g++: call trace in twice: the calls open" "$d/open" "  twice
scale"
    grep -q '^calltrace: stack mode, thread [0-9]*, lr=0x[0-9a-f]*, 0 records, 0 lost$' "$d/dump" &&
        ok "g++: call trace: no call open at the end" || bad "g++: call trace: $(grep calltrace "$d/dump")"
fi
finish
