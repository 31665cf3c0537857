#!/bin/sh
# test_pg_fast.sh NANOPROF LIBDIR INCLUDE PG_FAST_C - the fast path of x86-64's
# thunks (port/posix/mcount.c) in programs built with -pg -mfentry and -pg
# (GCC and Clang, -O0 and -O2), linked with libnanoprof.a and with
# libnanoprof-hooks.a + libnanoprof.so (tests/programs/pg_fast.c):
# - the call trace's log records (function, site, depth; lost counts),
#   function cost's call counts, and the recorder's (NANOPROF_RECORD: every
#   function's count and the nesting of every call, in `nanoprof replay`)
#   are the same whether the fast path takes the calls or the hooks do (NANOPROF_PG_THUNKS=0: every exit by the
#   trampoline), through nesting, tail calls, a longjmp, a signal handler,
#   the mechanism switched off and on inside a call, a recursion deeper
#   than a record's depth and the return stack's first mapping, a second
#   thread and a ring that wraps;
# - hooks_leaf.c's functions call nothing and touch no vector register
#   (objdump of both libraries);
# - at -O0 (no tail calls) every call of the plain part takes the fast
#   path but those it cannot take, counted by gdb at the thunks' slow
#   entry (np_thunk_enter_c) and the hooks' exit (np_mcount_exit): start's,
#   made before the mechanism is on, and main's exit (main's entry, the
#   module's first call, is __fentry__'s own); with cost, each function's
#   first call too, which makes its slot in the thread's table (start,
#   top, mid, leaf, fib, print_records, print_costs, by_fn), and, with cost
#   and the recorder, a call after the thread was switched out (at most 20
#   more); and the counts
#   are exact: log records of 21 calls of top, mid and leaf, 1973 of
#   fib(15) and print_records' own, at depths 0 (top's) to 14; the same
#   calls in function cost.
set -u
np=$1
libdir=$2
inc=$3
src=$4
. "$(dirname "$0")/cli_test.sh"
need gcc clang gdb-multiarch
export LC_ALL=C
. "$(dirname "$0")/uftrace_cmp.sh"

# slow BIN ARGS...: how many times the slow entry and the hooks' exit ran
# (gdb), recorded into $r2 when set
slow() {
    env ${r2:+NANOPROF_RECORD=$r2} gdb-multiarch -batch -ex 'set breakpoint pending on' -ex 'break np_thunk_enter_c' -ex 'ignore 1 100000000' \
        -ex 'break np_mcount_exit' -ex 'ignore 2 100000000' -ex run -ex 'info breakpoints' --args "$@" 2>&1 |
        awk '/^1 / { b = 1 } /^2 / { b = 2 } /already hit/ { n[b] = $4 } END { print n[1] + 0, n[2] + 0 }'
}

# hooks_leaf.c's leaf functions keep the vector registers (arguments and
# return values): they must call nothing and use none
for lib in libnanoprof.a libnanoprof.so; do
    objdump -d "$libdir/$lib" | awk '/file format/ { on = /^hooks_leaf/ } /^[0-9a-f]+ <np_hooks_.*_leaf>:$/ { on = 1 }
        /^[0-9a-f]+ <.*>:$/ && !/_leaf>:$/ { on = 0 } on' >"$tmp/leaf"
    if [ "$(grep -c '_leaf>:$' "$tmp/leaf")" = 5 ] && ! grep -qE 'call|%[xyz]mm' "$tmp/leaf"; then
        ok "$lib: the five leaf functions call nothing, use no vector register"
    else
        bad "$lib: leaf functions: $(grep -E '_leaf>:$|call|%[xyz]mm' "$tmp/leaf" | head -5)"
    fi
done

