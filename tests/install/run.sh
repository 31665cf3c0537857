#!/bin/sh
# run.sh - install test: installs a built tree into a temporary prefix and
# builds a small program against it the ways a user would.
#
#   sh tests/install/run.sh SOURCE_DIR BUILD_DIR
#
# BUILD_DIR must be configured and built. Checks:
#   layout       cmake --install puts the command, headers, libraries,
#                pkg-config files and CMake package where expected
#   version      <prefix>/bin/nanoprof --version prints the project version
#   pkg-config   cc consumer.c $(pkg-config --cflags --libs nanoprof),
#                run against the shared library: the consumer's own functions
#                appear in the call trace and in the cost statistics, and
#                the compiler's hooks are in the consumer itself
#                (libnanoprof-hooks.a)
#   cmake        the same through find_package(nanoprof) + nanoprof::nanoprof
#   calltrace    the static call-trace-only library, linked by hand
#                (-lnanoprof-calltrace -lelf -ldl -lpthread) and through
#                nanoprof::calltrace + nanoprof_instrument()
#   profile-off  -DNANOPROF_PROFILE=OFF builds the same project without
#                instrumentation: no consumer function is recorded
# The last line is "install test: <n> passed, <m> failed"; the exit status is
# non-zero when anything failed. It runs in builds without sanitizers
# (labelled nosan): a sanitizer build's libraries need its -fsanitize flags
# in every consumer, which a user's build would not have, and there it
# fails in one line saying so rather than report itself skipped.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
here="$src/tests/install"

cache_get() { # cache_get VAR: a value from the build tree's CMakeCache.txt
    sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -n 1
}

if [ -n "$(cache_get NP_SANITIZE)" ]; then
    echo "install test: FAIL: $build is a sanitizer build (NP_SANITIZE=$(cache_get NP_SANITIZE)), whose consumers would need its -fsanitize flags: run it in a build without (ctest -LE nosan leaves it out)"
    exit 1
fi
CC=$(cache_get CMAKE_C_COMPILER)
[ -n "$CC" ] || CC=cc
version=$(sed -n 's/^project(nanoprof VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nanoprof-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
prefix="$tmp/prefix"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }

# expect NAME FILE PATTERN...: every extended regex PATTERN matches a line
expect() {
    name=$1 file=$2
    shift 2
    for pat in "$@"; do
        if ! grep -Eq -- "$pat" "$file"; then
            echo "  $name: no line matches: $pat"
            show "$file"
            return 1
        fi
    done
}

# absent NAME FILE PATTERN: no line matches PATTERN
absent() {
    if grep -Eq -- "$3" "$2"; then
        echo "  $1: unexpected line matching: $3"
        show "$2"
        return 1
    fi
}

# The lines a consumer run must print when both mechanisms are on.
check_full() { # check_full NAME OUTPUT_FILE
    expect "$1" "$2" \
        '^consumer: nanoprof '"$version"', sum 12, cost ' \
        '^calltrace: stack mode, thread [0-9]+, lr=0x[0-9a-f]+, 2 records, 0 lost$' \
        '^  consumer_leaf: lr=0x[0-9a-f]+$' \
        '^consumer_middle: lr=0x[0-9a-f]+$' \
        '^consumer_middle: count 3, cost [0-9]+, self [0-9]+, min [0-9]+, max [0-9]+$' \
        '^consumer_leaf: count 3, cost [0-9]+, self [0-9]+, min [0-9]+, max [0-9]+$' &&
        absent "$1" "$2" '^nanoprof: '
}

# The call trace alone: the trace is there, no cost statistics are.
check_calltrace() { # check_calltrace NAME OUTPUT_FILE
    expect "$1" "$2" \
        '^consumer: nanoprof '"$version"', sum 12, cost ' \
        '^calltrace: stack mode, thread [0-9]+, lr=0x[0-9a-f]+, 2 records, 0 lost$' \
        '^  consumer_leaf: lr=0x[0-9a-f]+$' \
        '^consumer_middle: lr=0x[0-9a-f]+$' &&
        absent "$1" "$2" ': count '
}

# Not instrumented: the trace is empty and no function is counted.
check_off() { # check_off NAME OUTPUT_FILE
    expect "$1" "$2" \
        '^consumer: nanoprof '"$version"', sum 12, cost ' \
        '^calltrace: stack mode, thread [0-9]+, lr=0x[0-9a-f]+, 0 records, 0 lost$' &&
        absent "$1" "$2" 'consumer_'
}

# run NAME OUTPUT_FILE COMMAND...: runs COMMAND, stdout and stderr to FILE
run() {
    name=$1 out=$2
    shift 2
    if ! "$@" >"$out" 2>&1; then
        echo "  $name: command failed: $*"
        sed 's/^/    | /' "$out"
        return 1
    fi
}

show() { sed 's/^/    | /' "$1"; }

# hooks_inside NAME EXE: EXE defines the compiler's hooks itself
hooks_inside() {
    if nm "$2" | grep -Eq ' T __cyg_profile_func_enter$'; then
        return 0
    fi
    echo "  $1: $2 does not hold __cyg_profile_func_enter (libnanoprof-hooks.a not linked in)"
    return 1
}

# same_dir NAME DIR1 DIR2: both name the same existing directory
same_dir() {
    if [ -d "$2" ] && [ -d "$3" ] && [ "$(cd "$2" && pwd -P)" = "$(cd "$3" && pwd -P)" ]; then
        return 0
    fi
    echo "  $1: $2 is not $3 (the .pc file does not point into the prefix it was installed to)"
    return 1
}

