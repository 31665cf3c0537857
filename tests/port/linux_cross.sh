#!/bin/sh
# linux_cross.sh CMAKE NANOPROF SRC ARCH - the runtime on another Linux
# CPU (ARCH: arm64, AArch64; armhf, 32-bit ARM), as a user cross-builds
# it: configured with cmake/<triplet>.cmake in a fresh build directory
# (with -Werror) and installed; tests/programs/pg_prog.c and pg_throw.cc
# built with -pg (_mcount on AArch64, __gnu_mcount_nc on ARM) by Debian's
# cross GCC and by Clang for the same target, at -O0 and -O2, run under
# qemu-user recording (NANOPROF_RECORD), and read by this host's nanoprof,
# which has their ELF files:
# - the exact counts test_pg_cli.sh holds the x86-64 builds to, and the
#   nesting of the calls equal to this host's x86-64 -pg build of the same
#   source by the same compiler (which test_pg_cli.sh holds to uftrace's):
#   calls, signal, tail calls, longjmp, siglongjmp out of a handler,
#   threads, a recursion 100000 deep, backtrace(3) and C++ exceptions (both
#   through the shared library);
# - the -finstrument-functions build (-O0): the same counts and nesting;
# - the call trace (log, stack) and function cost read back in the program
#   (tests/programs/pg_inproc.c): exact, -pg as -finstrument-functions;
# - return values (NANOPROF_RETVAL) exact; arguments: on ARM exact (r0-r3,
#   and past the fourth refused, by `nanoprof record -A` before the run
#   too), on AArch64 refused in one line by the
#   runtime and by `nanoprof record -A` (its hook cannot see them);
# - AArch64: a build with -mbranch-protection (signed return addresses):
#   not hooked, said with the count, the program's result unchanged;
# - NANOPROF_SYSROOT: the views find the board's libraries the trace names.
set -u
cmake=$1
np=$2
src_dir=$3
arch=$4
np_cmd=record
. "$src_dir/tests/cli_test.sh"
case $arch in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 cpu=AArch64 ;;
armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm cpu="32-bit ARM" ;;
*) echo "linux_cross.sh: ARCH is arm64 or armhf, not '$arch'" >&2; exit 2 ;;
esac
need $triplet-gcc $triplet-g++ $qemu gcc g++ clang clang++
export LC_ALL=C
src=$src_dir/tests/programs/pg_prog.c
throw_src=$src_dir/tests/programs/pg_throw.cc
. "$src_dir/tests/uftrace_cmp.sh"
sysroot=/opt/nanoprof/sysroot-$arch
[ -f "$sysroot/.unpacked" ] || { bad "no $sysroot: run scripts/deps.sh"; exit 1; }

# the runtime, as docs/porting.md's "Linux on another CPU" builds it
p=$tmp/prefix
if ! "$cmake" -S "$src_dir" -B "$tmp/build" -DCMAKE_TOOLCHAIN_FILE="$src_dir/cmake/$triplet.cmake" \
    -DNP_WERROR=ON -DCMAKE_INSTALL_PREFIX="$p" >"$tmp/log" 2>&1 ||
    ! "$cmake" --build "$tmp/build" -j 2 >>"$tmp/log" 2>&1 || ! "$cmake" --install "$tmp/build" >>"$tmp/log" 2>&1; then
    bad "cross build:"; tail -n 30 "$tmp/log"; exit 1
