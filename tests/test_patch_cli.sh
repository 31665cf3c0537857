#!/bin/sh
# test_patch_cli.sh NANOPROF LIBDIR INCLUDE PATCH_PROG_C - programs built
# with patchable entries (GCC's five NOPs at -O0 and -O2, Clang's one
# five-byte NOP, GCC's -pg -mfentry -mnop-mcount -mrecord-mcount), switched
# while they run, recorded by `nanoprof record`:
# - with no option every function is switched on at start: every count and
#   the nesting of every call equal `uftrace record -P .`'s on the same
#   binary, and the program's own counts exactly at -O0;
# - -P PATTERN switches those functions alone; -A and -R read their
#   arguments and return values;
# - np_trace_on / np_trace_off from the program (--trace-off: it starts
#   off) while three threads call leaf_a in five windows, on in two, and a
#   fourth calls leaf_h without pause through every switch: leaf_a's count
#   exactly the traced windows', leaf_h's no more than it made, and
#   leaf_a's bytes put back exactly after each switch off (three runs of
#   each build); 2000 switches of a function two threads run without pause;
#   a library switched on, unloaded and loaded again;
# - --trace-signal: on, off and on again by a signal, the counts exact;
# - bad input refused in one line: -P on a program built without them or
#   matching no function, a bad pattern or signal; np_trace_on in a program
#   without them says why; -fpatchable-function-entry=5,2 (no function
#   starts at its places) is said.
set -u
np=$1
libdir=$2
inc=$3
src=$4
np_cmd=record
. "$(dirname "$0")/cli_test.sh"
need gcc clang uftrace
export LC_ALL=C
. "$(dirname "$0")/uftrace_cmp.sh"

api_flags="-DNP_WITH_API -I$inc -L$libdir -lnanoprof -Wl,-rpath,$libdir"

for build in "gcc -O0 -fpatchable-function-entry=5" "gcc -O2 -fpatchable-function-entry=5" \
    "clang -O2 -fpatchable-function-entry=5" "gcc -O2 -fno-pie -no-pie -pg -mfentry -mnop-mcount -mrecord-mcount"; do
    tag=$(echo "$build" | sed 's/-fpatchable-function-entry=5/pfe/; s/-fno-pie -no-pie -pg -mfentry -mnop-mcount -mrecord-mcount/nop-mcount/' |
        tr ' ' '_')
    bin=$tmp/patch$tag
    api=$tmp/api$tag
    if ! $build -g -pthread "$src" -o "$bin" 2>"$tmp/cc_err" ||
        ! $build -g -pthread "$src" -o "$api" $api_flags 2>"$tmp/cc_err"; then
        bad "$tag: build: $(cat "$tmp/cc_err")"
        continue
    fi
    # every function, at start, as uftrace -P . traces it
    np_opts="" uf_opts="-P ." rec "calls$tag" "$bin" calls 7 && like_uftrace "calls$tag" nesting
    case $tag in *-O0*)
        expect "calls$tag: exact counts" "$tmp/calls$tag.np" "main 1" "work 7" "leaf_a 7" "leaf_b 7" "fib 177" ;;
    esac
    # -P: those functions alone
    np_opts="-P leaf_*" uf_opts="-P ^leaf_" rec "only$tag" "$bin" calls 7 &&
        expect "-P leaf_*$tag: those alone" "$tmp/only$tag.np" "leaf_a 7" "leaf_b 7"
    # -A / -R through the patched entry
    np_opts="-P leaf_a,work -A leaf_a@arg1 -R work@retval" uf_opts="" rec "args$tag" "$bin" calls 3 &&
        "$np" replay "$tmp/args$tag.np" | grep -o 'leaf_a([0-9]*)' >"$tmp/a" &&
        same "-A$tag: leaf_a's argument each call" "$tmp/a" "leaf_a(0)
leaf_a(1)
leaf_a(2)"
    # switched by the program while its threads run
    for i in 1 2 3; do
        "$np" record --trace-off -o "$tmp/win$tag.$i" -- "$api" windows 3 5000 >"$tmp/out" 2>"$tmp/err"
        rc=$?
        status "windows$tag #$i: exit 0" 0 "exited with status 0"
        grep -v '^leaf_h calls: ' "$tmp/out" >"$tmp/a"
        same "windows$tag #$i: switched on and off, three functions each time, bytes put back" "$tmp/a" "on: 3