# ---- layout ---------------------------------------------------------------
if run layout "$tmp/install.log" cmake --install "$build" --prefix "$prefix"; then
    libdir=$(dirname "$(find "$prefix" -name libnanoprof.so -path "$prefix/lib*" | head -n 1)")
    ok=1
    if [ "$libdir" = . ]; then
        echo "  layout: no lib*/libnanoprof.so"
        ok=0
        libdir="$prefix/lib"
    fi
    for f in bin/nanoprof include/nanoprof/nanoprof.h include/nanoprof/calltrace.h \
             include/nanoprof/cost.h "${libdir#"$prefix"/}/libnanoprof.a" \
             "${libdir#"$prefix"/}/libnanoprof-hooks.a" \
             "${libdir#"$prefix"/}/libnanoprof-calltrace.a" "${libdir#"$prefix"/}/libnanoprof-cost.a" \
             "${libdir#"$prefix"/}/pkgconfig/nanoprof.pc" "${libdir#"$prefix"/}/pkgconfig/nanoprof-runtime.pc" \
             "${libdir#"$prefix"/}/cmake/nanoprof/nanoprofConfig.cmake" \
             "${libdir#"$prefix"/}/cmake/nanoprof/nanoprofConfigVersion.cmake"; do
        if [ ! -e "$prefix/$f" ]; then
            echo "  layout: missing $f"
            ok=0
        fi
    done
    if [ $ok = 1 ]; then pass layout; else fail layout; fi
else
    fail layout
    libdir="$prefix/lib"
fi

# ---- version ----------------------------------------------------------------
if run version "$tmp/version.out" "$prefix/bin/nanoprof" --version &&
   expect version "$tmp/version.out" "^nanoprof $version\$" &&
   grep -q "NP_VERSION_STRING \"$version\"" "$prefix/include/nanoprof/nanoprof.h"; then
    pass "version ($version)"
else
    fail version
fi

# ---- pkg-config, shared library ---------------------------------------------
pc() { PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config "$@"; }
# shellcheck disable=SC2046 # the output of pkg-config is meant to be split
if run pkg-config "$tmp/pc.flags" pc --cflags --libs nanoprof &&
   expect pkg-config "$tmp/pc.flags" '-finstrument-functions' &&
   same_dir pkg-config "$(pc --variable=includedir nanoprof)" "$prefix/include" &&
   same_dir pkg-config "$(pc --variable=libdir nanoprof)" "$libdir" &&
   run pkg-config "$tmp/pc-runtime.flags" pc --cflags nanoprof-runtime &&
   absent nanoprof-runtime "$tmp/pc-runtime.flags" '-finstrument-functions' &&
   run pkg-config "$tmp/cc-pc.log" \
       "$CC" -o "$tmp/consumer-pc" "$here/consumer.c" $(pc --cflags --libs nanoprof) &&
   run pkg-config "$tmp/consumer-pc.out" env LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc" &&
   check_full pkg-config "$tmp/consumer-pc.out"; then
    # the binary really used the installed shared library, and holds the
    # compiler's hooks itself (libnanoprof-hooks.a)
    if ! env LD_LIBRARY_PATH="$libdir" ldd "$tmp/consumer-pc" | grep -q "$libdir/libnanoprof.so"; then
        echo "  pkg-config: consumer not linked against $libdir/libnanoprof.so"
        fail pkg-config
    elif ! hooks_inside pkg-config "$tmp/consumer-pc"; then
        fail pkg-config
    else
        pass pkg-config
    fi
else
    fail pkg-config
fi

# ---- CMake package ----------------------------------------------------------
cmake_consumer() { # cmake_consumer DIR [CMAKE ARGS...]
    d=$1
    shift
    run cmake "$d.configure.log" cmake -S "$here/consumer" -B "$d" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
        run cmake "$d.build.log" cmake --build "$d"
}
cm_built=0
if cmake_consumer "$tmp/cm"; then
    cm_built=1
fi
if [ $cm_built = 1 ] &&
   run cmake "$tmp/consumer-cm.out" "$tmp/cm/consumer" &&
   check_full cmake "$tmp/consumer-cm.out" &&
   hooks_inside cmake "$tmp/cm/consumer"; then
    pass cmake
else
    fail cmake
fi

# ---- the call trace alone ---------------------------------------------------
ct_ok=1
if run calltrace "$tmp/cc-ct.log" "$CC" -o "$tmp/consumer-ct" -finstrument-functions \
       -I"$prefix/include" "$here/consumer.c" -L"$libdir" -lnanoprof-calltrace -lelf -ldl -lpthread &&
   run calltrace "$tmp/consumer-ct.out" "$tmp/consumer-ct" &&
   check_calltrace calltrace "$tmp/consumer-ct.out"; then
    :
else
    ct_ok=0
fi
if [ $cm_built = 1 ]; then
    if run calltrace "$tmp/consumer-cmct.out" "$tmp/cm/consumer_calltrace" &&
       check_calltrace "calltrace (CMake)" "$tmp/consumer-cmct.out"; then
        :
    else
        ct_ok=0
    fi
else
    echo "  calltrace: CMake consumer not built"
    ct_ok=0
fi
if [ $ct_ok = 1 ]; then pass calltrace; else fail calltrace; fi

# ---- NANOPROF_PROFILE=OFF ---------------------------------------------------
if cmake_consumer "$tmp/cm-off" -DNANOPROF_PROFILE=OFF &&
   run profile-off "$tmp/consumer-off.out" "$tmp/cm-off/consumer" &&
   check_off profile-off "$tmp/consumer-off.out" &&
   run profile-off "$tmp/consumer-off-ct.out" "$tmp/cm-off/consumer_calltrace" &&
   check_off profile-off "$tmp/consumer-off-ct.out"; then
    pass profile-off
else
    fail profile-off
fi

echo "install test: $passed passed, $failed failed"
[ "$failed" = 0 ]