fi
ok "the runtime cross-built for $cpu with -Werror, installed"
libs="-L$sysroot/usr/lib/$triplet -Wl,-rpath-link,$sysroot/lib/$triplet"
# static: libnanoprof.a as pkg-config's Libs.private link it
static="$p/lib/libnanoprof.a $libs -lelf -lzstd -ldl -pthread"
shared="-L$p/lib -lnanoprof-hooks -lnanoprof -pthread"
export QEMU_LD_PREFIX=/usr/$triplet
# the target's C library's files, as the traces name them (/lib/libc.so.6)
export NANOPROF_SYSROOT=$QEMU_LD_PREFIX
export QEMU_SET_ENV="LD_LIBRARY_PATH=$p/lib:$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet"
# target_run NAME BIN ARGS...: BIN ARGS under qemu-user, recorded into $tmp/NAME.np
target_run() {
    a_name=$1
    shift
    rm -rf "$tmp/$a_name.np"
    NANOPROF_RECORD=$tmp/$a_name.np $qemu "$@" >"$tmp/$a_name.out" 2>"$tmp/$a_name.err"
    a_rc=$?
    if [ $a_rc != 0 ] || [ -s "$tmp/$a_name.err" ]; then
        bad "$a_name: exit $a_rc:"; cat "$tmp/$a_name.err"
        return 1
    fi
}
# host NAME BIN ARGS...: the x86-64 build recorded here, the reference
host() {
    h_name=$1
    shift
    "$np" record -o "$tmp/$h_name.np" -- "$@" >/dev/null 2>"$tmp/$h_name.err" ||
        { bad "$h_name: host record:"; cat "$tmp/$h_name.err"; }
}
# like_host NAME REF: the nesting of the calls as the host build's
like_host() {
    nesting "$tmp/$1.np" >"$tmp/a"
    nesting "$tmp/$2.np" >"$tmp/b"
    same_files "$1: nesting as the x86-64 build's" "$tmp/b" "$tmp/a"
}

for cc in gcc clang; do
    for opt in -O0 -O2; do
        # GCC's cross compiler, or Clang for the same target (GCC's C library
        # and libraries); the host's same compiler for the reference
        # (Clang for ARM calls GNU's __gnu_mcount_nc with -meabi gnu, as
        # glibc's gprof needs too)
        if [ $cc = gcc ]; then tcc=$triplet-gcc tcxx=$triplet-g++ hcxx=g++
        elif [ $arch = armhf ]; then tcc="clang --target=$triplet -meabi gnu" tcxx="clang++ --target=$triplet -meabi gnu" hcxx=clang++
        else tcc="clang --target=$triplet" tcxx="clang++ --target=$triplet" hcxx=clang++; fi
        t=$cc$opt
        bin=$tmp/pg$t
        hbin=$tmp/host$t
        if ! $tcc $opt -pg -g "$src" -o "$bin" $static 2>"$tmp/cc_err" ||
            ! $tcc $opt -pg -g -funwind-tables "$src" -o "$bin.so" $shared 2>>"$tmp/cc_err" ||
            ! $cc $opt -pg -g -pthread "$src" -o "$hbin" 2>>"$tmp/cc_err"; then
            bad "$t: build: $(cat "$tmp/cc_err")"
            continue
        fi
        for mode in calls signal tail longjmp sigjmp; do
            target_run "$mode$t" "$bin" $mode && host "h$mode$t" "$hbin" $mode && like_host "$mode$t" "h$mode$t"
        done
        # (at -O2 GCC turns part of fib's recursion into a loop, as it likes)
        counts "$tmp/calls$t.np" | grep -v '^fib ' >"$tmp/a"
        same "calls$t: exact counts" "$tmp/a" "leaf 12
