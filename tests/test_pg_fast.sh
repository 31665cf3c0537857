#!/bin/sh
# test_pg_fast.sh LIBDIR INCLUDE PG_FAST_C - the fast path of x86-64's
# thunks (port/posix/mcount.c) in programs built with -pg -mfentry and -pg
# (GCC and Clang, -O0 and -O2), linked with libnanoprof.a and with
# libnanoprof-hooks.a + libnanoprof.so (tests/programs/pg_fast.c):
# - the call trace's log records (function, site, depth; lost counts) and
#   function cost's call counts are the same whether the fast path takes
#   the calls or the hooks do (NANOPROF_PG_THUNKS=0: every exit by the
#   trampoline), through nesting, tail calls, a longjmp, a signal handler,
#   the mechanism switched off and on inside a call, a recursion deeper
#   than a record's depth and the return stack's first mapping, a second
#   thread and a ring that wraps;
# - at -O0 (no tail calls) every call of the plain part takes the fast
#   path but those it cannot take, counted by gdb at the thunks' slow
#   entry (np_thunk_enter_c) and the hooks' exit (np_mcount_exit): start's,
#   made before the mechanism is on, and main's exit (main's entry, the
#   module's first call, is __fentry__'s own); with cost, each function's
#   first call too, which makes its slot in the thread's table (start,
#   top, mid, leaf, fib, print_records, print_costs, by_fn); and the counts
#   are exact: log records of 21 calls of top, mid and leaf, 1973 of
#   fib(15) and print_records' own, at depths 0 (top's) to 14; the same
#   calls in function cost.
set -u
libdir=$1
inc=$2
src=$3
. "$(dirname "$0")/cli_test.sh"
need gcc clang gdb-multiarch
export LC_ALL=C

# slow BIN ARGS...: how many times the slow entry and the hooks' exit ran (gdb)
slow() {
    gdb-multiarch -batch -ex 'set breakpoint pending on' -ex 'break np_thunk_enter_c' -ex 'ignore 1 100000000' \
        -ex 'break np_mcount_exit' -ex 'ignore 2 100000000' -ex run -ex 'info breakpoints' --args "$@" 2>&1 |
        awk '/^1 / { b = 1 } /^2 / { b = 2 } /already hit/ { n[b] = $4 } END { print n[1] + 0, n[2] + 0 }'
}

for cc in gcc clang; do
    for flags in "-pg -mfentry" "-pg"; do
        for opt in -O0 -O2; do
            for link in static shared; do
                tag=$cc$(echo " $flags $opt $link" | tr ' ' '_')
                bin=$tmp/fast$tag
                if [ $link = static ]; then
                    libs="$libdir/libnanoprof.a -lelf -lzstd -ldl -lpthread"
                else
                    libs="-L$libdir -lnanoprof-hooks -lnanoprof -Wl,-rpath,$libdir"
                fi
                # shellcheck disable=SC2086
                if ! $cc $opt $flags -g -pthread -I"$inc" "$src" -o "$bin" $libs 2>"$tmp/cc_err"; then
                    bad "$tag: build: $(cat "$tmp/cc_err")"
                    continue
                fi
                for mech in log cost; do
                    "$bin" $mech all >"$tmp/fast" 2>"$tmp/err_fast"
                    rc1=$?
                    NANOPROF_PG_THUNKS=0 "$bin" $mech all >"$tmp/slow" 2>"$tmp/err_slow"
                    rc0=$?
                    if [ $rc1 != 0 ] || [ $rc0 != 0 ] || [ -s "$tmp/err_fast" ] || [ -s "$tmp/err_slow" ]; then
                        bad "$tag $mech: exit $rc1 / $rc0"; cat "$tmp/err_fast" "$tmp/err_slow"
                        continue
                    fi
                    if [ $mech = log ]; then
                        parts=$(grep -c ': [0-9]* records' "$tmp/fast")
                        if [ "$parts" = 7 ] && grep -q ' 65534$' "$tmp/fast"; then
                            same_files "$tag: the log records as the hooks write them (7 parts)" "$tmp/slow" "$tmp/fast"
                        else
                            bad "$tag: $parts parts, or no depth held at its most"; head -5 "$tmp/fast"
                        fi
                    elif grep -q '^cost: .*, 0 lost$' "$tmp/fast" && grep -q ' 70001$' "$tmp/fast"; then
                        same_files "$tag: cost's counts as the hooks count them" "$tmp/slow" "$tmp/fast"
                    else
                        bad "$tag: cost: lost calls, or deep's 70001 missing"; cat "$tmp/fast"
                    fi
                    [ $opt = -O0 ] || continue
                    n=$(slow "$bin" $mech plain)
                    want="1 2"
                    [ $mech = log ] || want="8 9"
                    if [ "$n" = "$want" ]; then
                        ok "$tag $mech: every call by the fast path but $want"
                    else
                        bad "$tag $mech: slow entries, hooks' exits: $n, want $want"
                    fi
                    "$bin" $mech plain >"$tmp/plain"
                    if [ $mech = log ]; then
                        awk 'NR == 1 { print; next } { n[$1]++; if ($3 > d) d = $3 }
                             END { m = 0; for (f in n) if (n[f] > m) m = n[f]; print m; print d }' "$tmp/plain" >"$tmp/cmp"
                        same "$tag: 1995 records, fib's 1973, depth to 14" "$tmp/cmp" "plain: 1995 records, 0 lost
1973
14"
                    else
                        awk 'NR > 1 && $2 > 0 { print $2 }' "$tmp/plain" >"$tmp/cmp"
                        same "$tag: leaf, mid, top, fib, print_records counted" "$tmp/cmp" "12
6
3
1973
1"
                    fi
                done
            done
        done
    done
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