off: 3
on: 3
off: 3
traced leaf_a: 30000
bytes restored: yes"
        made=$(sed -n 's/^leaf_h calls: //p' "$tmp/out")
        counts "$tmp/win$tag.$i" >"$tmp/c"
        grep '^leaf_a ' "$tmp/c" >"$tmp/a"
        same "windows$tag #$i: leaf_a's calls of the traced windows, exactly" "$tmp/a" "leaf_a 30000"
        # (a busy machine may not run it while tracing is on: 0 is right then)
        h=$(sed -n 's/^leaf_h //p' "$tmp/c")
        h=${h:-0}
        [ -n "$made" ] && [ "$h" -le "$made" ] &&
            ok "windows$tag #$i: the thread through the switches: $h of its $made calls traced" ||
            bad "windows$tag #$i: leaf_h traced '$h' of '$made'"
    done
    # 2000 switches on and off while two threads run the function: without
    # the round of the threads, GCC's builds crashed in about a third of
    # runs of 300
    "$api" flips 2000 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    status "flips$tag: exit 0" 0
    same "flips$tag: done, bytes put back" "$tmp/out" "2000 switches: done"
    # switched by a signal
    "$np" record --trace-off --trace-signal USR2 -P 'leaf_*' -o "$tmp/sig$tag" -- "$bin" signal 1000 USR2 \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    status "signal$tag: exit 0" 0 "exited with status 0"
    expect "signal$tag: on, off, on: the traced calls exactly" "$tmp/sig$tag" "leaf_a 2000"
done

bin=$tmp/patchgcc_-O2_pfe
# a library switched on, unloaded, loaded again: the unloaded one's place
# left alone, the new one switched, each load's call recorded
gcc -O2 -shared -fPIC -fpatchable-function-entry=5 "$(dirname "$src")/patch_plugin.c" -o "$tmp/libplug.so"
"$np" record --trace-off -o "$tmp/dl" -- "$tmp/apigcc_-O2_pfe" dlclose "$tmp/libplug.so" >"$tmp/out" 2>"$tmp/err"
rc=$?
status "dlclose: exit 0" 0 "exited with status 0"
same "dlclose: on, nothing to switch off once unloaded, on again" "$tmp/out" "round 1: on 1, off after dlclose 0
round 2: on 1, off after dlclose 0"
counts "$tmp/dl" | grep '^plug_work' >"$tmp/a"
same "dlclose: each load's call" "$tmp/a" "plug_work 2"

# a real-time signal by name
"$np" record --trace-off --trace-signal RTMIN+3 -o "$tmp/rt" -- "$bin" signal 100 RTMIN+3 >"$tmp/out" 2>"$tmp/err"
rc=$?
status "--trace-signal RTMIN+3: exit 0" 0 "exited with status 0"
expect "--trace-signal RTMIN+3: the traced calls" "$tmp/rt" "leaf_a 200"

# ---- bad input ----
plain=$tmp/plain
gcc -O2 "$src" -o "$plain" -pthread
run -o "$tmp/bad" -P 'leaf_*' -- "$plain" calls 1
status "-P on a program without patchable entries" 2 "has no patchable entries: build it with -fpatchable-function-entry=5"
run -o "$tmp/bad" --trace-off -- "$plain" calls 1
status "--trace-off on a program without them" 2 "--trace-off: .* has no patchable entries"
run -o "$tmp/bad" -P 'nosuch_*' -- "$bin" calls 1
status "-P matching no function" 2 "-P 'nosuch_\*': 'nosuch_\*' matches no function of"
run -o "$tmp/bad" -P . -- "$bin" calls 1
status "-P . (uftrace's every function)" 2 "-P '.': '.' matches no function of .* (a pattern matches whole names: every function is '\*', uftrace's '.' is '.\*' here)$"
run -o "$tmp/bad" -P '^x[' -- "$bin" calls 1
status "-P: a bad regular expression" 2 "-P: '^x\[' is not a valid regular expression"
run -o "$tmp/bad" -P '' -- "$bin" calls 1
status "-P: empty" 2 "-P: empty pattern"
for s in KILL STOP SEGV 0 99999 USR3 RTMIN+x RTMAX+1; do
    run -o "$tmp/bad" --trace-signal "$s" -- "$bin" calls 1
    status "--trace-signal $s" 2 "--trace-signal: '$s' is not a signal that can be caught"
done
[ ! -e "$tmp/bad" ] && ok "bad input: nothing run, no trace" || bad "bad input left a trace"
# np_trace_on in a program built without them
gcc -O2 -pthread "$src" -o "$tmp/api_plain" $api_flags
"$tmp/api_plain" windows 1 10 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q '^np_trace_on: no function of the program has a patchable entry (build with -fpatchable-function-entry=5)$' \
    "$tmp/err" && ok "np_trace_on without patchable entries: -1, and why" ||
    { bad "np_trace_on without patchable entries: exit $rc"; cat "$tmp/err"; }
# NOPs before the entry: no function starts there
gcc -O2 -fpatchable-function-entry=5,2 "$src" -o "$tmp/m2" -pthread
run -o "$tmp/m2.np" -- "$tmp/m2" calls 1
grep -q '^nanoprof: recording: patchable entries: none of the program.s [0-9]* patchable places is where a function starts' \
    "$tmp/err" && grep -q 'nothing was recorded from .*: its patchable entries were not switched on' "$tmp/err" &&
    ok "-fpatchable-function-entry=5,2: said, nothing made up" || { bad "5,2: $rc"; cat "$tmp/err"; }

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