main 1
mid 6
top 3"
        [ $opt = -O2 ] || expect "calls$t: fib's calls" "$tmp/calls$t.np" "main 1" "top 3" "mid 6" "leaf 12" "fib 465"
        expect "signal$t: exact counts" "$tmp/signal$t.np" "main 1" "nest 4" "handler 1" "hleaf 3" "after 2"
        expect "tail$t: exact counts" "$tmp/tail$t.np" "main 1" "tail_a 3" "tail_b 3" "tail_c 3" "leaf 6"
        expect "longjmp$t: exact counts" "$tmp/longjmp$t.np" "main 1" "guard 1" "jumper 12" "after 2"
        expect "sigjmp$t: exact counts" "$tmp/sigjmp$t.np" "main 1" "sig_guard 1" "nest 4" "handler 1" "hleaf 3" \
            "after 2"
        if target_run "threads$t" "$bin" threads; then
            expect "threads$t: exact counts" "$tmp/threads$t.np" "main 1" "worker 4" "wleaf 4000"
        fi
        # (at -O2 the compilers for these CPUs turn deep's recursion into a loop)
        if [ $opt = -O0 ] && target_run "deep$t" "$bin" deep 100000 && grep -q "deep 100000" "$tmp/deep$t.out"; then
            expect "deep$t: 100001 calls deep" "$tmp/deep$t.np" "main 1" "deep 100001" "leaf 1"
            nesting "$tmp/deep$t.np" | sort -n | tail -n 1 >"$tmp/a"
            same "deep$t: nesting 100001 deep" "$tmp/a" "100001 deep"
        fi
        # through the shared library, which stands in front of backtrace(3)
        # (on ARM, glibc's backtrace needs the unwind tables)
        if target_run "backtrace$t" "$bin.so" backtrace; then
            same "backtrace$t: backtrace(3) sees the callers" "$tmp/backtrace$t.out" "bt: bt4 bt3 bt2 bt1 main"
        fi
        # C++ exceptions (the shared library's unwinder interposition; on
        # 32-bit ARM, whose unwinder is ARM's EHABI, the destructors' calls
        # nest in the abandoned ones: the counts, docs/instrumenting.md)
        if $tcxx $opt -pg "$throw_src" -o "$tmp/throw$t" $shared 2>"$tmp/cc_err" &&
            $hcxx $opt -pg "$throw_src" -o "$tmp/hthrow$t" 2>>"$tmp/cc_err"; then
            if target_run "throw$t" "$tmp/throw$t" && host "hthrow$t" "$tmp/hthrow$t"; then
                [ $arch = armhf ] || like_host "throw$t" "hthrow$t"
                throw_counts "throw$t: exact counts" "$tmp/throw$t.np"
            fi
        else
            bad "throw$t: build: $(cat "$tmp/cc_err")"
        fi
    done
done

# the call trace (log and stack mode) and function cost in the program,
# read back by it (tests/programs/pg_inproc.c): exact, and as the
# -finstrument-functions build's
for opt in -O0 -O2; do
    for flags in -pg -finstrument-functions; do
        bin=$tmp/inproc$opt$flags
        if ! $triplet-gcc $opt $flags -I"$p/include" "$src_dir/tests/programs/pg_inproc.c" -o "$bin" $static \
            2>"$tmp/cc_err"; then
            bad "inproc $opt $flags: build: $(cat "$tmp/cc_err")"
            continue
        fi
        $qemu "$bin" >"$tmp/out" 2>"$tmp/err" || bad "inproc $opt $flags: exit $?"
        same "in-process call trace and cost, $opt $flags" "$tmp/out" "log 0 top
log 1 mid
log 2 leaf
log 2 leaf
log 1 mid
log 2 leaf
log 2 leaf
stack 0 chain
stack 1 inner
cost top 5
cost mid 10
cost leaf 20
lost 0"
    done
done

# the board's libraries as the trace names them: found under
# NANOPROF_SYSROOT, said without it
NANOPROF_SYSROOT= "$np" report "$tmp/callsgcc-O0.np" >/dev/null 2>"$tmp/err"
grep -q "^nanoprof report: warning: /lib/libc.so.6: cannot read symbols" "$tmp/err" &&
    ok "without NANOPROF_SYSROOT: the board's libc said unread" || { bad "no sysroot:"; cat "$tmp/err"; }
"$np" report "$tmp/callsgcc-O0.np" >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] && ok "NANOPROF_SYSROOT: every file read" || { bad "sysroot:"; cat "$tmp/err"; }

