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
for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "missing compiler: $cc"; fail=$((fail + 1)); continue; }
    for opt in -O0 -O2; do
        for link in static shared; do
            name="$cc $opt $link"
            exe="$tmp/prog"
            if [ $link = static ]; then
                libs="$build/src/libnanoprof.a -lelf -ldl -lpthread"
            else
                libs="-L$build/src -Wl,-rpath,$build/src -lnanoprof"
            fi
            # shellcheck disable=SC2086
            if ! $cc $opt -g -finstrument-functions -I"$src/include" "$src/tests/programs/sdk_example.c" \
                    -o "$exe" $libs 2>"$tmp/err"; then
                echo "FAIL $name: build"; cat "$tmp/err"; fail=$((fail + 1)); continue
            fi
            "$exe" 2>&1 | mask >"$tmp/out"
            if diff -u "$src/tests/expected/sdk_example.txt" "$tmp/out" >"$tmp/diff"; then
                echo "ok   $name"; pass=$((pass + 1))
            else
                echo "FAIL $name"; cat "$tmp/diff"; fail=$((fail + 1))
            fi
        done
    done
done
# Opting out: NP_NO_PROFILE and GCC's exclude list.
for opt in -O0 -O2; do
    name="exclude gcc $opt"
    if gcc $opt -finstrument-functions -finstrument-functions-exclude-function-list=skipped_by_list \
            -I"$src/include" "$src/tests/programs/exclude.c" -o "$tmp/exclude" \
            "$build/src/libnanoprof.a" -lelf -ldl -lpthread 2>"$tmp/err"; then
        "$tmp/exclude" 2>&1 | mask >"$tmp/out"
        if diff -u "$src/tests/expected/exclude.txt" "$tmp/out" >"$tmp/diff"; then
            echo "ok   $name"; pass=$((pass + 1))
        else
            echo "FAIL $name"; cat "$tmp/diff"; fail=$((fail + 1))
        fi
    else
        echo "FAIL $name: build"; cat "$tmp/err"; fail=$((fail + 1))
    fi
done
# longjmp in a dynamic and in a fully static executable.
for link in dynamic static; do
    name="longjmp gcc $link"
    flags=""
    [ $link = static ] && flags="-static"
    # shellcheck disable=SC2086
    if gcc -O2 $flags -finstrument-functions -I"$src/include" "$src/tests/programs/longjmp.c" \
            -o "$tmp/longjmp" "$build/src/libnanoprof.a" -lelf -lz -lzstd -ldl -lpthread 2>"$tmp/err"; then
        "$tmp/longjmp" 2>&1 | mask >"$tmp/out"
        if diff -u "$src/tests/expected/longjmp.txt" "$tmp/out" >"$tmp/diff"; then
            echo "ok   $name"; pass=$((pass + 1))
        else
            echo "FAIL $name"; cat "$tmp/diff"; fail=$((fail + 1))
        fi
    else
        echo "FAIL $name: build"; cat "$tmp/err"; fail=$((fail + 1))
    fi
done
echo "compilers: $pass passed, $fail failed"
[ $fail -eq 0 ]
