#!/bin/sh
# compilers.sh SOURCE_DIR BUILD_DIR - builds tests/programs/sdk_example.c
# with GCC and Clang, at -O0 and -O2, linked statically and against the
# shared library, runs each and compares its output with the expected one
# (addresses, thread ids and times masked).
set -u
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
mask() {
    sed -e 's/thread [0-9]*/thread T/' -e 's/lr=0x[0-9a-f]*/lr=X/g' \
        -e 's/cost [0-9]*, self [0-9]*, min [0-9]*, max [0-9]*/cost N, self N, min N, max N/'
}
# check NAME EXPECTED COMPILER ARGS...: builds "$tmp/prog" with the
# compiler and arguments, runs it (with $checkargs as its arguments),
# compares its masked output.
check() {
    name=$1 expected=$2
    shift 2
    if "$@" -o "$tmp/prog" 2>"$tmp/err"; then
        # shellcheck disable=SC2086
        "$tmp/prog" ${checkargs:-} 2>&1 | mask >"$tmp/out"
        if diff -u "$expected" "$tmp/out" >"$tmp/diff"; then
            echo "ok   $name"; pass=$((pass + 1))
        else
            echo "FAIL $name"; cat "$tmp/diff"; fail=$((fail + 1))
        fi
    else
        echo "FAIL $name: build"; cat "$tmp/err"; fail=$((fail + 1))
    fi
}
for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "missing compiler: $cc"; fail=$((fail + 1)); continue; }
    for opt in -O0 -O2; do
        for link in static shared; do
            if [ $link = static ]; then
                libs="$build/src/libnanoprof.a -lelf -ldl -lpthread"
            else
                libs="-L$build/src -Wl,-rpath,$build/src -lnanoprof"
            fi
            # shellcheck disable=SC2086
            check "$cc $opt $link" "$src/tests/expected/sdk_example.txt" \
                $cc $opt -g -finstrument-functions -I"$src/include" "$src/tests/programs/sdk_example.c" $libs
        done
    done
done
# Opting out: NP_NO_PROFILE and GCC's exclude list.
for opt in -O0 -O2; do
    check "exclude gcc $opt" "$src/tests/expected/exclude.txt" \
        gcc $opt -finstrument-functions -finstrument-functions-exclude-function-list=skipped_by_list \
        -I"$src/include" "$src/tests/programs/exclude.c" "$build/src/libnanoprof.a" -lelf -ldl -lpthread
done
# longjmp in a dynamic and in a fully static executable.
for link in dynamic static; do
    flags=""
    [ $link = static ] && flags="-static"
    # shellcheck disable=SC2086
    check "longjmp gcc $link" "$src/tests/expected/longjmp.txt" \
        gcc -O2 $flags -finstrument-functions -I"$src/include" "$src/tests/programs/longjmp.c" \
        "$build/src/libnanoprof.a" -lelf -lz -lzstd -ldl -lpthread
done
# Basic-block counts (-fsanitize-coverage=trace-pc): GCC counts blocks,
# Clang edges; with both the branch taken 250 times of 1000 is one count.
for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "missing compiler: $cc"; fail=$((fail + 1)); continue; }
    for opt in -O0 -O2; do
        # shellcheck disable=SC2086
        checkargs="check 1000" check "blocks $cc $opt" "$src/tests/expected/blocks_check.txt" \
            $cc $opt -g -fsanitize-coverage=trace-pc -I"$src/include" "$src/tests/programs/blocks_prog.c" \
            -L"$build/src" -Wl,-rpath,"$build/src" -lnanoprof -lpthread
    done
done
echo "compilers: $pass passed, $fail failed"
[ $fail -eq 0 ]