# -finstrument-functions, the same source: the same calls (longjmp but on
# 32-bit ARM, where the runtime does not stand in front of setjmp: the
# calls a longjmp abandons stay open there, docs/instrumenting.md)
modes="calls signal tail longjmp"
[ $arch = armhf ] && modes="calls signal tail"
if $triplet-gcc -O0 -finstrument-functions "$src" -o "$tmp/cyg" $static 2>"$tmp/cc_err"; then
    for mode in $modes; do
        if target_run "cyg$mode" "$tmp/cyg" $mode; then
            counts "$tmp/cyg$mode.np" >"$tmp/a"
            counts "$tmp/${mode}gcc-O0.np" >"$tmp/b"
            same_files "-finstrument-functions $mode: counts as -pg's" "$tmp/b" "$tmp/a"
            nesting "$tmp/cyg$mode.np" >"$tmp/a"
            nesting "$tmp/${mode}gcc-O0.np" >"$tmp/b"
            same_files "-finstrument-functions $mode: nesting as -pg's" "$tmp/b" "$tmp/a"
        fi
    done
else
    bad "cyg build: $(cat "$tmp/cc_err")"
fi

# return values (x0, r0 at the return) and arguments
bin=$tmp/pggcc-O2
if NANOPROF_RETVAL='add@retval;greet@retval/s;pass@retval/x' target_run retval "$bin" args; then
    lines "$tmp/retval.np" | sort >"$tmp/a"
    same "return values exact" "$tmp/a" '  add = 4
  add = 42
  greet = "world"
  greet = NULL
  pass = 0x1234
main {
} /* main */'
fi
if [ $arch = armhf ]; then
    # r0-r3 intact at __gnu_mcount_nc: uftrace's specs, the values exact
    if NANOPROF_ARGS='add@arg1/i32,arg2;greet@arg1/s,arg2/u32,arg3/c;pass@arg1/p' \
        NANOPROF_RETVAL='add@retval;greet@retval/s;pass@retval/x' target_run args "$bin" args; then
        lines "$tmp/args.np" >"$tmp/a"
        args_values "arguments and return values exact" "$tmp/a"
    fi
    NANOPROF_RECORD=$tmp/args5.np NANOPROF_ARGS='add@arg5' $qemu "$bin" args >/dev/null 2>"$tmp/err"
    rc=$?
    status "NANOPROF_ARGS past the fourth on ARM: refused in one line" 0 "arg1 to arg4 only"
    run -A nosuch@arg1 -o "$tmp/bad.np" -- "$bin" args
    status "record -A on an ARM -pg build: its functions read" 2 "matches no function"
    run -A add@arg1,arg5 -o "$tmp/bad.np" -- "$bin" args
    status "record -A past the fourth on an ARM -pg build: refused before it runs" 2 "arg1 to arg4 only"
    [ ! -e "$tmp/bad.np" ] || bad "record -A arg5: a trace was made"
else
    NANOPROF_RECORD=$tmp/args.np NANOPROF_ARGS='add@arg1' $qemu "$bin" args >/dev/null 2>"$tmp/err"
    rc=$?
    status "NANOPROF_ARGS on AArch64 -pg: refused in one line" 0 "sees no arguments"
    run -A add@arg1 -o "$tmp/bad.np" -- "$bin" args
    status "record -A on an AArch64 -pg build: refused" 2 "sees no arguments"
    [ ! -e "$tmp/bad.np" ] || bad "record -A: a trace was made"

    # signed return addresses (pointer authentication): qemu-aarch64 runs
    # the signing instructions; the calls are not hooked, and said
    if $triplet-gcc -O2 -pg -mbranch-protection=pac-ret "$src" -o "$tmp/pac" $static 2>"$tmp/cc_err"; then
        NANOPROF_RECORD=$tmp/pac.np $qemu "$tmp/pac" calls >"$tmp/out" 2>"$tmp/err"
        rc=$?
        same "pac-ret: the program's result" "$tmp/out" "fib 144"
        grep -q "calls of -pg code were not hooked: their return address is signed" "$tmp/err" &&
            ok "pac-ret: the unhooked calls said" || { bad "pac-ret: not said (exit $rc):"; cat "$tmp/err"; }
    else
        bad "pac build: $(cat "$tmp/cc_err")"
    fi
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