# thread_nesting TRACE: nesting's lines, the process's first thread's
# first, then the other's (the replay interleaves threads as their records
# were flushed)
thread_nesting() {
    : >"$tmp/thread0"
    : >"$tmp/thread1"
    "$np" replay "$1" | awk -v t0="$tmp/thread0" -v t1="$tmp/thread1" '/Function$/ { col = index($0, "Function"); next }
        /^# thread / { out = ($3 == substr($NF, 1, length($NF) - 1)) ? t0 : t1; next }
        /^#/ || !col { next }
        { s = substr($0, col); n = match(s, /[^ ]/) - 1; s = substr(s, n + 1)
          if (s ~ /^\[depth /) { split(s, w, " "); print (w[2] - 1), w[3] > out }
          else if (s !~ /^}/) { split(s, w, " "); print n / 2, w[1] > out } }'
    cat "$tmp/thread0" "$tmp/thread1"
    rm -f "$tmp/thread0" "$tmp/thread1"
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
                mechs="log cost"
                [ $link = static ] || mechs="log cost none" # (the recorder: libnanoprof.so's)
                for mech in $mechs; do
                    rm -rf "$tmp/r1" "$tmp/r0" "$tmp/r2"
                    # recorded: none's alone
                    r1="" r0="" r2=""
                    [ $mech = none ] && r1=$tmp/r1 r0=$tmp/r0 r2=$tmp/r2
                    env ${r1:+NANOPROF_RECORD=$r1} "$bin" $mech all >"$tmp/fast" 2>"$tmp/err_fast"
                    rc1=$?
                    env NANOPROF_PG_THUNKS=0 ${r0:+NANOPROF_RECORD=$r0} "$bin" $mech all >"$tmp/slow" 2>"$tmp/err_slow"
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
                    elif [ $mech = cost ]; then
                        if grep -q '^cost: .*, 0 lost$' "$tmp/fast" && grep -q ' 70001$' "$tmp/fast"; then
                            same_files "$tag: cost's counts as the hooks count them" "$tmp/slow" "$tmp/fast"
                        else
                            bad "$tag: cost: lost calls, or deep's 70001 missing"; cat "$tmp/fast"
                        fi
                    else
                        counts "$tmp/r1" >"$tmp/c1"
                        counts "$tmp/r0" >"$tmp/c0"
                        if grep -q '^deep 70001$' "$tmp/c1"; then
                            same_files "$tag: the recorder's counts as the hooks' " "$tmp/c0" "$tmp/c1"
                        else
                            bad "$tag: recorder: deep's 70001 calls missing"; cat "$tmp/c1"
                        fi
                        thread_nesting "$tmp/r1" >"$tmp/c1"
                        thread_nesting "$tmp/r0" >"$tmp/c0"
                        same_files "$tag: the recorder's nesting as the hooks'" "$tmp/c0" "$tmp/c1"
                    fi
                    [ $opt = -O0 ] || continue
                    n=$(slow "$bin" $mech plain)
                    if [ $mech = none ]; then
                        if echo "$n" | awk '{ exit !($1 <= 20 && $2 >= 1 && $2 <= 21) }'; then
                            ok "$tag recorder: every call by the fast path but main's exit (+ switches: $n)"
                        else
                            bad "$tag recorder: slow entries, hooks' exits: $n, want 0 1 (up to 20 21)"
                        fi
                        continue
                    elif [ $mech = log ]; then
                        if [ "$n" = "1 2" ]; then
                            ok "$tag log: every call by the fast path but start's and main's"
                        else
                            bad "$tag log: slow entries, hooks' exits: $n, want 1 2"
                        fi
                    # (a thread switched out meanwhile has its next call take
                    # the hooks, which take the time it was out off: at most
                    # a few in a run, against 1995 calls)
                    elif echo "$n" | awk '{ exit !($1 >= 8 && $1 <= 28 && $2 >= 9 && $2 <= 29) }'; then
                        ok "$tag cost: every call by the fast path but each function's first (8 + switches: $n)"
                    else
                        bad "$tag cost: slow entries, hooks' exits: $n, want 8 9 (up to 28 29)"
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
